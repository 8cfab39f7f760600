// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena stats`: per-worker and total counters of a serve segment, as a table or JSON,
// the upstreams' health when the serve publishes it (upstream_snapshot.hpp), and the
// latency and answers by RCODE and type (answer_snapshot.hpp).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "workers/commands.hpp"
#include "workers/answer_snapshot.hpp"
#include "workers/local_root_status.hpp"
#include "workers/rpz_transfer_status.hpp"
#include "workers/mrc_report.hpp"
#include "workers/stats_report.hpp"
#include "workers/infra_snapshot.hpp"
#include "workers/upstream_snapshot.hpp"

namespace dnsarena::workers {

namespace {

// "p50 0.12  p90 0.40  p99 2.10 ms" of a latency_json object, "-" for each without samples.
std::string quantiles_text(const nlohmann::json& h) {
  std::string text;
  for (const char* q : {"p50", "p90", "p99"}) {
    const nlohmann::json& v = h[std::string(q) + "_ms"];
    char part[40];
    if (v.is_number()) std::snprintf(part, sizeof part, "%s %8.3f", q, v.get<double>());
    else std::snprintf(part, sizeof part, "%s %8s", q, "-");
    text += (text.empty() ? "" : "  ") + std::string(part);
  }
  return text + " ms";
}

// Latency of hits and misses, then answers by RCODE and by question type (nonzero ones).
void print_answers(const nlohmann::json& snap) {
  const nlohmann::json& a = snap["answers"];
  std::printf("answers (as of %.1f s ago):\n", snap["age_s"].get<double>());
  for (const char* kind : {"hit", "miss"})
    std::printf("  %-5s latency %s  (%llu answers)\n", kind, quantiles_text(a[kind]).c_str(),
                a[kind]["count"].get<unsigned long long>());
  auto counts = [&](const char* what, auto names) {
    std::printf("  %-7s", what);
    for (const std::string_view name : names) {
      const unsigned long long n = a[what].value(std::string(name), 0ull);
      if (n) std::printf(" %.*s %llu", static_cast<int>(name.size()), name.data(), n);
    }
    std::printf("\n");
  };
  counts("rcodes", kRcodeNames);
  counts("qtypes", kQtypeNames);
  // PROXY v2 headers by outcome (proxy_counts.hpp), when any was seen.
  if (a.contains("proxy") && std::any_of(a["proxy"].begin(), a["proxy"].end(), [](const nlohmann::json& n) { return n != 0; }))
    counts("proxy", kProxyOutcomeNames);
  if (a.contains("policy"))  // response policy matches per zone and trigger kind (policy_counters.hpp)
    for (const auto& [zone, kinds] : a["policy"].items()) {
      std::printf("  policy  %s:", zone.c_str());
      for (const std::string_view kind : kPolicyKindNames)
        std::printf(" %.*s %llu", static_cast<int>(kind.size()), kind.data(),
                    kinds.value(std::string(kind), 0ull));
      std::printf("\n");
    }
  if (a.contains("dnssec") && a["dnssec"].value("secure", 0ull) + a["dnssec"].value("insecure", 0ull) +
                                      a["dnssec"].value("bogus", 0ull) + a["dnssec"].value("indeterminate", 0ull))
    counts("dnssec", kDnssecCounterNames);  // validation (dnssec_counters.hpp), nonzero ones
}

// The upstream health table: one line per upstream, from the serve's snapshot file.
void print_upstreams(const nlohmann::json& snap) {
  std::printf("upstreams (as of %.1f s ago, supervisor pid %lld%s):\n", snap["age_s"].get<double>(),
              snap.value("supervisor_pid", 0LL), snap["supervisor_running"].get<bool>() ? "" : ", not running");
  std::printf("  %-28s %-5s %8s %9s %8s %9s %8s %8s %7s %6s  %s\n", "upstream", "state", "srtt ms", "rttvar ms",
              "rto ms", "queries", "timeouts", "refused", "probes", "downs", "RTT quantiles (UDP replies)");
  auto ms = [](const nlohmann::json& v) {
    char text[32] = "-";
    if (v.is_number()) std::snprintf(text, sizeof text, "%.2f", v.get<double>());
    return std::string(text);
  };
  for (const auto& u : snap["upstreams"]) {
    std::printf("  %-28s %-5s %8s %9s %8.1f %9llu %8llu %8llu %7llu %6llu", u["upstream"].get<std::string>().c_str(),
                u["state"].get<std::string>().c_str(), ms(u["srtt_ms"]).c_str(), ms(u["rttvar_ms"]).c_str(),
                u["rto_ms"].get<double>(), u["queries"].get<unsigned long long>(),
                u["timeouts"].get<unsigned long long>(), u["refusals"].get<unsigned long long>(),
                u["probes"].get<unsigned long long>(), u["downs"].get<unsigned long long>());
    if (u.contains("rtt")) std::printf("  %s", quantiles_text(u["rtt"]).c_str());
    if (u["state"] == "down")
      std::printf("  down %.1f s, next probe in %.0f ms", u["down_for_s"].get<double>(),
                  u["next_probe_in_ms"].get<double>());
    std::printf("\n");
  }
}

nlohmann::json row_json(const StatsRow& r, double qps, bool with_rate) {
  nlohmann::json j{{"name", r.name}, {"pid", r.pid}, {"queries", r.queries()}, {"hit_ratio", r.hit_ratio()},
                   {"upstream_latency_ms_avg", r.upstream_latency_ms()}, {"user_ns_per_query", r.user_ns_per_query()}};
  if (r.worker_index >= 0) j["worker"] = r.worker_index;
  if (with_rate) j["queries_per_s"] = qps;
  for (std::size_t k = 0; k < cache::kCounterCount; ++k) j[std::string(cache::kCounterNames[k])] = r.counters[k];
  return j;
}

// `stats --mrc`: the miss-ratio curve the serve publishes (mrc_report.hpp), with the
// upstream queries each capacity would send at the rate measured over `interval`.
int run_stats_mrc(const std::string& segment, bool json, double interval) {
  try {
    cache::Segment seg = cache::Segment::attach(segment);
    cache::Cache cache(seg, cache::SlotRole::tool);
    std::optional<nlohmann::json> snap = read_mrc_snapshot(segment);
    if (!snap) {
      std::cerr << "dnsarena stats: no miss-ratio curve for segment '" << segment
                << "' (is serve running, with mrc.enabled?)\n";
      return 2;
    }
    const StatsReport rep = interval > 0 ? collect_stats_with_rates(cache, interval) : collect_stats(cache);
    const double qps = rep.qps.empty() ? -1.0 : rep.qps.back();
    const std::string table = mrc_table(*snap, qps, rep.total.hit_ratio());
    if (json) {
      (*snap)["queries_per_s"] = qps >= 0 ? nlohmann::json(qps) : nlohmann::json(nullptr);
      (*snap)["hit_rate"] = rep.total.hit_ratio();
      std::cout << snap->dump() << "\n";
    } else {
      std::cout << table;
    }
    return 0;
  } catch (const cache::SegmentError& e) {
    std::cerr << "dnsarena stats: " << e.what() << "\n";
    return 2;
  }
}

int run_stats(const std::string& segment, bool json, double interval) {
  try {
    cache::Segment seg = cache::Segment::attach(segment);
    cache::Cache cache(seg, cache::SlotRole::tool);
    const StatsReport rep = interval > 0 ? collect_stats_with_rates(cache, interval) : collect_stats(cache);
    const bool rates = !rep.qps.empty();
    if (json) {
      nlohmann::json j;
      j["segment"] = segment;
      j["interval_s"] = rep.interval_s;
      j["entries"] = rep.cache.live_entries;
      j["max_entries"] = rep.cache.max_entries;
      j["bytes_per_entry"] = rep.cache.bytes_per_entry();  // everything / live entries
      j["arena_bytes_per_entry"] = rep.cache.arena_bytes_per_entry();
      j["arena_bytes_in_use"] = rep.cache.bytes_in_use;
      j["index_bytes"] = rep.cache.index_bytes;  // preallocated for max_entries
      j["index_bytes_per_entry_at_capacity"] = rep.cache.index_bytes_per_slot_at_capacity();
      j["segment_bytes"] = rep.cache.segment_bytes;
      j["rows"] = nlohmann::json::array();
      for (std::size_t i = 0; i < rep.rows.size(); ++i) j["rows"].push_back(row_json(rep.rows[i], rates ? rep.qps[i] : 0, rates));
      j["total"] = row_json(rep.total, rates ? rep.qps.back() : 0, rates);
      if (const auto snap = read_upstream_snapshot(segment)) {
        j["upstreams"] = (*snap)["upstreams"];
        j["upstreams_age_s"] = (*snap)["age_s"];
        j["upstreams_supervisor_running"] = (*snap)["supervisor_running"];
      }
      if (const auto snap = read_answer_snapshot(segment)) {
        j["answers"] = (*snap)["answers"];
        j["latency_le_ms"] = (*snap)["latency_le_ms"];
        j["answers_age_s"] = (*snap)["age_s"];
      }
      if (const auto snap = read_rpz_snapshot(segment)) j["rpz_zones"] = (*snap)["rpz_zones"];
      if (const auto snap = read_local_root_snapshot(segment)) j["local_root"] = (*snap)["local_root"];
      if (const auto snap = read_infra_snapshot(segment)) j["infra"] = (*snap)["infra"];
      std::cout << j.dump() << "\n";
      return 0;
    }
    // The arena per live entry and the preallocated index apart: their sum over the live
    // entries ("bytes/entry" before) is mostly the index at low fill and read as a
    // regression (1000 bytes/entry at 1% fill).
    const cache::CacheStats& cs = rep.cache;
    std::printf("segment %s: %llu of %llu entries (%.1f%% full), %.1f MiB in all\n", segment.c_str(),
                static_cast<unsigned long long>(cs.live_entries), static_cast<unsigned long long>(cs.max_entries),
                cs.max_entries ? 100.0 * static_cast<double>(cs.live_entries) / static_cast<double>(cs.max_entries) : 0.0,
                static_cast<double>(cs.segment_bytes) / (1 << 20));
    std::printf("  arena  %.1f bytes/entry (%.1f of %.1f MiB in use)\n", cs.arena_bytes_per_entry(),
                static_cast<double>(cs.bytes_in_use) / (1 << 20), static_cast<double>(cs.arena_bytes) / (1 << 20));
    std::printf("  index  %.1f MiB preallocated for %llu entries (%.1f bytes/entry at capacity)\n",
                static_cast<double>(cs.index_bytes) / (1 << 20), static_cast<unsigned long long>(cs.max_entries),
                cs.index_bytes_per_slot_at_capacity());
    std::printf("%-10s %8s %10s %10s %7s %10s %9s %9s %9s %8s %8s %8s %6s %9s %9s\n", "", "pid", "queries", "q/s", "hit%",
                "upstream", "up ms", "timeouts", "evict", "expire", "servfail", "formerr", "tc", "restarts", "user ns/q");
    auto print = [&](const StatsRow& r, double qps) {
      using C = cache::Counter;
      std::printf("%-10s %8u %10llu %10s %6.1f%% %10llu %9.2f %9llu %9llu %8llu %8llu %8llu %6llu %9llu %9.0f\n", r.name.c_str(),
                  r.pid, static_cast<unsigned long long>(r.queries()),
                  rates ? std::to_string(static_cast<long long>(qps)).c_str() : "-", 100.0 * r.hit_ratio(),
                  static_cast<unsigned long long>(r.get(C::upstream_queries)), r.upstream_latency_ms(),
                  static_cast<unsigned long long>(r.get(C::upstream_timeouts)),
                  static_cast<unsigned long long>(r.get(C::evictions)),
                  static_cast<unsigned long long>(r.get(C::expirations)),
                  static_cast<unsigned long long>(r.get(C::servfail)), static_cast<unsigned long long>(r.get(C::formerr)),
                  static_cast<unsigned long long>(r.get(C::truncated)),
                  static_cast<unsigned long long>(r.get(C::restarts)), r.user_ns_per_query());
    };
    for (std::size_t i = 0; i < rep.rows.size(); ++i) print(rep.rows[i], rates ? rep.qps[i] : 0);
    print(rep.total, rates ? rep.qps.back() : 0);
    if (const auto snap = read_answer_snapshot(segment)) print_answers(*snap);
    if (const auto snap = read_upstream_snapshot(segment)) print_upstreams(*snap);
    if (const auto snap = read_rpz_snapshot(segment)) std::cout << rpz_status_text(*snap);
    if (const auto snap = read_local_root_snapshot(segment)) std::cout << local_root_status_text(*snap);
    if (const auto snap = read_infra_snapshot(segment)) {
      std::cout << infra_text(*snap);
      std::printf("  queries held back by recursion.max_queries_per_server: %llu\n",
                  static_cast<unsigned long long>(rep.total.get(cache::Counter::authority_rate_limited)));
    }
    return 0;
  } catch (const cache::SegmentError& e) {
    std::cerr << "dnsarena stats: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace

void add_stats_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("stats", "Per-worker and total counters of a serve segment (queries, hit ratio, "
                                          "upstream, errors, restarts)");
  auto segment = std::make_shared<std::string>("dnsarena");
  auto json = std::make_shared<bool>(false);
  auto interval = std::make_shared<double>(1.0);
  auto mrc = std::make_shared<bool>(false);
  cmd->add_option("--segment", *segment, "segment name (default dnsarena)");
  cmd->add_option("--interval", *interval, "seconds between two reads for queries/s (0: no rates)")
      ->check(CLI::Range(0.0, 60.0));
  cmd->add_flag("--json", *json, "print one JSON object");
  cmd->add_flag("--mrc", *mrc,
                "the miss-ratio curve: hit rate and upstream q/s at 1/8x..8x the cache's capacity (serve's mrc)");
  cmd->callback([segment, json, interval, mrc] {
    const int rc = *mrc ? run_stats_mrc(*segment, *json, *interval) : run_stats(*segment, *json, *interval);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::workers
