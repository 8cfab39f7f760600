// SPDX-License-Identifier: GPL-3.0-or-later
// The cache stage of the worker's query path (query_pipeline.hpp): a fresh answer from
// the shared cache under the keys a query may use, in ecs.hpp's lookup order, written
// with the client's ID, question case, EDNS and options. Stale answers are the next
// stage's (stale_answer.hpp); the batched UDP path looks the plain key up for a whole
// batch itself (Cache::lookup_responses) and comes here only for what that cannot do.
//
// Cost: one lookup per key tried (one for a client without ECS; ecs.hpp: costs).
#pragma once
#include <cstddef>
#include <cstdint>

#include "cache/cache.hpp"
#include "dns/client_query.hpp"
#include "wire/constants.hpp"
#include "workers/ad_trust.hpp"
#include "workers/query_check.hpp"

namespace dnsarena::workers {

// The EDNS options an answer carries: ECS and COOKIE at their largest.
inline constexpr std::size_t kAnswerOptionBytes = dns::kMaxEcsOptionBytes + dns::kMaxCookieOptionBytes;

// The answer's options: ECS (scope `scope`) and the COOKIE (query_check.hpp), written into
// `options_buf` (kAnswerOptionBytes) for this answer only: never into the cache; and the
// AD cut in force (ad_trust.hpp: an entry inserted at or before `ad_trusted_after` is
// answered without AD; 0: every cached AD stands).
// Inline: it is on every hit; the options, when the query has any, are written out of line
// (write_answer_options: the ECS and COOKIE options' bytes, returns their length).
std::size_t write_answer_options(const dns::ClientQuery& q, std::uint8_t scope, std::uint8_t* options_buf);
inline cache::ResponseOptions response_options(const dns::ClientQuery& q, std::uint8_t scope, std::size_t limit,
                                               std::uint8_t* options_buf, bool udp, std::uint32_t ad_trusted_after) {
  cache::ResponseOptions o;
  o.ad_trusted_after = ad_trusted_after;
  o.max_size = limit;
  o.one_answer_rrset = udp && q.qtype == wire::kTypeAny;  // RFC 8482: no amplification by ANY
  o.edns = q.edns;
  o.edns_do = q.do_bit;
  if (q.edns && (q.ecs.present || q.cookie.len)) o.edns_options = {options_buf, write_answer_options(q, scope, options_buf)};
  return o;
}
// The AD cut of `cut` now (nullptr: none).
inline std::uint32_t ad_trusted_after(const AdTrustCut* cut) { return cut ? cut->after() : 0; }

// What the cache answered.
struct CacheAnswer {
  std::size_t size = 0;  // 0: no fresh entry under any key
  // The shared (plain) key answered: `result` is its entry's expiry and TTL, for prefetch.
  bool plain = false;
  cache::ResponseResult result;
};

class CacheAnswers {
public:
  // `ad_trust`: the host's AD cut (nullptr: none).
  CacheAnswers(cache::Cache& cache, const AdTrustCut* ad_trust) : cache_(cache), ad_trust_(ad_trust) {}

  // A fresh answer to `q` under every key `c` allows (ecs.hpp's order). `udp`: the
  // client's transport (RFC 8482 minimal ANY answers over UDP only).
  CacheAnswer fresh(const dns::ClientQuery& q, const CheckedQuery& c, bool udp, std::uint32_t now, std::uint8_t* out,
                    std::size_t cap);

private:
  cache::Cache& cache_;
  const AdTrustCut* ad_trust_;
};

}  // namespace dnsarena::workers
