// SPDX-License-Identifier: GPL-3.0-or-later
// The host-wide infrastructure table of the recursive workers (infra_table.hpp).
#include "workers/infra_table.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/mix_hash.hpp"
#include "common/monotonic_clock.hpp"
#include "workers/seqlock_words.hpp"

namespace dnsarena::workers {

namespace {

bool same_key(const InfraTable::Record& r, const InfraKey& k, std::uint64_t zone) {
  return r.family == k.family && r.port == k.port && r.zone == zone &&
         std::memcmp(r.address, k.address.data(), sizeof r.address) == 0;
}

}  // namespace

InfraTable::InfraTable(std::uint32_t buckets, bool shared) {
  buckets = std::clamp<std::uint32_t>(buckets, 1, 1u << 16);
  if (buckets & (buckets - 1)) buckets = 1u << (32 - __builtin_clz(buckets));
  map_ = common::AnonymousMapping(sizeof(Header) + std::size_t{buckets} * kWays * sizeof(Slot), shared,
                                  "infrastructure table");
  header_ = static_cast<Header*>(map_.data());  // zero-filled: every slot empty
  arc4random_buf(&header_->seed, sizeof header_->seed);
  header_->base_ms = common::monotonic_ms();
  header_->buckets = buckets;
  header_->ways = kWays;
}

std::size_t InfraTable::first_slot(const InfraKey& k, std::uint64_t zone) const {
  std::uint64_t a = 0, b = 0;
  std::memcpy(&a, k.address.data(), 8);
  std::memcpy(&b, k.address.data() + 8, 8);
  std::uint64_t h = common::fmix64(header_->seed ^ a);
  h = common::fmix64(h ^ b);
  h = common::fmix64(h ^ (std::uint64_t{k.family} << 16 | k.port));
  h = common::fmix64(h ^ zone);
  return (h & (header_->buckets - 1)) * kWays;
}

std::optional<InfraTable::Record> InfraTable::read(std::size_t i) const {
  Slot& s = slot(i);
  const std::uint64_t before = s.seq.load(std::memory_order_acquire);
  if (before & seqlock::kWriting) return std::nullopt;
  Record r;
  const std::uint64_t expected = s.checksum.load(std::memory_order_relaxed);
  const std::uint64_t sum = seqlock::load_words(s.record, sizeof r, reinterpret_cast<std::uint8_t*>(&r));
  std::atomic_thread_fence(std::memory_order_acquire);
  if (s.seq.load(std::memory_order_relaxed) != before || sum != expected || r.family == 0) return std::nullopt;
  return r;
}

std::optional<InfraTable::Record> InfraTable::find(const InfraKey& k, std::uint64_t zone, std::uint64_t now_ms) const {
  const std::size_t first = first_slot(k, zone);
  const std::uint32_t now_s = relative_s(now_ms);
  std::uint64_t address_word = 0;
  std::memcpy(&address_word, k.address.data(), 8);
  for (std::size_t i = first; i < first + kWays; ++i) {
    // A glance at the zone and the address's first word (INFRA_RECORD_FORMAT: words 2
    // and 0) skips the other records without copying them: a slot that changes meanwhile
    // reads as one being written (skipped), and a match is read whole below.
    const auto* words = reinterpret_cast<const std::uint64_t*>(slot(i).record);
    if (__atomic_load_n(words + 2, __ATOMIC_RELAXED) != zone || __atomic_load_n(words, __ATOMIC_RELAXED) != address_word)
      continue;
    const auto r = read(i);
    if (r && same_key(*r, k, zone)) {
      if (r->expires_s <= now_s) return std::nullopt;
      return r;
    }
  }
  return std::nullopt;
}

void InfraTable::update(const InfraKey& k, std::uint64_t zone, std::uint64_t now_ms,
                        const std::function<void(Record&)>& change) {
  const std::size_t first = first_slot(k, zone);
  const std::uint32_t now_s = relative_s(now_ms);
  // The record's own slot, else an empty (or torn) one, else the one made first; a slot
  // another writer holds (since less than kStaleWriteMs) only when nothing else is left.
  const std::uint64_t now_rel = relative_ms(now_ms) & 0xFFFFFFFFull;
  std::size_t pick = first;
  std::uint64_t pick_score = UINT64_MAX;
  for (std::size_t i = first; i < first + kWays; ++i) {
    const auto r = read(i);
    if (r && same_key(*r, k, zone)) {
      pick = i;
      break;
    }
    std::uint64_t score = r ? r->expires_s : 0;
    const std::uint64_t seq = slot(i).seq.load(std::memory_order_relaxed);
    if ((seq & seqlock::kWriting) && ((now_rel - (seq >> seqlock::kStartShift)) & 0xFFFFFFFFull) < kStaleWriteMs)
      score = UINT64_MAX - 1;
    if (score < pick_score) {
      pick = i;
      pick_score = score;
    }
  }
  Slot& s = slot(pick);
  const auto generation = seqlock::begin_write(s.seq, relative_ms(now_ms), kStaleWriteMs);
  if (!generation) return;  // another worker writes it (or one killed mid-write, lately)
  // The slot is ours: its record as it stands (a torn one, left by a killed writer or
  // forged, counts as empty).
  Record r;
  const std::uint64_t sum = seqlock::load_words(s.record, sizeof r, reinterpret_cast<std::uint8_t*>(&r));
  const bool intact = sum == s.checksum.load(std::memory_order_relaxed) && r.family != 0;
  if (!intact || !same_key(r, k, zone) || r.expires_s <= now_s) {
    if (intact && r.expires_s > now_s) header_->evictions.fetch_add(1, std::memory_order_relaxed);
    header_->inserts.fetch_add(1, std::memory_order_relaxed);
    r = Record{};
    std::memcpy(r.address, k.address.data(), sizeof r.address);
    r.zone = zone;
    r.port = k.port;
    r.family = k.family;
    r.expires_s = now_s + kHostTtlS;
  }
  change(r);
  s.checksum.store(seqlock::store_words(s.record, {reinterpret_cast<const std::uint8_t*>(&r), sizeof r}),
                   std::memory_order_relaxed);
  seqlock::end_write(s.seq, *generation);
}

bool InfraTable::backing_off(const Record& r, std::uint64_t now_ms) const {
  if (r.timeouts == 0) return false;
  const auto left = static_cast<std::int32_t>(r.backoff_ms - static_cast<std::uint32_t>(relative_ms(now_ms)));
  return left > 0 && static_cast<std::uint32_t>(left) <= kBackoffMaxMs;
}

InfraTable::Host InfraTable::host(const InfraKey& k, std::uint64_t now_ms) const {
  Host h;
  const auto r = find(k, 0, now_ms);
  if (!r) return h;
  h.known = true;
  h.sampled = r->srtt_us != 0 || r->rttvar_us != 0;
  h.srtt_us = r->srtt_us;
  h.rttvar_us = r->rttvar_us;
  h.timeouts = r->timeouts;
  h.backing_off = backing_off(*r, now_ms);
  h.edns = r->edns <= 2 ? static_cast<Edns>(r->edns) : Edns::unknown;
  h.edns_timeouts = r->edns_timeouts;
  return h;
}

bool InfraTable::lame(const InfraKey& k, std::uint64_t zone_hash, std::uint64_t now_ms) const {
  const auto r = find(k, zone_hash | 1, now_ms);
  return r && r->lame;
}

bool InfraTable::use_edns(const InfraKey& k, std::uint64_t now_ms) const {
  const Host h = host(k, now_ms);
  if (h.edns == Edns::broken) return false;
  return !(h.edns == Edns::unknown && h.edns_timeouts >= kEdnsTimeoutsToFallBack);
}

std::uint32_t InfraTable::rank(const InfraKey& k, std::uint64_t zone_hash, std::uint64_t now_ms) const {
  if (lame(k, zone_hash, now_ms)) return kLameRank;
  const Host h = host(k, now_ms);
  if (h.backing_off) return kBackoffRank + h.timeouts;
  if (!h.sampled) return kUnknownRankUs;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{h.srtt_us} + 4ull * h.rttvar_us,
                                                            kBackoffRank - 1));
}

void InfraTable::replied(const InfraKey& k, std::uint32_t rtt_us, Edns edns, std::uint64_t now_ms) {
  update(k, 0, now_ms, [&](Record& r) {
    r.timeouts = 0;
    r.edns_timeouts = 0;
    r.backoff_ms = 0;
    if (edns != Edns::unknown) r.edns = static_cast<std::uint8_t>(edns);
    if (rtt_us == 0) return;
    rtt_us = std::min<std::uint32_t>(rtt_us, kBackoffMaxMs * 1000u);
    if (r.srtt_us == 0 && r.rttvar_us == 0) {
      r.srtt_us = std::max<std::uint32_t>(rtt_us, 1);
      r.rttvar_us = rtt_us / 2;
      return;
    }
    const std::uint32_t delta = r.srtt_us > rtt_us ? r.srtt_us - rtt_us : rtt_us - r.srtt_us;
    r.rttvar_us = (3 * r.rttvar_us + delta) / 4;
    r.srtt_us = std::max<std::uint32_t>((7 * std::uint64_t{r.srtt_us} + rtt_us) / 8, 1);
  });
}

void InfraTable::timed_out(const InfraKey& k, bool with_edns, std::uint64_t now_ms) {
  update(k, 0, now_ms, [&](Record& r) {
    if (r.timeouts < 255) ++r.timeouts;
    if (with_edns && r.edns == static_cast<std::uint8_t>(Edns::unknown) && r.edns_timeouts < 255) ++r.edns_timeouts;
    const unsigned shift = std::min<unsigned>(r.timeouts - 1u, 8);
    const std::uint32_t backoff = std::min<std::uint32_t>(kBackoffInitialMs << shift, kBackoffMaxMs);
    r.backoff_ms = static_cast<std::uint32_t>(relative_ms(now_ms)) + backoff;
  });
}

void InfraTable::mark_lame(const InfraKey& k, std::uint64_t zone_hash, std::uint64_t now_ms) {
  update(k, zone_hash | 1, now_ms, [](Record& r) { r.lame = 1; });
}

InfraTable::Stats InfraTable::stats(std::uint64_t now_ms) const {
  Stats st;
  st.capacity = capacity();
  st.inserts = header_->inserts.load(std::memory_order_relaxed);
  st.evictions = header_->evictions.load(std::memory_order_relaxed);
  const std::uint32_t now_s = relative_s(now_ms);
  for (std::size_t i = 0; i < capacity(); ++i) {
    const auto r = read(i);
    if (!r || r->expires_s <= now_s) continue;
    if (r->zone != 0) {
      ++st.lame;
      continue;
    }
    ++st.hosts;
    if (r->edns == static_cast<std::uint8_t>(Edns::broken)) ++st.edns_broken;
    if (backing_off(*r, now_ms)) ++st.backing_off;
  }
  return st;
}

}  // namespace dnsarena::workers
