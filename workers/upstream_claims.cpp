// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/upstream_claims.hpp"

#include "common/mix_hash.hpp"
#include "common/monotonic_clock.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace dnsarena::workers {

using common::fmix64;

namespace {

constexpr unsigned kClaimTagShift = 40;
constexpr unsigned kRowShift = 32;

}  // namespace

UpstreamClaims::UpstreamClaims(unsigned rows, std::uint32_t slots, bool shared) {
  rows = std::max(rows, 1u);
  slots = std::clamp<std::uint32_t>(slots, 1, 1u << 24);
  if (slots & (slots - 1)) slots = 1u << (32 - __builtin_clz(slots));
  map_ = common::AnonymousMapping(sizeof(Header) + std::size_t{slots} * sizeof(Slot), shared, "upstream claims table");
  header_ = static_cast<Header*>(map_.data());
  arc4random_buf(&header_->seed, sizeof header_->seed);
  header_->base_ms = common::monotonic_ms();
  header_->slots = slots;
  header_->rows = rows;
  slots_ = reinterpret_cast<Slot*>(static_cast<std::uint8_t*>(map_.data()) + sizeof(Header));
  for (unsigned r = 0; r < std::min(rows, kMaxRows); ++r) {
    const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
      const int e = errno;
      for (int open_fd : wake_fds_) ::close(open_fd);
      throw std::system_error(e, std::generic_category(), "upstream claims eventfd");
    }
    wake_fds_.push_back(fd);
  }
}

UpstreamClaims::~UpstreamClaims() {
  for (int fd : wake_fds_) ::close(fd);
  wake_fds_.clear();
}

std::pair<std::uint32_t, std::uint64_t> UpstreamClaims::place(std::uint64_t question_hash) const {
  const std::uint64_t m = fmix64(question_hash ^ header_->seed);
  const std::uint64_t tag = m >> kClaimTagShift;
  return {static_cast<std::uint32_t>(m) & (header_->slots - 1), tag == 0 ? 1 : tag};
}

bool UpstreamClaims::live(std::uint64_t value, std::uint64_t now_ms, std::uint64_t max_life_ms) const {
  if (value == 0) return false;
  const std::uint64_t started = value & 0xFFFFFFFFull;
  const std::uint64_t now = relative(now_ms) & 0xFFFFFFFFull;
  return ((now - started) & 0xFFFFFFFFull) < max_life_ms;
}

UpstreamClaims::Outcome UpstreamClaims::claim(std::uint64_t question_hash, unsigned row, std::uint64_t now_ms,
                                              std::uint64_t max_life_ms, Claim* out) {
  if (row >= std::min(header_->rows, kMaxRows)) return Outcome::unavailable;
  const auto [i, tag] = place(question_hash);
  Slot& s = slots_[i];
  const std::uint64_t mine = tag << kClaimTagShift | std::uint64_t{row} << kRowShift | (relative(now_ms) & 0xFFFFFFFFull);
  std::uint64_t seen = s.claim.load();
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (live(seen, now_ms, max_life_ms)) {
      if ((seen >> kClaimTagShift) != tag) return Outcome::unavailable;
      *out = {i, seen};
      return Outcome::held;
    }
    // Free, or a claim past its life (its owner died, or outlived every attempt): ours.
    if (s.claim.compare_exchange_strong(seen, mine)) {
      *out = {i, mine};
      return Outcome::claimed;
    }
  }
  return Outcome::unavailable;
}

bool UpstreamClaims::peek(std::uint64_t question_hash, std::uint64_t now_ms, std::uint64_t max_life_ms,
                          Claim* out) const {
  const auto [i, tag] = place(question_hash);
  const std::uint64_t seen = slots_[i].claim.load();
  if (!live(seen, now_ms, max_life_ms) || (seen >> kClaimTagShift) != tag) return false;
  *out = {i, seen};
  return true;
}

bool UpstreamClaims::wait_on(const Claim& c, unsigned row) {
  if (row >= std::min(header_->rows, kMaxRows)) return false;
  Slot& s = slots_[c.slot];
  s.waiters.fetch_or(1ull << row);
  return s.claim.load() == c.value;
}

bool UpstreamClaims::holds(const Claim& c, std::uint64_t now_ms, std::uint64_t max_life_ms) const {
  const std::uint64_t v = slots_[c.slot].claim.load();
  return v == c.value && live(v, now_ms, max_life_ms);
}

void UpstreamClaims::release(const Claim& c) {
  Slot& s = slots_[c.slot];
  std::uint64_t expected = c.value;
  // Only our own claim: one taken over after its life ended belongs to someone else now.
  if (!s.claim.compare_exchange_strong(expected, 0)) return;
  wake(s.waiters.exchange(0));
}

void UpstreamClaims::release_row(unsigned row) {
  for (std::uint32_t i = 0; i < header_->slots; ++i) {
    std::uint64_t v = slots_[i].claim.load(std::memory_order_relaxed);
    if (v != 0 && ((v >> kRowShift) & 0xFF) == row && slots_[i].claim.compare_exchange_strong(v, 0))
      wake(slots_[i].waiters.exchange(0));
  }
}

void UpstreamClaims::wake(std::uint64_t rows_mask) const {
  while (rows_mask) {
    const unsigned r = static_cast<unsigned>(__builtin_ctzll(rows_mask));
    rows_mask &= rows_mask - 1;
    if (r < wake_fds_.size()) {
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(wake_fds_[r], &one, sizeof one);  // saturated: already awake
    }
  }
}

void UpstreamClaims::drain(unsigned row) const {
  if (row >= wake_fds_.size()) return;
  std::uint64_t v;
  while (::read(wake_fds_[row], &v, sizeof v) > 0) {
  }
}

}  // namespace dnsarena::workers
