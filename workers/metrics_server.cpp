// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/metrics_server.hpp"
#include "workers/rpz_transfer_status.hpp"

#include <httplib.h>

#include <cstdio>
#include <mutex>
#include <sstream>
#include <vector>

#include "workers/mrc_report.hpp"
#include "workers/upstream_client.hpp"  // monotonic_us

namespace dnsarena::workers {

std::string prometheus_text(const StatsReport& rep) {
  std::ostringstream o;
  for (std::size_t k = 0; k < cache::kCounterCount; ++k) {
    const std::string name = "dnsarena_" + std::string(cache::kCounterNames[k]) + "_total";
    o << "# TYPE " << name << " counter\n";
    for (const StatsRow& row : rep.rows) {
      const std::string label = row.worker_index >= 0 ? std::to_string(row.worker_index) : "other";
      o << name << "{worker=\"" << label << "\"} " << row.counters[k] << "\n";
    }
  }
  o << "# TYPE dnsarena_user_ns_per_query gauge\n";  // TSC-timed user-space time per UDP query
  for (const StatsRow& row : rep.rows)
    if (row.worker_index >= 0)
      o << "dnsarena_user_ns_per_query{worker=\"" << row.worker_index << "\"} " << row.user_ns_per_query() << "\n";
  auto gauge = [&](const char* name, double v) { o << "# TYPE " << name << " gauge\n" << name << " " << v << "\n"; };
  gauge("dnsarena_cache_entries", static_cast<double>(rep.cache.live_entries));
  gauge("dnsarena_cache_max_entries", static_cast<double>(rep.cache.max_entries));
  gauge("dnsarena_cache_bytes_in_use", static_cast<double>(rep.cache.bytes_in_use));
  gauge("dnsarena_cache_bytes_per_entry", rep.cache.bytes_per_entry());
  gauge("dnsarena_cache_arena_bytes_per_entry", rep.cache.arena_bytes_per_entry());
  gauge("dnsarena_cache_index_bytes", static_cast<double>(rep.cache.index_bytes));
  gauge("dnsarena_segment_bytes", static_cast<double>(rep.cache.segment_bytes));
  std::size_t running = 0;
  for (const StatsRow& row : rep.rows)
    if (row.worker_index >= 0 && row.pid) ++running;
  gauge("dnsarena_workers_running", static_cast<double>(running));
  return o.str();
}

namespace {

// One histogram's series: cumulative _bucket lines, _sum (seconds) and _count. `labels`:
// the series' own labels, `name="value"` pairs joined by commas.
void write_histogram(std::ostringstream& o, const std::string& name, const std::string& labels,
                     const LatencyCounts& c) {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kLatencyBuckets; ++i) {
    cumulative += c.counts[i];
    o << name << "_bucket{" << labels << ",le=\"" << latency_le_text(i) << "\"} " << cumulative << "\n";
  }
  char sum[32];
  std::snprintf(sum, sizeof sum, "%.9f", static_cast<double>(c.sum_ns) / 1e9);
  o << name << "_sum{" << labels << "} " << sum << "\n";
  o << name << "_count{" << labels << "} " << cumulative << "\n";
}

}  // namespace

// A label value as the exposition format writes it: backslash, quote and newline escaped.
std::string label_value(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string prometheus_text(const AnswerMetrics::Totals& t) {
  std::ostringstream o;
  o << "# HELP dnsarena_answer_latency_seconds Client-visible latency of cache hits and of misses\n"
       "# TYPE dnsarena_answer_latency_seconds histogram\n";
  write_histogram(o, "dnsarena_answer_latency_seconds", "kind=\"hit\"", t.hit);
  write_histogram(o, "dnsarena_answer_latency_seconds", "kind=\"miss\"", t.miss);
  o << "# HELP dnsarena_answer_rcodes_total Answers sent, by header RCODE\n"
       "# TYPE dnsarena_answer_rcodes_total counter\n";
  for (std::size_t k = 0; k < kRcodeKinds; ++k)
    o << "dnsarena_answer_rcodes_total{rcode=\"" << kRcodeNames[k] << "\"} " << t.rcodes[k] << "\n";
  o << "# HELP dnsarena_answer_qtypes_total Answers sent, by question type\n"
       "# TYPE dnsarena_answer_qtypes_total counter\n";
  for (std::size_t k = 0; k < kQtypeKinds; ++k)
    o << "dnsarena_answer_qtypes_total{qtype=\"" << kQtypeNames[k] << "\"} " << t.qtypes[k] << "\n";
  o << "# HELP dnsarena_proxy_headers_total PROXY v2 headers, by outcome (accepted, local; dropped: no_header, "
       "malformed, unlisted)\n"
       "# TYPE dnsarena_proxy_headers_total counter\n";
  for (std::size_t k = 0; k < kProxyOutcomes; ++k)
    o << "dnsarena_proxy_headers_total{outcome=\"" << kProxyOutcomeNames[k] << "\"} " << t.proxy[k] << "\n";
  if (!t.policy.empty())
    o << "# HELP dnsarena_policy_zone_hits_total Response policy matches, by policy zone and trigger kind\n"
         "# TYPE dnsarena_policy_zone_hits_total counter\n";
  for (const PolicyCounters::Zone& z : t.policy)
    for (std::size_t k = 0; k < kPolicyKinds; ++k)
      o << "dnsarena_policy_zone_hits_total{zone=\"" << label_value(z.name) << "\",trigger=\"" << kPolicyKindNames[k]
        << "\"} " << z.hits[k] << "\n";
  write_dnssec_metrics(o, t.dnssec);  // dnssec_counters.hpp
  return o.str();
}

std::string prometheus_text(const UpstreamHealth& health, std::uint64_t now_us) {
  std::ostringstream o;
  std::vector<UpstreamHealth::Snapshot> rows;
  for (unsigned i = 0; i < health.size(); ++i) rows.push_back(health.snapshot(i, now_us));
  auto family = [&](const char* name, const char* type, auto value, bool (*has)(const UpstreamHealth::Snapshot&)) {
    o << "# TYPE " << name << " " << type << "\n";
    for (const UpstreamHealth::Snapshot& r : rows)
      if (!has || has(r)) o << name << "{upstream=\"" << r.endpoint << "\"} " << value(r) << "\n";
  };
  using S = UpstreamHealth::Snapshot;
  auto sampled = [](const S& r) { return r.sampled; };
  family("dnsarena_upstream_server_up", "gauge", [](const S& r) { return r.down ? 0 : 1; }, nullptr);
  family("dnsarena_upstream_server_srtt_ms", "gauge", [](const S& r) { return r.srtt_ms; }, sampled);
  family("dnsarena_upstream_server_rttvar_ms", "gauge", [](const S& r) { return r.rttvar_ms; }, sampled);
  family("dnsarena_upstream_server_rto_ms", "gauge", [](const S& r) { return r.rto_ms; }, nullptr);
  family("dnsarena_upstream_server_consecutive_failures", "gauge", [](const S& r) { return r.consecutive; }, nullptr);
  family("dnsarena_upstream_server_queries_total", "counter", [](const S& r) { return r.queries; }, nullptr);
  family("dnsarena_upstream_server_timeouts_total", "counter", [](const S& r) { return r.timeouts; }, nullptr);
  family("dnsarena_upstream_server_refusals_total", "counter", [](const S& r) { return r.refusals; }, nullptr);
  family("dnsarena_upstream_server_probes_total", "counter", [](const S& r) { return r.probes; }, nullptr);
  family("dnsarena_upstream_server_downs_total", "counter", [](const S& r) { return r.downs; }, nullptr);
  o << "# HELP dnsarena_upstream_rtt_seconds Round-trip time of each UDP reply, per upstream\n"
       "# TYPE dnsarena_upstream_rtt_seconds histogram\n";
  for (const S& r : rows) write_histogram(o, "dnsarena_upstream_rtt_seconds", "upstream=\"" + r.endpoint + "\"", r.rtt);
  return o.str();
}

MetricsServer::MetricsServer(cache::Segment& segment, const Endpoint& listen, const UpstreamHealth* health,
                             const AnswerMetrics* answers, const MissRatioCurves* curves)
    : cache_(std::make_unique<cache::Cache>(segment, cache::SlotRole::tool)),
      server_(std::make_unique<httplib::Server>()) {
  std::string host = listen.text.substr(0, listen.text.rfind(':'));
  if (!host.empty() && host.front() == '[') host = host.substr(1, host.size() - 2);
  auto mu = std::make_shared<std::mutex>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(1); };
  server_->Get("/metrics", [this, mu, health, answers, curves, segment_name = segment.name()](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(*mu);
    std::string text = prometheus_text(collect_stats(*cache_));
    if (health) text += prometheus_text(*health, monotonic_us());
    if (answers) text += prometheus_text(answers->totals());
    if (curves) text += prometheus_text(*curves);
    if (const auto rpz = read_rpz_snapshot(segment_name)) text += rpz_prometheus_text(*rpz);  // RPZ by transfer
    res.set_content(text, "text/plain; version=0.0.4");
  });
  if (!server_->bind_to_port(host, listen.port())) throw std::runtime_error("cannot bind " + listen.text);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

MetricsServer::~MetricsServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace dnsarena::workers
