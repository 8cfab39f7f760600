// SPDX-License-Identifier: GPL-3.0-or-later
// The query path after an upstream query (query_pipeline.hpp): its completion answers
// every client that waited on it (and puts the answer into the cache), a client whose
// deadline passed is answered before it, and clients parked on another worker's query
// resume when that one ends.
#include <algorithm>
#include <stdexcept>

#include "common/monotonic_clock.hpp"
#include "workers/dnssec_response.hpp"
#include "workers/ecs.hpp"
#include "workers/miss_ratio_curves.hpp"
#include "workers/query_pipeline.hpp"

namespace dnsarena::workers {

using common::monotonic_us;
using dns::ExtendedError;

CheckedQuery QueryPipeline::checked_for(const ServeConfig& cfg, const Pending& p, const Waiter& w) {
  CheckedQuery c;
  c.lookup = true;
  c.ecs = p.ecs;
  c.flags = p.key_flags;
  c.limit = client_limit(cfg, w.query, w.tcp);
  return c;
}

void QueryPipeline::on_upstream_done(Pending& p, const UpstreamAnswer* a) {
  const std::uint32_t now = cache::wall_clock_now();
  bool have_entry = false;
  std::size_t entry_len = 0;
  std::uint8_t scope = 0;
  cache::CacheKey key;
  if (a) {  // never truncated: a TC reply is asked again over TCP (upstream_client.hpp)
    scope = a->ecs_scope();
    try {
      const std::uint8_t key_scope = ecs_cacheable(p.ecs, scope) ? scope : p.ecs.source_prefix;
      key = cache::CacheKey({p.qname.data(), p.qname_len}, p.qtype, p.key_flags, ecs_tag(p.ecs, key_scope));
      // Asked with DO to be validated (Pending::dnssec), kept without DNSSEC records for a key without DO.
      const bool strip = p.dnssec && !(p.key_flags & cache::kKeyDo);
      entry_len = cache::encode_entry(key, strip ? strip_dnssec(a->answer(), p.qtype, stripped_) : a->answer(), now,
                                      scratch_);
      have_entry = entry_len > 0;
    } catch (const std::invalid_argument&) {
      have_entry = false;
    }
  }
  if (validation_) {  // validation_jobs.hpp: a set a job waits for; an answer to judge first
    validation_->on_fetched(p, a);
    if (have_entry && validation_->wants(p))
      return validation_->start(p, *a, key, scratch_, a->cacheable() && ecs_cacheable(p.ecs, scope), scope,
                                monotonic_us());
  }
  const ExtendedError failure = a || p.got_reply ? ExtendedError::network_error : ExtendedError::no_reachable_authority;
  deliver(p, key, have_entry ? std::span<const std::uint8_t>(scratch_) : std::span<const std::uint8_t>(), entry_len,
          a && a->cacheable() && ecs_cacheable(p.ecs, scope), scope, failure);
}

void QueryPipeline::deliver(Pending& p, const cache::CacheKey& key, std::span<const std::uint8_t> entry,
                            std::size_t entry_len, bool cacheable, std::uint8_t scope, ExtendedError failure) {
  const std::uint32_t now = cache::wall_clock_now();
  const bool have_entry = !entry.empty();
  if (have_entry) {
    bool cached = false;
    if (cacheable) {
      const cache::InsertStatus st = cache_.insert_encoded(key, entry, now);
      cached = st == cache::InsertStatus::inserted || st == cache::InsertStatus::replaced;
      mrc_feed_answer(key, entry, now, p.waiters.size());  // miss_ratio_curves.hpp
    }
    // Not cached: the workers waiting for this claim take it from the answer slot.
    if (!cached && p.claim.value && answer_slots_ &&
        !answer_slots_->publish(p.claim, scope, entry.first(entry_len), monotonic_us() / 1000))
      cache_.count(cache::Counter::upstream_slot_full);
  }
  // The answer (or failure) is where waiting workers look: they may take it now, before
  // this worker's clients have theirs, so a client that asks again on its answer starts a
  // query of its own rather than sharing this one (finish() then releases nothing).
  if (claims_ && p.claim.value) claims_->release(p.claim);
  for (Waiter& w : p.waiters) {
    std::uint8_t* out = reply_buf_;
    std::size_t n = 0;
    if (have_entry) n = write_fetched(w.query, w.tcp, scope, entry.first(entry_len), now, out, sizeof reply_buf_);
    // Every attempt failed, the answer could not be used, or it is bogus: stale if held,
    // else SERVFAIL saying why.
    if (n == 0) n = stale_.failed(w.query, checked_for(cfg_, p, w), !w.tcp, now_, failure, out, sizeof reply_buf_);
    reply(w, out, n);
  }
}

void QueryPipeline::on_validated(ValidationJobs::Finished& f) {
  const bool bogus = f.outcome.verdict == dnssec::Verdict::bogus;
  const dnssec::Ede ede = f.outcome.ede == dnssec::Ede::none ? dnssec::Ede::dnssec_bogus : f.outcome.ede;
  deliver(f.query, f.key, f.entry, f.entry_len, f.cacheable, f.scope,
          bogus ? static_cast<ExtendedError>(ede) : ExtendedError::network_error);
}

std::size_t QueryPipeline::write_fetched(const dns::ClientQuery& q, bool tcp, std::uint8_t scope,
                                         std::span<const std::uint8_t> entry, std::uint32_t now, std::uint8_t* out,
                                         std::size_t cap) {
  cache::EntryReader reader(entry);
  if (!reader.valid()) return 0;
  std::uint8_t options[kAnswerOptionBytes];
  const cache::ResponseOptions opts =
      response_options(q, scope, client_limit(cfg_, q, tcp), options, !tcp, ad_trusted_after());
  const cache::QueryInfo info{q.id, q.flags, q.qname(), q.qtype, q.qclass};
  const cache::ResponseResult r = cache::write_response(reader, info, now, opts, out, cap);
  if (r.truncated) cache_.count(cache::Counter::truncated);
  return r.size;
}

std::size_t QueryPipeline::slot_answer(const dns::ClientQuery& q, bool tcp, const UpstreamClaims::Claim& claim,
                                       std::uint8_t* out, std::size_t cap) {
  std::uint8_t scope = 0;
  const std::size_t len = answer_slots_ ? answer_slots_->read(claim, slot_copy_, &scope) : 0;
  if (len == 0) return 0;
  const std::size_t n = write_fetched(q, tcp, scope, {slot_copy_.data(), len}, now_, out, cap);
  if (n) cache_.count(cache::Counter::upstream_slot_answers);
  return n;
}

void QueryPipeline::reply(const Waiter& w, std::uint8_t* out, std::size_t n) {
  if (w.dns64) [[unlikely]] return dns64_reply(w, out, n);  // a DNS64 step's answer (dns64_wait.hpp)
  policy_hit_ = {};  // the gate's PASSTHRU for this client, if any, is not kept while it waits
  if (w.alias && n) {  // the answer for a local CNAME's target: the client's, its chain checked
    const sockaddr_storage client = w.tcp ? replies_.peer_of(w.conn_id, w.doh_stream) : w.client_address();
    std::copy(out, out + n, alias_buf_.begin());
    n = finish_alias(*w.alias, w.query, &client, client_limit(cfg_, w.alias->client, w.tcp), alias_buf_.data(), n,
                     out, sizeof reply_buf_);
  } else if (policy_ && n) {
    const sockaddr_storage client = w.tcp ? replies_.peer_of(w.conn_id, w.doh_stream) : w.client_address();
    n = answer_policy(w.query, &client, client_limit(cfg_, w.query, w.tcp), out, n, sizeof reply_buf_);
  }
  replies_.send(w, out, n);
}

// One of a client's timers passed while its upstream query goes on (the query continues
// for the cache; client_timers.hpp): the response timer answers stale if held (false:
// nothing stale, it keeps waiting), the resolution timer (`given_up`) stale or SERVFAIL,
// EDE 22.
bool QueryPipeline::on_deadline_passed(const Pending& p, Waiter& w, bool given_up) {
  if (w.dns64) [[unlikely]] return dns64_deadline(w, given_up);  // never a new query while p is live
  const CheckedQuery c = checked_for(cfg_, p, w);
  const std::size_t n =
      given_up ? stale_.failed(w.query, c, !w.tcp, now_, ExtendedError::no_reachable_authority, reply_buf_,
                               sizeof reply_buf_)
               : stale_.stale(w.query, c, !w.tcp, now_, reply_buf_, sizeof reply_buf_);
  if (n == 0) return false;
  cache_.count(cache::Counter::deadline_answers);
  reply(w, reply_buf_, n);
  return true;
}

// Parked clients whose claim ended resolve again (their answer is in the cache now, or
// the failure in the failure cache); those whose response timer passed get stale if
// held (else they wait on), those whose resolution timer passed stale or SERVFAIL.
void QueryPipeline::resume_parked(std::uint64_t now_us) {
  for (Parked& pk : parked_.take_ready(now_us, *claims_, upstream_.max_query_ms())) {
    Waiter& w = pk.waiter;
    std::size_t n;
    if (timers_.given_up(w.arrived_us, now_us)) {
      cache_.count(cache::Counter::deadline_answers);
      n = stale_.failed(w.query, pk.checked, !w.tcp, now_, ExtendedError::no_reachable_authority, reply_buf_,
                        sizeof reply_buf_);
    } else if (!pk.stale_tried && timers_.stale_due(w.arrived_us, now_us) &&
               claims_->holds(pk.claim, now_us / 1000, upstream_.max_query_ms())) {
      // The response timer, its query still going: stale if held, else wait on.
      n = stale_.stale(w.query, pk.checked, !w.tcp, now_, reply_buf_, sizeof reply_buf_);
      if (n == 0) {
        pk.stale_tried = true;
        pk.due_us = timers_.next_us(w.arrived_us, true);
        parked_.park(std::move(pk));
        continue;
      }
      cache_.count(cache::Counter::deadline_answers);
    } else {
      const QuerySource src{w.tcp, &w.client_address(), w.addr_len, w.conn_id, w.udp_socket, &w.local, w.doh_stream,
                            w.proxied_client.ss_family ? &w.addr : nullptr};
      n = slot_answer(w.query, w.tcp, pk.claim, reply_buf_, sizeof reply_buf_);
      if (n == 0) {
        forwarding_alias_ = w.alias;  // a client that waits again keeps its alias
        forwarding_dns64_ = w.dns64;  // ... and its DNS64 step
        n = resolve(w.query, pk.checked, src, nullptr, reply_buf_, sizeof reply_buf_, w.arrived_us);
        forwarding_alias_.reset();
        forwarding_dns64_.reset();
      }
    }
    reply(w, reply_buf_, n);
  }
}

}  // namespace dnsarena::workers
