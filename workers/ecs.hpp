// SPDX-License-Identifier: GPL-3.0-or-later
// EDNS Client Subnet (RFC 7871) policy: what subnet a miss sends upstream, and under
// which cache keys an answer is stored and looked up.
//
//   policy       client sent ECS                 client sent none
//   off          not forwarded, keyed without    not forwarded
//   forward      forwarded, cut to the /v4 /v6   source prefix 0 sent ("do not use my
//                maximum                         address"), so the answer is shared
//   synthesize   forwarded, cut as above         built from the source address, cut to
//                                                the /v4 (default 24) or /v6 (56) prefix
//
// Keys (RFC 7871 7.3.1, 7.3.2):
//   - an answer with scope 0 (or without ECS) for a query that carried address bits is
//     stored without an ECS tag: shared by every client;
//   - an answer to a query whose SOURCE prefix was 0 (the client asked us not to use its
//     address, or `forward` had no client ECS) is stored under a tag of its own (family,
//     prefix 0): only other /0 queries may use it, never clients that sent an address;
//   - an answer with scope S <= the source prefix sent is stored under the sent address
//     cut to S bits;
//   - an answer with scope S > the source prefix is for a network narrower than the one
//     we described: it answers the clients waiting for it and is not cached (7.2.2).
// Lookup order for a client whose subnet is sent with source prefix P > 0: the subnet at
// P (the usual tailored answer), then the shared key, then P-1 down to 1; for P = 0: the
// shared key, then the /0 key. NOTE: 7.3.2 asks for longest prefix first; the shared key
// is tried second because trying 24 or 56 shorter prefixes before it would cost every
// ECS hit on an untailored name that many lookups. The two differ only while one name has
// both a tailored and a shared entry alive, i.e. when its authoritative changed its mind.
// The reply carries the scope of the entry that answered (0 for the shared key).
// Costs: one lookup for clients without ECS (policy off); two for an ECS hit on an
// untailored name; up to 1 + P for a miss (then an upstream round trip that is far larger).
#pragma once
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

#include "cache/cache_key.hpp"
#include "dns/client_query.hpp"
#include "dns/ecs_option.hpp"
#include "workers/serve_config.hpp"

namespace dnsarena::workers {

// The ECS option to send upstream for `q` from `source` (present = false: send none).
dns::EcsOption upstream_ecs(EcsPolicy policy, const dns::ClientQuery& q, const sockaddr_storage& source,
                       std::uint8_t v4_prefix, std::uint8_t v6_prefix);

// The cache tag of an answer to a query that sent `sent`, with `scope` bits (see above).
// REQUIRES: scope <= sent.source_prefix when sent.source_prefix > 0 (else: do not cache).
cache::EcsTag ecs_tag(const dns::EcsOption& sent, std::uint8_t scope);
// Whether an answer with `scope` may be cached for the query that sent `sent`.
inline bool ecs_cacheable(const dns::EcsOption& sent, std::uint8_t scope) {
  return !sent.present || sent.source_prefix == 0 || scope <= sent.source_prefix;
}

// The lookup order above, written once for fresh and stale lookups: calls
// try_key(prefix, scoped) for each key a client that sends `ecs` may use, in order, and
// returns the first non-zero result (0: none answered). `scoped` false is the shared key
// (no ECS tag, answered with scope 0); true is ecs_tag(ecs, prefix).
template <class TryKey>
std::size_t first_answer_in_lookup_order(const dns::EcsOption& ecs, TryKey&& try_key) {
  if (ecs.present && ecs.source_prefix > 0)
    if (const std::size_t n = try_key(ecs.source_prefix, true)) return n;
  if (const std::size_t n = try_key(std::uint8_t{0}, false)) return n;
  if (ecs.present && ecs.source_prefix == 0)
    if (const std::size_t n = try_key(std::uint8_t{0}, true)) return n;
  if (ecs.present)
    for (int prefix = ecs.source_prefix - 1; prefix >= 1; --prefix)
      if (const std::size_t n = try_key(static_cast<std::uint8_t>(prefix), true)) return n;
  return 0;
}

}  // namespace dnsarena::workers
