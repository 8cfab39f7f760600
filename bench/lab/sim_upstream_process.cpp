// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/sim_upstream_process.hpp"

#include <signal.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "bench/lab/serve_process.hpp"
#include "common/loopback.hpp"

namespace dnsarena::bench {

using namespace std::chrono_literals;

SimUpstreamProcess::SimUpstreamProcess(const SimUpstreamSpec& spec)
    : port_(common::free_loopback_port()),
      stats_path_(spec.dir + "/upstream-" + spec.tag + ".json"),
      log_(spec.dir + "/upstream-" + spec.tag + ".log") {
  std::vector<std::string> argv{spec.binary, "sim", "upstream", "--port", std::to_string(port_), "--seed",
                                std::to_string(spec.seed), "--delay-ms", std::to_string(spec.delay_ms),
                                "--stats-file", stats_path_};
  if (!spec.profile_path.empty()) argv.insert(argv.end(), {"--profile", spec.profile_path});
  if (spec.silent) argv.push_back("--silent");
  child_ = common::ChildProcess(argv, {.log_path = log_, .truncate_log = true, .die_with_parent = true});
  for (int i = 0; i < 500 && !common::accepts_tcp(port_); ++i) {
    if (!child_.running()) throw std::runtime_error("sim upstream did not start: " + slurp(log_));
    std::this_thread::sleep_for(20ms);
  }
  if (!common::accepts_tcp(port_)) throw std::runtime_error("sim upstream did not listen within 10 s: " + slurp(log_));
}

void SimUpstreamProcess::set_silent(bool silent) {
  ::kill(child_.pid(), silent ? SIGUSR1 : SIGUSR2);
  for (int i = 0; i < 100; ++i) {
    const nlohmann::json j = stats();
    if (j.contains("silent") && j["silent"].get<std::uint64_t>() == (silent ? 1u : 0u)) return;
    std::this_thread::sleep_for(50ms);
  }
  throw std::runtime_error(std::string("sim upstream did not turn ") + (silent ? "silent" : "live") +
                           " within 5 s (a binary without the black-hole switch?): " + slurp(log_));
}

nlohmann::json SimUpstreamProcess::stats() const {
  try {
    const nlohmann::json j = nlohmann::json::parse(slurp(stats_path_));
    return j.is_object() ? j : nlohmann::json::object();
  } catch (const nlohmann::json::exception&) {
    return nlohmann::json::object();
  }
}

nlohmann::json SimUpstreamProcess::settled_stats() const {
  std::this_thread::sleep_for(400ms);
  return stats();
}

std::uint64_t SimUpstreamProcess::settled(const char* counter) const {
  const nlohmann::json j = settled_stats();
  return j.contains(counter) ? j[counter].get<std::uint64_t>() : 0;
}

}  // namespace dnsarena::bench
