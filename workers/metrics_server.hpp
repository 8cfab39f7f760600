// SPDX-License-Identifier: GPL-3.0-or-later
// The Prometheus endpoint: GET /metrics on a loopback port, served by the metrics
// process (metrics_process.hpp), which the supervisor forks so that it runs no thread.
//
// Text format 0.0.4: every stat-slot counter as `dnsarena_<counter>_total` with a
// `worker` label (index, or "other" for the supervisor and tools), plus cache gauges
// (live entries, capacity, bytes in use, bytes per entry, segment bytes). Each scrape
// is one collect_stats() pass: lock-free, a few microseconds.
// Per upstream (the supervisor's health table, upstream_health.hpp; label `upstream`,
// "address:port"): dnsarena_upstream_server_up (1 up, 0 down), _srtt_ms and _rttvar_ms
// (once it replied), _rto_ms, _consecutive_failures (gauges), and _queries_total,
// _timeouts_total, _refusals_total, _probes_total, _downs_total (counters). An upstream
// removed by a reload keeps its last values until the service restarts.
// Histograms (latency_histogram.hpp's buckets, in seconds as Prometheus names them:
// le="0.0001" .. "5", "+Inf"): dnsarena_upstream_rtt_seconds{upstream} (UDP replies),
// dnsarena_answer_latency_seconds{kind="hit"|"miss"} (answer_metrics.hpp), each with
// _bucket (cumulative), _sum and _count; counters dnsarena_answer_rcodes_total{rcode}
// and dnsarena_answer_qtypes_total{qtype} (answers sent, summed over the workers).
// The miss-ratio curves per capacity factor (dnsarena_mrc_*{factor}: mrc_report.hpp).
// RPZ zones by transfer (dnsarena_rpz_*{zone}: rpz_transfer_status.hpp), from the
// transfer process's snapshot file.
// cpp-httplib runs its accept loop on one thread owned by this object.
#pragma once
#include <memory>
#include <string>
#include <thread>

#include "cache/segment.hpp"
#include "workers/serve_config.hpp"
#include "workers/answer_metrics.hpp"
#include "workers/miss_ratio_curves.hpp"
#include "workers/stats_report.hpp"
#include "workers/upstream_health.hpp"

namespace httplib {
class Server;
}

namespace dnsarena::workers {

std::string prometheus_text(const StatsReport& rep);
std::string prometheus_text(const UpstreamHealth& health, std::uint64_t now_us);
std::string prometheus_text(const AnswerMetrics::Totals& answers);

class MetricsServer {
public:
  // Binds at once; throws std::runtime_error when the port cannot be bound. `health` and
  // `answers` (may be nullptr): the upstream health table and the answer metrics, read
  // on every scrape.
  MetricsServer(cache::Segment& segment, const Endpoint& listen, const UpstreamHealth* health = nullptr,
                const AnswerMetrics* answers = nullptr, const MissRatioCurves* curves = nullptr);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

private:
  std::unique_ptr<cache::Cache> cache_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace dnsarena::workers
