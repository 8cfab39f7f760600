// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena serve`: reads the YAML config, applies flag overrides, runs the supervisor.
#include <spdlog/spdlog.h>

#include <iostream>

#include "common/add_command.hpp"
#include "workers/commands.hpp"
#include "workers/log_setup.hpp"
#include "workers/serve_config.hpp"
#include "workers/supervisor.hpp"
#include "workers/tls_credentials.hpp"

namespace dnsarena::workers {

namespace {

struct ServeFlags {
  std::string config;
  std::vector<std::string> listen;
  std::string segment, ecs, metrics, log_level, arena_bytes;
  std::vector<std::string> upstreams;
  std::vector<std::string> access_control;
  std::vector<std::string> forward_zones;
  int workers = -1;
  int attempts = -1;
  int rate_limit = -1;
  long long max_entries = -1;
  int timeout_ms = -1;
  bool remove_segment = false;
  bool reset_segment = false;
  bool no_metrics = false;
  std::string check_config;  // --check-config FILE: validate and exit
};

ServeConfig build_config(const ServeFlags& f) {
  ServeConfig c = f.config.empty() ? ServeConfig{} : load_serve_config(f.config);
  auto flag_error = [](const std::string& flag, const std::exception& e) {
    throw std::invalid_argument(flag + ": " + e.what());
  };
  // A repeatable address flag: when given, its list replaces the config's.
  auto endpoints_flag = [&](const std::vector<std::string>& values, const char* flag, std::vector<Endpoint>& into) {
    if (values.empty()) return;
    into.clear();
    for (const auto& v : values) try {
        into.push_back(Endpoint::parse(v));
      } catch (const std::exception& e) {
        flag_error(flag, e);
      }
  };
  endpoints_flag(f.listen, "--listen", c.listen);
  endpoints_flag(f.upstreams, "--upstream", c.upstreams);
  if (f.workers >= 0) c.workers = static_cast<unsigned>(f.workers);
  if (!f.segment.empty()) c.segment = f.segment;
  if (f.max_entries >= 0) c.geometry.max_entries = static_cast<std::uint64_t>(f.max_entries);
  try {
    if (!f.arena_bytes.empty()) c.geometry.arena_bytes = parse_size(f.arena_bytes);
  } catch (const std::exception& e) {
    flag_error("--arena-bytes", e);
  }
  try {
    if (!f.ecs.empty()) c.ecs_policy = parse_ecs_policy(f.ecs);
  } catch (const std::exception& e) {
    flag_error("--ecs", e);
  }
  if (f.timeout_ms > 0) c.upstream_timeout_ms = static_cast<unsigned>(f.timeout_ms);
  for (const auto& fz : f.forward_zones) try {  // ZONE=ADDR:PORT[,ADDR:PORT...]
      const std::size_t eq = fz.find('=');
      if (eq == std::string::npos) throw std::invalid_argument("'" + fz + "': expected ZONE=ADDR:PORT[,ADDR:PORT]");
      std::vector<Endpoint> servers;
      for (std::size_t at = eq + 1; at <= fz.size();) {
        const std::size_t comma = std::min(fz.find(',', at), fz.size());
        servers.push_back(Endpoint::parse(fz.substr(at, comma - at)));
        at = comma + 1;
      }
      c.forward_zones.push_back(ForwardZone::make(fz.substr(0, eq), std::move(servers)));
    } catch (const std::exception& e) {
      flag_error("--forward-zone", e);
    }
  if (f.attempts >= 0) c.upstream_attempts = static_cast<unsigned>(f.attempts);
  if (f.rate_limit >= 0) c.rate_limit.responses_per_second = static_cast<unsigned>(f.rate_limit);
  if (!f.access_control.empty()) {
    std::vector<AccessRule> rules;
    for (const auto& a : f.access_control) try {
        rules.push_back(AccessRule::parse(a));
      } catch (const std::exception& e) {
        flag_error("--access-control", e);
      }
    c.access_control = AccessControl(std::move(rules));
  }
  if (!f.metrics.empty()) c.metrics_listen = f.metrics;
  if (f.no_metrics) c.metrics_listen.clear();
  if (!f.log_level.empty()) c.log_level = f.log_level;
  if (f.reset_segment) c.reset_on_mismatch = true;
  c.validate();
  return c;
}

// `serve --check-config FILE`: the config serve would run with, or why not.
int check_config(const ServeFlags& flags) {
  ServeFlags f = flags;
  f.config = f.check_config;
  try {
    const ServeConfig c = build_config(f);
    std::string zones;
    for (const ForwardZone& z : c.zones())
      zones += (zones.empty() ? "" : ", ") + z.text +
               (z.transport == UpstreamTransport::udp ? "" : std::string(" over ") + to_string(z.transport));
    std::string dot;
    if (c.tls.enabled() || c.https.enabled()) {  // the files too: a certificate that would stop the start fails the check
      const auto credentials = TlsCredentials::load(c.tls.certificate, c.tls.key);
      const std::string certificate = " (certificate sha256 " + credentials->fingerprint() + ")";
      if (c.tls.enabled()) dot = ", DoT " + join_endpoints(c.tls.listen) + certificate;
      if (c.https.enabled()) dot += ", DoH " + join_endpoints(c.https.listen) + c.https.path + certificate;
    }
    // The policy is compiled as serve would, so a broken zone file is named with its line.
    const std::string policy =
        c.policy.empty() ? "" : ", policy " + std::to_string(policy::compile_policy_config(c.policy).rules) + " rules";
    std::cout << f.config << ": valid: listen " << join_endpoints(c.listen) << dot << ", " << c.resolved_workers()
              << " workers, segment " << c.segment << ", forwarding " << zones << policy << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << f.config << ": invalid: " << e.what() << "\n";
    return 1;
  }
}

// `serve`: check the config (--check-config) or run the supervisor. Returns the exit code.
int run_serve(const ServeFlags& f) {
  if (!f.check_config.empty()) return check_config(f);
  ServeConfig c;
  try {
    c = build_config(f);
  } catch (const std::exception& e) {
    std::cerr << "dnsarena serve: " << e.what() << "\n";
    return 2;
  }
  configure_logging(c.log_level);
  SupervisorOptions options{f.remove_segment, {}};
  if (!f.config.empty()) options.reload_config = [flags = f] { return build_config(flags); };
  return run_supervisor(c, options);
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto [cmd, f] = common::add_command<ServeFlags>(
      app, "serve",
      "Run the DNS service: a supervisor creates or re-attaches the shared cache segment and forks\n"
      "resolver workers on its UDP/TCP addresses; misses go to the upstream servers. Flags override the\n"
      "config file. Stop with SIGTERM or Ctrl-C; the cache segment stays warm for the next start.",
      run_serve);
  cmd->add_option("--config,-c", f->config, "YAML config file (see configs/serve.yaml)")->check(CLI::ExistingFile);
  cmd->add_option("--listen", f->listen,
                  "address:port for UDP and TCP, [IPv6]:port, 0.0.0.0:port or [::]:port for every local address "
                  "(repeatable; replaces the config's list; default 127.0.0.1:8053)");
  cmd->add_option("--upstream", f->upstreams, "upstream address:port (repeatable; replaces the config's list)");
  cmd->add_option("--workers", f->workers, "worker processes (0 = one per core)");
  cmd->add_option("--segment", f->segment, "shared-memory segment name (default dnsarena)");
  cmd->add_option("--max-entries", f->max_entries, "cache capacity in entries (a new segment only)");
  cmd->add_option("--arena-bytes", f->arena_bytes, "cache arena size, e.g. 256M (a new segment only)");
  cmd->add_option("--ecs", f->ecs, "ECS policy: off, forward, synthesize");
  cmd->add_option("--upstream-timeout-ms", f->timeout_ms, "first upstream attempt's timeout (later: 2x, 4x)");
  cmd->add_option("--forward-zone", f->forward_zones,
                  "ZONE=ADDR:PORT[,ADDR:PORT]: names in ZONE go there, and only there (repeatable)");
  cmd->add_option("--upstream-attempts", f->attempts, "attempts per miss (0 = max(3, upstreams))");
  cmd->add_option("--access-control", f->access_control,
                  "'SUBNET allow|refuse|deny' (repeatable; replaces the config's list; default loopback only)");
  cmd->add_option("--rate-limit", f->rate_limit,
                  "UDP answers per second per client subnet, all workers together (0 = off)");
  cmd->add_option("--metrics", f->metrics, "Prometheus /metrics address:port (loopback)");
  cmd->add_flag("--no-metrics", f->no_metrics, "do not serve /metrics");
  cmd->add_option("--log-level", f->log_level, "trace, debug, info, warn, error");
  cmd->add_flag("--remove-segment", f->remove_segment, "remove the segment on shutdown (default: keep it warm)");
  cmd->add_flag("--reset-segment", f->reset_segment,
                "replace a segment that cannot be migrated (damaged, foreign, an unreadable format version) "
                "instead of refusing to start (an older format or another geometry is migrated warm either way)");
  cmd->add_option("--check-config", f->check_config,
                  "validate FILE (with the other flags applied, as serve would) and exit: 0 valid, 1 not");
}

}  // namespace dnsarena::workers
