// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim load`: command line of the load client.
#include <cmath>
#include <fstream>
#include <iostream>

#include "dns/message.hpp"
#include "sim/command_options.hpp"
#include "sim/traffic/commands.hpp"
#include "sim/traffic/load_client.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim {

namespace {

struct LoadArgs {
  std::string server;
  std::string profile;
  std::string zone = "zone.";
  double rate = 0;  // 0: the profile's qps
  double duration_s = 10;
  std::uint64_t queries = 0;
  std::uint64_t seed = 1;
  std::uint64_t stream_seed = 7;
  double timeout_s = 2;
  unsigned sockets = 4;
  bool no_edns = false;
  bool json = false;
  std::string write_dnsperf;
};

// "127.0.0.1:5300", "[::1]:5300" -> host, port.
void split_server(const std::string& s, std::string& host, std::uint16_t& port) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon + 1 == s.size())
    throw std::invalid_argument("--server: expected HOST:PORT, got '" + s + "'");
  host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string p = s.substr(colon + 1);
  unsigned long v = 0;
  std::size_t used = 0;
  try {
    v = std::stoul(p, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != p.size() || v == 0 || v > 65535) throw std::invalid_argument("--server: bad port '" + p + "'");
  port = static_cast<std::uint16_t>(v);
}

void run_load_command(const LoadArgs& a) {
  const TrafficProfile profile = a.profile.empty() ? default_traffic_profile() : load_traffic_profile(a.profile);
  traffic::LoadOptions o;
  o.rate = a.rate > 0 ? a.rate : profile.qps;
  o.queries = a.queries > 0 ? a.queries : static_cast<std::uint64_t>(std::llround(o.rate * a.duration_s));
  o.timeout_s = a.timeout_s;
  o.sockets = a.sockets;
  o.edns = !a.no_edns;
  const traffic::QueryStream stream(profile, a.seed, a.stream_seed, a.zone);
  if (!a.write_dnsperf.empty()) {
    std::ofstream out(a.write_dnsperf, std::ios::trunc);
    if (!out) throw std::runtime_error(a.write_dnsperf + ": cannot write");
    traffic::StreamQuery q;
    for (std::uint64_t k = 0; k < o.queries; ++k) {
      stream.query(k, q);
      out << wire::wire_to_text(q.qname) << ' ' << dns::type_name(q.qtype) << '\n';
    }
    if (!out.flush()) throw std::runtime_error(a.write_dnsperf + ": write failed");
    if (!a.json) std::cout << "wrote " << o.queries << " queries to " << a.write_dnsperf << "\n";
    if (a.server.empty()) return;
  } else if (a.server.empty()) {
    throw std::invalid_argument("sim load: --server HOST:PORT is required (unless --write-dnsperf only)");
  }
  split_server(a.server, o.host, o.port);
  const traffic::LoadResult r = traffic::run_load(stream, o);
  if (a.json) {
    nlohmann::json j = r.to_json();
    j["server"] = a.server;
    j["seed"] = a.seed;
    j["stream_seed"] = a.stream_seed;
    std::cout << j.dump() << std::endl;
  } else {
    std::cout << "dnsarena-lab sim load: " << a.server << ", " << o.queries << " queries at " << o.rate
              << " q/s, timeout " << o.timeout_s << " s\n"
              << r.table() << std::flush;
  }
}

}  // namespace

void add_load_command(CLI::App& sim) {
  auto [cmd, args] = add_command<LoadArgs>(
      sim, "load",
      "Load client: sends the profile's query stream (Zipf popularity over the upstream's names,\n"
      "NODATA/NXDOMAIN shares, ECS from the profile's client subnets) over UDP at a paced rate,\n"
      "matches responses by ID and question, and reports sent, answered, lost, rcodes and\n"
      "latency p50/p90/p99. --write-dnsperf writes the same stream as a dnsperf query file.",
      run_load_command);
  cmd->add_option("--server", args->server, "Server to query, HOST:PORT (e.g. 127.0.0.1:5300, [::1]:5300)");
  cmd->add_option("--profile", args->profile, "Traffic profile YAML (default: the embedded seed profile)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--rate", args->rate, "Queries per second (default: the profile's qps)")
                   ->check(CLI::Range(0.001, 10e6));
  cmd->add_option("--duration", args->duration_s, "Seconds of load (queries = rate * duration)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  cmd->add_option("--queries", args->queries, "Number of queries (overrides --duration)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
  cmd->add_option("--seed", args->seed, "Seed of the names: must equal the upstream's --seed")->capture_default_str();
  cmd->add_option("--stream-seed", args->stream_seed, "Seed of the query order")->capture_default_str();
  cmd->add_option("--zone", args->zone, "Zone of the names: must equal the upstream's --zone")->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s, "Seconds after which an unanswered query is lost")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 60.0));
  cmd->add_option("--sockets", args->sockets, "UDP sockets (more are opened when rate * timeout needs them)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  cmd->add_flag("--no-edns", args->no_edns, "Send queries without OPT (512-byte answers, more TC); ECS needs OPT");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of the table");
  cmd->add_option("--write-dnsperf", args->write_dnsperf,
                  "Write the stream as a dnsperf query file ('name TYPE' per line); without --server, only that");
}

}  // namespace dnsarena::sim
