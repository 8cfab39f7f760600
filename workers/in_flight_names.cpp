// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/in_flight_names.hpp"

#include "common/mix_hash.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace dnsarena::workers {

using common::fmix64;

InFlightNames::InFlightNames(unsigned rows, bool shared) {
  if (rows == 0) rows = 1;
  map_ = common::AnonymousMapping(sizeof(Header) + static_cast<std::size_t>(rows) * kBuckets * sizeof(std::uint32_t),
                                  shared, "in-flight names table");
  header_ = static_cast<Header*>(map_.data());  // the mapping is zero-filled: every count 0
  std::uint64_t seed = 0;
  arc4random_buf(&seed, sizeof seed);
  header_->seed = seed;
  header_->rows = rows;
  header_->buckets = kBuckets;
  rows_ = reinterpret_cast<std::atomic<std::uint32_t>*>(static_cast<std::uint8_t*>(map_.data()) + sizeof(Header));
}

InFlightNames::~InFlightNames() = default;

std::uint32_t InFlightNames::bucket_of(std::uint64_t key_hash) const {
  return static_cast<std::uint32_t>(fmix64(key_hash ^ header_->seed)) & (kBuckets - 1);
}

bool InFlightNames::acquire(unsigned w, std::uint32_t bucket, unsigned bound) {
  std::atomic<std::uint32_t>& mine = row(w)[bucket];
  mine.fetch_add(1, std::memory_order_seq_cst);
  if (count(bucket) <= bound) return true;
  mine.fetch_sub(1, std::memory_order_seq_cst);
  return false;
}

void InFlightNames::release(unsigned w, std::uint32_t bucket) { row(w)[bucket].fetch_sub(1, std::memory_order_seq_cst); }

void InFlightNames::reset_row(unsigned w) {
  std::atomic<std::uint32_t>* r = row(w);
  for (std::uint32_t b = 0; b < kBuckets; ++b) r[b].store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

unsigned InFlightNames::count(std::uint32_t bucket) const {
  unsigned total = 0;
  for (unsigned w = 0; w < header_->rows; ++w) total += row(w)[bucket].load(std::memory_order_seq_cst);
  return total;
}

}  // namespace dnsarena::workers
