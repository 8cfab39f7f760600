// The Prometheus endpoint: GET /metrics on a loopback port, served by the supervisor.
//
// Text format 0.0.4: every stat-slot counter as `dnsarena_<counter>_total` with a
// `worker` label (index, or "other" for the supervisor and tools), plus cache gauges
// (live entries, capacity, bytes in use, bytes per entry, segment bytes). Each scrape
// is one collect_stats() pass: lock-free, a few microseconds.
// cpp-httplib runs its accept loop on one thread owned by this object.
#pragma once
#include <memory>
#include <string>
#include <thread>

#include "cache/segment.hpp"
#include "workers/serve_config.hpp"
#include "workers/stats_report.hpp"

namespace httplib {
class Server;
}

namespace dnsarena::workers {

std::string prometheus_text(const StatsReport& rep);

class MetricsServer {
public:
  // Binds at once; throws std::runtime_error when the port cannot be bound.
  MetricsServer(cache::Segment& segment, const Endpoint& listen);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

private:
  std::unique_ptr<cache::Cache> cache_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace dnsarena::workers
