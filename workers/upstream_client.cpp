#include "workers/upstream_client.hpp"

#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace dnsarena::workers {

namespace {
constexpr std::uint64_t kTokenMask = (1ull << 48) - 1;
}

std::uint64_t monotonic_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000u + static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
}

UpstreamClient::UpstreamClient(int epoll_fd, std::uint64_t tag, const ServeConfig& config, cache::Cache& cache,
                               Completion done)
    : epoll_fd_(epoll_fd), tag_(tag), cfg_(config), cache_(cache), done_(std::move(done)) {
  ttl_ = {config.ttl_floor, config.ttl_ceiling, config.negative_ttl_ceiling};
  std::uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = monotonic_us() ^ static_cast<std::uint64_t>(getpid());
  rng_.seed(seed);
}

UpstreamClient::~UpstreamClient() {
  for (auto& [t, p] : pending_) close_socket(p);
}

void UpstreamClient::forward(const cache::CacheKey& plain_key, const EcsOption& ecs, Waiter&& w) {
  std::string dedup(reinterpret_cast<const char*>(plain_key.blob().data()), plain_key.blob().size());
  if (ecs.present) {
    dedup.push_back(static_cast<char>(ecs.family));
    dedup.push_back(static_cast<char>(ecs.source_prefix));
    dedup.append(reinterpret_cast<const char*>(ecs.address.data()), 16);
  }
  if (auto it = by_key_.find(dedup); it != by_key_.end()) {
    pending_.at(it->second).waiters.push_back(std::move(w));
    return;
  }
  const std::uint64_t token = next_token_++ & kTokenMask;
  Pending& p = pending_[token];
  p.token = token;
  p.dedup_key = dedup;
  const auto qn = plain_key.qname();
  std::memcpy(p.qname.data(), qn.data(), qn.size());
  p.qname_len = static_cast<std::uint8_t>(qn.size());
  p.qtype = plain_key.qtype();
  p.key_flags = plain_key.flags();
  p.ecs = ecs;
  p.upstream = 0;
  p.waiters.push_back(std::move(w));
  by_key_[dedup] = token;
  start_attempt(p, monotonic_us());
}

void UpstreamClient::close_socket(Pending& p) {
  if (p.fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.fd, nullptr);
    ::close(p.fd);
    p.fd = -1;
  }
}

void UpstreamClient::start_attempt(Pending& p, std::uint64_t now_us) {
  for (;;) {
    if (p.attempt >= cfg_.attempts()) {
      finish(p.token, nullptr);
      return;
    }
    const Endpoint& up = cfg_.upstreams[p.upstream % cfg_.upstreams.size()];
    p.id = static_cast<std::uint16_t>(rng_());
    std::uint8_t buf[600];
    const std::size_t len = write_upstream_query(p.id, {p.qname.data(), p.qname_len}, p.qtype,
                                                 p.key_flags & cache::kKeyDo, p.key_flags & cache::kKeyCd, p.ecs, buf,
                                                 sizeof buf);
    const int fd = ::socket(up.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    bool ok = fd >= 0 && len > 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&up.addr), up.len) == 0 &&
              ::send(fd, buf, len, 0) == static_cast<ssize_t>(len);
    if (ok) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = tag_ | p.token;
      ok = ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
    }
    if (!ok) {
      if (fd >= 0) ::close(fd);
      ++p.attempt;
      ++p.upstream;
      continue;
    }
    p.fd = fd;
    p.sent_us = now_us;
    cache_.count(cache::Counter::upstream_queries);
    deadlines_.push_back({now_us + cfg_.upstream_timeout_ms * 1000ull, p.token, p.attempt});
    return;
  }
}

void UpstreamClient::fail_attempt(Pending& p, std::uint64_t now_us) {
  close_socket(p);
  ++p.attempt;
  ++p.upstream;
  start_attempt(p, now_us);
}

void UpstreamClient::finish(std::uint64_t token, const UpstreamAnswer* answer) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  by_key_.erase(p.dedup_key);
  close_socket(p);
  done_(p, answer);
}

void UpstreamClient::on_readable(std::uint64_t token, std::uint64_t now_us) {
  token &= kTokenMask;
  for (;;) {
    auto it = pending_.find(token);
    if (it == pending_.end() || it->second.fd < 0) return;
    Pending& p = it->second;
    std::uint8_t buf[65536];
    const ssize_t n = ::recv(p.fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      fail_attempt(p, now_us);  // ECONNREFUSED: nobody listens there
      return;
    }
    switch (answer_.parse(buf, static_cast<std::size_t>(n), p.question(), ttl_)) {
      case UpstreamAnswer::Verdict::ignore: continue;
      case UpstreamAnswer::Verdict::fail:
        cache_.count(cache::Counter::upstream_latency_us, now_us - p.sent_us);
        fail_attempt(p, now_us);
        return;
      case UpstreamAnswer::Verdict::accept:
        cache_.count(cache::Counter::upstream_latency_us, now_us - p.sent_us);
        finish(token, &answer_);
        return;
    }
  }
}

void UpstreamClient::on_timeouts(std::uint64_t now_us) {
  while (!deadlines_.empty() && deadlines_.front().at_us <= now_us) {
    const Deadline d = deadlines_.front();
    deadlines_.pop_front();
    auto it = pending_.find(d.token);
    if (it == pending_.end() || it->second.attempt != d.attempt || it->second.fd < 0) continue;  // already done
    cache_.count(cache::Counter::upstream_timeouts);
    fail_attempt(it->second, now_us);
  }
}

int UpstreamClient::next_timeout_ms(std::uint64_t now_us) const {
  if (deadlines_.empty()) return -1;
  const std::uint64_t at = deadlines_.front().at_us;
  return at <= now_us ? 0 : static_cast<int>((at - now_us + 999) / 1000);
}

}  // namespace dnsarena::workers
