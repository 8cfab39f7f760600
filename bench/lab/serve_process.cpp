// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/serve_process.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "cache/segment.hpp"
#include "common/loopback.hpp"
#include "common/proc_stats.hpp"
#include "dns/query_builder.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::bench {

using namespace std::chrono_literals;

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

common::ChildProcess spawn_logged(const std::vector<std::string>& argv, const std::string& log, int cpu) {
  return common::ChildProcess(argv, {.log_path = log, .truncate_log = true, .search_path = true, .cpu = cpu});
}

bool wait_tcp(std::uint16_t port, common::ChildProcess& child, int timeout_ms) {
  for (int i = 0; i < timeout_ms / 20; ++i) {
    if (!child.running()) return false;
    if (common::accepts_tcp(port)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool wait_udp_answer(std::uint16_t port, common::ChildProcess& child, int timeout_ms) {
  const auto qname = wire::name_to_wire("probe.zone.");
  const common::Bytes query = dns::build_query({.id = 0x5e11, .qname = {qname.data(), qname.size()}, .qtype = 1,
                                                .edns = false});
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool answered = false;
  for (int waited = 0; waited < timeout_ms && !answered && child.running(); waited += 50) {
    ::sendto(fd, query.data(), query.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) == 1) {
      std::uint8_t reply[512];
      answered = ::recv(fd, reply, sizeof reply, 0) >= 12 && reply[0] == query[0] && reply[1] == query[1];
    }
  }
  ::close(fd);
  return answered;
}

ServeProcess::ServeProcess(const ServeSpec& spec)
    : port_(common::free_loopback_port()),
      segment_(spec.segment_prefix + "-" + std::to_string(::getpid()) + "-" + spec.tag),
      log_(spec.dir + "/serve-" + spec.tag + ".log"),
      binary_(spec.binary) {
  std::vector<std::string> argv{spec.binary,     "serve",       "--workers",        std::to_string(spec.workers),
                                "--listen",      "127.0.0.1:" + std::to_string(port_),
                                "--segment",     segment_,      "--no-metrics",     "--log-level",
                                "warn",          "--remove-segment", "--reset-segment", "--max-entries",
                                std::to_string(spec.max_entries), "--arena-bytes", spec.arena};
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());
  child_ = common::ChildProcess(argv, {.log_path = log_, .truncate_log = true, .die_with_parent = true});
  for (int i = 0; i < 500 && !common::accepts_tcp(port_); ++i) {
    if (!child_.running()) throw ServeStartError("serve did not start: " + slurp(log_));
    std::this_thread::sleep_for(20ms);
  }
  if (!common::accepts_tcp(port_)) throw ServeStartError("serve did not listen within 10 s: " + slurp(log_));
  std::this_thread::sleep_for(200ms);  // every worker attached
  workers_ = common::child_pids(child_.pid());
}

ServeProcess::~ServeProcess() {
  child_.stop();
  cache::Segment::remove(segment_);  // serve removes it; this covers a serve that was killed
}

nlohmann::json ServeProcess::stats() const {
  const std::string out = log_ + ".stats.json";
  common::ChildProcess st({binary_, "stats", "--segment", segment_, "--json", "--interval", "0"},
                          {.log_path = out, .truncate_log = true});
  if (!st.wait_exit(10s)) return {};
  try {
    const std::string text = slurp(out);
    return nlohmann::json::parse(text.substr(text.find('{')));
  } catch (const std::exception&) {
    return {};
  }
}

nlohmann::json ServeProcess::totals() const {
  const nlohmann::json s = stats();
  return s.is_object() && s.contains("total") ? s["total"] : nlohmann::json{};
}

double ServeProcess::workers_cpu() const {
  double s = 0;
  for (pid_t p : workers_) s += common::cpu_seconds(p);
  return s;
}

}  // namespace dnsarena::bench
