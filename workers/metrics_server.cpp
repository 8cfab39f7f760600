#include "workers/metrics_server.hpp"

#include <httplib.h>

#include <mutex>
#include <sstream>

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

MetricsServer::MetricsServer(cache::Segment& segment, const Endpoint& listen)
    : cache_(std::make_unique<cache::Cache>(segment, cache::SlotRole::tool)),
      server_(std::make_unique<httplib::Server>()) {
  std::string host = listen.text.substr(0, listen.text.rfind(':'));
  if (!host.empty() && host.front() == '[') host = host.substr(1, host.size() - 2);
  auto mu = std::make_shared<std::mutex>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(1); };
  server_->Get("/metrics", [this, mu](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(*mu);
    res.set_content(prometheus_text(collect_stats(*cache_)), "text/plain; version=0.0.4");
  });
  if (!server_->bind_to_port(host, listen.port())) throw std::runtime_error("cannot bind " + listen.text);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

MetricsServer::~MetricsServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace dnsarena::workers
