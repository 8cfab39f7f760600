#include "workers/in_flight_names.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace dnsarena::workers {

namespace {
// MurmurHash3's 64-bit finaliser: every input bit reaches every output bit.
std::uint64_t fmix64(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}
}  // namespace

InFlightNames::InFlightNames(unsigned rows, bool shared) {
  if (rows == 0) rows = 1;
  map_bytes_ = sizeof(Header) + static_cast<std::size_t>(rows) * kBuckets * sizeof(std::uint32_t);
  map_ = ::mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1,
                0);
  if (map_ == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "in-flight names table");
  header_ = static_cast<Header*>(map_);  // the mapping is zero-filled: every count 0
  std::uint64_t seed = 0;
  arc4random_buf(&seed, sizeof seed);
  header_->seed = seed;
  header_->rows = rows;
  header_->buckets = kBuckets;
  rows_ = reinterpret_cast<std::atomic<std::uint32_t>*>(static_cast<std::uint8_t*>(map_) + sizeof(Header));
}

InFlightNames::~InFlightNames() {
  if (map_) ::munmap(map_, map_bytes_);
}

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
