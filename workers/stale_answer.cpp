// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/stale_answer.hpp"

#include <stdexcept>

#include "wire/constants.hpp"
#include "workers/cache_answer.hpp"
#include "workers/ecs.hpp"

namespace dnsarena::workers {

using dns::ExtendedError;

dns::ExtendedError failure_ede(FailureKind k) {
  if (k == FailureKind::bogus) return ExtendedError::dnssec_bogus;
  return k == FailureKind::timeout ? ExtendedError::no_reachable_authority : ExtendedError::network_error;
}

std::size_t StaleAnswers::stale(const dns::ClientQuery& q, const CheckedQuery& c, bool udp, std::uint32_t now,
                                std::uint8_t* out, std::size_t cap) {
  if (cfg_.stale_max_age_s == 0) return 0;
  const cache::QueryInfo info{q.id, q.flags, q.qname(), q.qtype, q.qclass};
  const std::uint32_t ad_after = ad_trusted_after(ad_trust_);
  try {
    return first_answer_in_lookup_order(c.ecs, [&](std::uint8_t prefix, bool scoped) -> std::size_t {
      const cache::CacheKey k(q.qname(), q.qtype, c.flags, scoped ? ecs_tag(c.ecs, prefix) : cache::EcsTag{});
      const cache::LookupStatus st = cache_.peek(k, now, copy_);
      if (st == cache::LookupStatus::miss) return 0;
      cache::EntryReader reader(copy_.span());
      if (!reader.valid()) return 0;
      const bool expired = st == cache::LookupStatus::expired;
      if (expired && now - reader.expire() > cfg_.stale_max_age_s) return 0;
      std::uint8_t options[kAnswerOptionBytes + dns::kEdeOptionBytes];
      cache::ResponseOptions opts = response_options(q, prefix, c.limit, options, udp, ad_after);
      if (expired && q.edns) {
        const std::size_t before = opts.edns_options.size();
        const auto ede = reader.rcode() == wire::kRcodeNxDomain ? ExtendedError::stale_nxdomain
                                                                : ExtendedError::stale_answer;
        opts.edns_options = {options, before + dns::write_ede_option(ede, options + before)};
      }
      if (expired) opts.stale_ttl = cfg_.stale_ttl_s;
      const cache::ResponseResult r = cache::write_response(reader, info, now, opts, out, cap);
      if (r.size == 0) return 0;
      if (r.truncated) cache_.count(cache::Counter::truncated);
      cache_.count(expired ? cache::Counter::stale_answers : cache::Counter::hits);
      if (expired && tap_) tap_->mark_stale(out, q.id);
      return r.size;
    });
  } catch (const std::invalid_argument&) {  // a name the cache key refuses: nothing held
    return 0;
  }
}

std::size_t StaleAnswers::failed(const dns::ClientQuery& q, const CheckedQuery& c, bool udp, std::uint32_t now,
                                 std::optional<ExtendedError> ede, std::uint8_t* out, std::size_t cap) {
  if (const std::size_t n = stale(q, c, udp, now, out, cap)) return n;
  cache_.count(cache::Counter::servfail);
  return dns::write_error_response(q, wire::kRcodeServFail, out, cap, ede);
}

}  // namespace dnsarena::workers
