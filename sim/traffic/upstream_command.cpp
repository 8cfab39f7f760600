// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim upstream`: command line of the synthetic authoritative server.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "common/process_limits.hpp"
#include "dns/message.hpp"
#include "sim/command_options.hpp"
#include "sim/traffic/commands.hpp"
#include "sim/traffic/upstream_server.hpp"

namespace dnsarena::sim {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }
// The black-hole switch: SIGUSR1 turns it on (every query read and dropped), SIGUSR2 off.
std::atomic<bool> g_silent{false};
static_assert(std::atomic<bool>::is_always_lock_free, "stored from a signal handler");
extern "C" void on_silence_signal(int sig) { g_silent.store(sig == SIGUSR1); }

void install_silence_signals() {
  struct sigaction sa{};
  sa.sa_handler = on_silence_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGUSR1, &sa, nullptr);
  ::sigaction(SIGUSR2, &sa, nullptr);
}

struct UpstreamArgs {
  std::string profile;
  std::string zone = "zone.";
  std::uint64_t seed = 1;
  double ttl_scale = 1.0;
  std::string write_names;
  bool silent = false;
  traffic::UpstreamOptions server;
};

TrafficProfile profile_from(const std::string& path) {
  return path.empty() ? default_traffic_profile() : load_traffic_profile(path);
}

void run_upstream(const UpstreamArgs& a) {
  const TrafficProfile profile = profile_from(a.profile);
  const traffic::UpstreamZone zone(profile, a.seed, a.zone, a.ttl_scale);
  if (!a.write_names.empty()) {
    std::ofstream out(a.write_names, std::ios::trunc);
    if (!out) throw std::runtime_error(a.write_names + ": cannot write");
    for (std::uint64_t i = 0; i < zone.size(); ++i)
      out << zone.name_text(i) << ' ' << dns::type_name(zone.entry(i).qtype) << '\n';
    if (!out.flush()) throw std::runtime_error(a.write_names + ": write failed");
    std::cout << "wrote " << zone.size() << " names to " << a.write_names << "\n";
    return;
  }
  traffic::UpstreamServer server(zone, a.server);
  common::install_stop_signals(on_stop_signal);
  g_silent.store(a.silent);
  install_silence_signals();
  std::cout << "dnsarena-lab sim upstream: zone " << wire::wire_to_text(zone.zone_wire()) << ", " << zone.size()
            << " names, seed " << a.seed << ", listening on " << a.server.listen << " port " << server.port()
            << " (udp+tcp)" << (a.ttl_scale != 1.0 ? ", TTLs x " + std::to_string(a.ttl_scale) : "")
            << (a.silent ? ", silent until SIGUSR2" : "") << std::endl;
  server.run(g_stop, g_silent);
  std::cout << "dnsarena-lab sim upstream: stopped; counters " << server.stats().to_json().dump() << std::endl;
}

}  // namespace

void add_upstream_command(CLI::App& sim) {
  auto [cmd, args] = add_command<UpstreamArgs>(
      sim, "upstream",
      "Synthetic authoritative server on loopback (UDP+TCP): answers every name of its zone\n"
      "deterministically from a traffic profile (A/AAAA/TXT per the seed's mix, CNAME chains,\n"
      "NXDOMAIN/NODATA, ECS-dependent answers with scope /24). Counters: TXT of\n"
      "count.stats.<zone>, --stats-file, and printed at exit (SIGINT/SIGTERM).\n"
      "Black hole (an upstream outage): SIGUSR1 stops answering (every query, UDP and TCP, is\n"
      "read and dropped, counted as 'blackholed'; the stats file shows silent=1), SIGUSR2\n"
      "answers again; --silent starts that way.",
      run_upstream);
  cmd->add_option("--profile", args->profile, "Traffic profile YAML (default: the embedded seed profile)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--listen", args->server.listen, "Address to listen on (IPv4 or IPv6)")->capture_default_str();
  cmd->add_option("--port", args->server.port, "UDP and TCP port (0: pick a free one and print it)")
      ->capture_default_str();
  cmd->add_option("--zone", args->zone, "Zone apex; names are <generated labels>.<zone>")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the names and answers (sim load needs the same)")
      ->capture_default_str();
  cmd->add_option("--ttl-scale", args->ttl_scale,
                  "Serve every TTL (and the SOA minimum) x this factor, rounded, at least 1 s: a compressed clock "
                  "(sim validate --minute-seconds)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1.0));
  cmd->add_option("--delay-ms", args->server.delay_ms, "Delay every response by this many milliseconds")
      ->capture_default_str()
      ->check(CLI::Range(0u, 60000u));
  cmd->add_option("--stats-file", args->server.stats_file,
                  "Write the counters as JSON to FILE every 200 ms (atomic rename) and at exit");
  cmd->add_flag("--silent", args->silent, "Start as a black hole: drop every query until SIGUSR2");
  cmd->add_option("--write-names", args->write_names,
                  "Write every name as 'name TYPE' (a dnsperf query file) to FILE and exit");
}

}  // namespace dnsarena::sim
