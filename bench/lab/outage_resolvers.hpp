// SPDX-License-Identifier: GPL-3.0-or-later
// The resolvers `bench outage` compares, configured the same way: `dnsarena serve` (2
// workers) and Unbound (2 threads), each a forwarding cache to the scenario's synthetic
// upstreams, with serve-stale, failure caching and prefetch.
//
//   setting                     serve (YAML)                      Unbound
//   serve stale for a day       stale.max_age_s: 86400            serve-expired: yes,
//                                                                 serve-expired-ttl: 86400
//   response timer              stale.client_timeout_ms: 1800     serve-expired-client-timeout: 1800
//   refresh, then answer stale  stale.answer_first: false         (client timeout > 0)
//   failure cache               failure_cache: {min_s: 1, max_s: 300}   (infra cache, built in)
//   prefetch in the last 10%    prefetch: {percent: 10}           prefetch: yes
//   upstreams in order          --upstream A --upstream B         forward-addr: A, forward-addr: B
//
// A serve binary that does not know a resilience key rejects the whole config; with
// ServeKeys::auto_detect each key is first tried alone with `serve --check-config`, and
// the ones rejected as unknown are left out (and listed), so today's binary runs the
// scenarios without them and shows what it does without the features.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dnsarena::bench {

// One resolver started for one scenario; stopped by its destructor.
class Resolver {
public:
  virtual ~Resolver() = default;
  virtual std::uint16_t port() const = 0;
  // Its counters now (serve: `dnsarena stats` totals; Unbound: unbound-control), {} when
  // unreadable.
  virtual nlohmann::json counters() const = 0;
  // The counters worth reporting, as after - before (keys present in both only).
  virtual nlohmann::json counter_delta(const nlohmann::json& before, const nlohmann::json& after) const = 0;
};

// Starts one resolver forwarding to `upstreams` ("127.0.0.1:PORT", in order); `tag`
// names its files.
struct ResolverKind {
  std::string name;  // "dnsarena" or "unbound"
  std::function<std::unique_ptr<Resolver>(const std::vector<std::string>& upstreams, const std::string& tag)> start;
};

enum class ServeKeys { auto_detect, all, none };
ServeKeys parse_serve_keys(const std::string& s);  // "auto", "all", "none"; throws invalid_argument

// What serve is given: the config file written and which resilience keys it holds.
struct ServeSetup {
  std::string binary;
  std::string config_path;
  std::vector<std::string> keys_used, keys_omitted;
  std::string omitted_why;  // serve's message for the first key it rejected
  nlohmann::json to_json() const;
};

// Writes DIR/serve-outage.yaml with the resilience keys `keys` allows (the response
// timer is `response_timer_ms`), probing the binary when auto_detect.
ServeSetup prepare_serve(const std::string& binary, const std::string& dir, ServeKeys keys, unsigned response_timer_ms);

ResolverKind serve_kind(const ServeSetup& setup, const std::string& dir);
// Unbound's server: lines for the same settings.
std::vector<std::string> unbound_resilience_lines(unsigned response_timer_ms);
ResolverKind unbound_kind(const std::string& dir, unsigned response_timer_ms);

}  // namespace dnsarena::bench
