// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/query_check.hpp"

#include <algorithm>

#include "wire/constants.hpp"
#include "workers/access_control.hpp"
#include "workers/dns64.hpp"
#include "workers/ecs.hpp"
#include "workers/server_cookies.hpp"

namespace dnsarena::workers {

using dns::ParseVerdict;
using wire::kRcodeNoError, wire::kRcodeFormErr, wire::kRcodeNotImp, wire::kRcodeRefused, wire::kRcodeBadVers,
    wire::kRcodeBadCookie, wire::kTypeAny;

std::size_t client_limit(const ServeConfig& cfg, const dns::ClientQuery& q, bool tcp) {
  return tcp ? 65535 : std::min<std::size_t>(q.edns ? q.udp_size : 512, cfg.max_udp_size);
}

QueryCheck::QueryCheck(const ServeConfig& cfg, cache::Cache& cache, RateLimitTable* rate_limit_table,
                       const dns::CookieSecrets& cookie_secrets)
    : cfg_(cfg),
      cache_(cache),
      rate_limiter_(cfg.rate_limit, rate_limit_table),
      cookie_secrets_(cookie_secrets),
      validated_flag_(cfg.dnssec.validating() ? cache::kKeyAuthenticated : 0) {}

CheckedQuery QueryCheck::check(std::uint8_t* wire, std::size_t len, const sockaddr_storage& client, bool tcp,
                               std::uint32_t now, dns::ClientQuery& q, std::uint8_t* out, std::size_t cap,
                               cache::CacheKey* key) {
  const AccessAction access = cfg_.access_control.check(client);
  if (access == AccessAction::deny) {
    cache_.count(cache::Counter::refused);
    return {};
  }
  const ParseVerdict v = dns::parse_query(wire, len, q, key);
  if (v == ParseVerdict::drop) {
    cache_.count(cache::Counter::formerr);
    return {};
  }
  // Server cookies (server_cookies.hpp): from here on q.cookie is the one answers carry.
  bool cookie_valid = false;
  if (q.cookie.len) {
    if (!cfg_.cookies) q.cookie.len = 0;  // not a cookie server: the option is ignored
    else if ((cookie_valid = answer_cookie(q.cookie, client, now, cookie_secrets_)))
      cache_.count(cache::Counter::cookie_valid);
  }
  // A valid server cookie proved the client's address: no rate limit for it.
  if (!tcp && rate_limiter_.enabled() && !cookie_valid) {
    // Over the subnet's rate: dropped, or (slip) TC so a real client retries over TCP.
    const RateLimiter::Verdict rl = rate_limiter_.check(client, now);
    if (rl != RateLimiter::Verdict::answer) {
      cache_.count(cache::Counter::rate_limited);
      if (rl == RateLimiter::Verdict::drop) return {};
      const std::size_t n = dns::write_error_response(q, kRcodeNoError, out, cap);
      if (n) out[2] |= 0x02;
      return {false, n};
    }
  }
  if (access == AccessAction::refuse) {
    cache_.count(cache::Counter::refused);
    return {false, dns::write_error_response(q, kRcodeRefused, out, cap)};
  }
  if (v != ParseVerdict::ok) {
    cache_.count(cache::Counter::formerr);
    const std::uint16_t rcode = v == ParseVerdict::formerr   ? kRcodeFormErr
                                : v == ParseVerdict::notimp  ? kRcodeNotImp
                                : v == ParseVerdict::badvers ? kRcodeBadVers
                                                             : kRcodeRefused;
    return {false, dns::write_error_response(q, rcode, out, cap)};
  }
  if (q.cookie.len && !cookie_valid && !tcp && cfg_.cookies_require) {  // RFC 7873 5.2.3, 5.2.4
    cache_.count(cache::Counter::cookie_badcookie);
    return {false, dns::write_error_response(q, kRcodeBadCookie, out, cap)};
  }
  if (q.qtype == kTypeAny && !tcp) cache_.count(cache::Counter::any_minimal);
  CheckedQuery c;
  c.lookup = true;
  c.ecs = upstream_ecs(cfg_.ecs_policy, q, client, cfg_.ecs_ipv4_prefix, cfg_.ecs_ipv6_prefix);
  if (q.do_bit) c.flags |= cache::kKeyDo;
  c.flags |= q.cd() ? cache::kKeyCd : validated_flag_;  // CD data is never validated: no verdict to keep apart
  if (cfg_.dns64.enabled) [[unlikely]] c.flags |= dns64_key_flag(cfg_.dns64, q, client);  // dns64.hpp
  c.limit = client_limit(cfg_, q, tcp);
  return c;
}

}  // namespace dnsarena::workers
