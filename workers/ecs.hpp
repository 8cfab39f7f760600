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
// Keys: an answer whose scope is 0 (or that came back without ECS) is stored without an
// ECS tag, shared by every client. An answer with scope S is stored under the sent
// address cut to S bits (S capped by the source prefix). A lookup tries the shared key
// first, then the client's subnet at the source prefix and every shorter prefix down to
// 1, so an answer stored at any scope is found. Costs: one lookup without ECS; up to
// 1 + source-prefix lookups for a miss with ECS (misses then pay an upstream round trip
// that is far larger).
#pragma once
#include <sys/socket.h>

#include "cache/cache_key.hpp"
#include "workers/dns_message.hpp"
#include "workers/serve_config.hpp"

namespace dnsarena::workers {

// The ECS option to send upstream for `q` from `source` (present = false: send none).
EcsOption upstream_ecs(EcsPolicy policy, const ClientQuery& q, const sockaddr_storage& source,
                       std::uint8_t v4_prefix, std::uint8_t v6_prefix);

// The cache tag of an answer for `sent` with `scope` bits (none when scope is 0).
cache::EcsTag ecs_tag(const EcsOption& sent, std::uint8_t scope);

}  // namespace dnsarena::workers
