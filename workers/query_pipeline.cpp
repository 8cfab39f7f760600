// SPDX-License-Identifier: GPL-3.0-or-later
// Stages 1-5 of the query path, in order (query_pipeline.hpp); the upstream's
// completions are in query_pipeline_upstream.cpp.
#include "workers/query_pipeline.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "common/monotonic_clock.hpp"
#include "wire/constants.hpp"
#include "workers/policy_gate.hpp"

namespace dnsarena::workers {

using common::monotonic_us;
using wire::kRcodeFormErr, wire::kRcodeRefused;

QueryPipeline::QueryPipeline(const ServeConfig& cfg, cache::Cache& cache, int epfd, std::uint64_t upstream_tag,
                             std::uint64_t recursion_tag,
                             UpstreamClient::HostTables host, RateLimitTable* rate_limit_table,
                             const dns::CookieSecrets& cookie_secrets, const policy::PolicyView* policy,
                             ClientReplies& replies)
    : cfg_(cfg),
      cache_(cache),
      check_(cfg, cache, rate_limit_table, cookie_secrets),
      policy_(policy),
      ad_trust_(host.ad_trust),
      answer_slots_(host.answers),
      cache_answers_(cache, host.ad_trust),
      stale_(cfg, cache, host.ad_trust),
      upstream_(epfd, upstream_tag, cfg, cache, [this](Pending& p, const UpstreamAnswer* a) { on_upstream_done(p, a); },
                [this](const Pending& p, Waiter& w, bool given_up) { return on_deadline_passed(p, w, given_up); }, host),
      recursive_(epfd, recursion_tag, cfg, cache, [this](Pending& p, const UpstreamAnswer* a) { on_upstream_done(p, a); },
                 [this](const Pending& p, Waiter& w, bool given_up) { return on_deadline_passed(p, w, given_up); }, host),
      set_fetcher_(upstream_, recursive_),
      claims_(host.claims),
      claims_row_(host.row),
      timers_(ClientTimers::of(cfg)),
      replies_(replies) {
  scratch_.reserve(4096);
  if (cfg.dnssec.validating() && cfg.dnssec.aggressive_nsec) {
    aggressive_ = std::make_unique<AggressiveNsec>(cfg, host.nsec_ranges, replies_.meter().dnssec_row());
    if (claims_) denials_ = std::make_unique<DenialClaims>(*claims_, claims_row_, upstream_.max_query_ms());
  }
  if (cfg.dnssec.validating())
    validation_ = std::make_unique<ValidationJobs>(cfg, cache, upstream_, set_fetcher_, replies_.meter().dnssec_row(),
                                                   [this](ValidationJobs::Finished& f) { on_validated(f); },
                                                   denials_.get());
}

// --- stages 1 and 2: check, policy ---

CheckedQuery QueryPipeline::admit(std::uint8_t* wire, std::size_t len, const QuerySource& src, dns::ClientQuery& q,
                                  std::uint8_t* out, std::size_t cap, cache::CacheKey* key) {
  policy_hit_ = {};
  CheckedQuery c = check_.check(wire, len, *src.addr, src.tcp, now_, q, out, cap, key);
  if (c.lookup && policy_ &&
      apply_policy(*policy_, q, *src.addr, c.limit, out, cap, cache_, replies_.meter(), c.size, policy_hit_, tap_)) {
    c.lookup = false;
    if (c.size && policy_hit_.action == policy::Action::local_data && follows_local_cname(q))
      c.size = follow_local_cname(q, c, src, out, cap);
  }
  return c;
}

std::size_t QueryPipeline::handle(std::uint8_t* wire, std::size_t len, const QuerySource& src, std::uint8_t* out,
                                  std::size_t cap) {
  dns::ClientQuery q;
  const CheckedQuery c = admit(wire, len, src, q, out, cap);
  if (!c.lookup) return c.size;
  return answer_policy(q, src.addr, c.limit, out, resolve(q, c, src, nullptr, out, cap), cap);
}

// --- stages 3 to 5: cache, upstream, failure ---

std::size_t QueryPipeline::resolve(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                                   const cache::CacheKey* plain_missed, std::uint8_t* out, std::size_t cap,
                                   std::uint64_t arrived_us) {
  try {
    const cache::CacheKey plain = plain_missed ? *plain_missed : cache::CacheKey(q.qname(), q.qtype, c.flags);
    if (!plain_missed) {
      const CacheAnswer hit = cache_answers_.fresh(q, c, !src.tcp, now_, out, cap);
      if (hit.size) {
        if (hit.plain) maybe_prefetch(plain, hit.result);
        return hit.size;
      }
    }
    // A DNS64 client's AAAA or prefix PTR without a synthesized entry (dns64.hpp).
    if (c.flags & cache::kKeyDns64) [[unlikely]] return dns64_resolve(q, c, src, out, cap, arrived_us);
    // A secure NSEC range proves the name (or type) absent: no upstream query; not under a
    // negative trust anchor (runtime_ntas.hpp) added since the range was proven.
    if (aggressive_ && !upstream_.runtime_ntas().negative(plain.qname(), now_)) {
      if (const std::size_t n = aggressive_->answer(q, c, now_, out, cap)) return n;
      // A denial under the name's zone is being validated: its proofs may answer this
      // one too, so it waits for them rather than going upstream (denial_claims.hpp).
      if (denials_ && !(c.flags & cache::kKeyCd)) {
        const std::uint64_t now_us = monotonic_us();
        if (const auto claim = denials_->held_above(plain.qname(), now_us / 1000)) {
          if (park_for_denial(q, c, src, *claim, arrived_us ? arrived_us : now_us)) return 0;
          if (const std::size_t n = aggressive_->answer(q, c, now_, out, cap)) return n;  // it ended meanwhile
        }
      }
    }
    if (cfg_.stale_answer_first && cfg_.stale_max_age_s) {
      // Stale first (serve-expired-client-timeout: 0): an expired entry answers at once
      // and one background query refreshes it.
      if (const std::size_t n = stale_.stale(q, c, !src.tcp, now_, out, cap)) {
        set_fetcher_.refresh(plain, c.ecs, 0);  // any fresh entry by now: another worker refreshed it
        return n;
      }
    }
    return forward(q, c, src, plain, out, cap, arrived_us ? arrived_us : monotonic_us());
  } catch (const std::invalid_argument&) {  // a name the cache key refuses
    cache_.count(cache::Counter::formerr);
    return dns::write_error_response(q, kRcodeFormErr, out, cap);
  }
}

Waiter QueryPipeline::waiter_for(const dns::ClientQuery& q, const QuerySource& src, std::uint64_t arrived_us) const {
  Waiter w;
  w.query = q;
  w.tcp = src.tcp;
  if (!src.tcp) {
    w.addr = src.reply_to ? *src.reply_to : *src.addr;
    w.addr_len = src.addr_len;
    if (src.reply_to) w.proxied_client = *src.addr;
    w.udp_socket = src.udp_socket;
    if (src.local) w.local = *src.local;
  }
  w.conn_id = src.conn_id;
  w.doh_stream = src.doh_stream;
  w.arrived_us = arrived_us;
  w.alias = forwarding_alias_;
  w.dns64 = forwarding_dns64_;
  return w;
}

bool QueryPipeline::park_for_denial(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                                    const UpstreamClaims::Claim& claim, std::uint64_t arrived_us) {
  if (parked_.full() || !claims_->wait_on(claim, claims_row_)) return false;  // full, or the claim ended
  replies_.meter().dnssec_row().add(DnssecCounter::denial_waits);
  const std::uint64_t due = timers_.next_us(arrived_us, false);
  parked_.park({waiter_for(q, src, arrived_us), c, claim, due});
  answered_later_ = true;
  return true;
}

std::size_t QueryPipeline::forward(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                                   const cache::CacheKey& plain, std::uint8_t* out, std::size_t cap,
                                   std::uint64_t arrived_us) {
  Waiter w = waiter_for(q, src, arrived_us);
  UpstreamClient::ForwardDetail detail;
  switch (upstream_.forward(plain, c.ecs, w, &detail)) {
    case UpstreamClient::Forwarded::yes: answered_later_ = true; return 0;
    case UpstreamClient::Forwarded::no_zone:  // no forward zone holds the name
      if (recursive_.enabled()) return recurse(q, c, src, plain, w, out, cap);
      cache_.count(cache::Counter::refused);
      return dns::write_error_response(q, kRcodeRefused, out, cap);
    case UpstreamClient::Forwarded::failed:  // the failure cache: no upstream query
      cache_.count(cache::Counter::failure_cached);
      return stale_.failed(q, c, !src.tcp, now_, failure_ede(detail.failure), out, cap);
    case UpstreamClient::Forwarded::joined:  // another worker asks: wait for its answer
      if (const std::optional<std::size_t> n = join(q, c, src, w, detail.claim, out, cap)) return *n;
      break;  // the bound: answered as overloaded
    case UpstreamClient::Forwarded::overloaded: break;
  }
  // A bound refused a new upstream query: stale if held, else SERVFAIL.
  return stale_.failed(q, c, !src.tcp, now_, std::nullopt, out, cap);
}

std::optional<std::size_t> QueryPipeline::join(const dns::ClientQuery& q, const CheckedQuery& c,
                                               const QuerySource& src, Waiter& w, const UpstreamClaims::Claim& claim,
                                               std::uint8_t* out, std::size_t cap) {
  if (parked_.full()) return std::nullopt;
  if (claims_->wait_on(claim, claims_row_)) {
    cache_.count(cache::Counter::upstream_joined);
    const std::uint64_t due = timers_.next_us(w.arrived_us, false);
    parked_.park({std::move(w), c, claim, due});
    answered_later_ = true;
    return 0;
  }
  // Its query ended meanwhile: its answer (or failure) is there to be found now.
  if (const std::size_t n = slot_answer(q, src.tcp, claim, out, cap)) return n;
  return resolve(q, c, src, nullptr, out, cap, w.arrived_us);
}

// Prefetch (Unbound's `prefetch`): a hit in the last prefetch.percent of its entry's TTL
// starts one background refresh of the name, so popular names do not expire in front of
// clients. At most one per question on the host (UpstreamClient::refresh: not while one
// is in flight here or on another worker, nor while the name is in the failure cache).
// Plain keys only: an ECS-scoped entry is refreshed by the next miss.
void QueryPipeline::prefetch(const cache::CacheKey& plain_key, const cache::ResponseResult& r) {
  if (plain_key.flags() & cache::kKeyDns64) return;  // synthesized (dns64.hpp): not an upstream's answer
  // The entry's insert time: a refresh that landed meanwhile inserted a later one, even
  // when a caching upstream returned what is left of the same TTL (the same expiry).
  if (set_fetcher_.refresh(plain_key, dns::EcsOption{}, r.expire - r.ttl)) cache_.count(cache::Counter::prefetches);
}

// --- timers ---

int QueryPipeline::next_timeout_ms(std::uint64_t now_us) const {
  int timeout = upstream_.next_timeout_ms(now_us);
  if (const int r = recursive_.next_timeout_ms(now_us); r >= 0) timeout = timeout < 0 ? r : std::min(timeout, r);
  if (!parked_.empty()) {
    const int parked = parked_.timeout_ms(now_us);
    timeout = timeout < 0 ? parked : std::min(timeout, parked);
  }
  if (const int v = validation_ ? validation_->next_timeout_ms(now_us) : -1; v >= 0)
    timeout = timeout < 0 ? v : std::min(timeout, v);
  return timeout;
}

void QueryPipeline::on_claims_woken() {
  claims_->drain(claims_row_);
  parked_.woken();
}

void QueryPipeline::on_timers(std::uint64_t now_us) {
  upstream_.on_timeouts(now_us);
  recursive_.on_timeouts(now_us);
  now_us = monotonic_us();
  if (!parked_.empty() && parked_.scan_due(now_us)) resume_parked(now_us);
  if (validation_) validation_->run(now_us);
}

}  // namespace dnsarena::workers
