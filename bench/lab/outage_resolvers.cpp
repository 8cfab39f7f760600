// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/outage_resolvers.hpp"

#include <chrono>
#include <fstream>
#include <stdexcept>

#include "bench/lab/serve_process.hpp"
#include "bench/lab/unbound_process.hpp"
#include "common/child_process.hpp"

namespace dnsarena::bench {

namespace {

// The resilience keys, each one YAML line, in the order written.
std::vector<std::pair<std::string, std::string>> resilience_keys(unsigned response_timer_ms) {
  return {{"stale", "stale: {max_age_s: 86400, client_timeout_ms: " + std::to_string(response_timer_ms) +
                        ", answer_first: false}"},
          {"failure_cache", "failure_cache: {min_s: 1, max_s: 300}"},
          {"prefetch", "prefetch: {percent: 10}"}};
}

// serve --check-config on a file holding `yaml`: "" when valid, else serve's message.
std::string check_config(const std::string& binary, const std::string& path, const std::string& yaml) {
  std::ofstream(path, std::ios::trunc) << yaml << "\n";
  common::ChildProcess check({binary, "serve", "--check-config", path}, {.log_path = path + ".out", .truncate_log = true});
  if (!check.wait_exit(std::chrono::seconds(20))) return "serve --check-config did not finish within 20 s";
  const std::string out = slurp(path + ".out");  // the verdict is on stderr
  return check.exit_code() == 0 ? "" : (out.empty() ? "rejected (" + check.exit_status() + ")" : out);
}

nlohmann::json pick_delta(const nlohmann::json& before, const nlohmann::json& after,
                          const std::vector<std::string>& keys) {
  nlohmann::json d = nlohmann::json::object();
  if (!before.is_object() || !after.is_object()) return d;
  for (const std::string& k : keys)
    if (before.contains(k) && after.contains(k) && before[k].is_number() && after[k].is_number())
      d[k] = after[k].get<double>() - before[k].get<double>();
  return d;
}

class ServeResolver : public Resolver {
public:
  explicit ServeResolver(const ServeSpec& spec) : serve_(spec) {}
  std::uint16_t port() const override { return serve_.port(); }
  nlohmann::json counters() const override { return serve_.totals(); }
  nlohmann::json counter_delta(const nlohmann::json& before, const nlohmann::json& after) const override {
    return pick_delta(before, after,
                      {"hits", "misses", "expirations", "upstream_queries", "upstream_timeouts", "servfail",
                       "stale_answers", "failure_cached", "deadline_answers", "prefetches", "upstream_joined",
                       "upstream_probes", "upstream_down_skips", "upstream_trials"});
  }

private:
  ServeProcess serve_;
};

class UnboundResolver : public Resolver {
public:
  explicit UnboundResolver(const UnboundSpec& spec) : unbound_(spec) {}
  std::uint16_t port() const override { return unbound_.port(); }
  nlohmann::json counters() const override { return unbound_.counters(); }
  nlohmann::json counter_delta(const nlohmann::json& before, const nlohmann::json& after) const override {
    return pick_delta(before, after,
                      {"total.num.queries", "total.num.cachehits", "total.num.cachemiss", "total.num.prefetch",
                       "total.num.expired", "total.num.recursivereplies", "total.requestlist.exceeded"});
  }

private:
  UnboundProcess unbound_;
};

}  // namespace

ServeKeys parse_serve_keys(const std::string& s) {
  if (s == "auto") return ServeKeys::auto_detect;
  if (s == "all") return ServeKeys::all;
  if (s == "none") return ServeKeys::none;
  throw std::invalid_argument("--serve-keys: expected auto, all or none, got '" + s + "'");
}

nlohmann::json ServeSetup::to_json() const {
  nlohmann::json j{{"config", config_path}, {"keys_used", keys_used}, {"keys_omitted", keys_omitted}};
  if (!omitted_why.empty()) j["omitted_why"] = omitted_why;
  return j;
}

ServeSetup prepare_serve(const std::string& binary, const std::string& dir, ServeKeys keys, unsigned response_timer_ms) {
  ServeSetup s;
  s.binary = binary;
  s.config_path = dir + "/serve-outage.yaml";
  std::string yaml =
      "# bench outage: serve's resilience settings (bench/outage_resolvers.hpp lists the Unbound options beside "
      "them)\n";
  for (const auto& [key, line] : resilience_keys(response_timer_ms)) {
    bool use = keys != ServeKeys::none;
    if (keys == ServeKeys::auto_detect) {
      const std::string why = check_config(binary, dir + "/serve-probe-" + key + ".yaml", line);
      if (!why.empty() && why.find("unknown key") != std::string::npos) {
        use = false;
        if (s.omitted_why.empty()) s.omitted_why = why;
      }
    }
    (use ? s.keys_used : s.keys_omitted).push_back(key);
    if (use) yaml += line + "\n";
  }
  std::ofstream(s.config_path, std::ios::trunc) << yaml;
  while (!s.omitted_why.empty() && (s.omitted_why.back() == '\n' || s.omitted_why.back() == ' '))
    s.omitted_why.pop_back();
  return s;
}

ResolverKind serve_kind(const ServeSetup& setup, const std::string& dir) {
  return {"dnsarena", [setup, dir](const std::vector<std::string>& upstreams, const std::string& tag) {
            ServeSpec spec{.binary = setup.binary, .dir = dir, .tag = tag, .segment_prefix = "dnsarena-bench-outage"};
            for (const std::string& u : upstreams) spec.args.insert(spec.args.end(), {"--upstream", u});
            spec.args.insert(spec.args.end(), {"-c", setup.config_path});
            return std::unique_ptr<Resolver>(std::make_unique<ServeResolver>(spec));
          }};
}

std::vector<std::string> unbound_resilience_lines(unsigned response_timer_ms) {
  return {"serve-expired: yes", "serve-expired-ttl: 86400",
          "serve-expired-client-timeout: " + std::to_string(response_timer_ms), "prefetch: yes",
          "msg-cache-size: 64m", "rrset-cache-size: 128m", "outgoing-range: 1024", "num-queries-per-thread: 1024"};
}

ResolverKind unbound_kind(const std::string& dir, unsigned response_timer_ms) {
  return {"unbound", [dir, response_timer_ms](const std::vector<std::string>& upstreams, const std::string& tag) {
            UnboundSpec spec{.dir = dir, .tag = tag, .threads = 2, .server_lines = unbound_resilience_lines(response_timer_ms)};
            for (const std::string& u : upstreams) {
              const auto colon = u.rfind(':');
              spec.forward_addrs.push_back(u.substr(0, colon) + "@" + u.substr(colon + 1));
            }
            return std::unique_ptr<Resolver>(std::make_unique<UnboundResolver>(spec));
          }};
}

}  // namespace dnsarena::bench
