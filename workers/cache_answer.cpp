// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/cache_answer.hpp"

#include "dns/ecs_option.hpp"
#include "dns/server_cookie.hpp"
#include "wire/constants.hpp"
#include "workers/ecs.hpp"
#include "workers/miss_ratio_curves.hpp"

namespace dnsarena::workers {

std::size_t write_answer_options(const dns::ClientQuery& q, std::uint8_t scope, std::uint8_t* options_buf) {
  std::size_t n = q.ecs.present ? dns::write_ecs_option(q.ecs, scope, options_buf) : 0;
  if (q.cookie.len) n += dns::write_cookie_option(q.cookie, options_buf + n);
  return n;
}

CacheAnswer CacheAnswers::fresh(const dns::ClientQuery& q, const CheckedQuery& c, bool udp, std::uint32_t now,
                                std::uint8_t* out, std::size_t cap) {
  CacheAnswer a;
  const cache::QueryInfo info{q.id, q.flags, q.qname(), q.qtype, q.qclass};
  const std::uint32_t ad_after = ad_trusted_after(ad_trust_);
  a.size = first_answer_in_lookup_order(c.ecs, [&](std::uint8_t prefix, bool scoped) -> std::size_t {
    const cache::CacheKey key(q.qname(), q.qtype, c.flags, scoped ? ecs_tag(c.ecs, prefix) : cache::EcsTag{});
    std::uint8_t options[kAnswerOptionBytes];
    const cache::ResponseOptions opts = response_options(q, prefix, c.limit, options, udp, ad_after);
    const cache::ResponseResult r = cache_.lookup_response(key, info, now, opts, out, cap);
    if (r.truncated) cache_.count(cache::Counter::truncated);
    if (r.size) {
      a.plain = !scoped;
      a.result = r;
      mrc_feed_hit(cache_, key, now);  // miss_ratio_curves.hpp
    }
    return r.size;
  });
  return a;
}

}  // namespace dnsarena::workers
