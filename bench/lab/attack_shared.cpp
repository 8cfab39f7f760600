// SPDX-License-Identifier: GPL-3.0-or-later
// What the scenarios of `dnsarena-lab bench attack` share (attack_scenarios.hpp).
#include <sstream>

#include "bench/lab/attack_scenarios.hpp"

namespace dnsarena::bench {

namespace {

ServeSpec attack_serve_spec(const AttackContext& ctx, const std::string& binary, const std::string& tag,
                            std::uint16_t real_port, std::uint16_t hole_port, std::uint64_t max_entries,
                            const std::string& arena) {
  ServeSpec s{.binary = binary, .dir = ctx.dir, .tag = tag, .segment_prefix = "dnsarena-bench-attack",
              .max_entries = max_entries, .arena = arena};
  s.args = {"--forward-zone", "real.=127.0.0.1:" + std::to_string(real_port)};
  if (hole_port) s.args.insert(s.args.end(), {"--forward-zone", "hole.=127.0.0.1:" + std::to_string(hole_port)});
  if (!ctx.options.serve_config.empty()) s.args.insert(s.args.end(), {"-c", ctx.options.serve_config});
  return s;
}

}  // namespace

void AttackOptions::make_quick() {
  quick = true;
  slow_clients = 200;
  slow_seconds = 5;
  flood_rate = 1000;
  flood_seconds = 5;
  spoof_names = 1000;
  spoof_forged = 100000;
  spoof_seconds = 3;
  fill_names = 20000;
  fill_rate = 5000;
  hit_seconds = 2;
}

AttackServe::AttackServe(const AttackContext& ctx, const std::string& binary, const std::string& tag,
                         std::uint16_t real_port, std::uint16_t hole_port, std::uint64_t max_entries,
                         const std::string& arena)
    : ServeProcess(attack_serve_spec(ctx, binary, tag, real_port, hole_port, max_entries, arena)) {}

NameFn numbered_names(const std::string& prefix, const std::string& zone, std::uint64_t modulo) {
  return [=](std::uint64_t i) { return wire_name(prefix + std::to_string(modulo ? i % modulo : i) + "." + zone); };
}

LoadResult attack_load(const AttackContext& ctx, std::uint16_t port, std::uint64_t count, double rate, NameFn name,
                       std::chrono::milliseconds timeout,
                       std::function<void(std::uint64_t, const std::uint8_t*, std::size_t)> on_reply,
                       std::atomic<std::uint64_t>* sent) {
  LoadSpec s;
  s.port = port;
  s.count = count;
  s.rate = rate;
  s.timeout = timeout;
  s.name = std::move(name);
  s.on_reply = std::move(on_reply);
  s.sent = sent;
  s.stop = &ctx.interrupted;
  return run_load(s);
}

nlohmann::json load_result_json(const LoadResult& r) {
  return {{"sent", r.sent},         {"answered", r.answered}, {"noerror", r.noerror}, {"nxdomain", r.nxdomain},
          {"servfail", r.servfail}, {"refused", r.refused},   {"lost", r.lost()}};
}

void append_tcp_frame(std::vector<std::uint8_t>& out, const std::vector<std::uint8_t>& message) {
  out.push_back(static_cast<std::uint8_t>(message.size() >> 8));
  out.push_back(static_cast<std::uint8_t>(message.size()));
  out.insert(out.end(), message.begin(), message.end());
}

std::uint64_t udp_rcvbuf_errors() {
  std::istringstream in(slurp("/proc/net/snmp"));
  std::string names, values, line;
  while (std::getline(in, line))
    if (line.rfind("Udp:", 0) == 0) {
      if (names.empty()) names = line;
      else values = line;
    }
  std::istringstream n(names), v(values);
  std::string name, value;
  while (n >> name && v >> value)
    if (name == "RcvbufErrors") return std::stoull(value);
  return 0;
}

std::string serve_summary(const nlohmann::json& t) {
  if (!t.is_object()) return "";
  auto get = [&](const char* k) { return t.contains(k) ? t[k].get<std::uint64_t>() : 0; };
  return "; serve counted " + std::to_string(get("upstream_timeouts")) + " upstream timeouts, " +
         std::to_string(get("upstream_jostled")) + " jostled, " + std::to_string(get("upstream_overload")) +
         " refused by a bound";
}

}  // namespace dnsarena::bench
