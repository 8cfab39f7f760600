// SPDX-License-Identifier: GPL-3.0-or-later
// One resolver worker process: answers DNS from the shared cache, forwards misses.
//
// Layout of the loop (single-threaded, non-blocking, one epoll):
//   UDP sockets  one per listen address, SO_REUSEPORT on the shared port; recvmmsg up to 64 datagrams (headers
//                built once), each checked and parsed, the plain-key ones looked up as one
//                batch (Cache::lookup_responses), one sendmmsg for the batch;
//                a full batch is followed by another recvmmsg (up to 4) before epoll.
//                DNSARENA_RECV_HISTOGRAM=FILE: batch sizes at exit (recv_histogram.hpp).
//                Coalescing (udp.coalesce_us): at a rate of >= 1 datagram per nap, a nap
//                after the batch and before epoll_wait, so a wakeup (costly here: README,
//                serve) carries several datagrams; TCP and upstream events wait as long.
//                A wildcard address's socket answers each datagram from the address it
//                was sent to (udp_pktinfo.hpp: a control buffer per message); the others
//                pass none.
//   TCP          tcp_server.hpp, one listener per address, same query path.
//   DoT          a second TcpServer with the TLS transport on tls.listen's listeners,
//                same query path (its connection ids carry kTlsConnBit).
//   DoH          doh_server.hpp on https.listen's listeners (HTTP/2 over a third
//                TLS TcpServer), same query path; its answers go to (connection, stream).
//   upstream     upstream_client.hpp: one socket per miss in flight; completions write
//                the answer for every waiting client and insert it into the cache.
//   timers       epoll_wait's timeout is the next upstream deadline (at most 100 ms, so
//                SIGTERM and idle TCP sweeps are noticed promptly).
//
// Query path (query_pipeline.hpp, one stage per file): check (query_check.hpp), policy
// (policy_gate.hpp), cache (cache_answer.hpp; the UDP batch's plain keys in one
// Cache::lookup_responses here), upstream (upstream_client.hpp, parked_clients.hpp),
// stale and failure answers (stale_answer.hpp), replies to clients that waited
// (client_reply.hpp). This file is the event loop and the transports around it.
// Counters go to this worker's StatSlot; latency and answers by RCODE and type to its
// row of the host's AnswerMetrics.
//
// The worker builds its own Segment attachment and Cache after fork (SlotRole::worker,
// its index), and exits when its parent dies (PR_SET_PDEATHSIG) or on SIGTERM/SIGINT.
// A reload retires it with kRetireSignal (below): it drains its connections, then exits.
// It beats on a pipe to the supervisor from its event loop; a worker that stops beating
// (SIGSTOP, a debugger, a freezer, a hang) is killed and replaced (supervisor.hpp).
#pragma once
#include <signal.h>

#include <vector>

#include "dns/server_cookie.hpp"
#include "workers/answer_metrics.hpp"
#include "policy/policy_view.hpp"
#include "workers/failure_cache.hpp"
#include "workers/in_flight_names.hpp"
#include "workers/infra_table.hpp"
#include "workers/nsec_ranges.hpp"
#include "common/nta_table.hpp"
#include "workers/rate_limit_table.hpp"
#include "workers/ad_trust.hpp"
#include "workers/answer_slots.hpp"
#include "workers/upstream_claims.hpp"
#include "workers/serve_config.hpp"
#include "workers/tls_credentials.hpp"
#include "workers/upstream_health.hpp"

namespace dnsarena::workers {

// Exit codes the supervisor understands.
inline constexpr int kWorkerExitOk = 0;
inline constexpr int kWorkerExitConfig = 78;  // EX_CONFIG: cannot bind or attach; do not restart

// What the supervisor hands a worker at fork. The listening sockets belong to the
// supervisor and outlive the worker: a restarted worker of the same index resumes the same
// UDP socket and its queue, so a worker's death loses no query that was still queued.
struct UdpListener {
  int fd = -1;
  bool pktinfo = false;  // bound to a wildcard: answers name their source (udp_pktinfo.hpp)
};
struct WorkerSockets {
  // Per listen address, in the config's order: this worker index's UDP socket (a member
  // of the address's SO_REUSEPORT group) and the address's TCP listener, shared by every
  // worker (EPOLLEXCLUSIVE).
  std::vector<UdpListener> udp;
  std::vector<int> tcp;
  // DNS over TLS (tls.listen's order): the supervisor's listeners, shared like `tcp`, and
  // the credentials and ticket key it made before the fork. Empty / nullptr: no DoT.
  std::vector<int> tls;
  const TlsServerSettings* tls_settings = nullptr;
  int heartbeat = -1;  // write end of a pipe: one byte at least every kHeartbeatMs
  // Upstream queries in flight per name, for every worker (in_flight_names.hpp); row
  // `in_flight_row` is this worker's, zeroed before it serves. nullptr: a private table.
  // The supervisor gives worker index i row i or i + workers, alternating at each reload,
  // so a retiring worker still releasing into its row never shares it with the successor
  // that zeroes a row (supervisor.cpp, reload_workers).
  InFlightNames* in_flight_names = nullptr;
  unsigned in_flight_row = 0;
  // The host's failure cache (failure_cache.hpp) and its table of which worker asks the
  // upstream for which question (upstream_claims.hpp; this worker's row: in_flight_row).
  // nullptr: private to the worker.
  FailureCache* failure_cache = nullptr;
  UpstreamClaims* upstream_claims = nullptr;
  // The host's response-rate-limit counts (rate_limit_table.hpp), so the configured rate
  // holds for all workers together. nullptr: a private table (the rate per worker).
  RateLimitTable* rate_limit_table = nullptr;
  // What every worker learned of the upstreams (upstream_health.hpp): shared by all, kept
  // by the supervisor across worker restarts and reloads. nullptr: a private table.
  UpstreamHealth* upstream_health = nullptr;
  // Latency histograms and answer counts (answer_metrics.hpp); this worker writes row
  // `in_flight_row`. nullptr: a private table.
  AnswerMetrics* answer_metrics = nullptr;
  // The server cookie secrets (server_cookies.hpp): the supervisor's, the same for every
  // worker. nullptr: the worker makes its own (its cookies valid at no other worker).
  const dns::CookieSecrets* cookie_secrets = nullptr;
  // The response policy (policy_gate.hpp): the supervisor's read-only mapping, consulted
  // before the cache. nullptr: no policy configured.
  const policy::PolicyView* policy = nullptr;
  // The answers host-wide claims fetched that the cache did not take (answer_slots.hpp),
  // and the cut of cached AD bits (ad_trust.hpp): the supervisor's. nullptr: none (no
  // answers handed between workers; every cached AD stands).
  AnswerSlots* answer_slots = nullptr;
  const AdTrustCut* ad_trust = nullptr;
  // The host's validated NSEC ranges (nsec_ranges.hpp). nullptr: private to the worker.
  NsecRanges* nsec_ranges = nullptr;
  // What every recursive worker learned of the authoritatives (infra_table.hpp): the
  // supervisor's, kept across worker restarts. nullptr: private to the worker.
  InfraTable* infra = nullptr;
  // Queries per second to each authoritative, every worker's (authority_rate.hpp): the
  // supervisor's. nullptr: counted by the worker alone.
  RateLimitTable* authority_rates = nullptr;
  // The host's run-time negative trust anchors (common/nta_table.hpp): the supervisor's
  // mapping of the segment's file. nullptr: the config's anchors alone.
  const common::NtaTable* ntas = nullptr;
  // DNS over HTTPS (https.listen's order): the supervisor's listeners, shared like `tcp`,
  // served with tls_settings' credentials (ALPN h2). Empty: no DoH.
  std::vector<int> doh;
};
inline constexpr unsigned kHeartbeatMs = 250;
// The bytes a worker writes on its heartbeat pipe: kBeatAlive every kHeartbeatMs;
// kBeatRetired once, when a retired worker has stopped reading its sockets (from then on
// only its successor answers new queries, so the supervisor reports a reload done only
// after every retired worker has sent it: retirement_wait.hpp).
inline constexpr char kBeatAlive = 1;
inline constexpr char kBeatRetired = 2;
// A reload's retirement (supervisor.cpp, reload_workers): the worker stops reading its
// sockets (its successor reads them), answers its open TCP, DoT and DoH connections and
// upstream queries until they end or tcp.idle_timeout_ms passes, then exits. So a reload
// (a new certificate, say) drops no established connection. SIGTERM still stops at once.
// The signal stays blocked in a worker except inside its epoll_pwait (it is blocked from
// fork on), so it always ends that wait at once and can never arrive unhandled or in the
// gap between the loop's check and the wait.
inline constexpr int kRetireSignal = SIGUSR1;

// Runs until SIGTERM/SIGINT. Returns a process exit code.
int run_worker(const ServeConfig& config, unsigned index, const WorkerSockets& sockets);

// A non-blocking listening socket on `listen` (SO_REUSEPORT; UDP with cfg's buffers, and
// pktinfo on a wildcard; IPV6_V6ONLY on [::], so 0.0.0.0 on the same port is another
// socket). Returns -1 and sets errno on failure.
int open_listen_socket(const ServeConfig& cfg, const Endpoint& listen, bool tcp);

}  // namespace dnsarena::workers
