// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/upstream_client.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>

#include <spdlog/spdlog.h>

#include "cache/entry_codec.hpp"
#include "common/random_bytes.hpp"
#include "dns/query_builder.hpp"
#include "wire/constants.hpp"
#include "workers/dnstap_writer.hpp"
#include "workers/live_failure.hpp"

namespace dnsarena::workers {

using dns::EcsOption;
using wire::get16;
using wire::put16;

namespace {
constexpr std::uint64_t kTokenMask = (1ull << 48) - 1;
constexpr std::uint64_t kStreamFlag = 1ull << 48;  // an epoll event of a kept connection, not of a query
}

UpstreamClient::UpstreamClient(int epoll_fd, std::uint64_t tag, const ServeConfig& config, cache::Cache& cache,
                               Completion done, DeadlinePassed deadline_passed, HostTables host)
    : epoll_fd_(epoll_fd), tag_(tag), cfg_(config), cache_(cache), done_(std::move(done)),
      deadline_passed_(std::move(deadline_passed)), names_(host.names), names_row_(host.row),
      failures_(host.failures), runtime_ntas_(config.dnssec.anchors, host.ntas), claims_(host.claims),
      timers_(ClientTimers::of(config)) {
  if (!names_ || names_row_ >= names_->rows()) {
    own_names_ = std::make_unique<InFlightNames>(1, false);
    names_ = own_names_.get();
    names_row_ = 0;
    claims_ = nullptr;  // its rows are the shared table's: without one, nothing to share
  }
  if (!failures_) {
    own_failures_ = std::make_unique<FailureCache>(FailureCache::kDefaultBuckets, false);
    failures_ = own_failures_.get();
  }
  ttl_ = {config.ttl_floor, config.ttl_ceiling, config.negative_ttl_ceiling};
  answer_.set_private_addresses(&config.private_addresses);
  zones_ = config.zones();
  init_health(host.health);
  init_streams();
}

void UpstreamClient::init_streams() {
  zone_streams_.resize(zones_.size());
  for (std::size_t z = 0; z < zones_.size(); ++z) {
    const ForwardZone& zone = zones_[z];
    zone_streams_[z].assign(zone.upstreams.size(), -1);
    if (zone.transport == UpstreamTransport::udp) continue;
    UpstreamStream::Settings settings;
    settings.tls = zone.transport == UpstreamTransport::tls;
    settings.auth_name = zone.tls_auth_name;
    settings.idle_timeout_us = cfg_.upstream_idle_timeout_ms * 1000ull;
    if (settings.tls) {
      trusts_.push_back(std::make_unique<UpstreamTlsTrust>(zone.tls_ca_file));  // checked by validate()
      settings.trust = trusts_.back()->credentials();
    }
    for (std::size_t u = 0; u < zone.upstreams.size(); ++u) {
      zone_streams_[z][u] = static_cast<int>(streams_.size());
      streams_.push_back(
          std::make_unique<UpstreamStream>(zone.upstreams[u], settings, epoll_fd_, tag_ | kStreamFlag | streams_.size()));
      stream_failing_.push_back(false);
    }
  }
}

UpstreamClient::~UpstreamClient() {
  for (auto& [t, p] : pending_) {
    if (p.probe_token) health_->end_probe(static_cast<unsigned>(p.health_row), p.probe_token,
                                          UpstreamHealth::ProbeEnd::cancelled, monotonic_us(), cfg_.upstream_health);
    close_socket(p);
    close_all_earlier(p);
    if (claims_ && p.claim.value) claims_->release(p.claim);
  }
}

std::uint64_t UpstreamClient::max_query_ms() const {
  unsigned attempts = 0;
  for (const ForwardZone& z : zones_) attempts = std::max(attempts, cfg_.attempts(z));
  std::uint64_t total = 0;
  for (unsigned a = 0; a < attempts; ++a) total += std::uint64_t{cfg_.upstream_timeout_ms} << std::min(a, 2u);
  // An attempt's TCP retry may take as long again; the query resolution timer ends every
  // path of a query (attempts, TCP retries, waits for late replies).
  return std::min<std::uint64_t>(2 * total, cfg_.query_timeout_ms) + 1000;
}

std::string UpstreamClient::dedup_key(const cache::CacheKey& plain_key, const EcsOption& ecs) {
  std::string dedup(reinterpret_cast<const char*>(plain_key.blob().data()), plain_key.blob().size());
  if (ecs.present) {
    dedup.push_back(static_cast<char>(ecs.family));
    dedup.push_back(static_cast<char>(ecs.source_prefix));
    dedup.append(reinterpret_cast<const char*>(ecs.address.data()), 16);
  }
  return dedup;
}

UpstreamClient::Forwarded UpstreamClient::forward(const cache::CacheKey& plain_key, const EcsOption& ecs, Waiter& w,
                                                  ForwardDetail* detail) {
  if (waiting_ >= kWaitersPerQuerySlot * cfg_.upstream_max_in_flight) {  // the bound on waiting clients
    cache_.count(cache::Counter::upstream_overload);
    return Forwarded::overloaded;
  }
  std::string dedup = dedup_key(plain_key, ecs);
  if (auto it = by_key_.find(dedup); it != by_key_.end()) {
    add_waiter(pending_.at(it->second), std::move(w));
    return Forwarded::yes;
  }
  return start(plain_key, ecs, std::move(dedup), &w, detail);
}

bool UpstreamClient::refresh(const cache::CacheKey& plain_key, const EcsOption& ecs, std::uint32_t seen_inserted) {
  std::string dedup = dedup_key(plain_key, ecs);
  if (by_key_.contains(dedup)) return false;
  return start(plain_key, ecs, std::move(dedup), nullptr, nullptr, seen_inserted) == Forwarded::yes;
}

int UpstreamClient::zone_of(std::span<const std::uint8_t> qname) const {
  int zone = -1;
  for (std::size_t z = 0; z < zones_.size(); ++z)
    if (zones_[z].contains(qname.data()) && (zone < 0 || zones_[z].name.size() > zones_[zone].name.size()))
      zone = static_cast<int>(z);
  return zone;
}

bool UpstreamClient::refreshed_since(const cache::CacheKey& key, std::uint32_t seen_inserted) {
  if (!recheck_copy_) recheck_copy_ = std::make_unique<cache::EntryCopy>();
  if (cache_.peek(key, cache::wall_clock_now(), *recheck_copy_) != cache::LookupStatus::hit) return false;
  const cache::EntryReader entry(recheck_copy_->span());
  return entry.valid() && entry.inserted() > seen_inserted;
}

UpstreamClient::Forwarded UpstreamClient::start(const cache::CacheKey& plain_key, const EcsOption& ecs,
                                                std::string dedup, Waiter* w, ForwardDetail* detail,
                                                std::uint32_t seen_inserted) {
  ForwardDetail ignored;
  if (!detail) detail = &ignored;
  const auto qn = plain_key.qname();
  const int zone = zone_of(qn);
  if (zone < 0) return Forwarded::no_zone;
  const std::uint64_t now_us = monotonic_us();
  const std::uint64_t name_hash = plain_key.hash();
  if (const auto failure = live_failure(*failures_, runtime_ntas_, name_hash, qn, now_us / 1000)) {
    detail->failure = failure->kind;
    return Forwarded::failed;
  }
  UpstreamClaims::Claim claim;
  if (claims_) {
    switch (claims_->claim(std::hash<std::string>{}(dedup), names_row_, now_us / 1000, max_query_ms(), &claim)) {
      case UpstreamClaims::Outcome::claimed: break;
      case UpstreamClaims::Outcome::held:
        detail->claim = claim;
        return Forwarded::joined;
      case UpstreamClaims::Outcome::unavailable: claim = {}; break;
    }
  }
  auto unclaim = [&] {
    if (claims_ && claim.value) claims_->release(claim);
  };
  // Another worker's refresh may have stored its answer and released its claim between
  // this worker's lookup and the claim above: look once more before asking again.
  if (!w && refreshed_since(plain_key, seen_inserted)) {  // a refresh (refresh(): no waiter)
    unclaim();
    return Forwarded::joined;
  }
  // qtype, flags and qname: the ECS subnet aside.
  const std::uint32_t bucket = names_->bucket_of(name_hash);
  if (!names_->acquire(names_row_, bucket, cfg_.upstream_max_per_name)) {
    unclaim();
    cache_.count(cache::Counter::upstream_overload);
    cache_.count(cache::Counter::upstream_overload_per_name);
    return Forwarded::overloaded;
  }
  while (!started_.empty() && !pending_.contains(started_.front().token)) started_.pop_front();
  // A kept socket of an earlier attempt gives way to a new query before a query does.
  while (sockets_in_use() >= cfg_.upstream_max_in_flight && shed_earlier()) {
  }
  if (sockets_in_use() >= cfg_.upstream_max_in_flight && !jostle_oldest(now_us)) {
    names_->release(names_row_, bucket);
    unclaim();
    cache_.count(cache::Counter::upstream_overload);
    return Forwarded::overloaded;
  }
  const std::uint64_t token = next_token_++ & kTokenMask;
  Pending& p = pending_[token];
  p.token = token;
  p.dedup_key = dedup;
  p.name_bucket = bucket;
  p.name_hash = name_hash;
  p.claim = claim;
  p.zone = static_cast<unsigned>(zone);
  p.zone_name = {zones_[p.zone].name.data(), zones_[p.zone].name.size()};
  p.dnssec = cfg_.dnssec.validating();
  p.trust_ad = zones_[p.zone].trust_ad && !p.dnssec;  // the verdict decides AD, not the upstream
  std::memcpy(p.qname.data(), qn.data(), qn.size());
  p.qname_len = static_cast<std::uint8_t>(qn.size());
  p.qtype = plain_key.qtype();
  p.key_flags = plain_key.flags();
  p.ecs = ecs;
  p.upstream = 0;
  p.ends_us = now_us + timers_.query_us;
  if (w) add_waiter(p, std::move(*w));
  by_key_[dedup] = token;
  started_.push_back({now_us, token});
  start_attempt(p, now_us);
  return Forwarded::yes;
}

bool UpstreamClient::jostle_oldest(std::uint64_t now_us) {
  if (cfg_.upstream_jostle_timeout_ms == 0 || started_.empty()) return false;
  const Started oldest = started_.front();
  if (now_us - oldest.at_us < cfg_.upstream_jostle_timeout_ms * 1000ull) return false;
  started_.pop_front();
  cache_.count(cache::Counter::upstream_jostled);
  finish(oldest.token, nullptr, false);  // its clients get SERVFAIL (or stale) now rather than at its timeout
  return true;
}

std::size_t UpstreamClient::write_query(Pending& p, std::uint8_t* out, std::size_t capacity, bool tcp_keepalive) {
  p.id = common::random_u16();
  std::memcpy(p.qname_sent.data(), p.qname.data(), p.qname_len);
  if (cfg_.upstream_case_randomization && !p.case_fallback) {
    std::uint8_t bits[32];
    common::random_fill(bits, std::min<std::size_t>(sizeof bits, (p.qname_len + 7) / 8));
    for (std::size_t i = 0; i < p.qname_len; ++i) {
      std::uint8_t& c = p.qname_sent[i];
      if (c >= 'a' && c <= 'z' && (bits[(i / 8) % sizeof bits] >> (i % 8) & 1)) c = static_cast<std::uint8_t>(c - 32);
    }
  }
  return dns::write_query({.id = p.id,
                           .qname = {p.qname_sent.data(), p.qname_len},
                           .qtype = p.qtype,
                           .cd = p.dnssec || (p.key_flags & cache::kKeyCd) != 0,
                           .do_bit = p.dnssec || (p.key_flags & cache::kKeyDo) != 0,
                           .ecs = p.ecs,
                           .tcp_keepalive = tcp_keepalive},
                          out, capacity);
}

void UpstreamClient::close_socket(Pending& p) {
  if (p.stream >= 0) {
    streams_[static_cast<std::size_t>(p.stream)]->forget(p.id, p.token);
    p.stream = -1;
  }
  if (p.fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.fd, nullptr);
    ::close(p.fd);
    p.fd = -1;
  }
}

bool UpstreamClient::watch(Pending& p, int fd, std::uint32_t events, std::uint64_t now_us) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag_ | p.token;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return false;
  p.fd = fd;
  p.sent_us = now_us;
  ++p.generation;
  deadlines_.push({clip(p, now_us + attempt_timeout(p)), p.token, p.generation});  // the RTO, or the timeout with backoff
  return true;
}

bool UpstreamClient::send_udp(Pending& p, const Endpoint& up, std::uint64_t now_us) {
  std::uint8_t buf[600];
  const std::size_t len = write_query(p, buf, sizeof buf);
  const int fd = ::socket(up.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const bool ok = fd >= 0 && len > 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&up.addr), up.len) == 0 &&
                  ::send(fd, buf, len, 0) == static_cast<ssize_t>(len) && watch(p, fd, EPOLLIN, now_us);
  if (!ok && fd >= 0) ::close(fd);
  if (ok && tap_) tap_->forwarder_query(up.addr, TapProtocol::udp, p.zone_name, {buf, len});
  return ok;
}

bool UpstreamClient::send_query(Pending& p, unsigned upstream, std::uint64_t now_us) {
  p.streamed = false;
  if (zone_streams_[p.zone][upstream] >= 0) return send_stream(p, upstream, now_us);
  return send_udp(p, zones_[p.zone].upstreams[upstream], now_us);
}

bool UpstreamClient::send_stream(Pending& p, unsigned upstream, std::uint64_t now_us) {
  const std::size_t index = static_cast<std::size_t>(zone_streams_[p.zone][upstream]);
  UpstreamStream& stream = *streams_[index];
  std::uint8_t buf[dns::kMaxQueryBytes];
  std::size_t len = 0;
  for (int i = 0; i < 16 && (len == 0 || !stream.id_free(p.id)); ++i)
    len = write_query(p, buf, sizeof buf, /*tcp_keepalive=*/true);
  if (len == 0 || !stream.id_free(p.id)) return false;
  p.stream_warm = stream.ready();
  UpstreamStream::Events events;
  const bool sent = stream.send(p.id, p.token, buf, len, now_us, events);
  take_stream_events(index, events, now_us, p.token);
  if (!sent) return false;
  p.stream = static_cast<int>(index);
  p.streamed = true;
  p.tcp = true;
  p.sent_us = now_us;
  ++p.generation;
  deadlines_.push({clip(p, now_us + attempt_timeout(p)), p.token, p.generation});
  if (tap_) tap_->forwarder_query(zones_[p.zone].upstreams[upstream].addr, tap_protocol(p), p.zone_name, {buf, len});
  return true;
}

void UpstreamClient::on_stream_event(std::size_t index, std::uint32_t events, std::uint64_t now_us) {
  if (index >= streams_.size()) return;
  UpstreamStream::Events out;
  streams_[index]->on_event(events, now_us, out);
  take_stream_events(index, out, now_us);
}

void UpstreamClient::take_stream_events(std::size_t index, UpstreamStream::Events& events, std::uint64_t now_us,
                                        std::uint64_t skip) {
  if (events.opened) {
    cache_.count(cache::Counter::upstream_connections);
    if (events.resumed) cache_.count(cache::Counter::upstream_tls_resumed);
    if (stream_failing_[index]) spdlog::info("upstream connection {} is up again", index);
    stream_failing_[index] = false;
  }
  if (!events.failure.empty() && !stream_failing_[index]) {
    stream_failing_[index] = true;
    for (std::size_t z = 0; z < zone_streams_.size(); ++z)
      for (std::size_t u = 0; u < zone_streams_[z].size(); ++u)
        if (zone_streams_[z][u] == static_cast<int>(index))
          spdlog::warn("upstream {} ({}) of zone {}: {}; its misses go elsewhere, and it is tried again after a "
                       "backoff", zones_[z].upstreams[u].text, to_string(zones_[z].transport), zones_[z].text,
                       events.failure);
  }
  for (UpstreamStream::Reply& r : events.replies) {
    auto it = pending_.find(r.token);
    if (it == pending_.end() || it->second.stream != static_cast<int>(index)) continue;
    it->second.stream = -1;
    take_reply(it->second, r.message.data(), r.message.size(), now_us);
  }
  for (const std::uint64_t token : events.broken) {
    auto it = pending_.find(token);
    if (token == skip || it == pending_.end() || it->second.stream != static_cast<int>(index)) continue;
    it->second.stream = -1;
    report_failure(it->second, UpstreamHealth::Failure::refused, now_us);
    fail_attempt(it->second, now_us);
  }
}

void UpstreamClient::start_attempt(Pending& p, std::uint64_t now_us) {
  if (p.probe) {  // a probe is one attempt: this is its end
    retire_probe(p, now_us);
    return;
  }
  if (p.trial) {  // so is a trial
    retire_trial(p);
    return;
  }
  p.tcp = false;
  for (;;) {
    const ForwardZone& zone = zones_[p.zone];
    if (p.attempt >= cfg_.attempts(zone)) {
      finish(p.token, nullptr);
      return;
    }
    if (!pick_upstream(p, now_us)) {  // every upstream of the zone is down, no last resort (upstream_health.hpp)
      // Earlier attempts are out: this attempt sends nothing and waits for their late
      // replies as long as it would have waited for its own.
      if (wait_for_late(p, now_us, now_us + (cfg_.upstream_timeout_ms * 1000ull << std::min(p.attempt, 2u)))) return;
      // Fail fast: the waiters get stale or SERVFAIL now instead of a wait on a dead
      // server. Not a failure of this name (nothing was asked): no failure-cache entry,
      // which would outlast the probe that finds an upstream back.
      finish(p.token, nullptr, false);
      return;
    }
    if (!send_query(p, p.upstream, now_us)) {
      end_rescue(p);
      ++p.attempt;
      ++p.upstream;
      continue;
    }
    cache_.count(cache::Counter::upstream_queries);
    report_sent(p);
    start_trial(p, now_us);
    return;
  }
}

bool UpstreamClient::wait_for_late(Pending& p, std::uint64_t now_us, std::uint64_t until_us) {
  if (!p.ends_us || now_us >= p.ends_us || !has_earlier(p)) return false;
  p.idle = true;
  p.sent_us = now_us;
  ++p.generation;
  deadlines_.push({clip(p, until_us), p.token, p.generation});
  return true;
}

void UpstreamClient::start_tcp_retry(Pending& p, std::uint64_t now_us) {
  close_socket(p);
  if (p.streamed) {  // a 0x20 fallback over a kept connection: asked on it again
    if (!send_query(p, p.upstream, now_us)) {
      fail_attempt(p, now_us);
      return;
    }
    cache_.count(cache::Counter::upstream_queries);
    report_sent(p);
    return;
  }
  const std::vector<Endpoint>& servers = zones_[p.zone].upstreams;
  const Endpoint& up = servers[p.upstream % servers.size()];
  p.tcp_out.assign(2 + 600, 0);
  const std::size_t len = write_query(p, p.tcp_out.data() + 2, p.tcp_out.size() - 2);
  put16(p.tcp_out.data(), static_cast<std::uint16_t>(len));
  p.tcp_out.resize(2 + len);
  p.tcp_out_done = 0;
  p.tcp_in.clear();
  p.tcp_in_have = 0;
  p.tcp = true;
  const int fd = ::socket(up.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  bool ok = fd >= 0 && len > 0;
  if (ok) {
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&up.addr), up.len);
    ok = (rc == 0 || errno == EINPROGRESS) && watch(p, fd, EPOLLIN | EPOLLOUT, now_us);
  }
  if (!ok) {
    if (fd >= 0) ::close(fd);
    fail_attempt(p, now_us);
    return;
  }
  cache_.count(cache::Counter::upstream_queries);
  report_sent(p);
  if (tap_) tap_->forwarder_query(up.addr, TapProtocol::tcp, p.zone_name, {p.tcp_out.data() + 2, len});
}

void UpstreamClient::fail_attempt(Pending& p, std::uint64_t now_us) {
  close_socket(p);
  end_rescue(p);
  p.idle = false;
  ++p.attempt;
  ++p.upstream;
  start_attempt(p, now_us);
}

void UpstreamClient::finish(std::uint64_t token, const UpstreamAnswer* answer, bool failed) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  by_key_.erase(p.dedup_key);
  names_->release(names_row_, p.name_bucket);
  close_socket(p);
  close_all_earlier(p);
  end_rescue(p);
  // Every client still waiting gets this outcome, those held past their response timer first.
  if (!p.held.empty()) {
    p.held.insert(p.held.end(), std::make_move_iterator(p.waiters.begin()), std::make_move_iterator(p.waiters.end()));
    p.waiters = std::move(p.held);
  }
  waiting_ -= p.waiters.size();
  if (answer) {
    failures_->clear(p.name_hash);
  } else if (failed) {
    failures_->record(p.name_hash, p.got_reply ? FailureKind::error : FailureKind::timeout, monotonic_us() / 1000,
                      cfg_.failure_min_s * 1000, cfg_.failure_max_s * 1000);
  }
  done_(p, answer);
  // After done_: the answer is in the cache or the claim's answer slot (or the failure in
  // the failure cache) before waiting workers are woken to look. done_ may have released
  // it already (before answering its clients); then this does nothing.
  if (claims_ && p.claim.value) claims_->release(p.claim);
}

namespace {
// Inserts w into v, kept in arrival order (w is almost always the youngest: a short walk).
void insert_by_arrival(std::vector<Waiter>& v, Waiter&& w) {
  auto at = v.end();
  while (at != v.begin() && (at - 1)->arrived_us > w.arrived_us) --at;
  v.insert(at, std::move(w));
}
}  // namespace

void UpstreamClient::add_waiter(Pending& p, Waiter&& w) {
  const std::uint64_t at = timers_.next_us(w.arrived_us, false);
  const bool first = p.waiters.empty() || w.arrived_us < p.waiters.front().arrived_us;
  insert_by_arrival(p.waiters, std::move(w));
  ++waiting_;
  if (first) client_deadlines_.push({at, p.token, 0});
}

void UpstreamClient::expire_waiters(Pending& p, std::uint64_t now_us) {
  // Both lists are in arrival order, so each timer passes for a prefix. Waiters whose
  // response timer passed: answered stale if held (out), else held; a waiter whose
  // resolution timer passed too (query_timeout_ms <= client_timeout_ms) is answered now.
  std::size_t due = 0;
  while (due < p.waiters.size() && (timers_.stale_due(p.waiters[due].arrived_us, now_us) ||
                                    timers_.given_up(p.waiters[due].arrived_us, now_us)))
    ++due;
  std::vector<Waiter> passed(std::make_move_iterator(p.waiters.begin()),
                             std::make_move_iterator(p.waiters.begin() + static_cast<long>(due)));
  p.waiters.erase(p.waiters.begin(), p.waiters.begin() + static_cast<long>(due));
  for (Waiter& w : passed) {
    if (!deadline_passed_(p, w, timers_.given_up(w.arrived_us, now_us))) insert_by_arrival(p.held, std::move(w));
    else --waiting_;
  }
  due = 0;
  while (due < p.held.size() && timers_.given_up(p.held[due].arrived_us, now_us)) ++due;
  passed.assign(std::make_move_iterator(p.held.begin()), std::make_move_iterator(p.held.begin() + static_cast<long>(due)));
  p.held.erase(p.held.begin(), p.held.begin() + static_cast<long>(due));
  for (Waiter& w : passed) deadline_passed_(p, w, true);
  waiting_ -= passed.size();
  // One entry per query: the earlier of the two lists' next timers.
  std::uint64_t next = UINT64_MAX;
  if (!p.waiters.empty()) next = timers_.next_us(p.waiters.front().arrived_us, false);
  if (!p.held.empty()) next = std::min(next, timers_.next_us(p.held.front().arrived_us, true));
  if (next != UINT64_MAX) client_deadlines_.push({next, p.token, 0});
}

TapProtocol UpstreamClient::tap_protocol(const Pending& p) const {
  if (p.streamed && zones_[p.zone].transport == UpstreamTransport::tls) return TapProtocol::dot;
  return p.tcp ? TapProtocol::tcp : TapProtocol::udp;
}

bool UpstreamClient::take_reply(Pending& p, const std::uint8_t* wire, std::size_t len, std::uint64_t now_us) {
  if (tap_) {
    const std::vector<Endpoint>& servers = zones_[p.zone].upstreams;
    tap_->forwarder_response(servers[p.upstream % servers.size()].addr, tap_protocol(p), p.zone_name, {wire, len},
                             now_us > p.sent_us ? now_us - p.sent_us : 0);
  }
  if (p.probe) return take_probe_reply(p, wire, len, now_us);
  if (p.trial) return take_trial_reply(p, wire, len, now_us);
  const UpstreamAnswer::Verdict verdict = answer_.parse(wire, len, p.question(), ttl_);
  if (verdict == UpstreamAnswer::Verdict::accept || verdict == UpstreamAnswer::Verdict::fail ||
      (verdict == UpstreamAnswer::Verdict::case_mismatch && !p.case_fallback))
    report_reply(p, now_us);  // the server answered (any rcode): its RTT, and it is alive
  switch (verdict) {
    case UpstreamAnswer::Verdict::ignore:
      if (!p.tcp) return false;  // UDP: not our reply (late, forged): keep waiting
      fail_attempt(p, now_us);   // TCP: the connection carries one reply, and it is wrong
      return true;
    case UpstreamAnswer::Verdict::case_mismatch:
      if (p.case_fallback) {  // asked in lowercase and still not echoed: not our reply
        if (!p.tcp) return false;
        fail_attempt(p, now_us);
        return true;
      }
      cache_.count(cache::Counter::upstream_case_fallbacks);
      p.case_fallback = true;
      if (p.tcp) {
        start_tcp_retry(p, now_us);
      } else {
        close_socket(p);
        start_attempt(p, now_us);  // the same attempt and upstream, in lowercase
      }
      return true;
    case UpstreamAnswer::Verdict::fail:
      p.got_reply = true;
      cache_.count(cache::Counter::upstream_latency_us, now_us - p.sent_us);
      fail_attempt(p, now_us);
      return true;
    case UpstreamAnswer::Verdict::accept:
      cache_.count(cache::Counter::upstream_latency_us, now_us - p.sent_us);
      if (answer_.truncated()) {
        if (p.tcp) fail_attempt(p, now_us);  // TC over TCP: a broken server
        else start_tcp_retry(p, now_us);
        return true;
      }
      finish(p.token, &answer_);
      return true;
  }
  return true;
}

void UpstreamClient::on_udp_readable(Pending& p, std::uint64_t now_us) {
  for (;;) {
    std::uint8_t buf[65536];
    const ssize_t n = ::recv(p.fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      report_failure(p, UpstreamHealth::Failure::refused, now_us);
      fail_attempt(p, now_us);  // ECONNREFUSED: nobody listens there
      return;
    }
    if (take_reply(p, buf, static_cast<std::size_t>(n), now_us)) return;
  }
}

void UpstreamClient::on_tcp_event(Pending& p, std::uint32_t events, std::uint64_t now_us) {
  if (p.tcp_out_done < p.tcp_out.size() && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
    const ssize_t n = ::send(p.fd, p.tcp_out.data() + p.tcp_out_done, p.tcp_out.size() - p.tcp_out_done, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      report_failure(p, UpstreamHealth::Failure::refused, now_us);
      fail_attempt(p, now_us);  // refused or reset
      return;
    }
    if (n > 0) p.tcp_out_done += static_cast<std::size_t>(n);
    if (p.tcp_out_done == p.tcp_out.size()) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = tag_ | p.token;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, p.fd, &ev);
    }
  }
  if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
  for (;;) {
    // The 2-byte length first, then exactly that many bytes.
    const std::size_t want = p.tcp_in_have < 2 ? 2 : 2 + get16(p.tcp_in.data());
    if (p.tcp_in.size() < want) p.tcp_in.resize(want);
    if (p.tcp_in_have == want && want > 2) {
      take_reply(p, p.tcp_in.data() + 2, want - 2, now_us);
      return;
    }
    const ssize_t n = ::recv(p.fd, p.tcp_in.data() + p.tcp_in_have, want - p.tcp_in_have, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || (want == 2 && p.tcp_in_have + static_cast<std::size_t>(n) == 2 && get16(p.tcp_in.data()) < 12)) {
      if (n <= 0) report_failure(p, UpstreamHealth::Failure::refused, now_us);
      fail_attempt(p, now_us);  // closed early, reset, or a length no reply can have
      return;
    }
    p.tcp_in_have += static_cast<std::size_t>(n);
  }
}

void UpstreamClient::on_event(std::uint64_t token, std::uint32_t events, std::uint64_t now_us) {
  if (token & kStreamFlag) {
    on_stream_event(static_cast<std::size_t>(token & 0xFFFFFF), events, now_us);
    return;
  }
  auto it = pending_.find(token & kTokenMask);
  if (it == pending_.end()) return;
  if (const unsigned slot = (token >> Pending::kEarlierEventShift) & 7; slot > 0) {
    on_earlier_readable(it->second, slot - 1, now_us);
    return;
  }
  if (it->second.fd < 0) return;
  if (it->second.tcp) on_tcp_event(it->second, events, now_us);
  else on_udp_readable(it->second, now_us);
}

void UpstreamClient::on_timeouts(std::uint64_t now_us) {
  while (!client_deadlines_.empty() && client_deadlines_.top().at_us <= now_us) {
    const TokenDeadline d = client_deadlines_.top();
    client_deadlines_.pop();
    if (auto it = pending_.find(d.token); it != pending_.end()) expire_waiters(it->second, now_us);
  }
  while (!deadlines_.empty() && deadlines_.top().at_us <= now_us) {
    const TokenDeadline d = deadlines_.top();
    deadlines_.pop();
    auto it = pending_.find(d.token);
    if (it == pending_.end() || it->second.generation != d.generation ||
        (it->second.fd < 0 && it->second.stream < 0 && !it->second.idle))
      continue;  // done
    Pending& p = it->second;
    if (p.idle) {  // a wait for late replies that did not come
      if (p.ends_us && now_us >= p.ends_us) finish(p.token, nullptr);
      else fail_attempt(p, now_us);
      continue;
    }
    if (!p.probe && !p.trial)  // probes and trials: counted as such alone
      cache_.count(cache::Counter::upstream_timeouts);
    report_failure(p, UpstreamHealth::Failure::timeout, now_us);
    if (p.ends_us && now_us >= p.ends_us) {  // the query resolution timer: no attempt after this one
      finish(p.token, nullptr);
      continue;
    }
    if (p.stream >= 0) {  // the connection decides whether it looks dead (its other queries then fail over)
      const std::size_t index = static_cast<std::size_t>(p.stream);
      p.stream = -1;
      UpstreamStream::Events events;
      streams_[index]->timed_out(p.id, p.token, now_us, events);
      take_stream_events(index, events, now_us, p.token);
    }
    if (!p.tcp && !p.probe && !p.trial) keep_earlier(p);  // its reply may still come
    fail_attempt(p, now_us);
  }
  for (auto& stream : streams_) stream->close_if_idle(now_us);
}

int UpstreamClient::next_timeout_ms(std::uint64_t now_us) const {
  std::uint64_t at = UINT64_MAX;
  for (const auto& stream : streams_)
    if (const std::uint64_t idle = stream->idle_deadline_us(); idle != 0) at = std::min(at, idle);
  if (deadlines_.empty() && client_deadlines_.empty() && at == UINT64_MAX) return -1;
  if (!deadlines_.empty()) at = std::min(at, deadlines_.top().at_us);
  if (!client_deadlines_.empty()) at = std::min(at, client_deadlines_.top().at_us);
  return at <= now_us ? 0 : static_cast<int>((at - now_us + 999) / 1000);
}

}  // namespace dnsarena::workers
