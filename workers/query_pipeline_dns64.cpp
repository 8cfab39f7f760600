// SPDX-License-Identifier: GPL-3.0-or-later
// DNS64 in the query path (query_pipeline.hpp, dns64.hpp, RFC 6147). A query with the
// DNS64 key flag (the check stage set it: an AAAA or prefix PTR query of a DNS64 client)
// first looks up its synthesized entry like any query (stage 3, the batched UDP path
// included). When that misses, its steps (dns64_wait.hpp) run as queries of their own
// through stages 3-5 (a hit, stale by the usual rules, else the upstream with
// coalescing), each carrying the client's Dns64Wait while it waits:
//
//   AAAA  NAME AAAA as any client asks it: an answer with AAAA records outside the
//         exclude ranges, NXDOMAIN, an error or TC is the client's answer as it is;
//         NOERROR without such records (5.1.1, 5.1.4) goes on to
//   A     NAME A: its answer becomes the synthesized AAAA answer (dns64_synthesis.hpp),
//         inserted under the client's key with the flag and written for the client
//   PTR   d.c.b.a.in-addr.arpa PTR for NAME under the prefix's ip6.arpa (5.3.1): its
//         answer rewritten under NAME, inserted and written the same way
//
// The real AAAA and A answers are cached under their own keys as for any client, so a
// client without DNS64 shares them and never sees a synthesized record. A final AAAA
// answer of the first step (AAAA records, NXDOMAIN) is copied under the DNS64 client's
// key too (dns64_synthesis.hpp: as_is), so that its next hit is one lookup. Nothing is
// put under that key from a stale or failure answer (it carries an EDE) nor from one
// scoped to the client's subnet (ECS scope > 0): that answers the one client.
//
// When a timer of a waiting DNS64 client passes, no step is continued (that would start
// an upstream query from inside the upstream client's own walk of its queries): the
// client gets its stale synthesized entry if one is held, else waits on, and SERVFAIL
// once its resolution timer passed (dns64_deadline).
#include <algorithm>
#include <memory>
#include <span>

#include "common/monotonic_clock.hpp"
#include "dns/extended_error.hpp"
#include "dns/opt_record.hpp"
#include "wire/constants.hpp"
#include "workers/dns64.hpp"
#include "workers/query_pipeline.hpp"

namespace dnsarena::workers {

using wire::kTypeA, wire::kTypePtr;

std::size_t QueryPipeline::dns64_resolve(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                                         std::uint8_t* out, std::size_t cap, std::uint64_t arrived_us) {
  auto d = std::make_shared<Dns64Wait>();
  d->client = q;
  d->checked = c;
  d->checked.flags = static_cast<std::uint8_t>(c.flags & ~cache::kKeyDns64);
  d->key_flags = c.flags;
  d->arrived_us = arrived_us ? arrived_us : common::monotonic_us();
  if (q.qtype != kTypePtr) return dns64_step(d, q, src, out, cap);
  dns::ClientQuery ipv4 = q;
  ipv4.qname_len = static_cast<std::uint8_t>(ptr_ipv4_name(cfg_.dns64.prefix, q.qname(), ipv4.qname_storage.data()));
  if (ipv4.qname_len == 0) return resolve(q, d->checked, src, nullptr, out, cap, arrived_us);  // not under the prefix
  d->step = Dns64Wait::Step::ptr;
  return dns64_step(d, ipv4, src, out, cap);
}

std::size_t QueryPipeline::dns64_step(const std::shared_ptr<const Dns64Wait>& d, const dns::ClientQuery& step_query,
                                      const QuerySource& src, std::uint8_t* out, std::size_t cap) {
  forwarding_dns64_ = d;  // forward() gives it to the Waiter of a client that waits
  const std::size_t n = resolve(step_query, d->checked, src, nullptr, out, cap, d->arrived_us);
  forwarding_dns64_.reset();
  if (n == 0) return 0;  // the client waits (answered_later()), or gets nothing
  return dns64_continue(d, src, out, n, cap);
}

std::size_t QueryPipeline::dns64_continue(const std::shared_ptr<const Dns64Wait>& d, const QuerySource& src,
                                          std::uint8_t* out, std::size_t n, std::size_t cap) {
  dns::ClientQuery asked = d->client;  // the step's question
  Dns64Synthesizer::Kind kind = Dns64Synthesizer::Kind::aaaa_from_a;
  switch (d->step) {
    case Dns64Wait::Step::aaaa: {
      const AaaaVerdict v = inspect_aaaa_answer(cfg_.dns64, out, n);
      if (!v.synthesize) {  // the real answer, kept under the client's key too: its next hit is one lookup
        dns64_entry(Dns64Synthesizer::Kind::as_is, *d, d->client, out, n);
        return n;
      }
      auto next = std::make_shared<Dns64Wait>(*d);
      next->step = Dns64Wait::Step::a;
      next->ttl_cap = v.ttl_cap;
      asked.qtype = kTypeA;
      return dns64_step(next, asked, src, out, cap);
    }
    case Dns64Wait::Step::a: asked.qtype = kTypeA; break;
    case Dns64Wait::Step::ptr:
      kind = Dns64Synthesizer::Kind::ptr_from_ipv4;
      asked.qname_len =
          static_cast<std::uint8_t>(ptr_ipv4_name(cfg_.dns64.prefix, d->client.qname(), asked.qname_storage.data()));
      break;
  }
  const bool truncated = (wire::get16(out + 2) & wire::kFlagTc) != 0;
  if (const std::size_t len = dns64_entry(kind, *d, asked, out, n)) {
    n = write_fetched(d->client, src.tcp, 0, dns64_synth_.entry().first(len), now_, out, cap);
    if (n) return n;
  }
  if (truncated) {  // the A answer did not fit the client's limit: nor would its AAAA answer
    n = dns::write_error_response(d->client, wire::kRcodeNoError, out, cap);
    if (n) out[2] |= 0x02;
    return n;
  }
  cache_.count(cache::Counter::servfail);
  return dns::write_error_response(d->client, wire::kRcodeServFail, out, cap);
}

std::size_t QueryPipeline::dns64_entry(Dns64Synthesizer::Kind kind, const Dns64Wait& d, const dns::ClientQuery& asked,
                                       const std::uint8_t* msg, std::size_t n) {
  std::copy(msg, msg + n, dns64_buf_.begin());  // msg may be where the client's answer is written next
  try {
    const cache::CacheKey key(d.client.qname(), d.client.qtype, d.key_flags);
    const std::size_t len = dns64_synth_.build(kind, cfg_.dns64.prefix, asked, dns64_buf_.data(), n, d.ttl_cap, key,
                                               now_, {0, cfg_.ttl_ceiling, cfg_.negative_ttl_ceiling});
    // What is built from a stale or failure answer (it carries an EDE: stale_answer.hpp),
    // or from an answer scoped to the client's subnet (ECS scope > 0: the entry here has
    // no ECS tag), answers this client only.
    const std::span<const std::uint8_t> m{dns64_buf_.data(), n};
    std::span<const std::uint8_t> ecs;
    const bool scoped = dns::find_edns_option(m, wire::kOptionEcs, &ecs) && ecs.size() >= 4 && ecs[3] > 0;
    const bool marked = scoped || dns::find_edns_option(m, dns::kOptionCodeEde);
    if (len && dns64_synth_.cacheable() && !marked) cache_.insert_encoded(key, dns64_synth_.entry(), now_);
    return len;
  } catch (const std::invalid_argument&) {
    return 0;
  }
}

void QueryPipeline::dns64_reply(const Waiter& w, std::uint8_t* out, std::size_t n) {
  const std::shared_ptr<const Dns64Wait> d = w.dns64;
  const QuerySource src{w.tcp, &w.addr, w.addr_len, w.conn_id, w.udp_socket, &w.local, w.doh_stream};
  const bool later = answered_later_;
  answered_later_ = false;
  if (n) n = dns64_continue(d, src, out, n, sizeof reply_buf_);
  const bool waits = n == 0 && answered_later_;  // its next step went upstream
  answered_later_ = later;
  if (waits) return;
  Waiter client = w;
  client.query = d->client;
  client.dns64.reset();
  reply(client, out, n);
}

bool QueryPipeline::dns64_deadline(Waiter& w, bool given_up) {
  CheckedQuery c = w.dns64->checked;
  c.flags = w.dns64->key_flags;  // the synthesized entry's key
  const dns::ClientQuery& q = w.dns64->client;
  const std::size_t n =
      given_up ? stale_.failed(q, c, !w.tcp, now_, dns::ExtendedError::no_reachable_authority, reply_buf_,
                               sizeof reply_buf_)
               : stale_.stale(q, c, !w.tcp, now_, reply_buf_, sizeof reply_buf_);
  if (n == 0) return false;
  cache_.count(cache::Counter::deadline_answers);
  Waiter client = w;
  client.query = q;
  client.dns64.reset();
  reply(client, reply_buf_, n);
  return true;
}

}  // namespace dnsarena::workers
