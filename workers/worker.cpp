// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/worker.hpp"
#include "workers/tsc_timer.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <spdlog/spdlog.h>

#include "cache/cache.hpp"
#include "common/process_limits.hpp"
#include "dns/client_query.hpp"
#include "wire/constants.hpp"
#include "workers/client_reply.hpp"
#include "workers/descriptor_budget.hpp"
#include "workers/dnstap_writer.hpp"
#include "workers/doh_server.hpp"
#include "workers/idle_tick.hpp"
#include "workers/miss_ratio_curves.hpp"
#include "workers/proxy_protocol.hpp"
#include "workers/query_pipeline.hpp"
#include "workers/recv_histogram.hpp"
#include "workers/server_cookies.hpp"
#include "workers/tcp_server.hpp"
#include "workers/udp_coalescing.hpp"
#include "workers/udp_pktinfo.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {


namespace {

constexpr std::uint64_t kEventTagShift = 56;
constexpr std::uint64_t kTagUdp = 1ull << kEventTagShift;
constexpr std::uint64_t kTagTcpListen = 2ull << kEventTagShift;
constexpr std::uint64_t kTagTcpConn = 3ull << kEventTagShift;
constexpr std::uint64_t kTagUpstream = 4ull << kEventTagShift;
constexpr std::uint64_t kTagWake = 5ull << kEventTagShift;  // this row's eventfd: a claim we wait on ended
constexpr std::uint64_t kTagTlsListen = 6ull << kEventTagShift;
constexpr std::uint64_t kTagTlsConn = 7ull << kEventTagShift;
constexpr std::uint64_t kTagDohListen = 8ull << kEventTagShift;
constexpr std::uint64_t kTagDohConn = 9ull << kEventTagShift;
constexpr std::uint64_t kTagRecursion = 10ull << kEventTagShift;  // recursive_client.hpp's sockets
constexpr std::uint64_t kTagIdleTick = 11ull << kEventTagShift;   // idle_tick.hpp's timerfd
// The longest the loop sleeps: the idle tick's period, or epoll_wait's timeout without it.
constexpr int kIdlePeriodMs = 100;
// kTagUdp and the listen tags carry the listen address's index in the low bits.
constexpr std::uint64_t kListenerMask = 0xFFFF;
constexpr std::size_t kBatch = 64;
constexpr std::size_t kUdpAnswerMax = 4096;  // answers over UDP never exceed this (TC instead)
constexpr std::size_t kMaxQuery = 4096;

// A stream listener's bounds: its own connection bound, tcp's per-client bound and idle timeout.
TcpLimits stream_limits(const ServeConfig& cfg, unsigned max_connections) {
  return TcpLimits{max_connections, cfg.tcp_max_connections_per_client, cfg.tcp_idle_timeout_ms};
}

volatile sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }
volatile sig_atomic_t g_retire = 0;  // kRetireSignal: a reload replaced this worker
void on_retire_signal(int) { g_retire = 1; }
void block_retire_signal() {
  sigset_t retire;
  ::sigemptyset(&retire);
  ::sigaddset(&retire, kRetireSignal);
  ::pthread_sigmask(SIG_BLOCK, &retire, nullptr);
}

class Worker {
public:
  Worker(const ServeConfig& cfg, unsigned index, cache::Segment& seg, int epfd, std::vector<UdpListener> udp,
         std::vector<int> tcp, int heartbeat_fd, UpstreamClient::HostTables host, RateLimitTable* rate_limit_table,
         AnswerMetrics* answer_metrics, const dns::CookieSecrets& cookie_secrets, std::vector<int> tls,
         const TlsServerSettings* tls_settings, const policy::PolicyView* policy, std::vector<int> doh)
      : cfg_(cfg),
        cache_(seg, cache::SlotRole::worker, index),
        epfd_(epfd),
        udp_(std::move(udp)),
        tcp_(epfd, std::move(tcp), kTagTcpListen, kTagTcpConn,
             stream_limits(cfg, cfg.tcp_max_connections),
             [this](std::uint64_t id, std::uint8_t* m, std::size_t n) { on_stream_message(id, 0, m, n); }),
        tls_(epfd, std::move(tls), kTagTlsListen, kTagTlsConn,
             stream_limits(cfg, cfg.tls_max_connections()),
             [this](std::uint64_t id, std::uint8_t* m, std::size_t n) { on_stream_message(id, 0, m, n); }, tls_settings),
        doh_tls_(tls_settings ? *tls_settings : TlsServerSettings{}),
        doh_(epfd, std::move(doh), kTagDohListen, kTagDohConn,
             stream_limits(cfg, cfg.https_max_connections()),
             tls_settings ? &doh_tls_ : nullptr, DohSettings{cfg.https.path, cfg.https.max_streams},
             [this](std::uint64_t id, std::uint32_t stream, std::uint8_t* m, std::size_t n) {
               on_stream_message(id, stream, m, n);
             }),
        answers_(answer_metrics, host.row),
        proxy_(cfg.proxy_protocol_from, answers_),
        replies_(cfg, udp_, tcp_, tls_, doh_, answers_, tap_),
        pipeline_(cfg, cache_, epfd, kTagUpstream, kTagRecursion, host, rate_limit_table, cookie_secrets, policy, replies_),
        heartbeat_fd_(heartbeat_fd) {
    if (idle_tick_.fd() >= 0) {
      epoll_event tick{};
      tick.events = EPOLLIN;
      tick.data.u64 = kTagIdleTick;
      ::epoll_ctl(epfd_, EPOLL_CTL_ADD, idle_tick_.fd(), &tick);
    }
    ::pthread_sigmask(SIG_SETMASK, nullptr, &wait_mask_);
    ::sigdelset(&wait_mask_, kRetireSignal);
    doh_tls_.alpn = kDohAlpn;
    std::memset(in_msgs_, 0, sizeof in_msgs_);
    for (std::size_t i = 0; i < kBatch; ++i) {
      in_iov_[i] = {in_[i], kMaxQuery};
      in_msgs_[i].msg_hdr.msg_iov = &in_iov_[i];
      in_msgs_[i].msg_hdr.msg_iovlen = 1;
      in_msgs_[i].msg_hdr.msg_name = &peers_[i];
      in_msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
      client_[i] = &peers_[i];  // ProxyGate::strip_udp points it at a carried address
    }
    if (proxy_.enabled()) {
      tcp_.set_proxy(&proxy_);
      tls_.set_proxy(&proxy_);
      doh_.set_proxy(&proxy_);
    }
    // A writer lock held by a stopped process must not stop answers: after this wait the
    // insert is skipped (counted as writer_lock_unavailable) and the answer goes out
    // uncached. A normal critical section, even a 1 MiB region's reclaim, is far shorter.
    cache_.set_writer_lock_timeout(std::chrono::milliseconds(10));
    // The coalescing nap is short: the default 50 us timer slack would add half again.
    if (cfg.udp_coalesce_us) ::prctl(PR_SET_TIMERSLACK, 1000ul);
    if (cfg.dnstap.enabled()) {
      try {  // without its log, the worker still answers
        tap_ = std::make_unique<DnstapWriter>(cfg.dnstap, index, cache_);
        pipeline_.set_dnstap(tap_.get());
      } catch (const std::exception& e) {
        spdlog::error("worker {}: dnstap off: {}", index, e.what());
      }
    }
  }

  void run() {
    epoll_event events[64];
    std::uint64_t last_sweep_ms = monotonic_us() / 1000;
    std::uint64_t drain_until_ms = 0;
    while (!g_stop) {
      std::uint64_t now_us = monotonic_us();
      if (g_retire && !drain_until_ms) drain_until_ms = begin_drain(now_us / 1000);
      if (drain_until_ms && (now_us / 1000 >= drain_until_ms ||
                             (tcp_.connections() + tls_.connections() + doh_.connections() == 0 &&
                              pipeline_.idle())))
        break;
      int timeout = pipeline_.next_timeout_ms(now_us);
      // Nothing due within the period: the idle tick wakes the loop (idle_tick.hpp).
      if (timeout < 0 || timeout >= kIdlePeriodMs) timeout = idle_tick_.fd() >= 0 ? -1 : kIdlePeriodMs;
      if (tap_ && tap_->drain_backlog())
        timeout = timeout < 0 ? DnstapWriter::kBacklogRetryMs : std::min(timeout, DnstapWriter::kBacklogRetryMs);
      // UDP coalescing (udp.coalesce_us; udp_coalescing.hpp): when the last wakeup's
      // rate says at least two datagrams will arrive within the nap, and the last naps
      // did gather that many, nap before epoll_wait so the next wakeup finds a batch.
      if (coalescing_.nap_now(udp_last_batch_, wakeup_gap_us_, kBatch)) {
        const timespec nap{0, static_cast<long>(coalescing_.nap_us()) * 1000};
        ::clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, nullptr);
      }
      udp_last_batch_ = 0;
      const int n = ::epoll_pwait(epfd_, events, 64, timeout, &wait_mask_);
      recv_hist_.wakeup();
      now_us = monotonic_us();
      wakeup_gap_us_ = now_us - last_wakeup_us_;
      last_wakeup_us_ = now_us;
      pipeline_.set_now(cache::wall_clock_now());
      for (int i = 0; i < n; ++i) {
        const std::uint64_t d = events[i].data.u64;
        const std::uint64_t tag = d & (0xFFull << kEventTagShift);
        if (tag == kTagUdp) on_udp_readable(d & kListenerMask);
        else if (tag == kTagTcpListen) tcp_.on_accept(d & kListenerMask, now_us / 1000);
        else if (tag == kTagTcpConn) tcp_.on_event(d, events[i].events, now_us / 1000);
        else if (tag == kTagTlsListen) tls_.on_accept(d & kListenerMask, now_us / 1000);
        else if (tag == kTagTlsConn) tls_.on_event(d, events[i].events, now_us / 1000);
        else if (tag == kTagDohListen) doh_.on_accept(d & kListenerMask, now_us / 1000);
        else if (tag == kTagDohConn) doh_.on_event(d, events[i].events, now_us / 1000);
        else if (tag == kTagUpstream) pipeline_.upstream().on_event(d, events[i].events, now_us);
        else if (tag == kTagWake) pipeline_.on_claims_woken();
        else if (tag == kTagRecursion) pipeline_.recursion().on_event(d, events[i].events, now_us);
        else if (tag == kTagIdleTick) idle_tick_.drain();
      }
      pipeline_.on_timers(monotonic_us());
      if (now_us / 1000 - last_beat_ms_ >= kHeartbeatMs && heartbeat_fd_ >= 0) {
        last_beat_ms_ = now_us / 1000;
        [[maybe_unused]] const ssize_t w = ::write(heartbeat_fd_, &kBeatAlive, 1);  // full pipe: fine
      }
      if (now_us / 1000 - last_sweep_ms >= 1000) {
        last_sweep_ms = now_us / 1000;
        tcp_.sweep_idle(last_sweep_ms);
        tls_.sweep_idle(last_sweep_ms);
        doh_.sweep_idle(last_sweep_ms);
      }
    }
  }

private:
  void on_udp_readable(std::size_t socket) {
    if (socket >= udp_.size()) return;
    mmsghdr* const msgs = in_msgs_;
    const int fd = udp_[socket].fd;
    const bool pktinfo = udp_[socket].pktinfo;
    batch_socket_ = static_cast<unsigned>(socket);
    // The headers carry control buffers only while a wildcard socket is read: the others'
    // path is the same as with a single address.
    if (pktinfo != in_control_) set_in_control(pktinfo);
    for (int round = 0; round < 4; ++round) {
      // The headers are built once (constructor); recvmmsg rewrites only the address
      // (and control) length of the ones it fills, so only those are reset.
      for (unsigned i = 0; i < in_used_; ++i) msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
      if (pktinfo)
        for (unsigned i = 0; i < in_used_; ++i) msgs[i].msg_hdr.msg_controllen = sizeof(PktinfoControl);
      const int got = ::recvmmsg(fd, msgs, kBatch, MSG_DONTWAIT, nullptr);
      recv_hist_.received(got);
      if (got > 0) udp_last_batch_ += static_cast<unsigned>(got);
      in_used_ = got > 0 ? static_cast<unsigned>(got) : 0;
      if (got <= 0) return;
      const std::uint64_t user_t0 = TscTimer::ticks();  // user-space time of this batch (tsc_timer.hpp)
      if (pktinfo)
        for (int i = 0; i < got; ++i) locals_[i] = read_local_address(msgs[i].msg_hdr);
      // Balancers' PROXY headers (proxy_protocol.hpp) stripped; the datagrams dropped are gone.
      const int n = proxy_.enabled() ? static_cast<int>(proxy_.strip_udp(udp_batch(pktinfo), got)) : got;
      const timespec received = tap_ ? DnstapWriter::wall_now() : timespec{};
      if (tap_ && tap_->client_queries())
        for (int i = 0; i < n; ++i)
          tap_->client_query(*client_[i], replies_.tap_local(batch_socket_, &locals_[i]), TapProtocol::udp,
                             {in_[i], msgs[i].msg_len}, received);
      std::size_t sizes[kBatch];
      const std::uint64_t hits_before = cache_.my_stats().get(cache::Counter::hits);
      answer_batch(static_cast<unsigned>(n), sizes);
      mmsghdr out_msgs[kBatch];
      iovec out_iov[kBatch];
      unsigned nout = 0;
      for (int i = 0; i < n; ++i) {
        if (sizes[i] == 0) continue;
        answers_.udp_answer(out_[i], sizes[i], batch_checked_[i].lookup ? batch_query_[i].qtype : -1);
        out_iov[nout] = {out_[i], sizes[i]};
        std::memset(&out_msgs[nout], 0, sizeof(mmsghdr));
        out_msgs[nout].msg_hdr.msg_iov = &out_iov[nout];
        out_msgs[nout].msg_hdr.msg_iovlen = 1;
        out_msgs[nout].msg_hdr.msg_name = &peers_[i];
        out_msgs[nout].msg_hdr.msg_namelen = msgs[i].msg_hdr.msg_namelen;
        if (pktinfo) write_reply_source(locals_[i], out_control_[i], out_msgs[nout].msg_hdr);
        ++nout;
      }
      const std::uint64_t batch_ns = tsc_.to_ns(TscTimer::ticks() - user_t0);
      cache_.count(cache::Counter::user_ns, batch_ns);
      answers_.udp_hits(cache_.my_stats().get(cache::Counter::hits) - hits_before, batch_ns);
      cache_.count(cache::Counter::user_ns_queries, static_cast<std::uint64_t>(n));
      // sendmmsg stops at the first message it cannot send and reports the ones before
      // it; an error means that first message failed. A destination no answer can reach
      // (source port 0, a broadcast address, a firewall EPERM) costs only its own answer;
      // a full socket buffer drops the rest of the batch, as UDP allows. Both are counted
      // (udp_answers_unsendable, udp_answers_dropped).
      for (unsigned sent = 0; sent < nout;) {
        recv_hist_.sent_batch();
        const int r = ::sendmmsg(fd, out_msgs + sent, nout - sent, 0);
        if (r > 0) {
          sent += static_cast<unsigned>(r);
        } else if (r < 0 && errno == EINTR) {
          continue;
        } else if (r == 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
          cache_.count(cache::Counter::udp_answers_dropped, nout - sent);
          break;
        } else {
          cache_.count(cache::Counter::udp_answers_unsendable);
          ++sent;
        }
      }
      if (tap_ && tap_->client_responses())
        for (int i = 0; i < n; ++i)
          if (sizes[i])
            tap_->client_response(*client_[i], replies_.tap_local(batch_socket_, &locals_[i]), TapProtocol::udp,
                                  {out_[i], sizes[i]}, &received);
      if (static_cast<std::size_t>(got) < kBatch) return;
    }
  }

  // The received batch as ProxyGate::strip_udp reads and rewrites it.
  ProxyGate::UdpBatch udp_batch(bool pktinfo) {
    return {in_[0], kMaxQuery, in_msgs_, peers_, pktinfo ? locals_ : nullptr, proxied_, client_};
  }

  // Points the receive headers at control buffers (a wildcard socket's batch) or at none.
  void set_in_control(bool on) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      in_msgs_[i].msg_hdr.msg_control = on ? in_control_buf_[i].bytes : nullptr;
      in_msgs_[i].msg_hdr.msg_controllen = on ? sizeof(PktinfoControl) : 0;
    }
    in_control_ = on;
  }

  // Datagram i of the batch being answered, as a query source.
  QuerySource udp_source(unsigned i) const {
    return {false, client_[i], in_msgs_[i].msg_hdr.msg_namelen, 0, batch_socket_,
            udp_[batch_socket_].pktinfo ? &locals_[i] : nullptr, 0, client_[i] != &peers_[i] ? &peers_[i] : nullptr};
  }

  // Answers the n datagrams of in_ into out_ (sizes[i]: the answer to in_[i], 0: none).
  // Each query is admitted in order (query_pipeline.hpp, stages 1-2); those that ask the
  // cache under the plain key alone (no ECS keys: most queries) have their keys built in
  // place and are looked up together (Cache::lookup_responses: the batch's memory
  // accesses overlap); the others, and the plain-key misses, take the pipeline's
  // resolve() one by one (ECS keys, then upstream).
  void answer_batch(unsigned n, std::size_t* sizes) {
    unsigned batched = 0;
    const std::uint32_t ad_after = pipeline_.ad_trusted_after();
    for (unsigned i = 0; i < n; ++i) {
      cache_.count(cache::Counter::queries_udp);
      sizes[i] = 0;
      const QuerySource src = udp_source(i);
      dns::ClientQuery& q = batch_query_[i];
      cache::CacheKey& key = batch_key_[i];
      const CheckedQuery& c = batch_checked_[i] =
          pipeline_.admit(in_[i], in_msgs_[i].msg_len, src, q, out_[i], kUdpAnswerMax, &key);
      if (!c.lookup) {
        sizes[i] = c.size;
        continue;
      }
      if (c.ecs.present) {
        sizes[i] = pipeline_.resolve(q, c, src, nullptr, out_[i], kUdpAnswerMax);
        continue;
      }
      // The key in one pass: the fast parser lowercased the name into it as it copied it;
      // a packet libknot parsed has its key built from the name here.
      if (!key.finish_plain(q.qtype, c.flags) && !key.assign(q.qname(), q.qtype, c.flags)) {  // a name the key refuses
        cache_.count(cache::Counter::formerr);
        sizes[i] = dns::write_error_response(q, wire::kRcodeFormErr, out_[i], kUdpAnswerMax);
        continue;
      }
      batch_info_[i] = {q.id, q.flags, q.qname(), q.qtype, q.qclass};
      batch_options_[i] = response_options(q, 0, c.limit, batch_options_buf_[i], true, ad_after);
      cache::ResponseLookup& l = batch_lookup_[batched++];
      l = {};
      l.key = &key;
      l.query = &batch_info_[i];
      l.options = &batch_options_[i];
      l.out = out_[i];
      l.capacity = kUdpAnswerMax;
      batch_index_[batched - 1] = i;
    }
    if (batched == 0) return apply_batch_policy(n, sizes);
    cache_.lookup_responses({batch_lookup_, batched}, pipeline_.now());
    for (unsigned b = 0; b < batched; ++b) {
      const cache::ResponseLookup& l = batch_lookup_[b];
      const unsigned i = batch_index_[b];
      if (l.response.truncated) cache_.count(cache::Counter::truncated);
      if (l.response.size) {
        sizes[i] = l.response.size;
        pipeline_.maybe_prefetch(batch_key_[i], l.response);
        mrc_feed_hit(cache_, batch_key_[i], pipeline_.now());  // miss_ratio_curves.hpp
        continue;
      }
      const QuerySource src = udp_source(i);
      sizes[i] = pipeline_.resolve(batch_query_[i], batch_checked_[i], src, &batch_key_[i], out_[i], kUdpAnswerMax);
    }
    apply_batch_policy(n, sizes);
  }

  // The response policy on each answer of the batch the cache or resolve() wrote: hits,
  // stale and failure answers (QueryPipeline::answer_policy).
  void apply_batch_policy(unsigned n, std::size_t* sizes) {
    if (!pipeline_.has_policy()) return;
    for (unsigned i = 0; i < n; ++i)
      if (sizes[i] && batch_checked_[i].lookup)
        sizes[i] = pipeline_.answer_policy(batch_query_[i], client_[i], batch_checked_[i].limit, out_[i], sizes[i],
                                           kUdpAnswerMax);
  }

  // A message over TCP, DoT or DoH (`doh_stream` != 0), all counted as queries_tcp, and
  // DoT and DoH each in their own counter too.
  void on_stream_message(std::uint64_t conn_id, std::uint32_t doh_stream, std::uint8_t* msg, std::size_t len) {
    cache_.count(cache::Counter::queries_tcp);
    if (doh_stream) cache_.count(cache::Counter::queries_doh);
    else if (conn_id & kTlsConnBit) cache_.count(cache::Counter::queries_dot);
    tcp_peer_ = replies_.peer_of(conn_id, doh_stream);
    QuerySource src{true, &tcp_peer_, 0, conn_id};
    src.doh_stream = doh_stream;
    pipeline_.clear_answered_later();
    const timespec received = tap_ ? DnstapWriter::wall_now() : timespec{};
    const sockaddr_storage stream_local = tap_ ? replies_.local_of(conn_id, doh_stream) : sockaddr_storage{};
    if (tap_)
      tap_->client_query(tcp_peer_, TapLocal{nullptr, nullptr, &stream_local}, stream_protocol(conn_id, doh_stream),
                         {msg, len}, received);
    std::uint8_t out[65535];
    const std::uint64_t t0 = TscTimer::ticks(), hits_before = cache_.my_stats().get(cache::Counter::hits);
    const std::size_t n = pipeline_.handle(msg, len, src, out, sizeof out);
    // A dropped message (access deny, unparseable) ends its HTTP request too.
    if (n == 0 && doh_stream && !pipeline_.answered_later()) doh_.fail(conn_id, doh_stream, DohStatus::bad_request);
    if (n == 0) return;
    replies_.send_stream(conn_id, doh_stream, {out, n});
    const bool hit = cache_.my_stats().get(cache::Counter::hits) != hits_before;
    answers_.answered(out, n, hit ? AnswerKind::hit : AnswerKind::other, tsc_.to_ns(TscTimer::ticks() - t0));
    if (tap_)
      tap_->client_response(tcp_peer_, TapLocal{nullptr, nullptr, &stream_local}, stream_protocol(conn_id, doh_stream),
                            {out, n}, &received);
  }

  // Retired by a reload (worker.hpp, kRetireSignal): the successor reads the sockets from
  // now on; this one keeps answering its open TCP/DoT connections and upstream queries
  // (and the clients parked on another worker's query) until they end, at most
  // tcp.idle_timeout_ms. Returns that deadline.
  std::uint64_t begin_drain(std::uint64_t now_ms) {
    for (const UdpListener& u : udp_) ::epoll_ctl(epfd_, EPOLL_CTL_DEL, u.fd, nullptr);
    tcp_.stop_accepting();
    tls_.stop_accepting();
    doh_.stop_accepting();
    spdlog::debug("worker: retired: draining {} TCP, {} DoT and {} DoH connections", tcp_.connections(),
                  tls_.connections(), doh_.connections());
    // The supervisor waits for this before it reports the reload done. Only a full pipe
    // (64 KiB of unread beats: hours of a supervisor not reading) loses it; the supervisor
    // then stops waiting at its bound.
    if (heartbeat_fd_ >= 0) [[maybe_unused]] const ssize_t w = ::write(heartbeat_fd_, &kBeatRetired, 1);
    return now_ms + std::max(1u, cfg_.tcp_idle_timeout_ms);
  }

  const ServeConfig& cfg_;
  cache::Cache cache_;
  int epfd_;
  IdleTick idle_tick_{kIdlePeriodMs};
  std::vector<UdpListener> udp_;  // per listen address; epoll data kTagUdp | index
  TcpServer tcp_;
  TcpServer tls_;  // no listeners without DoT
  TlsServerSettings doh_tls_;  // the DoT credentials, ALPN h2
  DohServer doh_;              // no listeners without DoH
  AnswerMeter answers_;  // answer_metrics.hpp: this worker's row
  ProxyGate proxy_;      // proxy_protocol_from (off: enabled() false)
  std::unique_ptr<DnstapWriter> tap_;  // nullptr: dnstap off
  ClientReplies replies_;
  QueryPipeline pipeline_;
  int heartbeat_fd_;
  sigset_t wait_mask_;  // this thread's signal mask without kRetireSignal: epoll_pwait's
  std::uint64_t last_beat_ms_ = 0;
  TscTimer tsc_;
  RecvHistogram<kBatch> recv_hist_;
  sockaddr_storage tcp_peer_{};
  alignas(64) std::uint8_t in_[kBatch][kMaxQuery];
  alignas(64) std::uint8_t out_[kBatch][kUdpAnswerMax];
  sockaddr_storage peers_[kBatch];
  // Datagram i's client address: &peers_[i], or &proxied_[i] when a balancer's PROXY
  // header carried one (ProxyGate::strip_udp; the answer still goes to peers_[i]).
  const sockaddr_storage* client_[kBatch];
  sockaddr_storage proxied_[kBatch];
  mmsghdr in_msgs_[kBatch];  // recvmmsg's headers over in_ and peers_, built once
  iovec in_iov_[kBatch];
  unsigned in_used_ = 0;     // headers the last recvmmsg filled (their namelen to reset)
  // Wildcard sockets only (udp_pktinfo.hpp): each datagram's control buffer, the address
  // it asked, and its answer's control buffer. in_control_: in_msgs_ point at them now.
  PktinfoControl in_control_buf_[kBatch];
  LocalAddress locals_[kBatch];
  PktinfoControl out_control_[kBatch];
  bool in_control_ = false;
  unsigned batch_socket_ = 0;  // the udp_ index of the batch being answered
  unsigned udp_last_batch_ = 0;       // datagrams received since the last epoll_wait
  UdpCoalescing coalescing_{cfg_.udp_coalesce_us};
  std::uint64_t last_wakeup_us_ = 0;  // when epoll_wait last returned
  std::uint64_t wakeup_gap_us_ = 0;   // between the last two returns (naps included)
  // answer_batch's per-datagram state (index i: in_[i]); batch_lookup_[b] is the b-th
  // query looked up in the batch, datagram batch_index_[b].
  dns::ClientQuery batch_query_[kBatch];
  CheckedQuery batch_checked_[kBatch];
  cache::CacheKey batch_key_[kBatch];
  cache::QueryInfo batch_info_[kBatch];
  cache::ResponseOptions batch_options_[kBatch];
  std::uint8_t batch_options_buf_[kBatch][kAnswerOptionBytes];
  cache::ResponseLookup batch_lookup_[kBatch];
  unsigned batch_index_[kBatch];
};

}  // namespace

namespace {

// SO_RCVBUF/SO_SNDBUF as Unbound's so-rcvbuf/so-sndbuf: the FORCE variant passes
// net.core.rmem_max when we have CAP_NET_ADMIN; without it the kernel caps the size.
void set_buffer(int fd, int opt, int force_opt, std::uint64_t bytes) {
  if (bytes == 0) return;
  const int v = static_cast<int>(std::min<std::uint64_t>(bytes, 1u << 30));
  if (::setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof v) != 0) ::setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
}

}  // namespace

int open_listen_socket(const ServeConfig& cfg, const Endpoint& listen, bool tcp) {
  const int fd = ::socket(listen.family(), (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (!tcp) {
    set_buffer(fd, SO_RCVBUF, SO_RCVBUFFORCE, cfg.udp_receive_buffer);
    set_buffer(fd, SO_SNDBUF, SO_SNDBUFFORCE, cfg.udp_send_buffer);
  }
  if (tcp) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // [::] takes IPv6 only (else it also holds the IPv4 port, and 0.0.0.0 could not be listed).
  const bool v6only_failed = listen.wildcard() && listen.family() == AF_INET6 &&
                             ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0;
  const bool pktinfo_failed = !tcp && listen.wildcard() && !enable_pktinfo(fd, listen.family());
  if (v6only_failed || pktinfo_failed ||
      ::bind(fd, reinterpret_cast<const sockaddr*>(&listen.addr), listen.len) != 0 || (tcp && ::listen(fd, 256) != 0)) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

int run_worker(const ServeConfig& cfg, unsigned index, const WorkerSockets& sockets) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  common::install_stop_signals(on_stop_signal);
  ::signal(kRetireSignal, on_retire_signal);
  block_retire_signal();  // spawn() forks with it blocked; callers that did not, too
  if (::getppid() == 1) return kWorkerExitOk;  // the supervisor died before PDEATHSIG was set

  std::unique_ptr<cache::Segment> seg;
  try {
    seg = std::make_unique<cache::Segment>(cache::Segment::attach(cfg.segment));
  } catch (const std::exception& e) {
    spdlog::error("worker {}: cannot attach segment '{}': {}", index, cfg.segment, e.what());
    return kWorkerExitConfig;
  }
  const int epfd = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  for (std::size_t j = 0; j < sockets.udp.size(); ++j) {
    ev.events = EPOLLIN;
    ev.data.u64 = kTagUdp | j;
    ::epoll_ctl(epfd, EPOLL_CTL_ADD, sockets.udp[j].fd, &ev);
  }
  for (std::size_t j = 0; j < sockets.tcp.size(); ++j) {
    ev.events = kTcpListenEvents;  // EPOLLEXCLUSIVE: one worker wakes per connection, not all
    ev.data.u64 = kTagTcpListen | j;
    ::epoll_ctl(epfd, EPOLL_CTL_ADD, sockets.tcp[j], &ev);
  }
  for (std::size_t j = 0; sockets.tls_settings && j < sockets.tls.size(); ++j) {
    ev.events = kTcpListenEvents;
    ev.data.u64 = kTagTlsListen | j;
    ::epoll_ctl(epfd, EPOLL_CTL_ADD, sockets.tls[j], &ev);
  }
  for (std::size_t j = 0; sockets.tls_settings && j < sockets.doh.size(); ++j) {
    ev.events = kTcpListenEvents;
    ev.data.u64 = kTagDohListen | j;
    ::epoll_ctl(epfd, EPOLL_CTL_ADD, sockets.doh[j], &ev);
  }
  {
    // The row's counts are a dead predecessor's (in_flight_names.hpp): none of them is ours.
    if (sockets.in_flight_names && sockets.in_flight_row < sockets.in_flight_names->rows())
      sockets.in_flight_names->reset_row(sockets.in_flight_row);
    // Claims a dead predecessor on this row held are released (their waiters woken).
    if (sockets.upstream_claims && sockets.in_flight_row < sockets.upstream_claims->rows()) {
      sockets.upstream_claims->release_row(sockets.in_flight_row);
      const int wake = sockets.upstream_claims->wake_fd(sockets.in_flight_row);
      if (wake >= 0) {
        ev.events = EPOLLIN;
        ev.data.u64 = kTagWake;
        ::epoll_ctl(epfd, EPOLL_CTL_ADD, wake, &ev);
      }
    }
    const UpstreamClient::HostTables host{sockets.in_flight_names, sockets.failure_cache,
                                          sockets.upstream_claims && sockets.upstream_claims->wake_fd(sockets.in_flight_row) >= 0
                                              ? sockets.upstream_claims
                                              : nullptr,
                                          sockets.in_flight_row, sockets.upstream_health, sockets.answer_slots,
                                          sockets.ad_trust, sockets.nsec_ranges, sockets.ntas, sockets.infra,
                                          sockets.authority_rates};
    // The descriptors this worker may still open, split between TCP clients and upstream
    // queries (descriptor_budget.hpp): the worker runs with those caps.
    const ServeConfig capped = with_descriptor_budget(cfg, index);
    const dns::CookieSecrets cookie_secrets =
        sockets.cookie_secrets ? *sockets.cookie_secrets : initial_cookie_secrets(cfg.cookie_secret);
    auto worker = std::make_unique<Worker>(capped, index, *seg, epfd, sockets.udp, sockets.tcp, sockets.heartbeat, host,
                                           sockets.rate_limit_table, sockets.answer_metrics, cookie_secrets,
                                           sockets.tls_settings ? sockets.tls : std::vector<int>{}, sockets.tls_settings, sockets.policy,
                                           sockets.tls_settings ? sockets.doh : std::vector<int>{});
    spdlog::debug("worker {} (pid {}) serving {}", index, ::getpid(), join_endpoints(cfg.listen));
    worker->run();
  }
  ::close(epfd);  // the sockets are the supervisor's: they stay open for the next worker
  return kWorkerExitOk;
}

}  // namespace dnsarena::workers
