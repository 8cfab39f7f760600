// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's upstream client: forwards cache misses and matches the replies.
//
// Each attempt uses a fresh non-blocking UDP socket connected to one upstream, so the
// kernel picks a random source port and delivers only datagrams from that server's
// address and port; the ID comes from the kernel CSPRNG (getrandom, buffered: common/random_bytes.hpp), and the
// query name's letters get a random case (0x20, when upstream_case_randomization is on)
// that the reply must echo byte for byte. A reply is accepted only when UpstreamAnswer
// matches ID and question exactly (and ECS); anything else on the socket is ignored and
// the attempt keeps waiting. An attempt ends with an accepted answer, an error rcode or
// ICMP refusal (next attempt at once), or its timeout (next attempt). After `attempts()`
// attempts, or query_timeout_ms after the query started (the query resolution timer,
// client_timers.hpp: it cuts the attempt then running short), the waiters get stale or
// SERVFAIL. At the defaults the attempts wait 1, 2 and 4 s: 7 s, within the 10 s.
//
// Late replies are answers: an attempt that timed out over UDP keeps its socket (up to
// kMaxEarlier per query) until the query ends, and a reply to it that matches that
// attempt's ID, question, 0x20 case and ECS is accepted as the current attempt's would be
// (upstream_late_replies.cpp). A server that takes 1.2 s for a cold name answers the
// first attempt while the second is out; a socket closed at its timeout would drop it.
// It also counts for health as what it is: a reply, with its real RTT.
//
// Which upstream an attempt asks, and how long it waits, come from the host-wide
// upstream health table (upstream_health.hpp; this client's side of it is
// upstream_client_health.cpp): an upstream of the zone that is not down and not yet
// tried by this query (retried once every up one was), at random within rtt_band_ms of
// the fastest; when that one is not proven, the query is raced against a trial
// (upstream_health.hpp, trial_partner): the client's query goes to another upstream, a
// copy to the unproven one, and the first accepted answer wins. Attempt k waits timeout * 2^min(k, 2) (the configured timeout with
// backoff), or the upstream's RTO when shorter (at least 50 ms) while the query can
// still fail over to an up upstream it has not tried, with attempts left. Every
// attempt's outcome goes to the table: the RTT of a reply (any rcode), a timeout, a
// refusal. A down upstream gets no misses; once per interval one of its zone's misses
// also sends it a probe (the zone's SOA, on the side: no client waits on it). When every
// upstream of the zone is down, the attempt goes to the one most recently heard from
// (a last resort, at most down_after_timeouts in flight per upstream and worker); past
// that bound, or when none ever replied, a query with earlier attempts out waits for
// their late replies (an attempt that sends nothing), and a new one ends at once
// (finish, not counted as the name's failure: its waiters get a stale answer or SERVFAIL
// with EDE 22 from the completion). The probes go on meanwhile (upstream_health.hpp).
//
// 0x20 fallback (as Unbound's use-caps-for-id): a reply that matches in everything but
// the name's case comes from a server that does not preserve case. It is not accepted;
// the query is asked again at once, same attempt and upstream, with the name in
// lowercase, and counted (upstream_case_fallbacks). That query is then protected by ID
// and source port only, as with upstream_case_randomization off. NOTE: Unbound's fallback
// goes further (it asks every server of the zone without 0x20 and wants their answers to
// agree) and has caps-exempt for known offenders; ours is per query and remembers
// nothing, so a server that lowercases costs one extra round trip per miss.
//
// Bounds (a random-subdomain flood must not exhaust descriptors or memory): at most
// kWaitersPerQuerySlot x upstream_max_in_flight clients waiting per worker (64 x 1,024 =
// 65,536 at the defaults, 528 bytes each: 35 MB; a client may wait query_timeout_ms), past
// which a miss is refused at once (Forwarded::overloaded: stale or SERVFAIL, counted
// upstream_overload); at most upstream_max_in_flight distinct queries per worker, and at most
// upstream_max_per_name per (qname, qtype, DO/CD) whatever the ECS subnet, counted over
// every worker of the host (in_flight_names.hpp), so an off-path attacker cannot hold
// many concurrent queries for one name. A miss over the per-name bound is refused at once
// (Forwarded::overloaded: the worker answers SERVFAIL and counts upstream_overload and
// upstream_overload_per_name). When the worker's table is full, the oldest query is given
// up (its clients get SERVFAIL, counted upstream_jostled) to make room if it has waited
// longer than upstream_jostle_timeout_ms (200 ms: one round trip to a working server),
// else the new miss is refused (upstream_overload). This is Unbound's jostle-timeout: a
// flood of misses to a server that never answers fills the table with queries that will
// time out anyway, and refusing every new miss would starve the misses that a working
// server answers in a millisecond. Measured (`dnsarena-lab bench attack --quick --only flood`,
// a 1,000 q/s flood for 5 s): refusing new misses alone answered 74 and 85 of 250
// legitimate misses in two runs, the rest SERVFAIL, as each flood query held its slot
// for all three attempts (7 s); with the jostle, 250 of 250. NOTE: Unbound gives up only half of its slow queries; ours gives up
// the oldest, one per new miss, which is simpler and leaves no query older than the
// timeout holding a slot a new one needs.
//
// A reply with TC set is not the answer: the same question goes to the same upstream
// over TCP (a fresh connection, a fresh ID, the same timeout), and that reply is the
// answer, cached whole (so TCP clients get it in full, UDP clients up to their size).
// The TCP retry belongs to the attempt that got TC; if it fails (refused, reset, EOF,
// timeout, TC again, an unmatched reply) the next attempt starts as above.
//
// Identical misses in flight share one upstream query: the in-flight table is keyed by
// (lowercase qname, qtype, DO/CD, ECS subnet sent); later clients join the waiters. Across
// workers, a new query first claims its question host-wide (upstream_claims.hpp): when
// another worker holds the claim, forward() answers `joined` and the worker parks its
// client until that query ends and its answer is in the shared cache, or (an answer not
// cached) in the host's answer slot for the claim (answer_slots.hpp).
//
// When the upstream fails (the cache tier's reason to exist):
//   - a name whose query failed (every attempt) goes into the host's failure cache
//     (failure_cache.hpp, RFC 9520); while its window runs, forward() answers `failed`
//     and no query is sent; a success clears it;
//   - every client has the two timers of client_timers.hpp: when its response timer
//     (stale.client_timeout_ms) passes it is handed back (DeadlinePassed) to be answered
//     stale if a stale answer is held, else it keeps waiting; when its resolution timer
//     (query_timeout_ms) passes it is handed back to be answered whatever is held (stale or
//     SERVFAIL + EDE 22). The query goes on either way, so that its answer refreshes the
//     cache;
//   - refresh() starts a query nobody waits for (prefetch, stale-first answers).
// What a client gets then (a stale answer with EDE 3/19, or SERVFAIL with EDE 22/23) is
// the worker's choice (worker.cpp).
//
// Transport tcp or tls (a forward zone's `transport`): each attempt's query goes over the
// worker's kept connection to the picked upstream (upstream_stream.hpp) instead of a UDP
// socket: pipelined, matched by ID, so a miss costs no handshake once the connection is
// up (upstream_connections counts the connections made). Everything above applies the
// same; a connection that breaks fails the attempts it carried over to the next
// upstream, and a query's edns-tcp-keepalive option (RFC 7828) asks the server to keep
// it open. The first query on a new connection waits the full attempt timeout (the
// handshake is in it) and gives no RTT sample, as a TCP retry.
//
// Costs: one socket, one epoll registration and two hash-map entries per miss in flight,
// plus the sockets of its earlier attempts kept for late replies: those count with the
// queries against upstream_max_in_flight (the descriptor budget's upstream share,
// descriptor_budget.hpp), and a new query takes the oldest kept one's place before it
// jostles a query. Timeouts are a binary heap of deadlines (attempts have different
// timeouts).
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/cache.hpp"
#include "common/monotonic_clock.hpp"
#include "dns/client_query.hpp"
#include "dns/ecs_option.hpp"
#include "workers/ad_trust.hpp"
#include "workers/answer_slots.hpp"
#include "workers/failure_cache.hpp"
#include "workers/in_flight_names.hpp"
#include "workers/infra_table.hpp"
#include "workers/nsec_ranges.hpp"
#include "workers/rate_limit_table.hpp"
#include "workers/runtime_ntas.hpp"
#include "workers/client_timers.hpp"
#include "workers/serve_config.hpp"
#include "workers/token_deadlines.hpp"
#include "workers/upstream_answer.hpp"
#include "workers/upstream_claims.hpp"
#include "workers/upstream_health.hpp"
#include "workers/upstream_stream.hpp"
#include "workers/udp_pktinfo.hpp"

namespace dnsarena::workers {

class DnstapWriter;  // dnstap_writer.hpp
enum class TapProtocol : std::uint8_t;  // dnstap_writer.hpp

struct LocalAlias;  // local_alias.hpp
struct Dns64Wait;   // dns64_wait.hpp

// A client waiting for an answer.
struct Waiter {
  dns::ClientQuery query;
  bool tcp = false;
  sockaddr_storage addr{};  // UDP: where the answer goes
  socklen_t addr_len = 0;
  // UDP through a PROXY header (proxy_protocol.hpp): the client it carried, for the
  // policy and dnstap (addr is the balancer's). AF_UNSPEC: addr is the client.
  sockaddr_storage proxied_client{};
  const sockaddr_storage& client_address() const { return proxied_client.ss_family ? proxied_client : addr; }
  unsigned udp_socket = 0;  // UDP: which of the worker's listen sockets it came on
  LocalAddress local;       // UDP on a wildcard socket: the address it asked, the answer's source
  std::uint64_t conn_id = 0;
  std::uint64_t arrived_us = 0;  // monotonic_us() when the query came: its response deadline runs from here
  std::uint32_t doh_stream = 0;  // DoH: the request's HTTP/2 stream on connection conn_id (0: not DoH)
  // A client whose question led here through a CNAME in the policy's local data: `query`
  // is the target's, the alias holds the client's and the CNAME records its answer starts
  // with (nullptr: none, the query is the client's own).
  std::shared_ptr<const LocalAlias> alias;
  // A DNS64 client (dns64_wait.hpp): `query` is its current step's (nullptr: none).
  std::shared_ptr<const Dns64Wait> dns64;
};

struct Pending {
  // Earlier attempts of this query whose UDP socket stays open for a late reply.
  static constexpr unsigned kMaxEarlier = 4;
  // The epoll data of earlier attempt k's socket carries k + 1 in bits 49-51 (the query's
  // token is bits 0-47, a kept connection's flag bit 48, the worker's tag bits 56-63).
  static constexpr unsigned kEarlierEventShift = 49;
  static_assert(kMaxEarlier < 8, "earlier slots fit bits 49-51 of the epoll data");
  struct Earlier {
    int fd = -1;  // -1: a free slot
    std::uint16_t id = 0;
    std::array<std::uint8_t, 255> qname_sent{};  // its 0x20 case
    unsigned upstream = 0;
    int health_row = -1;
    std::uint64_t sent_us = 0;
  };
  std::uint64_t token = 0;
  std::string dedup_key;
  std::array<std::uint8_t, 255> qname{};  // lowercase
  std::array<std::uint8_t, 255> qname_sent{};  // this attempt's case (0x20)
  std::uint8_t qname_len = 0;
  std::uint32_t name_bucket = 0;  // in InFlightNames: the per-name bound
  std::uint64_t name_hash = 0;    // the plain key's hash: the failure cache's key
  UpstreamClaims::Claim claim;    // host-wide: this worker asks for the question (claim.value 0: not claimed)
  bool got_reply = false;         // an attempt was answered (with an error): a failure is an error, not a timeout
  bool case_fallback = false;     // the upstream lost the 0x20 case: asked in lowercase
  unsigned zone = 0;     // index into the client's zones: who may be asked
  std::span<const std::uint8_t> zone_name;  // that zone, for scrubbing the reply
  bool trust_ad = false;                     // that zone's trust_ad (false while validating)
  bool dnssec = false;  // validating (validation_jobs.hpp): asked with DO and CD whatever the key's flags
  std::uint16_t qtype = 0;
  std::uint8_t key_flags = 0;  // cache key flags (DO, CD)
  dns::EcsOption ecs;          // sent upstream
  std::vector<Waiter> waiters;  // in arrival order: their response timer runs (client_timers.hpp)
  std::vector<Waiter> held;     // in arrival order: the response timer passed with nothing stale
  std::uint64_t ends_us = 0;    // the query resolution timer: no attempt lives past it (0: probe, trial)
  std::array<Earlier, kMaxEarlier> earlier;
  bool idle = false;    // this attempt sends nothing (no upstream to ask): it waits for late replies
  bool rescue = false;  // this attempt goes to a down upstream as the last resort (zone_rescues_)
  int fd = -1;
  unsigned attempt = 0;
  unsigned upstream = 0;
  std::uint16_t id = 0;
  std::uint64_t sent_us = 0;
  unsigned generation = 0;  // bumped per socket: a deadline names the socket it is for
  // TCP retry after TC: the query with its length prefix, then the reply as it arrives.
  bool tcp = false;
  std::vector<std::uint8_t> tcp_out;
  std::size_t tcp_out_done = 0;
  std::vector<std::uint8_t> tcp_in;
  std::size_t tcp_in_have = 0;
  // Transport tcp/tls (upstream_stream.hpp): the kept connection this attempt's query
  // waits on (-1: none), and whether it was ready when the query was written (then the
  // reply's time is the server's RTT, and a timeout counts against the server).
  int stream = -1;
  bool streamed = false;
  bool stream_warm = false;
  // Upstream health (upstream_client_health.cpp): the row this attempt reports to (-1:
  // none), the RTO its timeout came from, the zone's upstreams tried so far (bit i), the
  // attempt `upstream` was picked for (a 0x20 fallback re-sends to the same one), and
  // whether an up upstream this query has not tried remains (the RTO is then its wait).
  // A probe (probe_token != 0 while it holds the host's token) has no waiters, is not in
  // by_key_ or started_, and never reaches finish() or the completion.
  int health_row = -1;
  std::uint32_t attempt_rto_us = 0;
  std::uint64_t tried = 0;
  unsigned picked_for = ~0u;
  bool failover = false;
  bool probe = false;
  std::uint64_t probe_token = 0;
  // Trials (upstream_health.hpp): `trial_upstream` is the upstream this attempt's trial
  // goes to once the client's query is sent (~0u: none). A trial is a Pending of its own
  // (trial_of: the query it races, which may have ended since): no waiters, not in by_key_
  // or started_, never reaches finish(); its accepted answer finishes trial_of.
  unsigned trial_upstream = ~0u;
  bool trial = false;
  std::uint64_t trial_of = 0;
  UpstreamQuestion question() const {
    return {id, {qname_sent.data(), qname_len}, qtype, dnssec || (key_flags & cache::kKeyDo) != 0, ecs, zone_name, trust_ad};
  }
  // The question as earlier attempt `e` asked it: its ID and case, the rest the same.
  UpstreamQuestion question_of(const Earlier& e) const {
    return {e.id, {e.qname_sent.data(), qname_len}, qtype, dnssec || (key_flags & cache::kKeyDo) != 0, ecs, zone_name,
            trust_ad};
  }
};

class UpstreamClient {
public:
  // answer == nullptr: the query failed (every attempt, or it was given up): the waiters
  // get a stale answer or SERVFAIL. Called before the host-wide claim is released, so
  // what it puts in the cache (or the claim's answer slot: answer_slots.hpp) is there
  // when waiting workers look. It may release the claim itself (UpstreamClaims::release
  // with Pending::claim) once they may look.
  using Completion = std::function<void(Pending&, const UpstreamAnswer* answer)>;
  // A waiter one of whose timers (client_timers.hpp) passed while its query goes on.
  // given_up false (the response timer): answer it stale and return true if a stale answer
  // is held, else return false and it keeps waiting. given_up true (the resolution
  // timer): answer it now (stale or SERVFAIL) and return true. An answered waiter is out
  // of the query; the query continues for the cache.
  using DeadlinePassed = std::function<bool(const Pending&, Waiter&, bool given_up)>;

  // Host-wide tables shared by every worker (nullptr: a table private to this client):
  // `names`, the per-name counts; `failures`, the failure cache; `claims`, which worker
  // asks for which question; `health`, what every worker learned of each upstream
  // (upstream_health.hpp). `row` is this worker's row of `names` and `claims`.
  // The worker's own, carried beside them (this client reads neither): `answers`, the
  // answers claims fetched (answer_slots.hpp); `ad_trust`, the cut of cached AD bits
  // (ad_trust.hpp).
  struct HostTables {
    InFlightNames* names = nullptr;
    FailureCache* failures = nullptr;
    UpstreamClaims* claims = nullptr;
    unsigned row = 0;
    UpstreamHealth* health = nullptr;
    AnswerSlots* answers = nullptr;
    const AdTrustCut* ad_trust = nullptr;
    NsecRanges* nsec_ranges = nullptr;  // validated NSEC ranges (nsec_ranges.hpp), for the pipeline
    const common::NtaTable* ntas = nullptr;  // run-time negative trust anchors (runtime_ntas.hpp)
    InfraTable* infra = nullptr;  // the recursive workers' server state (infra_table.hpp)
    RateLimitTable* authority_rates = nullptr;  // queries per second to each authoritative (authority_rate.hpp)
  };
  UpstreamClient(int epoll_fd, std::uint64_t tag, const ServeConfig& config, cache::Cache& cache,
                 Completion done, DeadlinePassed deadline_passed, HostTables host);
  ~UpstreamClient();

  enum class Forwarded {
    yes,         // w waits for an upstream answer
    overloaded,  // a bound refused a new query (w not taken): answer stale or SERVFAIL
    no_zone,     // no forward zone holds the name (w not taken): answer REFUSED
    failed,      // the name is in the failure cache (w not taken; *failure says how it
                 // failed): answer stale or SERVFAIL with an EDE, no upstream query
    joined,      // another worker is asking for this question (w not taken; *claim is
                 // its claim): wait until it ends (UpstreamClaims::wait_on), then look again
  };
  struct ForwardDetail {
    FailureKind failure = FailureKind::timeout;  // with Forwarded::failed
    UpstreamClaims::Claim claim;                 // with Forwarded::joined
  };
  // Adds `w` to the query in flight for the same question, or starts one.
  Forwarded forward(const cache::CacheKey& plain_key, const dns::EcsOption& ecs, Waiter& w,
                    ForwardDetail* detail = nullptr);
  // Starts a query with no client waiting (prefetch, a stale answer's refresh) unless
  // one for the same question is in flight on this host, the name is in the failure
  // cache, or the cache holds a fresh entry for the key inserted after `seen_inserted`
  // (the insert time of the entry that prompted the refresh; 0 when an expired entry was
  // answered stale, so any fresh one will do): another worker's refresh landed between
  // this worker's lookup and its claim. True when a query was started.
  bool refresh(const cache::CacheKey& plain_key, const dns::EcsOption& ecs, std::uint32_t seen_inserted);
  // Whether a forward zone holds `qname` (wire, lowercase): its misses come here.
  bool forwards(std::span<const std::uint8_t> qname) const { return zone_of(qname) >= 0; }
  // The longest a query can live (every attempt's timeout with backoff, TCP retries): a
  // host-wide claim older than this has an owner that died or forgot it.
  std::uint64_t max_query_ms() const;
  // An epoll event (EPOLLIN, EPOLLOUT, errors) on the socket of query `token`.
  void on_event(std::uint64_t token, std::uint32_t events, std::uint64_t now_us);
  void on_timeouts(std::uint64_t now_us);
  // Milliseconds until the next deadline (-1: none).
  int next_timeout_ms(std::uint64_t now_us) const;
  std::size_t in_flight() const { return pending_.size(); }
  // The failure cache the client consults (the host's, or its own): a validation job
  // records a bogus name there (validation_jobs.hpp).
  FailureCache& failures() { return *failures_; }
  // The trust anchors in force, run-time NTAs included (runtime_ntas.hpp): validation
  // jobs start from them; a bogus failure of a name now under an NTA is not served.
  RuntimeNtas& runtime_ntas() { return runtime_ntas_; }
  // Clients waiting on this worker's queries (their waiters and held lists).
  std::size_t waiting() const { return waiting_; }
  static constexpr std::size_t kWaitersPerQuerySlot = 64;
  // dnstap (dnstap_writer.hpp): every query sent and reply read is handed to `tap`
  // (nullptr: none, the default).
  void set_dnstap(DnstapWriter* tap) { tap_ = tap; }

private:
  // The in-flight key and its hash (qname, qtype, DO/CD, the ECS subnet sent).
  static std::string dedup_key(const cache::CacheKey& plain_key, const dns::EcsOption& ecs);
  // Starts a new query for `plain_key`; `w` (nullable) is its first waiter. Without one it
  // is a refresh, and `seen_inserted` the insert time it saw: once the question is
  // claimed, a fresh entry inserted later means the refresh is done already (returns
  // joined, nothing sent).
  Forwarded start(const cache::CacheKey& plain_key, const dns::EcsOption& ecs, std::string dedup, Waiter* w,
                  ForwardDetail* detail, std::uint32_t seen_inserted = 0);
  // Whether the cache holds a fresh entry for `key` inserted after `seen_inserted`
  // (counters untouched).
  bool refreshed_since(const cache::CacheKey& key, std::uint32_t seen_inserted);
  void start_attempt(Pending& p, std::uint64_t now_us);
  // p's query (write_query: a fresh ID and case) over a fresh UDP socket connected to
  // `up`, watched for the reply. False (no socket left open) when any step fails.
  bool send_udp(Pending& p, const Endpoint& up, std::uint64_t now_us);
  // The query for this attempt: a fresh ID and (0x20) a fresh case of the name; over a
  // kept connection with the edns-tcp-keepalive option.
  std::size_t write_query(Pending& p, std::uint8_t* out, std::size_t capacity, bool tcp_keepalive = false);
  // The longest forward zone holding `qname` (index into zones_), -1: none.
  int zone_of(std::span<const std::uint8_t> qname) const;
  // p's query to upstream `upstream` of its zone, over the zone's transport.
  bool send_query(Pending& p, unsigned upstream, std::uint64_t now_us);
  // p's query over the zone's kept TCP/TLS connection to `upstream` (upstream_stream.hpp).
  bool send_stream(Pending& p, unsigned upstream, std::uint64_t now_us);
  void on_stream_event(std::size_t stream, std::uint32_t events, std::uint64_t now_us);
  // What a stream reported: replies to their queries, broken queries failed over (but
  // `skip`, whose caller fails it), connections counted, failures logged.
  void take_stream_events(std::size_t stream, UpstreamStream::Events& events, std::uint64_t now_us,
                          std::uint64_t skip = 0);
  void start_tcp_retry(Pending& p, std::uint64_t now_us);
  void on_udp_readable(Pending& p, std::uint64_t now_us);
  void on_tcp_event(Pending& p, std::uint32_t events, std::uint64_t now_us);
  // Hands a complete reply to the parser: finish, fail the attempt, or (UDP) keep waiting.
  // Returns false when the UDP socket should keep being read.
  bool take_reply(Pending& p, const std::uint8_t* wire, std::size_t len, std::uint64_t now_us);
  bool watch(Pending& p, int fd, std::uint32_t events, std::uint64_t now_us);
  void fail_attempt(Pending& p, std::uint64_t now_us);
  // Ends a query. `failed`: every attempt failed (the name goes into the failure cache);
  // a query given up for room (jostled) has answer == nullptr and failed == false.
  void finish(std::uint64_t token, const UpstreamAnswer* answer, bool failed = true);
  // How `p`'s current attempt travels, in dnstap's terms (a tls zone's stream is DOT).
  TapProtocol tap_protocol(const Pending& p) const;
  // Hands over the waiters of p whose timer has passed; re-arms for the next one.
  void expire_waiters(Pending& p, std::uint64_t now_us);
  // Adds w to p in arrival order, and arms its timer when it is the first to run out.
  void add_waiter(Pending& p, Waiter&& w);
  // The current attempt's socket (UDP or TCP) or kept connection query: closed, forgotten.
  void close_socket(Pending& p);
  // An attempt's deadline, no later than the query's end.
  static std::uint64_t clip(const Pending& p, std::uint64_t at_us) {
    return p.ends_us && at_us > p.ends_us ? p.ends_us : at_us;
  }

  // Late replies (upstream_late_replies.cpp). The current UDP attempt, timed out, keeps
  // its socket as an earlier attempt when the socket budget allows (else it is closed).
  void keep_earlier(Pending& p);
  void close_earlier(Pending& p, unsigned slot);
  void close_all_earlier(Pending& p);
  bool has_earlier(const Pending& p) const;
  // An attempt that sends nothing: p waits until `until_us` (at most its end) for late
  // replies to its earlier attempts. False (nothing set): none is open, or p has ended.
  bool wait_for_late(Pending& p, std::uint64_t now_us, std::uint64_t until_us);
  // A datagram on earlier attempt `slot`'s socket: a late reply is taken like the current
  // attempt's (finish), an error rcode or refusal closes that socket only.
  void on_earlier_readable(Pending& p, unsigned slot, std::uint64_t now_us);
  // Closes the oldest kept socket of any query: room for a new query. False: none kept.
  bool shed_earlier();
  // Upstream sockets of this worker: queries (probes, trials) and kept earlier attempts.
  std::size_t sockets_in_use() const { return pending_.size() + earlier_open_; }
  unsigned earlier_open_ = 0;
  struct EarlierRef {
    std::uint64_t token;
    unsigned slot;
    int fd;
  };
  std::deque<EarlierRef> earlier_order_;  // kept sockets, oldest first (closed ones dropped lazily)

  int epoll_fd_;
  std::uint64_t tag_;
  const ServeConfig& cfg_;
  cache::Cache& cache_;
  DnstapWriter* tap_ = nullptr;
  Completion done_;
  DeadlinePassed deadline_passed_;
  TtlPolicy ttl_;
  std::uint64_t next_token_ = 1;
  std::unordered_map<std::uint64_t, Pending> pending_;
  std::unordered_map<std::string, std::uint64_t> by_key_;
  std::unique_ptr<InFlightNames> own_names_;  // when no shared table was given
  std::unique_ptr<FailureCache> own_failures_;
  std::unique_ptr<cache::EntryCopy> recheck_copy_;  // refreshed_since()'s copy, made on first use
  InFlightNames* names_;
  unsigned names_row_;
  FailureCache* failures_;
  RuntimeNtas runtime_ntas_;
  UpstreamClaims* claims_;  // nullptr: no host-wide sharing of queries
  std::vector<ForwardZone> zones_;
  TokenDeadlines deadlines_;
  // Clients' response deadlines: one entry per query for its oldest waiter (generation
  // unused); expire_waiters() pushes the next.
  TokenDeadlines client_deadlines_;
  ClientTimers timers_;
  std::size_t waiting_ = 0;  // clients in every query's waiters and held (bound: kWaitersPerQuerySlot)
  // Queries in the order they started (finished ones are dropped lazily from the front):
  // the oldest is the one a full table gives up. Bounded by the misses started within
  // the longest a query can live (every attempt's timeout).
  struct Started {
    std::uint64_t at_us;
    std::uint64_t token;
  };
  std::deque<Started> started_;
  // Gives up the oldest query when it has waited longer than the jostle timeout.
  bool jostle_oldest(std::uint64_t now_us);
  UpstreamAnswer answer_;

  // Upstream health (upstream_client_health.cpp).
  void init_health(UpstreamHealth* shared);
  // Picks this attempt's upstream into p.upstream (and p.health_row, p.tried), unless one
  // was picked for this attempt already; starts the zone's due probes. Every upstream of
  // the zone down: the last resort (rescue_upstream). False: none to ask.
  bool pick_upstream(Pending& p, std::uint64_t now_us);
  // Every upstream of p's zone is down: the one most recently heard from, while it has
  // fewer than down_after_timeouts such attempts in flight from this worker; -1: none
  // (past the bound, or none ever replied: nothing says one is alive).
  int rescue_upstream(const Pending& p) const;
  void end_rescue(Pending& p);
  void start_probe(unsigned zone, unsigned upstream, std::uint64_t token, std::uint64_t now_us);
  // A probe's reply: true when it ended the probe (false: not its reply, keep reading).
  bool take_probe_reply(Pending& p, const std::uint8_t* wire, std::size_t len, std::uint64_t now_us);
  // Ends a probe: gives the token back if still held, closes and forgets it.
  void retire_probe(Pending& p, std::uint64_t now_us);
  // Sends query p's trial to p.trial_upstream (when set and there is room).
  void start_trial(Pending& p, std::uint64_t now_us);
  // A trial's reply: true when it ended the trial (false: not its reply, keep reading).
  bool take_trial_reply(Pending& t, const std::uint8_t* wire, std::size_t len, std::uint64_t now_us);
  // Ends a trial: closes and forgets it.
  void retire_trial(Pending& t);
  void report_sent(Pending& p);
  void report_reply(Pending& p, std::uint64_t now_us);
  // A reply on `row` (any query of this worker): RTT sample `rtt_us` (0: none); logs the
  // row's coming back.
  void report_reply_row(int row, std::uint64_t rtt_us, std::uint64_t now_us, bool probe);
  void report_failure(Pending& p, UpstreamHealth::Failure f, std::uint64_t now_us);
  // The current attempt's timeout (microseconds); records the RTO it came from.
  std::uint64_t attempt_timeout(Pending& p);
  UpstreamHealth* health_ = nullptr;
  std::unique_ptr<UpstreamHealth> own_health_;  // when no shared table was given
  std::vector<std::vector<int>> zone_rows_;     // per zone, per upstream: its health row (-1: none)
  std::vector<std::vector<unsigned>> zone_trials_;  // per zone, per upstream: this worker's trials in flight
  std::vector<std::vector<unsigned>> zone_rescues_;  // per zone, per upstream: last-resort attempts in flight

  // Transport tcp/tls: per zone, per upstream, its kept connection in streams_ (-1: udp).
  // Its epoll data is tag_ | kStreamFlag | index.
  std::vector<std::vector<int>> zone_streams_;
  std::vector<std::unique_ptr<UpstreamStream>> streams_;
  std::vector<bool> stream_failing_;  // the last connect failed (logged once until one succeeds)
  std::vector<std::unique_ptr<UpstreamTlsTrust>> trusts_;
  void init_streams();
};

using common::monotonic_us;

}  // namespace dnsarena::workers
