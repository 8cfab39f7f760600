// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/upstream_health.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dnsarena::workers {

namespace {

constexpr std::uint64_t pack_rtt(std::uint32_t srtt_us, std::uint32_t rttvar_us) {
  return static_cast<std::uint64_t>(srtt_us) << 32 | rttvar_us;
}
constexpr std::uint32_t srtt_of(std::uint64_t rtt) { return static_cast<std::uint32_t>(rtt >> 32); }
constexpr std::uint32_t rttvar_of(std::uint64_t rtt) { return static_cast<std::uint32_t>(rtt); }
// The stored RTO, as Unbound's calc_rto: at least RTT_MIN_TIMEOUT, so that a fast server's
// backoff doubles from 50 ms (doubling 0.3 ms would change nothing), at most RTT_MAX_TIMEOUT.
std::uint32_t clamp_rto(std::uint64_t us) {
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(us, UpstreamHealth::kMinTimeoutUs, UpstreamHealth::kMaxRtoUs));
}
constexpr std::uint64_t lease_expiry_ms(std::uint64_t token) { return token >> 16; }

// Raises `a` to `v` unless it is already higher.
void store_max(std::atomic<std::uint64_t>& a, std::uint64_t v) {
  std::uint64_t cur = a.load(std::memory_order_relaxed);
  while (cur < v && !a.compare_exchange_weak(cur, v, std::memory_order_seq_cst)) {
  }
}

}  // namespace

UpstreamHealth::UpstreamHealth(unsigned capacity, bool shared) {
  if (capacity == 0) capacity = 1;
  map_ = common::AnonymousMapping(sizeof(Header) + static_cast<std::size_t>(capacity) * (sizeof(Row) + sizeof(RttRow)),
                                  shared, "upstream health table");
  header_ = static_cast<Header*>(map_.data());  // zero-filled: no rows, every field 0 (unknown, up)
  header_->capacity = capacity;
  rows_ = reinterpret_cast<Row*>(static_cast<std::uint8_t*>(map_.data()) + sizeof(Header));
  rtt_ = reinterpret_cast<RttRow*>(rows_ + capacity);
}

UpstreamHealth::~UpstreamHealth() = default;

unsigned UpstreamHealth::capacity() const { return header_->capacity; }
unsigned UpstreamHealth::size() const { return header_->used.load(std::memory_order_acquire); }

void UpstreamHealth::key_of(const Endpoint& e, std::uint16_t& family, std::uint16_t& port,
                            std::uint8_t (&address)[16]) {
  std::memset(address, 0, sizeof address);
  family = static_cast<std::uint16_t>(e.family());
  port = e.port();
  if (e.family() == AF_INET)
    std::memcpy(address, &reinterpret_cast<const sockaddr_in*>(&e.addr)->sin_addr, 4);
  else
    std::memcpy(address, &reinterpret_cast<const sockaddr_in6*>(&e.addr)->sin6_addr, 16);
}

int UpstreamHealth::find(const Endpoint& e) const {
  std::uint16_t family = 0, port = 0;
  std::uint8_t address[16];
  key_of(e, family, port, address);
  const unsigned n = size();
  for (unsigned i = 0; i < n; ++i) {
    const Row& r = at(i);
    if (r.family == family && r.port == port && std::memcmp(r.address, address, sizeof address) == 0)
      return static_cast<int>(i);
  }
  return -1;
}

int UpstreamHealth::add(const Endpoint& e) {
  if (const int r = find(e); r >= 0) return r;
  const unsigned n = header_->used.load(std::memory_order_relaxed);  // we are the only adder
  if (n >= header_->capacity) return -1;
  Row& r = at(n);
  key_of(e, r.family, r.port, r.address);
  header_->used.store(n + 1, std::memory_order_release);
  return static_cast<int>(n);
}

std::string UpstreamHealth::endpoint_text(unsigned row) const {
  const Row& r = at(row);
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(r.family, r.address, text, sizeof text);
  return r.family == AF_INET6 ? "[" + std::string(text) + "]:" + std::to_string(r.port)
                              : std::string(text) + ":" + std::to_string(r.port);
}

void UpstreamHealth::sent(unsigned row) { at(row).queries.fetch_add(1, std::memory_order_relaxed); }

bool UpstreamHealth::replied(unsigned row, std::uint64_t rtt_us, std::uint64_t now_us) {
  Row& r = at(row);
  store_max(r.last_reply, now_us);
  if (rtt_us > 0) {
    rtt_[row].rtt.add(rtt_us * 1000);
    // RFC 6298 2.2 and 2.3: the first sample R gives SRTT R, RTTVAR R/2; later ones
    // RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R| (the old SRTT), then SRTT <- 7/8 SRTT + 1/8 R.
    const std::int64_t sample = static_cast<std::int64_t>(std::min<std::uint64_t>(rtt_us, kMaxRtoUs));
    std::uint64_t old = r.rtt.load(std::memory_order_relaxed);
    std::uint64_t next = 0;
    do {
      std::int64_t srtt = sample, var = sample / 2;
      if (old != 0) {
        const std::int64_t s = srtt_of(old), v = rttvar_of(old);
        const std::int64_t delta = sample - s;
        var = v + ((delta < 0 ? -delta : delta) - v) / 4;
        srtt = s + delta / 8;
      }
      srtt = std::max<std::int64_t>(srtt, 1);  // 0 means "no sample yet"
      var = std::max<std::int64_t>(var, 0);
      next = pack_rtt(static_cast<std::uint32_t>(srtt), static_cast<std::uint32_t>(var));
    } while (!r.rtt.compare_exchange_weak(old, next, std::memory_order_seq_cst));
    r.rto_us.store(clamp_rto(std::uint64_t{srtt_of(next)} + 4ull * rttvar_of(next)), std::memory_order_relaxed);
  }
  r.consecutive.store(0, std::memory_order_seq_cst);
  std::uint64_t since = r.down_since.load(std::memory_order_seq_cst);
  return since != 0 && r.down_since.compare_exchange_strong(since, 0, std::memory_order_seq_cst);
}

bool UpstreamHealth::failed(unsigned row, Failure f, std::uint64_t sent_us, std::uint32_t attempt_rto_us,
                            std::uint64_t now_us, const UpstreamHealthConfig& cfg, bool counts) {
  Row& r = at(row);
  if (f == Failure::timeout) {
    r.timeouts.fetch_add(1, std::memory_order_relaxed);
    // Unbound's rtt_lost: the RTO the attempt was sent with is doubled, not the current
    // one, so that many queries timing out together double it once; a reply that lowered
    // it meanwhile wins.
    const std::uint64_t orig = attempt_rto_us ? attempt_rto_us : kUnknownRtoUs;
    const std::uint32_t target = clamp_rto(orig * 2);
    std::uint32_t cur = r.rto_us.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint32_t effective = cur ? cur : kUnknownRtoUs;
      if (effective < orig || effective >= target) break;
      if (r.rto_us.compare_exchange_weak(cur, target, std::memory_order_relaxed)) break;
    }
  } else {
    r.refusals.fetch_add(1, std::memory_order_relaxed);
  }
  if (!counts) return false;
  // A server that replied to anything within the attempt's RTO window (from one RTO
  // before it left until now) is alive: the failure is the name's.
  const std::uint64_t window_us = std::min<std::uint64_t>(sent_us, attempt_rto_us ? attempt_rto_us : kUnknownRtoUs);
  if (r.last_reply.load(std::memory_order_seq_cst) > sent_us - window_us) return false;
  if (r.down_since.load(std::memory_order_seq_cst) != 0) return false;  // down already: probes decide
  const std::uint32_t n = r.consecutive.fetch_add(1, std::memory_order_seq_cst) + 1;
  if (n < std::max(1u, cfg.down_after_timeouts)) return false;
  std::uint64_t up = 0;
  if (!r.down_since.compare_exchange_strong(up, now_us, std::memory_order_seq_cst)) return false;  // another did it
  r.backoff_ms.store(cfg.down_backoff_initial_ms, std::memory_order_relaxed);
  r.next_probe.store(now_us + cfg.down_backoff_initial_ms * 1000ull, std::memory_order_seq_cst);
  // A reply that landed after the check above: the server is alive after all.
  if (r.last_reply.load(std::memory_order_seq_cst) > sent_us - window_us) {
    std::uint64_t mine = now_us;
    if (r.down_since.compare_exchange_strong(mine, 0, std::memory_order_seq_cst)) return false;
  }
  r.downs.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::uint64_t UpstreamHealth::last_reply_us(unsigned row) const {
  return at(row).last_reply.load(std::memory_order_relaxed);
}

bool UpstreamHealth::down(unsigned row) const { return at(row).down_since.load(std::memory_order_relaxed) != 0; }

bool UpstreamHealth::proven(unsigned row) const {
  const Row& r = at(row);
  return r.rtt.load(std::memory_order_relaxed) != 0 && r.consecutive.load(std::memory_order_relaxed) == 0 &&
         r.down_since.load(std::memory_order_relaxed) == 0;
}

std::uint64_t UpstreamHealth::take_probe(unsigned row, std::uint64_t now_us, std::uint32_t lease_ms) {
  Row& r = at(row);
  if (r.down_since.load(std::memory_order_seq_cst) == 0) return 0;
  if (r.next_probe.load(std::memory_order_seq_cst) > now_us) return 0;
  std::uint64_t held = r.probe_token.load(std::memory_order_seq_cst);
  const std::uint64_t now_ms = now_us / 1000;
  if (held != 0 && lease_expiry_ms(held) > now_ms) return 0;  // a live probe
  const std::uint64_t mine = (now_ms + std::max(1u, lease_ms)) << 16 | (arc4random() & 0xFFFF);
  if (!r.probe_token.compare_exchange_strong(held, mine, std::memory_order_seq_cst)) return 0;
  // The token was free or expired: re-check the interval (a probe that failed after our
  // first load has moved it).
  if (r.next_probe.load(std::memory_order_seq_cst) > now_us || r.down_since.load(std::memory_order_seq_cst) == 0) {
    std::uint64_t expect = mine;
    r.probe_token.compare_exchange_strong(expect, 0, std::memory_order_seq_cst);
    return 0;
  }
  r.probes.fetch_add(1, std::memory_order_relaxed);
  return mine;
}

void UpstreamHealth::end_probe(unsigned row, std::uint64_t token, ProbeEnd how, std::uint64_t now_us,
                               const UpstreamHealthConfig& cfg) {
  Row& r = at(row);
  if (r.probe_token.load(std::memory_order_seq_cst) != token) return;  // its lease ran out: no longer ours
  if (how == ProbeEnd::dead && r.down_since.load(std::memory_order_seq_cst) != 0) {
    const std::uint32_t was = r.backoff_ms.load(std::memory_order_relaxed);
    const std::uint32_t next = std::clamp<std::uint32_t>(was ? std::min<std::uint64_t>(2ull * was, UINT32_MAX) : 0,
                                                         std::max(1u, cfg.down_backoff_initial_ms),
                                                         std::max(1u, cfg.down_backoff_max_ms));
    r.backoff_ms.store(next, std::memory_order_relaxed);
    r.next_probe.store(now_us + next * 1000ull, std::memory_order_seq_cst);
  }
  std::uint64_t expect = token;
  r.probe_token.compare_exchange_strong(expect, 0, std::memory_order_seq_cst);  // ours, unless it expired
}

std::uint32_t UpstreamHealth::rank_us(unsigned row) const {
  const std::uint64_t rtt = at(row).rtt.load(std::memory_order_relaxed);
  // Unclamped below (Unbound's rtt_unclamped): 0.3 ms and 3 ms servers rank apart.
  return rtt == 0 ? kUnknownRtoUs
                  : static_cast<std::uint32_t>(std::min<std::uint64_t>(
                        std::uint64_t{srtt_of(rtt)} + 4ull * rttvar_of(rtt), kMaxRtoUs));
}

std::uint32_t UpstreamHealth::rto_us(unsigned row) const {
  const std::uint32_t rto = at(row).rto_us.load(std::memory_order_relaxed);
  return rto ? rto : kUnknownRtoUs;
}

UpstreamHealth::Snapshot UpstreamHealth::snapshot(unsigned row, std::uint64_t now_us) const {
  const Row& r = at(row);
  Snapshot s;
  s.endpoint = endpoint_text(row);
  const std::uint64_t rtt = r.rtt.load(std::memory_order_relaxed);
  s.sampled = rtt != 0;
  s.srtt_ms = srtt_of(rtt) / 1000.0;
  s.rttvar_ms = rttvar_of(rtt) / 1000.0;
  s.rto_ms = rto_us(row) / 1000.0;
  s.queries = r.queries.load(std::memory_order_relaxed);
  s.timeouts = r.timeouts.load(std::memory_order_relaxed);
  s.refusals = r.refusals.load(std::memory_order_relaxed);
  s.probes = r.probes.load(std::memory_order_relaxed);
  s.downs = r.downs.load(std::memory_order_relaxed);
  s.consecutive = r.consecutive.load(std::memory_order_relaxed);
  s.rtt = read_latency(rtt_[row].rtt);
  const std::uint64_t since = r.down_since.load(std::memory_order_relaxed);
  s.down = since != 0;
  if (s.down) {
    s.down_for_s = now_us > since ? (now_us - since) / 1e6 : 0.0;
    const std::uint64_t next = r.next_probe.load(std::memory_order_relaxed);
    s.next_probe_in_ms = next > now_us ? (next - now_us) / 1000.0 : 0.0;
    s.backoff_ms = r.backoff_ms.load(std::memory_order_relaxed);
  }
  return s;
}

int choose_upstream(const UpstreamHealth& health, std::span<const int> rows, std::uint64_t tried,
                    std::uint32_t band_us, std::uint32_t random, unsigned* down_skipped) {
  // One read of every row (other processes change them as we go), then two passes over
  // the copy: the best rank among the candidates, and a uniform pick within the band.
  constexpr std::size_t kMax = 64;
  const std::size_t n = std::min(rows.size(), kMax);
  std::uint32_t rank[kMax];
  bool up[kMax];
  unsigned down = 0;
  bool untried_left = false;
  for (std::size_t i = 0; i < n; ++i) {
    const bool has_row = rows[i] >= 0;
    up[i] = !has_row || !health.down(static_cast<unsigned>(rows[i]));
    rank[i] = has_row ? health.rank_us(static_cast<unsigned>(rows[i])) : UpstreamHealth::kUnknownRtoUs;
    if (!up[i]) ++down;
    else if (!(tried >> i & 1)) untried_left = true;
  }
  if (down_skipped) *down_skipped = down;
  // The candidates: up, and not yet tried while an untried one remains.
  auto candidate = [&](std::size_t i) { return up[i] && (!untried_left || !(tried >> i & 1)); };
  std::uint64_t best = UINT64_MAX;
  for (std::size_t i = 0; i < n; ++i)
    if (candidate(i)) best = std::min<std::uint64_t>(best, rank[i]);
  if (best == UINT64_MAX) return -1;
  auto in_band = [&](std::size_t i) { return candidate(i) && rank[i] <= best + band_us; };
  unsigned count = 0;
  for (std::size_t i = 0; i < n; ++i) count += in_band(i);
  unsigned pick = random % count;
  for (std::size_t i = 0; i < n; ++i)
    if (in_band(i) && pick-- == 0) return static_cast<int>(i);
  return -1;  // not reached
}

int trial_partner(const UpstreamHealth& health, std::span<const int> rows, std::uint64_t tried, int picked) {
  constexpr std::size_t kMax = 64;
  const std::size_t n = std::min(rows.size(), kMax);
  // A row-less upstream (-1) cannot be judged: it is never put on trial.
  if (picked < 0 || static_cast<std::size_t>(picked) >= n || rows[picked] < 0 ||
      health.proven(static_cast<unsigned>(rows[picked])))
    return -1;
  int best = -1;
  bool best_proven = false;
  std::uint32_t best_rank = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == picked || (tried >> i & 1)) continue;
    const bool has_row = rows[i] >= 0;
    if (has_row && health.down(static_cast<unsigned>(rows[i]))) continue;
    const bool is_proven = !has_row || health.proven(static_cast<unsigned>(rows[i]));
    const std::uint32_t rank = has_row ? health.rank_us(static_cast<unsigned>(rows[i])) : UpstreamHealth::kUnknownRtoUs;
    if (best < 0 || (is_proven && !best_proven) || (is_proven == best_proven && rank < best_rank)) {
      best = static_cast<int>(i);
      best_proven = is_proven;
      best_rank = rank;
    }
  }
  return best;
}

std::uint64_t attempt_timeout_us(std::uint32_t rto_us, std::uint64_t cap_us) {
  return std::max<std::uint64_t>(std::min<std::uint64_t>(rto_us, cap_us),
                                 std::min<std::uint64_t>(UpstreamHealth::kMinTimeoutUs, cap_us));
}

}  // namespace dnsarena::workers
