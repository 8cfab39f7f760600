// SPDX-License-Identifier: GPL-3.0-or-later
// A worker's query path, stage after stage; the event loop and the transports that
// read the queries and send the answers found at once are worker.cpp's.
//
//   1 check      access control, parse, cookies, rate limit, error answers  query_check.hpp
//   2 policy     the response policy's answer, before the cache            policy_gate.hpp
//                (a local CNAME's target: stages 3-5 for it)               local_alias.hpp
//   3 cache      a fresh answer under the keys the query may use           cache_answer.hpp
//                (the batched UDP path looks the plain key up per batch: worker.cpp)
//                (a DNS64 client's AAAA or prefix PTR that missed its       dns64.hpp
//                synthesized entry: its steps, each stages 3-5)           query_pipeline_dns64.cpp
//   4 upstream   a miss: validated NSEC ranges (RFC 8198), stale-first      aggressive_nsec.hpp
//                (parked while a denial of its zone is validated)          denial_claims.hpp
//                (stale.answer_first), then forwarded                      upstream_client.hpp
//                (no forward zone, recursion on: resolved by the worker)    recursive_client.hpp
//                (or joined to another worker's query: parked)             parked_clients.hpp
//   5 failure    stale if held, else SERVFAIL with an EDE                  stale_answer.hpp
//   6 reply      a client that waited gets its answer on its transport     client_reply.hpp
//
// admit() is stages 1-2, resolve() 3-5 for a query that passed them. An upstream
// completion (on_upstream_done, query_pipeline_upstream.cpp) writes the answer for every
// client that waited on it (stage 6), inserting it into the cache; clients parked on
// another worker's query go through resolve() again once that query ends. While
// validating, an answer (forwarded or resolved) is judged first (validation_jobs.hpp);
// the DS and DNSKEY sets it needs are fetched the way a miss for them would go
// (set_fetcher.hpp).
#pragma once
#include <sys/socket.h>

#include <cstddef>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cache/cache.hpp"
#include "dns/client_query.hpp"
#include "dns/server_cookie.hpp"
#include "policy/policy_view.hpp"
#include "workers/cache_answer.hpp"
#include "workers/ad_trust.hpp"
#include "workers/aggressive_nsec.hpp"
#include "workers/answer_slots.hpp"
#include "workers/client_reply.hpp"
#include "workers/client_timers.hpp"
#include "workers/denial_claims.hpp"
#include "workers/dns64_synthesis.hpp"
#include "workers/dns64_wait.hpp"
#include "workers/local_alias.hpp"
#include "workers/parked_clients.hpp"
#include "workers/policy_gate.hpp"
#include "workers/query_check.hpp"
#include "workers/recursive_client.hpp"
#include "workers/serve_config.hpp"
#include "workers/set_fetcher.hpp"
#include "workers/stale_answer.hpp"
#include "workers/udp_pktinfo.hpp"
#include "workers/upstream_client.hpp"
#include "workers/validation_jobs.hpp"

namespace dnsarena::workers {

// Where a query came from.
struct QuerySource {
  bool tcp = false;                      // a stream: TCP, DoT or DoH
  const sockaddr_storage* addr = nullptr;  // the client's address (streams: the connection's peer)
  socklen_t addr_len = 0;
  std::uint64_t conn_id = 0;
  unsigned udp_socket = 0;               // UDP: the index into the worker's UDP sockets
  const LocalAddress* local = nullptr;   // UDP on a wildcard socket: the address asked
  std::uint32_t doh_stream = 0;          // DoH: the request's HTTP/2 stream (0: not DoH)
  // UDP from a balancer that sent a PROXY header (proxy_protocol.hpp): where the answer
  // goes (addr_len is its length), while addr is the client the header carried. nullptr:
  // addr is both.
  const sockaddr_storage* reply_to = nullptr;
};

class QueryPipeline {
public:
  // `upstream_tag`, `recursion_tag`: the epoll tags of the upstream client's and the
  // recursive resolver's sockets; `host`: the host-wide tables; `policy` nullable (no
  // response policy).
  QueryPipeline(const ServeConfig& cfg, cache::Cache& cache, int epfd, std::uint64_t upstream_tag,
                std::uint64_t recursion_tag,
                UpstreamClient::HostTables host, RateLimitTable* rate_limit_table,
                const dns::CookieSecrets& cookie_secrets, const policy::PolicyView* policy, ClientReplies& replies);

  // Stages 1-2 for `wire` from `src` (`key`: the batched UDP path's key, built as the name
  // is parsed). lookup false: the answer (size 0: none) is in `out`.
  CheckedQuery admit(std::uint8_t* wire, std::size_t len, const QuerySource& src, dns::ClientQuery& q,
                     std::uint8_t* out, std::size_t cap, cache::CacheKey* key = nullptr);
  // Stages 3-5 for an admitted query. Returns the answer's size, or 0 when the client
  // waits (answered_later()) or gets nothing. `plain_missed`: the caller looked the plain
  // key up already (the batched UDP path, no ECS keys) and it missed. `arrived_us`: when
  // the client's query came, for a resumed one (0: now).
  std::size_t resolve(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                      const cache::CacheKey* plain_missed, std::uint8_t* out, std::size_t cap,
                      std::uint64_t arrived_us = 0);
  // admit() then resolve(), then the policy on the answer (answer_policy).
  std::size_t handle(std::uint8_t* wire, std::size_t len, const QuerySource& src, std::uint8_t* out, std::size_t cap);
  // The response policy on an answer in out[0, n) written for `q` from `client` (a hit, a
  // stale or failure answer, an upstream answer): its CNAME chain and addresses
  // (policy_gate.hpp). Returns the size to send (0: dropped); n without a policy.
  std::size_t answer_policy(const dns::ClientQuery& q, const sockaddr_storage* client, std::size_t limit,
                            std::uint8_t* out, std::size_t n, std::size_t cap) {
    if (!policy_ || n == 0) return n;
    return apply_answer_policy(*policy_, q, client, limit, out, n, cap, cache_, replies_.meter(), policy_hit_, tap_);
  }
  bool has_policy() const { return policy_ != nullptr; }
  // The rule the policy matched for the last query admitted (admit(), then answer_policy()
  // for its answer), or for the last waiting client answered (reply()); kind none: no rule.
  // For dnstap's Policy field (policy_gate.hpp). The UDP batch admits all its queries
  // before their answers are checked: a reader per datagram takes it after each step.
  const PolicyHit& policy_hit() const { return policy_hit_; }
  // Whether the last resolve() left its client waiting (upstream, parked).
  bool answered_later() const { return answered_later_; }
  void clear_answered_later() { answered_later_ = false; }

  // A hit on the plain key near the end of its TTL starts one background refresh.
  // Inline: on every hit, and most hits are far from their end.
  void maybe_prefetch(const cache::CacheKey& plain_key, const cache::ResponseResult& r) {
    if (cfg_.prefetch_percent == 0 || r.expire <= now_) return;
    // Whole seconds: the last second of a 10 s TTL is its last 10%, so the bound is inclusive.
    if (std::uint64_t{r.expire - now_} * 100 > std::uint64_t{r.ttl} * cfg_.prefetch_percent) return;
    prefetch(plain_key, r);
  }

  // The host's AD cut now (ad_trust.hpp; 0: none).
  std::uint32_t ad_trusted_after() const { return workers::ad_trusted_after(ad_trust_); }

  // The event loop's clock (cache::wall_clock_now), set once per wakeup.
  void set_now(std::uint32_t now) { now_ = now; }
  std::uint32_t now() const { return now_; }

  // dnstap (dnstap_writer.hpp): upstream messages are logged, and policy and stale answers
  // marked (nullptr: none, the default).
  void set_dnstap(DnstapWriter* tap) {
    tap_ = tap;
    stale_.set_dnstap(tap);
    upstream_.set_dnstap(tap);
  }

  // The upstream client's events and timers, and the parked clients'.
  UpstreamClient& upstream() { return upstream_; }
  // The recursive resolver's events (recursive_client.hpp).
  RecursiveClient& recursion() { return recursive_; }
  // Milliseconds until the next timer of the pipeline (-1: none).
  int next_timeout_ms(std::uint64_t now_us) const;
  // This worker's row of the claims table was woken: a claim a parked client waits on ended.
  void on_claims_woken();
  // Expired upstream attempts and client deadlines, and the parked clients due.
  void on_timers(std::uint64_t now_us);
  // Nothing in flight or parked (a retiring worker may exit).
  bool idle() const {
    return upstream_.in_flight() == 0 && recursive_.in_flight() == 0 && parked_.empty() &&
           (!validation_ || validation_->in_flight() == 0);
  }

private:
  // The background refresh maybe_prefetch decided on.
  void prefetch(const cache::CacheKey& plain_key, const cache::ResponseResult& r);
  // Stage 2 for local data that is a CNAME for the query name (query_pipeline_alias.cpp,
  // local_alias.hpp): its target answered by the policy or resolved (stages 3-5), the
  // answer written for the client in out; 0 when the client waits or gets nothing.
  std::size_t follow_local_cname(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                                 std::uint8_t* out, std::size_t cap);
  // The client's answer in out from the answer target[0, n) that the pipeline wrote for
  // target_query, after the policy on the target's chain (target is rewritten in place;
  // `cap` bytes both). 0: dropped by a rule.
  std::size_t finish_alias(const LocalAlias& alias, const dns::ClientQuery& target_query,
                           const sockaddr_storage* client, std::size_t limit, std::uint8_t* target, std::size_t n,
                           std::uint8_t* out, std::size_t cap);
  // write_alias_answer, or SERVFAIL when the target's message cannot be read back.
  std::size_t write_alias(const LocalAlias& alias, const std::uint8_t* target, std::size_t n, std::uint8_t* out,
                          std::size_t limit, std::size_t cap);
  // The record of a client that waits (upstream, parked) for q from src.
  Waiter waiter_for(const dns::ClientQuery& q, const QuerySource& src, std::uint64_t arrived_us) const;
  // A miss parked on the claim of a denial being validated above its name
  // (denial_claims.hpp). False: not parked (no room, or the claim has ended).
  bool park_for_denial(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                       const UpstreamClaims::Claim& claim, std::uint64_t arrived_us);
  // Stage 4 for a miss: forwarded, joined (parked), or answered as failed/overloaded.
  std::size_t forward(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                      const cache::CacheKey& plain, std::uint8_t* out, std::size_t cap, std::uint64_t arrived_us);
  // A miss whose question another worker is asking (its `claim`): parked until that query
  // ends, or answered now when it has ended. nullopt: no room to park (overloaded).
  std::optional<std::size_t> join(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src, Waiter& w,
                                  const UpstreamClaims::Claim& claim, std::uint8_t* out, std::size_t cap);
  // Stage 4 for a miss no forward zone holds, with recursion on: resolved by this worker
  // (query_pipeline_recursion.cpp), or answered as failed/overloaded.
  std::size_t recurse(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                      const cache::CacheKey& plain, Waiter& w, std::uint8_t* out, std::size_t cap);
  // DNS64 (query_pipeline_dns64.cpp, dns64.hpp): stages 3-5 for a query with the DNS64
  // key flag whose synthesized entry missed; a waiting DNS64 client's next step once its
  // answer (out[0, n)) came; its answer when a timer passed (stale synthesized, else
  // SERVFAIL when given up; false: it waits on).
  std::size_t dns64_resolve(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                            std::uint8_t* out, std::size_t cap, std::uint64_t arrived_us);
  void dns64_reply(const Waiter& w, std::uint8_t* out, std::size_t n);
  bool dns64_deadline(Waiter& w, bool given_up);
  std::size_t dns64_step(const std::shared_ptr<const Dns64Wait>& d, const dns::ClientQuery& step_query,
                         const QuerySource& src, std::uint8_t* out, std::size_t cap);
  std::size_t dns64_continue(const std::shared_ptr<const Dns64Wait>& d, const QuerySource& src, std::uint8_t* out,
                             std::size_t n, std::size_t cap);
  // The entry for d's client built from msg[0, n), the answer written for `asked`, inserted
  // under the client's key when cacheable (dns64_synth_.entry(); 0: none).
  std::size_t dns64_entry(Dns64Synthesizer::Kind kind, const Dns64Wait& d, const dns::ClientQuery& asked,
                          const std::uint8_t* msg, std::size_t n);
  // The upstream client's completion and deadline callbacks (query_pipeline_upstream.cpp).
  void on_upstream_done(Pending& p, const UpstreamAnswer* a);
  // The end of p's query: the entry (padded; empty: none) cached when `cacheable` (else
  // published in the answer slot), the claim released, every waiter answered from it, or
  // stale / SERVFAIL with `failure` when there is none.
  void deliver(Pending& p, const cache::CacheKey& key, std::span<const std::uint8_t> entry, std::size_t entry_len,
               bool cacheable, std::uint8_t scope, dns::ExtendedError failure);
  // A validation job's end (validation_jobs.hpp): deliver() for its verdict; bogus: the EDE.
  void on_validated(ValidationJobs::Finished& f);
  bool on_deadline_passed(const Pending& p, Waiter& w, bool given_up);
  void resume_parked(std::uint64_t now_us);
  // A client that waited gets `n` bytes of out, after the policy on the answer.
  void reply(const Waiter& w, std::uint8_t* out, std::size_t n);
  // An answer fetched upstream (an encoded entry, its ECS scope) written for query q.
  std::size_t write_fetched(const dns::ClientQuery& q, bool tcp, std::uint8_t scope,
                            std::span<const std::uint8_t> entry, std::uint32_t now, std::uint8_t* out,
                            std::size_t cap);
  // The answer another worker's ended claim fetched and the cache did not take
  // (answer_slots.hpp), written for q; 0: none there.
  std::size_t slot_answer(const dns::ClientQuery& q, bool tcp, const UpstreamClaims::Claim& claim,
                          std::uint8_t* out, std::size_t cap);
  // The query parameters of a client that waited on `p`.
  static CheckedQuery checked_for(const ServeConfig& cfg, const Pending& p, const Waiter& w);

  const ServeConfig& cfg_;
  cache::Cache& cache_;
  QueryCheck check_;
  const policy::PolicyView* policy_;  // nullptr: no response policy
  PolicyHit policy_hit_;
  const AdTrustCut* ad_trust_;  // nullptr: every cached AD stands
  AnswerSlots* answer_slots_;   // nullptr: waiters find answers only in the cache
  CacheAnswers cache_answers_;
  StaleAnswers stale_;
  UpstreamClient upstream_;
  RecursiveClient recursive_;  // enabled(): misses no forward zone holds are resolved here
  ForwardOrResolve set_fetcher_;  // validation's DS and DNSKEY fetches (set_fetcher.hpp)
  UpstreamClaims* claims_;  // nullptr: no host-wide table (then forward() never answers joined)
  unsigned claims_row_;
  const ClientTimers timers_;
  ParkedClients parked_;
  ClientReplies& replies_;
  DnstapWriter* tap_ = nullptr;
  bool answered_later_ = false;
  // The alias forward() gives the Waiter it makes: set while a local CNAME's target, or a
  // resumed client that came through one, is resolved (nullptr otherwise).
  std::shared_ptr<const LocalAlias> forwarding_alias_;
  // The same for a DNS64 client's step (dns64_wait.hpp; nullptr otherwise).
  std::shared_ptr<const Dns64Wait> forwarding_dns64_;
  Dns64Synthesizer dns64_synth_;                 // its synthesized entries
  std::vector<std::uint8_t> dns64_buf_ = std::vector<std::uint8_t>(65535);  // a step's answer, read back
  std::vector<std::uint8_t> alias_buf_ = std::vector<std::uint8_t>(65535);  // a local CNAME target's answer
  std::uint32_t now_ = cache::wall_clock_now();
  std::vector<std::uint8_t> scratch_;  // an upstream answer's encoded entry
  std::vector<cache::RecordData> stripped_[3];  // an answer without DNSSEC records (strip_dnssec)
  std::unique_ptr<ValidationJobs> validation_;  // nullptr: not validating (dnssec_config.hpp)
  std::unique_ptr<AggressiveNsec> aggressive_;  // nullptr: not validating, or aggressive_nsec off
  std::unique_ptr<DenialClaims> denials_;       // with aggressive_ and a claims table; else nullptr
  std::uint8_t reply_buf_[65535];      // answers to clients that waited
  alignas(8) std::array<std::uint8_t, AnswerSlots::kCapacity> slot_copy_;  // slot_answer()'s copy
};

}  // namespace dnsarena::workers
