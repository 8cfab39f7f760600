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
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <spdlog/spdlog.h>

#include "cache/cache.hpp"
#include "common/process_limits.hpp"
#include "dns/client_query.hpp"
#include "dns/ecs_option.hpp"
#include "wire/constants.hpp"
#include "workers/access_control.hpp"
#include "workers/descriptor_budget.hpp"
#include "workers/dnstap_writer.hpp"
#include "workers/doh_server.hpp"
#include "workers/ecs.hpp"
#include "workers/policy_gate.hpp"
#include "workers/rate_limiter.hpp"
#include "workers/recv_histogram.hpp"
#include "workers/server_cookies.hpp"
#include "workers/tcp_server.hpp"
#include "workers/udp_pktinfo.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

using dns::ClientQuery, dns::EcsOption, dns::ExtendedError, dns::ParseVerdict, dns::parse_query,
    dns::write_error_response, dns::write_ecs_option;
using wire::kRcodeNoError, wire::kRcodeFormErr, wire::kRcodeServFail, wire::kRcodeNotImp, wire::kRcodeRefused,
    wire::kRcodeBadVers, wire::kRcodeBadCookie, wire::kTypeAny;

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
// kTagUdp and the listen tags carry the listen address's index in the low bits.
constexpr std::uint64_t kListenerMask = 0xFFFF;
constexpr std::size_t kBatch = 64;
constexpr std::size_t kUdpAnswerMax = 4096;  // answers over UDP never exceed this (TC instead)
constexpr std::size_t kMaxQuery = 4096;
// The EDNS options an answer carries: ECS and COOKIE at their largest.
constexpr std::size_t kAnswerOptionBytes = dns::kMaxEcsOptionBytes + dns::kMaxCookieOptionBytes;

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
        policy_(policy),
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
        upstream_(epfd, kTagUpstream, cfg, cache_,
                  [this](Pending& p, const UpstreamAnswer* a) { on_upstream_done(p, a); },
                  [this](const Pending& p, Waiter& w) { on_deadline_passed(p, w); }, host),
        claims_(host.claims),
        claims_row_(host.row),
        answer_slots_(host.answers),
        ad_trust_(host.ad_trust),
        rate_limiter_(cfg.rate_limit, rate_limit_table),
        cookie_secrets_(cookie_secrets),
        heartbeat_fd_(heartbeat_fd),
        answers_(answer_metrics, host.row) {
    scratch_.reserve(4096);
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
        upstream_.set_dnstap(tap_.get());
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
                              upstream_.in_flight() == 0 &&
                              parked_.empty())))
        break;
      int timeout = upstream_.next_timeout_ms(now_us);
      if (timeout < 0 || timeout > 100) timeout = 100;
      if (!parked_.empty()) timeout = std::min(timeout, parked_timeout_ms(now_us));
      if (tap_ && tap_->drain_backlog()) timeout = std::min(timeout, DnstapWriter::kBacklogRetryMs);
      // UDP coalescing (udp.coalesce_us, serve_config.hpp): when the last wakeup's
      // datagrams say at least two more will arrive within the nap (rate x nap >= 2),
      // nap before epoll_wait so the next wakeup finds a batch instead of one datagram.
      // At one per nap the nap's own timer wakeup replaces the one it saves.
      if (cfg_.udp_coalesce_us && udp_last_batch_ > 0 && udp_last_batch_ < kBatch &&
          std::uint64_t{udp_last_batch_} * cfg_.udp_coalesce_us >= 2 * wakeup_gap_us_) {
        const timespec nap{0, static_cast<long>(cfg_.udp_coalesce_us) * 1000};
        ::clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, nullptr);
      }
      udp_last_batch_ = 0;
      const int n = ::epoll_pwait(epfd_, events, 64, timeout, &wait_mask_);
      recv_hist_.wakeup();
      now_us = monotonic_us();
      wakeup_gap_us_ = now_us - last_wakeup_us_;
      last_wakeup_us_ = now_us;
      now_ = cache::wall_clock_now();
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
        else if (tag == kTagUpstream) upstream_.on_event(d, events[i].events, now_us);
        else if (tag == kTagWake) {
          claims_->drain(claims_row_);
          parked_woken_ = true;
        }
      }
      upstream_.on_timeouts(monotonic_us());
      if (!parked_.empty() && (parked_woken_ || monotonic_us() >= parked_next_scan_us_)) resume_parked(monotonic_us());
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
  struct Source {
    bool tcp = false;
    const sockaddr_storage* addr = nullptr;
    socklen_t addr_len = 0;
    std::uint64_t conn_id = 0;
    unsigned udp_socket = 0;               // UDP: the index into udp_ it came on
    const LocalAddress* local = nullptr;  // UDP on a wildcard socket: the address asked
    std::uint32_t doh_stream = 0;         // DoH: the request's HTTP/2 stream (0: not DoH)
  };

  // What check() decided for a query: `lookup` false means the answer (or nothing, size
  // 0) is already decided; true means the cache is asked next, with these parameters.
  struct Checked {
    bool lookup = false;
    std::size_t size = 0;
    EcsOption ecs;           // what a miss sends upstream (ecs.hpp); present: ECS keys first
    std::size_t limit = 0;   // the client's answer size limit
    std::uint8_t flags = 0;  // the key flags (DO, CD)
  };

  // Answers `wire` into `out`. Returns the answer size, or 0 when there is nothing to
  // send now (dropped, or forwarded upstream).
  std::size_t handle(std::uint8_t* wire, std::size_t len, const Source& src, std::uint8_t* out, std::size_t cap) {
    ClientQuery q;
    const Checked c = check(wire, len, src, q, out, cap);
    return c.lookup ? resolve(q, c, src, nullptr, out, cap) : c.size;
  }

  // Everything before the cache: access control, parsing, the rate limit, error answers.
  // `key` (the batch path): the fast parser takes the name into it (parse_query).
  Checked check(std::uint8_t* wire, std::size_t len, const Source& src, ClientQuery& q, std::uint8_t* out,
                std::size_t cap, cache::CacheKey* key = nullptr) {
    const sockaddr_storage& client = src.tcp ? tcp_peer_ : *src.addr;
    const AccessAction access = cfg_.access_control.check(client);
    if (access == AccessAction::deny) {
      cache_.count(cache::Counter::refused);
      return {};
    }
    const ParseVerdict v = parse_query(wire, len, q, key);
    if (v == ParseVerdict::drop) {
      cache_.count(cache::Counter::formerr);
      return {};
    }
    // Server cookies (server_cookies.hpp): from here on q.cookie is the one answers carry.
    bool cookie_valid = false;
    if (q.cookie.len) {
      if (!cfg_.cookies) q.cookie.len = 0;  // not a cookie server: the option is ignored
      else if ((cookie_valid = answer_cookie(q.cookie, client, now_, cookie_secrets_)))
        cache_.count(cache::Counter::cookie_valid);
    }
    // A valid server cookie proved the client's address: no rate limit for it.
    if (!src.tcp && rate_limiter_.enabled() && !cookie_valid) {
      // Over the subnet's rate: dropped, or (slip) TC so a real client retries over TCP.
      const RateLimiter::Verdict rl = rate_limiter_.check(client, now_);
      if (rl != RateLimiter::Verdict::answer) {
        cache_.count(cache::Counter::rate_limited);
        if (rl == RateLimiter::Verdict::drop) return {};
        const std::size_t n = write_error_response(q, kRcodeNoError, out, cap);
        if (n) out[2] |= 0x02;
        return {false, n};
      }
    }
    if (access == AccessAction::refuse) {
      cache_.count(cache::Counter::refused);
      return {false, write_error_response(q, kRcodeRefused, out, cap)};
    }
    if (v != ParseVerdict::ok) {
      cache_.count(cache::Counter::formerr);
      const std::uint16_t rcode = v == ParseVerdict::formerr  ? kRcodeFormErr
                                  : v == ParseVerdict::notimp ? kRcodeNotImp
                                  : v == ParseVerdict::badvers ? kRcodeBadVers
                                                               : kRcodeRefused;
      return {false, write_error_response(q, rcode, out, cap)};
    }
    if (q.cookie.len && !cookie_valid && !src.tcp && cfg_.cookies_require) {  // RFC 7873 5.2.3, 5.2.4
      cache_.count(cache::Counter::cookie_badcookie);
      return {false, write_error_response(q, kRcodeBadCookie, out, cap)};
    }
    if (q.qtype == kTypeAny && !src.tcp) cache_.count(cache::Counter::any_minimal);
    Checked c;
    c.lookup = true;
    c.ecs = upstream_ecs(cfg_.ecs_policy, q, client, cfg_.ecs_ipv4_prefix, cfg_.ecs_ipv6_prefix);
    if (q.do_bit) c.flags |= cache::kKeyDo;
    if (q.cd()) c.flags |= cache::kKeyCd;
    c.limit = client_limit(q, src.tcp);
    if (policy_ && apply_policy(*policy_, q, c.limit, out, cap, cache_, c.size)) return {false, c.size};
    return c;
  }

  // The cache, then upstream. `plain_missed`: the caller already looked the plain key up
  // (the batched UDP path, for a query without ECS keys) and it missed: it is not looked
  // up again.
  // `arrived_us`: when the client's query came, for a query resumed after waiting (its
  // response deadline keeps running from then); 0: now.
  std::size_t resolve(const ClientQuery& q, const Checked& c, const Source& src, const cache::CacheKey* plain_missed,
                      std::uint8_t* out, std::size_t cap, std::uint64_t arrived_us = 0) {
    const EcsOption& ecs = c.ecs;
    // ECS lookup order (ecs.hpp): the client's subnet at its source prefix, the shared
    // key, then shorter prefixes; a /0 source: the shared key, then the /0 key.
    try {
      const cache::CacheKey plain = plain_missed ? *plain_missed : cache::CacheKey(q.qname(), q.qtype, c.flags);
      auto try_prefix = [&](std::uint8_t prefix) {
        const cache::CacheKey k(q.qname(), q.qtype, c.flags, ecs_tag(ecs, prefix));
        return try_key(k, q, prefix, c.limit, !src.tcp, out, cap);
      };
      if (!plain_missed) {
        if (ecs.present && ecs.source_prefix > 0)
          if (std::size_t n = try_prefix(ecs.source_prefix)) return n;
        if (std::size_t n = try_key(plain, q, 0, c.limit, !src.tcp, out, cap, true)) return n;
        if (ecs.present && ecs.source_prefix == 0)
          if (std::size_t n = try_prefix(0)) return n;
        if (ecs.present)
          for (int prefix = ecs.source_prefix - 1; prefix >= 1; --prefix)
            if (std::size_t n = try_prefix(static_cast<std::uint8_t>(prefix))) return n;
      }
      if (cfg_.stale_answer_first && cfg_.stale_max_age_s) {
        // Stale first (serve-expired-client-timeout: 0): an expired entry answers at once
        // and one background query refreshes it.
        if (const std::size_t n = answer_stale(q, ecs, c.flags, c.limit, !src.tcp, out, cap)) {
          upstream_.refresh(plain, ecs, 0);  // any fresh entry by now: another worker refreshed it
          return n;
        }
      }
      Waiter w;
      w.query = q;
      w.tcp = src.tcp;
      if (!src.tcp) {
        w.addr = *src.addr;
        w.addr_len = src.addr_len;
        w.udp_socket = src.udp_socket;
        if (src.local) w.local = *src.local;
      }
      w.conn_id = src.conn_id;
      w.doh_stream = src.doh_stream;
      w.arrived_us = arrived_us ? arrived_us : monotonic_us();
      UpstreamClient::ForwardDetail detail;
      switch (upstream_.forward(plain, ecs, w, &detail)) {
        case UpstreamClient::Forwarded::yes: answered_later_ = true; return 0;
        case UpstreamClient::Forwarded::no_zone:  // no forward zone holds the name
          cache_.count(cache::Counter::refused);
          return write_error_response(q, kRcodeRefused, out, cap);
        case UpstreamClient::Forwarded::failed:  // the failure cache: no upstream query
          cache_.count(cache::Counter::failure_cached);
          return answer_failed(q, ecs, c.flags, c.limit, !src.tcp, failure_ede(detail.failure), out, cap);
        case UpstreamClient::Forwarded::joined:  // another worker asks: wait for its answer
          if (parked_.size() >= kMaxParked) break;  // the bound: answered as overloaded
          if (claims_->wait_on(detail.claim, claims_row_)) {
            cache_.count(cache::Counter::upstream_joined);
            parked_.push_back({std::move(w), c, detail.claim});
            answered_later_ = true;
            return 0;
          }
          // Its query ended meanwhile: its answer (or failure) is there to be found now.
          if (const std::size_t n = slot_answer(q, src.tcp, detail.claim, out, cap)) return n;
          return resolve(q, c, src, nullptr, out, cap, w.arrived_us);
        case UpstreamClient::Forwarded::overloaded: break;
      }
      // A bound refused a new upstream query: stale if held, else SERVFAIL.
      return answer_failed(q, ecs, c.flags, c.limit, !src.tcp, std::nullopt, out, cap);
    } catch (const std::invalid_argument&) {  // a name the cache key refuses
      cache_.count(cache::Counter::formerr);
      return write_error_response(q, kRcodeFormErr, out, cap);
    }
  }

  // `plain`: the key without ECS (a hit may start a prefetch).
  std::size_t try_key(const cache::CacheKey& key, const ClientQuery& q, std::uint8_t scope, std::size_t limit,
                      bool udp, std::uint8_t* out, std::size_t cap, bool plain = false) {
    std::uint8_t options[kAnswerOptionBytes];
    const cache::ResponseOptions opts = response_options(q, scope, limit, options, udp);
    const cache::QueryInfo info{q.id, q.flags, q.qname(), q.qtype, q.qclass};
    const cache::ResponseResult r = cache_.lookup_response(key, info, now_, opts, out, cap);
    if (r.truncated) cache_.count(cache::Counter::truncated);
    if (r.size && plain) maybe_prefetch(key, r);
    return r.size;
  }

  // Prefetch (Unbound's `prefetch`): a hit in the last prefetch.percent of its entry's TTL
  // starts one background refresh of the name, so popular names do not expire in front
  // of clients. At most one per question on the host (UpstreamClient::refresh: not while
  // one is in flight here or on another worker, nor while the name is in the failure
  // cache). Plain keys only: an ECS-scoped entry is refreshed by the next miss.
  void maybe_prefetch(const cache::CacheKey& plain_key, const cache::ResponseResult& r) {
    if (cfg_.prefetch_percent == 0 || r.expire <= now_) return;
    // Whole seconds: the last second of a 10 s TTL is its last 10%, so the bound is inclusive.
    if (std::uint64_t{r.expire - now_} * 100 > std::uint64_t{r.ttl} * cfg_.prefetch_percent) return;
    // The entry's insert time: a refresh that landed meanwhile inserted a later one, even
    // when a caching upstream returned what is left of the same TTL (the same expiry).
    if (upstream_.refresh(plain_key, EcsOption{}, r.expire - r.ttl)) cache_.count(cache::Counter::prefetches);
  }

  // The answer's options: ECS (scope `scope`) and the COOKIE (check()), written into
  // `options_buf` (kAnswerOptionBytes) for this answer only: never into the cache.
  cache::ResponseOptions response_options(const ClientQuery& q, std::uint8_t scope, std::size_t limit,
                                          std::uint8_t* options_buf, bool udp) const {
    cache::ResponseOptions o;
    o.ad_trusted_after = ad_trust_ ? ad_trust_->after() : 0;
    o.max_size = limit;
    o.one_answer_rrset = udp && q.qtype == kTypeAny;  // RFC 8482: no amplification by ANY
    o.edns = q.edns;
    o.edns_do = q.do_bit;
    if (q.edns && (q.ecs.present || q.cookie.len)) {
      std::size_t n = q.ecs.present ? write_ecs_option(q.ecs, scope, options_buf) : 0;
      if (q.cookie.len) n += dns::write_cookie_option(q.cookie, options_buf + n);
      o.edns_options = {options_buf, n};
    }
    return o;
  }

  // --- when the upstream fails: serve-stale (RFC 8767) and Extended DNS Errors ---

  static ExtendedError failure_ede(FailureKind k) {
    return k == FailureKind::timeout ? ExtendedError::no_reachable_authority : ExtendedError::network_error;
  }

  // An expired entry for the query, still held and expired for at most stale.max_age_s,
  // written as a stale answer: every TTL stale.ttl_s, EDE 3 (19 for NXDOMAIN) for EDNS
  // clients. The keys are tried in resolve()'s order. A fresh entry found meanwhile (a
  // refresh landed) is answered as a hit. Returns the size, 0 when nothing is held.
  std::size_t answer_stale(const ClientQuery& q, const EcsOption& ecs, std::uint8_t flags, std::size_t limit, bool udp,
                           std::uint8_t* out, std::size_t cap) {
    if (cfg_.stale_max_age_s == 0) return 0;
    auto try_stale = [&](std::uint8_t prefix, bool scoped) -> std::size_t {
      const cache::CacheKey k(q.qname(), q.qtype, flags, scoped ? ecs_tag(ecs, prefix) : cache::EcsTag{});
      const cache::LookupStatus st = cache_.peek(k, now_, stale_copy_);
      if (st == cache::LookupStatus::miss) return 0;
      cache::EntryReader reader(stale_copy_.span());
      if (!reader.valid()) return 0;
      const bool stale = st == cache::LookupStatus::expired;
      if (stale && now_ - reader.expire() > cfg_.stale_max_age_s) return 0;
      std::uint8_t options[kAnswerOptionBytes + dns::kEdeOptionBytes];
      cache::ResponseOptions opts = response_options(q, prefix, limit, options, udp);
      if (stale && q.edns) {
        const std::size_t before = opts.edns_options.size();
        const auto ede = reader.rcode() == 3 ? ExtendedError::stale_nxdomain : ExtendedError::stale_answer;
        opts.edns_options = {options, before + dns::write_ede_option(ede, options + before)};
      }
      if (stale) opts.stale_ttl = cfg_.stale_ttl_s;
      const cache::QueryInfo info{q.id, q.flags, q.qname(), q.qtype, q.qclass};
      const cache::ResponseResult r = cache::write_response(reader, info, now_, opts, out, cap);
      if (r.size == 0) return 0;
      if (r.truncated) cache_.count(cache::Counter::truncated);
      cache_.count(stale ? cache::Counter::stale_answers : cache::Counter::hits);
      return r.size;
    };
    try {
      if (ecs.present && ecs.source_prefix > 0)
        if (std::size_t n = try_stale(ecs.source_prefix, true)) return n;
      if (std::size_t n = try_stale(0, false)) return n;
      if (ecs.present && ecs.source_prefix == 0)
        if (std::size_t n = try_stale(0, true)) return n;
      if (ecs.present)
        for (int prefix = ecs.source_prefix - 1; prefix >= 1; --prefix)
          if (std::size_t n = try_stale(static_cast<std::uint8_t>(prefix), true)) return n;
    } catch (const std::invalid_argument&) {  // a name the cache key refuses: nothing held
    }
    return 0;
  }

  // No upstream answer for the query: stale if held, else SERVFAIL (with `ede`).
  std::size_t answer_failed(const ClientQuery& q, const EcsOption& ecs, std::uint8_t flags, std::size_t limit, bool udp,
                            std::optional<ExtendedError> ede, std::uint8_t* out, std::size_t cap) {
    if (const std::size_t n = answer_stale(q, ecs, flags, limit, udp, out, cap)) return n;
    cache_.count(cache::Counter::servfail);
    return write_error_response(q, kRcodeServFail, out, cap, ede);
  }

  // The largest answer a client may get: over UDP what its EDNS offers (512 without), at
  // most max_udp_size (1232 by default: larger answers get TC and come over TCP).
  std::size_t client_limit(const ClientQuery& q, bool tcp) const {
    return tcp ? 65535 : std::min<std::size_t>(q.edns ? q.udp_size : 512, cfg_.max_udp_size);
  }

  // Every client that waited on an upstream query is answered here: a miss.
  void send_to(const Waiter& w, const std::uint8_t* out, std::size_t n) {
    if (n == 0) return;
    answers_.answered(out, n, AnswerKind::miss, (monotonic_us() - w.arrived_us) * 1000);
    if (tap_) {
      const sockaddr_storage stream_local = w.tcp ? local_of(w.conn_id, w.doh_stream) : sockaddr_storage{};
      tap_->client_response(w.tcp ? peer_of(w.conn_id, w.doh_stream) : w.addr,
                            w.tcp ? TapLocal{nullptr, nullptr, &stream_local} : tap_local(w.udp_socket, &w.local), w.tcp,
                            {out, n}, nullptr);
    }
    if (w.tcp) {
      reply_stream(w.conn_id, w.doh_stream, {out, n});
      return;
    }
    const int fd = udp_[w.udp_socket].fd;
    if (w.local.family == AF_UNSPEC) {
      ::sendto(fd, out, n, 0, reinterpret_cast<const sockaddr*>(&w.addr), w.addr_len);
      return;
    }
    iovec iov{const_cast<std::uint8_t*>(out), n};
    msghdr h{};
    h.msg_name = const_cast<sockaddr_storage*>(&w.addr);
    h.msg_namelen = w.addr_len;
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    PktinfoControl control;
    write_reply_source(w.local, control, h);
    ::sendmsg(fd, &h, 0);
  }

  // dnstap: the server side of a client's UDP message (streams: local_of).
  TapLocal tap_local(unsigned udp_socket, const LocalAddress* local) const {
    return {&cfg_.listen[udp_socket], udp_[udp_socket].pktinfo ? local : nullptr};
  }

  // A client's response deadline passed while its upstream query goes on (the query
  // continues for the cache): stale if held, else SERVFAIL, EDE 22.
  void on_deadline_passed(const Pending& p, Waiter& w) {
    cache_.count(cache::Counter::deadline_answers);
    const std::size_t n = answer_failed(w.query, p.ecs, p.key_flags, client_limit(w.query, w.tcp), !w.tcp,
                                        ExtendedError::no_reachable_authority, reply_buf_, sizeof reply_buf_);
    send_to(w, reply_buf_, n);
  }

  // --- clients waiting for another worker's upstream query (upstream_claims.hpp) ---
  struct Parked {
    Waiter waiter;
    Checked checked;
    UpstreamClaims::Claim claim;
  };

  int parked_timeout_ms(std::uint64_t now_us) const {
    std::uint64_t first = UINT64_MAX;
    for (const Parked& pk : parked_) first = std::min(first, pk.waiter.arrived_us);
    const std::uint64_t at = first + cfg_.stale_client_timeout_ms * 1000ull;
    // Claims are also looked at every 10 ms: the wake-up is the fast path, not the only one.
    return static_cast<int>(std::min<std::uint64_t>(at > now_us ? (at - now_us + 999) / 1000 : 0, 10));
  }

  // Parked clients whose claim ended (woken, or its owner died) resolve again (their
  // answer is in the cache now, or the failure in the failure cache); those whose
  // deadline passed get stale or SERVFAIL.
  void resume_parked(std::uint64_t now_us) {
    parked_woken_ = false;
    parked_next_scan_us_ = now_us + kParkedScanUs;
    const std::uint64_t max_life = upstream_.max_query_ms();
    std::vector<Parked> ready;
    for (std::size_t i = 0; i < parked_.size();) {
      Parked& pk = parked_[i];
      const bool deadline = pk.waiter.arrived_us + cfg_.stale_client_timeout_ms * 1000ull <= now_us;
      if (deadline || !claims_->holds(pk.claim, now_us / 1000, max_life)) {
        ready.push_back(std::move(pk));
        parked_[i] = std::move(parked_.back());
        parked_.pop_back();
      } else {
        ++i;
      }
    }
    for (Parked& pk : ready) {
      Waiter& w = pk.waiter;
      std::size_t n;
      if (w.arrived_us + cfg_.stale_client_timeout_ms * 1000ull <= now_us) {
        cache_.count(cache::Counter::deadline_answers);
        n = answer_failed(w.query, pk.checked.ecs, pk.checked.flags, pk.checked.limit, !w.tcp,
                          ExtendedError::no_reachable_authority, reply_buf_, sizeof reply_buf_);
      } else {
        const Source src{w.tcp, &w.addr, w.addr_len, w.conn_id, w.udp_socket, &w.local, w.doh_stream};
        n = slot_answer(w.query, w.tcp, pk.claim, reply_buf_, sizeof reply_buf_);
        if (n == 0) n = resolve(w.query, pk.checked, src, nullptr, reply_buf_, sizeof reply_buf_, w.arrived_us);
      }
      send_to(w, reply_buf_, n);
    }
  }

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
      const int n = ::recvmmsg(fd, msgs, kBatch, MSG_DONTWAIT, nullptr);
      recv_hist_.received(n);
      if (n > 0) udp_last_batch_ += static_cast<unsigned>(n);
      in_used_ = n > 0 ? static_cast<unsigned>(n) : 0;
      if (n <= 0) return;
      const std::uint64_t user_t0 = TscTimer::ticks();  // user-space time of this batch (tsc_timer.hpp)
      if (pktinfo)
        for (int i = 0; i < n; ++i) locals_[i] = read_local_address(msgs[i].msg_hdr);
      const timespec received = tap_ ? DnstapWriter::wall_now() : timespec{};
      if (tap_ && tap_->client_queries())
        for (int i = 0; i < n; ++i)
          tap_->client_query(peers_[i], tap_local(batch_socket_, &locals_[i]), false, {in_[i], msgs[i].msg_len},
                             received);
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
            tap_->client_response(peers_[i], tap_local(batch_socket_, &locals_[i]), false, {out_[i], sizes[i]},
                                  &received);
      if (static_cast<std::size_t>(n) < kBatch) return;
    }
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
  Source udp_source(unsigned i) const {
    return {false, &peers_[i], in_msgs_[i].msg_hdr.msg_namelen, 0, batch_socket_,
            udp_[batch_socket_].pktinfo ? &locals_[i] : nullptr};
  }

  // Answers the n datagrams of in_ into out_ (sizes[i]: the answer to in_[i], 0: none).
  // Each query is checked in order; those that ask the cache under the plain key alone
  // (no ECS keys: most queries) have their keys built in place and are looked up
  // together (Cache::lookup_responses: the batch's memory accesses overlap); the others,
  // and the plain-key misses, take resolve() one by one (ECS keys, then upstream).
  void answer_batch(unsigned n, std::size_t* sizes) {
    unsigned batched = 0;
    for (unsigned i = 0; i < n; ++i) {
      cache_.count(cache::Counter::queries_udp);
      sizes[i] = 0;
      const Source src = udp_source(i);
      ClientQuery& q = batch_query_[i];
      cache::CacheKey& key = batch_key_[i];
      const Checked& c = batch_checked_[i] =
          check(in_[i], in_msgs_[i].msg_len, src, q, out_[i], kUdpAnswerMax, &key);
      if (!c.lookup) {
        sizes[i] = c.size;
        continue;
      }
      if (c.ecs.present) {
        sizes[i] = resolve(q, c, src, nullptr, out_[i], kUdpAnswerMax);
        continue;
      }
      // The key in one pass: the fast parser lowercased the name into it as it copied it;
      // a packet libknot parsed has its key built from the name here.
      if (!key.finish_plain(q.qtype, c.flags) && !key.assign(q.qname(), q.qtype, c.flags)) {  // a name the key refuses
        cache_.count(cache::Counter::formerr);
        sizes[i] = write_error_response(q, kRcodeFormErr, out_[i], kUdpAnswerMax);
        continue;
      }
      batch_info_[i] = {q.id, q.flags, q.qname(), q.qtype, q.qclass};
      batch_options_[i] = response_options(q, 0, c.limit, batch_options_buf_[i], true);
      cache::ResponseLookup& l = batch_lookup_[batched++];
      l = {};
      l.key = &key;
      l.query = &batch_info_[i];
      l.options = &batch_options_[i];
      l.out = out_[i];
      l.capacity = kUdpAnswerMax;
      batch_index_[batched - 1] = i;
    }
    if (batched == 0) return;
    cache_.lookup_responses({batch_lookup_, batched}, now_);
    for (unsigned b = 0; b < batched; ++b) {
      const cache::ResponseLookup& l = batch_lookup_[b];
      const unsigned i = batch_index_[b];
      if (l.response.truncated) cache_.count(cache::Counter::truncated);
      if (l.response.size) {
        sizes[i] = l.response.size;
        maybe_prefetch(batch_key_[i], l.response);
        continue;
      }
      const Source src = udp_source(i);
      sizes[i] = resolve(batch_query_[i], batch_checked_[i], src, &batch_key_[i], out_[i], kUdpAnswerMax);
    }
  }

  // A message over TCP, DoT or DoH (`doh_stream` != 0), all counted as queries_tcp, and
  // DoT and DoH each in their own counter too.
  void on_stream_message(std::uint64_t conn_id, std::uint32_t doh_stream, std::uint8_t* msg, std::size_t len) {
    cache_.count(cache::Counter::queries_tcp);
    if (doh_stream) cache_.count(cache::Counter::queries_doh);
    else if (conn_id & kTlsConnBit) cache_.count(cache::Counter::queries_dot);
    tcp_peer_ = peer_of(conn_id, doh_stream);
    Source src{true, nullptr, 0, conn_id};
    src.doh_stream = doh_stream;
    answered_later_ = false;
    const timespec received = tap_ ? DnstapWriter::wall_now() : timespec{};
    const sockaddr_storage stream_local = tap_ ? local_of(conn_id, doh_stream) : sockaddr_storage{};
    if (tap_) tap_->client_query(tcp_peer_, TapLocal{nullptr, nullptr, &stream_local}, true, {msg, len}, received);
    std::uint8_t out[65535];
    const std::uint64_t t0 = TscTimer::ticks(), hits_before = cache_.my_stats().get(cache::Counter::hits);
    const std::size_t n = handle(msg, len, src, out, sizeof out);
    // A dropped message (access deny, unparseable) ends its HTTP request too.
    if (n == 0 && doh_stream && !answered_later_) doh_.fail(conn_id, doh_stream, DohStatus::bad_request);
    if (n == 0) return;
    reply_stream(conn_id, doh_stream, {out, n});
    const bool hit = cache_.my_stats().get(cache::Counter::hits) != hits_before;
    answers_.answered(out, n, hit ? AnswerKind::hit : AnswerKind::other, tsc_.to_ns(TscTimer::ticks() - t0));
    if (tap_) tap_->client_response(tcp_peer_, TapLocal{nullptr, nullptr, &stream_local}, true, {out, n}, &received);
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

  // The server a stream connection is on: DoT ids carry kTlsConnBit. DoT answers go the
  // plain TCP way from here on (stats count them as queries_tcp).
  TcpServer& stream(std::uint64_t conn_id) { return conn_id & kTlsConnBit ? tls_ : tcp_; }
  sockaddr_storage peer_of(std::uint64_t conn_id, std::uint32_t doh_stream) const {
    return doh_stream ? doh_.peer(conn_id) : conn_id & kTlsConnBit ? tls_.peer(conn_id) : tcp_.peer(conn_id);
  }
  sockaddr_storage local_of(std::uint64_t conn_id, std::uint32_t doh_stream) const {
    return doh_stream ? doh_.local(conn_id) : conn_id & kTlsConnBit ? tls_.local(conn_id) : tcp_.local(conn_id);
  }
  void reply_stream(std::uint64_t conn_id, std::uint32_t doh_stream, std::span<const std::uint8_t> answer) {
    if (doh_stream) doh_.send(conn_id, doh_stream, answer);
    else stream(conn_id).send(conn_id, answer);
  }

  // An answer fetched upstream (an encoded entry, its ECS scope) written for query q.
  std::size_t write_fetched(const ClientQuery& q, bool tcp, std::uint8_t scope, std::span<const std::uint8_t> entry,
                            std::uint32_t now, std::uint8_t* out, std::size_t cap) {
    cache::EntryReader reader(entry);
    if (!reader.valid()) return 0;
    std::uint8_t options[kAnswerOptionBytes];
    const cache::ResponseOptions opts = response_options(q, scope, client_limit(q, tcp), options, !tcp);
    const cache::QueryInfo info{q.id, q.flags, q.qname(), q.qtype, q.qclass};
    const cache::ResponseResult r = cache::write_response(reader, info, now, opts, out, cap);
    if (r.truncated) cache_.count(cache::Counter::truncated);
    return r.size;
  }

  // The answer another worker's ended claim fetched and the cache did not take
  // (answer_slots.hpp), written for q; 0: none there.
  std::size_t slot_answer(const ClientQuery& q, bool tcp, const UpstreamClaims::Claim& claim, std::uint8_t* out,
                          std::size_t cap) {
    std::uint8_t scope = 0;
    const std::size_t len = answer_slots_ ? answer_slots_->read(claim, slot_copy_, &scope) : 0;
    if (len == 0) return 0;
    const std::size_t n = write_fetched(q, tcp, scope, {slot_copy_.data(), len}, now_, out, cap);
    if (n) cache_.count(cache::Counter::upstream_slot_answers);
    return n;
  }

  void on_upstream_done(Pending& p, const UpstreamAnswer* a) {
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
      bool cached = false;
      if (have_entry && a->cacheable() && ecs_cacheable(p.ecs, scope)) {
        const cache::InsertStatus st = cache_.insert_encoded(key, scratch_, now);
        cached = st == cache::InsertStatus::inserted || st == cache::InsertStatus::replaced;
      }
      // Not cached: the workers waiting for this claim take it from the answer slot.
      if (have_entry && !cached && p.claim.value && answer_slots_ &&
          !answer_slots_->publish(p.claim, scope, {scratch_.data(), entry_len}, monotonic_us() / 1000))
        cache_.count(cache::Counter::upstream_slot_full);
    }
    // The answer (or failure) is where waiting workers look: they may take it now, before
    // this worker's clients have theirs, so a client that asks again on its answer starts
    // a query of its own rather than sharing this one (finish() then releases nothing).
    if (claims_ && p.claim.value) claims_->release(p.claim);
    for (Waiter& w : p.waiters) {
      std::uint8_t* out = reply_buf_;
      std::size_t n = 0;
      if (have_entry) n = write_fetched(w.query, w.tcp, scope, {scratch_.data(), entry_len}, now, out, sizeof reply_buf_);
      if (n == 0) {
        // Every attempt failed, or the answer could not be used: stale if held, else
        // SERVFAIL saying why.
        const ExtendedError ede = a || p.got_reply ? ExtendedError::network_error : ExtendedError::no_reachable_authority;
        n = answer_failed(w.query, p.ecs, p.key_flags, client_limit(w.query, w.tcp), !w.tcp, ede, out,
                          sizeof reply_buf_);
      }
      send_to(w, out, n);
    }
  }

  const ServeConfig& cfg_;
  const policy::PolicyView* policy_;  // nullptr: no response policy
  cache::Cache cache_;
  int epfd_;
  std::vector<UdpListener> udp_;  // per listen address; epoll data kTagUdp | index
  TcpServer tcp_;
  TcpServer tls_;  // no listeners without DoT
  TlsServerSettings doh_tls_;  // the DoT credentials, ALPN h2
  DohServer doh_;              // no listeners without DoH
  bool answered_later_ = false;  // the last handle() left the client waiting (upstream, parked)
  UpstreamClient upstream_;
  UpstreamClaims* claims_;  // nullptr: no host-wide table (then forward() never answers joined)
  unsigned claims_row_;
  AnswerSlots* answer_slots_;    // nullptr: waiters find answers only in the cache
  const AdTrustCut* ad_trust_;   // nullptr: every cached AD stands
  alignas(8) std::array<std::uint8_t, AnswerSlots::kCapacity> slot_copy_;  // slot_answer()'s copy
  // Clients waiting for another worker's upstream query. Looked at when this row is woken
  // (a claim ended) and every kParkedScanUs (deadlines, an owner that died), not at every
  // event: a scan is O(parked). At most kMaxParked: past it a miss is answered as an
  // overloaded one (stale or SERVFAIL), as the in-flight bounds do.
  static constexpr std::size_t kMaxParked = 65536;
  static constexpr std::uint64_t kParkedScanUs = 10000;
  std::vector<Parked> parked_;
  bool parked_woken_ = false;
  std::uint64_t parked_next_scan_us_ = 0;
  cache::EntryCopy stale_copy_;
  RateLimiter rate_limiter_;
  const dns::CookieSecrets cookie_secrets_;  // the supervisor's, copied at fork (server_cookies.hpp)
  int heartbeat_fd_;
  sigset_t wait_mask_;  // this thread's signal mask without kRetireSignal: epoll_pwait's
  std::uint64_t last_beat_ms_ = 0;
  std::uint32_t now_ = cache::wall_clock_now();
  std::vector<std::uint8_t> scratch_;
  TscTimer tsc_;
  RecvHistogram<kBatch> recv_hist_;
  AnswerMeter answers_;  // answer_metrics.hpp: this worker's row
  std::unique_ptr<DnstapWriter> tap_;  // nullptr: dnstap off
  sockaddr_storage tcp_peer_{};
  alignas(64) std::uint8_t in_[kBatch][kMaxQuery];
  alignas(64) std::uint8_t out_[kBatch][kUdpAnswerMax];
  sockaddr_storage peers_[kBatch];
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
  std::uint64_t last_wakeup_us_ = 0;  // when epoll_wait last returned
  std::uint64_t wakeup_gap_us_ = 0;   // between the last two returns (naps included)
  // answer_batch's per-datagram state (index i: in_[i]); batch_lookup_[b] is the b-th
  // query looked up in the batch, datagram batch_index_[b].
  ClientQuery batch_query_[kBatch];
  Checked batch_checked_[kBatch];
  cache::CacheKey batch_key_[kBatch];
  cache::QueryInfo batch_info_[kBatch];
  cache::ResponseOptions batch_options_[kBatch];
  std::uint8_t batch_options_buf_[kBatch][kAnswerOptionBytes];
  cache::ResponseLookup batch_lookup_[kBatch];
  unsigned batch_index_[kBatch];
  std::uint8_t reply_buf_[65535];
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
                                          sockets.ad_trust};
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
