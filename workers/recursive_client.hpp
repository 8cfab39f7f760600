// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's recursive resolver: resolves a miss that no forward zone covers from the
// root (recursion.enabled, recursion_config.hpp), driving one
// recursion::IterativeResolution per question from the worker's event loop.
//
// Per question (lowercase qname, qtype, DO/CD: the plain cache key), one resolution;
// clients asking the same question while it runs wait on it (coalesced, at most
// kWaitersPerResolution each). Across workers, a new resolution first claims its
// question host-wide (upstream_claims.hpp, the table forwarded misses use): when another
// worker holds the claim, resolve() answers `joined` and the worker parks its client
// until that resolution ends and its answer is in the shared cache (or answer slot). Each query the state machine needs goes over a fresh
// non-blocking UDP socket connected to the server (the kernel picks a random source port
// and delivers only datagrams from that address and port), with a CSPRNG ID (getrandom, buffered: common/random_bytes.hpp)
// and the name's letters in random case (0x20). A datagram is the reply only when it has
// QR, the ID and the question bytes exactly as sent (case included); anything else is
// ignored and the attempt keeps waiting. A reply with TC is asked again over TCP (a fresh
// connection, a fresh ID and case). A query has EDNS (payload 1232, dns/query_builder),
// unless its server rejects EDNS (below), and RD clear. No usable reply within
// attempt_timeout_ms (or a refusal, a reset, a reply that does not parse):
// provide_failure(), and the state machine picks the next server.
//
// Server state is host-wide (infra_table.hpp, UpstreamClient::HostTables::infra): the
// state machine ranks a cut's addresses by it (infra_ranking.hpp: RTT, backoff after a
// timeout, lameness for the zone), and every reply and timeout is recorded there
// (authority_outcomes.hpp), EDNS status included: a query goes without an OPT record to
// a server known to reject EDNS, and a FORMERR or NOTIMP to an EDNS query is asked again
// without it (once per query the state machine sends: that retry is outside its
// max_queries budget, so a resolution sends at most twice that).
//
// The end of a resolution goes through the same completion as a forwarded answer
// (UpstreamClient::Completion, QueryPipeline::on_upstream_done): its result is written as
// a response (recursion/result_message.hpp) and accepted, scrubbed and TTL-clamped by
// UpstreamAnswer like an upstream's, cached, and every waiting client answered; a
// SERVFAIL result, or no result within query_timeout_ms, gives the waiters stale or
// SERVFAIL with an EDE, and puts the name in the host's failure cache (while its window
// runs, resolve() answers `failed` and sends nothing), as for forwarded misses. A client
// whose response timer (stale.client_timeout_ms, client_timers.hpp) passes while the
// resolution goes on is handed to DeadlinePassed: answered stale if held (out of the
// resolution), else it waits on for the answer.
//
// While validating (dnssec_config.hpp), every query carries DO, and the result keeps the
// RRSIGs and denial proofs (recursion/result_message.hpp): the completion hands it to the
// validation jobs as a forwarded answer (Pending::dnssec), and the jobs' DS and DNSKEY
// fetches for names no forward zone holds come back here (refresh(), set_fetcher.hpp);
// a DS set that a referral carries is cached for them on the way (referral_ds.hpp).
//
// With recursion.local_root (local_root.hpp), a query to the root cut (priming included)
// is answered from the config's copy of the root zone in step(), without a socket, while
// the copy has not expired; it still counts against max_queries. A resolution the local
// root ends alone is finished at the next on_timeouts (the loop's next turn), so a
// completion never runs inside the resolve() or refresh() that started it.
//
// Zone cuts learned are kept in the shared cache (shared_delegations.hpp), so a second
// name of a zone starts from that zone's servers, on every worker.
//
// Identical queries out are sent once per worker: when the state machine of one
// resolution needs a UDP query that another's is already waiting for (same server,
// question, cut and EDNS: outgoing_key), it follows that one (at most kFollowersPerQuery
// per query) instead of opening a socket, and takes the same reply (or the same failure:
// a timeout, a refusal). Names of a zone not yet known, asked at once, so share the
// root's and the TLD's referrals and priming, as Unbound's serviced queries do. A
// follower whose leader's reply cannot serve it (TC, asked again without EDNS) or whose
// leader's own time ran out asks on its own; a follower whose own time runs out first
// stops following and ends.
//
// Bounds: recursion.max_in_flight resolutions per worker (each holds at most one socket:
// the resolver's descriptors), recursion.max_queries queries per resolution (the state
// machine's budget, with its NXNSAttack bounds), query_timeout_ms per resolution, and
// kWaitersPerResolution clients on one. Past a bound a miss is answered as overloaded.
//
// Costs: per resolution the state machine (a few cuts), one socket and one epoll
// registration at a time, one heap entry per attempt.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/cache.hpp"
#include "recursion/iterative_resolution.hpp"
#include "workers/authority_rate.hpp"
#include "workers/failure_cache.hpp"
#include "workers/infra_ranking.hpp"
#include "workers/referral_ds.hpp"
#include "workers/runtime_ntas.hpp"
#include "workers/serve_config.hpp"
#include "workers/shared_delegations.hpp"
#include "workers/token_deadlines.hpp"
#include "workers/upstream_answer.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

class RecursiveClient {
public:
  static constexpr std::size_t kWaitersPerResolution = 64;
  // Resolutions that may wait on one UDP query another resolution of this worker sent.
  static constexpr std::size_t kFollowersPerQuery = 64;

  // `tag`: the epoll data's tag bits for this client's sockets (the token is the low 48
  // bits). `host`: its failure cache and claims table are used (nullptr: none). Reads
  // the root hints when recursion is enabled (throws std::runtime_error when they do
  // not read).
  RecursiveClient(int epoll_fd, std::uint64_t tag, const ServeConfig& cfg, cache::Cache& cache,
                  UpstreamClient::Completion done, UpstreamClient::DeadlinePassed deadline_passed,
                  const UpstreamClient::HostTables& host);
  ~RecursiveClient();
  RecursiveClient(const RecursiveClient&) = delete;
  RecursiveClient& operator=(const RecursiveClient&) = delete;

  bool enabled() const { return enabled_; }

  enum class Started {
    yes,         // w waits for the resolution
    overloaded,  // a bound refused it (w not taken)
    failed,      // the name is in the failure cache (w not taken; detail->failure says how)
    joined,      // another worker resolves this question (w not taken; detail->claim is
                 // its claim): wait until it ends (UpstreamClaims::wait_on), then look again
  };
  // Adds `w` to the resolution of the same question, or starts one.
  Started resolve(const cache::CacheKey& plain_key, Waiter& w, UpstreamClient::ForwardDetail* detail);
  // Starts a resolution nobody waits for (a validation's DS or DNSKEY set, a prefetch, a
  // stale answer's refresh: set_fetcher.hpp), unless one
  // for the question is in flight, a bound refuses it, the name is in the failure cache
  // or another worker resolves it. True when one was started.
  bool refresh(const cache::CacheKey& plain_key);

  // An epoll event on a socket of this client (`data` as registered).
  void on_event(std::uint64_t data, std::uint32_t events, std::uint64_t now_us);
  void on_timeouts(std::uint64_t now_us);
  // Milliseconds until the next deadline (-1: none).
  int next_timeout_ms(std::uint64_t now_us) const;
  std::size_t in_flight() const { return active_.size(); }

private:
  struct Resolution;
  // resolve() and refresh(): `w` nullptr for a resolution nobody waits for.
  Started start(const cache::CacheKey& plain_key, Waiter* w, UpstreamClient::ForwardDetail* detail);
  // Sends the state machine's next query, or finishes the resolution.
  void step(Resolution& r, std::uint64_t now_us);
  // Sends r.query over UDP, or follows an identical query out (same server, question, cut,
  // EDNS). False: no socket (nothing sent, nothing followed).
  bool send_current(Resolution& r, std::uint64_t now_us);
  // r no longer follows its leader.
  void unfollow(Resolution& r);
  // A follower whose leader's reply cannot serve it (TC, EDNS retried, the leader's time
  // ran out) asks on its own.
  void release(std::uint64_t token, std::uint64_t now_us);
  // The followers of a finished attempt: given its reply (nullptr: its failure) and stepped.
  void hand_over(const std::vector<std::uint64_t>& followers, const dnssec::Response* reply, bool no_reply,
                 std::uint64_t now_us);
  void write_query(Resolution& r);
  // A socket of `type` connected to the current query's server and watched for `events`
  // (UDP: the query sent), its attempt's timer armed. False: none (nothing left open).
  bool open_socket(Resolution& r, int type, std::uint32_t events, std::uint64_t now_us);
  bool send_udp(Resolution& r, std::uint64_t now_us);
  bool start_tcp(Resolution& r, std::uint64_t now_us);
  void on_udp(Resolution& r, std::uint64_t now_us);
  void on_tcp(Resolution& r, std::uint32_t events, std::uint64_t now_us);
  // A reply's bytes that echo the query: parsed and given to the state machine (or TCP).
  void take_reply(Resolution& r, const std::uint8_t* wire, std::size_t len, std::uint64_t now_us);
  // The attempt failed (`no_reply`: it timed out): the state machine's next step.
  void fail_attempt(Resolution& r, std::uint64_t now_us, bool no_reply = false);
  void close_socket(Resolution& r);
  void finish(Resolution& r);
  void arm(Resolution& r, std::uint64_t at_us);
  // The response timer of r's oldest waiting client, armed.
  void arm_client(const Resolution& r);
  // Waiters whose response timer passed: answered stale (out) or held.
  void expire_waiters(Resolution& r, std::uint64_t now_us);
  // What the completion and DeadlinePassed read of a resolution (waiters aside).
  void describe(const Resolution& r, Pending& p) const;

  int epoll_fd_;
  std::uint64_t tag_;
  const ServeConfig& cfg_;
  cache::Cache& cache_;
  UpstreamClient::Completion done_;
  UpstreamClient::DeadlinePassed deadline_passed_;
  ClientTimers timers_;
  FailureCache* failures_;
  RuntimeNtas ntas_;  // a bogus failure of a name an NTA now covers is void (live_failure.hpp)
  UpstreamClaims* claims_;  // nullptr: no host-wide sharing of resolutions
  unsigned claims_row_;
  // What every worker learned of the authoritatives (infra_table.hpp): the host's, else
  // own_infra_; ranking_ is the state machines' view of it.
  InfraTable* infra_;
  std::unique_ptr<InfraTable> own_infra_;
  std::unique_ptr<InfraRanking> ranking_;
  InfraTable& infra() { return infra_ ? *infra_ : *own_infra_; }
  AuthorityRate authority_rate_;  // recursion.max_queries_per_server, host-wide
  bool enabled_;
  bool dnssec_;  // validating: DO on every query with EDNS, the answer judged before it is cached
  recursion::Delegation hints_;
  recursion::Limits limits_;
  SharedDelegations store_;
  TtlPolicy ttl_;
  UpstreamAnswer answer_;
  ReferralDs referral_ds_;  // validating: a signed referral's DS set, cached for the jobs
  std::uint64_t next_token_ = 1;
  std::unordered_map<std::uint64_t, std::unique_ptr<Resolution>> active_;
  std::unordered_map<std::string, std::uint64_t> by_key_;
  // UDP queries out that another resolution may follow (outgoing_key) -> the sender's token.
  std::unordered_map<std::string, std::uint64_t> out_queries_;
  TokenDeadlines deadlines_;
  // Resolutions the local root finished inside step(): finished by the next on_timeouts.
  std::vector<std::uint64_t> deferred_;
  // Clients' response timers: one entry per resolution for its oldest waiter (generation unused).
  TokenDeadlines client_deadlines_;
};

}  // namespace dnsarena::workers
