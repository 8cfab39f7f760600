// SPDX-License-Identifier: GPL-3.0-or-later
// The query path after an upstream query (query_pipeline.hpp): its completion answers
// every client that waited on it (and puts the answer into the cache), a client whose
// deadline passed is answered before it, and clients parked on another worker's query
// resume when that one ends.
#include <stdexcept>

#include "common/monotonic_clock.hpp"
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
      entry_len = cache::encode_entry(key, a->answer(), now, scratch_);
      have_entry = entry_len > 0;
    } catch (const std::invalid_argument&) {
      have_entry = false;
    }
    if (have_entry && a->cacheable() && ecs_cacheable(p.ecs, scope)) {
      cache_.insert_encoded(key, scratch_, now);
      mrc_feed_answer(key, scratch_, now, p.waiters.size());  // miss_ratio_curves.hpp
    }
  }
  for (Waiter& w : p.waiters) {
    std::uint8_t* out = reply_buf_;
    std::size_t n = 0;
    if (have_entry) {
      cache::EntryReader reader({scratch_.data(), entry_len});
      std::uint8_t options[kAnswerOptionBytes];
      const std::size_t limit = client_limit(cfg_, w.query, w.tcp);
      const cache::ResponseOptions opts = response_options(w.query, scope, limit, options, !w.tcp);
      const cache::QueryInfo info{w.query.id, w.query.flags, w.query.qname(), w.query.qtype, w.query.qclass};
      const cache::ResponseResult r = cache::write_response(reader, info, now, opts, out, sizeof reply_buf_);
      if (r.truncated) cache_.count(cache::Counter::truncated);
      n = r.size;
    }
    if (n == 0) {
      // Every attempt failed, or the answer could not be used: stale if held, else
      // SERVFAIL saying why.
      const ExtendedError ede = a || p.got_reply ? ExtendedError::network_error : ExtendedError::no_reachable_authority;
      n = stale_.failed(w.query, checked_for(cfg_, p, w), !w.tcp, now_, ede, out, sizeof reply_buf_);
    }
    replies_.send(w, out, n);
  }
}

// A client's response deadline passed while its upstream query goes on (the query
// continues for the cache): stale if held, else SERVFAIL, EDE 22.
void QueryPipeline::on_deadline_passed(const Pending& p, Waiter& w) {
  cache_.count(cache::Counter::deadline_answers);
  const std::size_t n = stale_.failed(w.query, checked_for(cfg_, p, w), !w.tcp, now_,
                                      ExtendedError::no_reachable_authority, reply_buf_, sizeof reply_buf_);
  replies_.send(w, reply_buf_, n);
}

void QueryPipeline::resume_parked(std::uint64_t now_us) {
  for (Parked& pk : parked_.take_ready(now_us, *claims_, upstream_.max_query_ms())) {
    Waiter& w = pk.waiter;
    std::size_t n;
    if (pk.due_us <= now_us) {
      cache_.count(cache::Counter::deadline_answers);
      n = stale_.failed(w.query, pk.checked, !w.tcp, now_, ExtendedError::no_reachable_authority, reply_buf_,
                        sizeof reply_buf_);
    } else {
      const QuerySource src{w.tcp, &w.addr, w.addr_len, w.conn_id, w.udp_socket, &w.local, w.doh_stream};
      n = resolve(w.query, pk.checked, src, nullptr, reply_buf_, sizeof reply_buf_, w.arrived_us);
    }
    replies_.send(w, reply_buf_, n);
  }
}

}  // namespace dnsarena::workers
