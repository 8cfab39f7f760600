// SPDX-License-Identifier: GPL-3.0-or-later
// The first stage of the worker's query path (query_pipeline.hpp): everything a query
// goes through before the response policy and the cache. In order:
//
//   access control  deny: dropped; refuse: REFUSED (after the rate limit, below)
//   parse           dns/fast_query_parser.hpp for the common query, libknot for the rest;
//                   unparseable: dropped; FORMERR / NOTIMP / BADVERS / REFUSED answers
//   server cookie   server_cookies.hpp: a valid one exempts the client from the rate limit
//   rate limit      UDP only: over the subnet's rate, dropped or (slip) TC
//   BADCOOKIE       cookies.require and a client cookie without a valid server cookie
//   the lookup      ECS to send upstream (ecs.hpp), the key flags (DO, CD; authenticated
//                   when the worker validates and the client did not set CD: entries kept
//                   under validation, each with its verdict, are apart from entries kept
//                   without it, so a reload that turns validation on or off never serves
//                   what the other mode cached), the client's answer size limit
//
// Cost: one access-control lookup, the parse, one rate-limit bucket (UDP); no allocation.
#pragma once
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

#include "cache/cache.hpp"
#include "dns/client_query.hpp"
#include "dns/ecs_option.hpp"
#include "dns/server_cookie.hpp"
#include "workers/rate_limiter.hpp"
#include "workers/serve_config.hpp"

namespace dnsarena::workers {

// What the check decided for a query: `lookup` false means the answer (or nothing, size
// 0) is already decided; true means the cache is asked next, with these parameters.
struct CheckedQuery {
  bool lookup = false;
  std::size_t size = 0;
  dns::EcsOption ecs;      // what a miss sends upstream (ecs.hpp); present: ECS keys first
  std::size_t limit = 0;   // the client's answer size limit
  std::uint8_t flags = 0;  // the key flags (DO, CD, authenticated, DNS64)
};

// The largest answer a client may get: over a stream 65535; over UDP what its EDNS offers
// (512 without), at most max_udp_size (1232 by default: larger answers get TC and come
// over TCP).
std::size_t client_limit(const ServeConfig& cfg, const dns::ClientQuery& q, bool tcp);

class QueryCheck {
public:
  // `rate_limit_table`: the host's (nullptr: a private one); `cookie_secrets`: the
  // supervisor's, copied.
  QueryCheck(const ServeConfig& cfg, cache::Cache& cache, RateLimitTable* rate_limit_table,
             const dns::CookieSecrets& cookie_secrets);

  // Checks `wire` from `client` (`tcp`: a stream transport, exempt from the rate limit)
  // and parses it into `q`; an error answer is written into `out`. `key` (the batched UDP
  // path): the fast parser lowercases the name into it as it copies it.
  CheckedQuery check(std::uint8_t* wire, std::size_t len, const sockaddr_storage& client, bool tcp, std::uint32_t now,
                     dns::ClientQuery& q, std::uint8_t* out, std::size_t cap, cache::CacheKey* key = nullptr);

private:
  const ServeConfig& cfg_;
  cache::Cache& cache_;
  RateLimiter rate_limiter_;
  const dns::CookieSecrets cookie_secrets_;
  const std::uint8_t validated_flag_;  // cache::kKeyAuthenticated when validating, else 0
};

}  // namespace dnsarena::workers
