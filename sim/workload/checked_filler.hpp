// SPDX-License-Identifier: GPL-3.0-or-later
// Self-checking filler for values that readers verify byte for byte (the cache tests'
// verifiable values, `bench torture`): pseudo-random bytes from a seed, then the XXH64 of
// everything before it, so a torn or changed byte anywhere in the run shows.
#pragma once
#include <xxhash.h>

#include <cstddef>
#include <cstdint>

#include "sim/workload/entry_generator.hpp"

namespace dnsarena::sim {

// Appends SplitMix64(seed) bytes until `b` is `total` - 8 bytes long, then the XXH64
// (seed 0, little-endian) of all of `b` (a vector or basic_string of uint8_t).
// REQUIRES: total >= b.size() + 8.
template <class ByteContainer>
void append_checked_filler(ByteContainer& b, std::size_t total, std::uint64_t seed) {
  SplitMix64 fill(seed);
  while (b.size() < total - 8) b.push_back(static_cast<std::uint8_t>(fill.next()));
  const std::uint64_t sum = XXH64(b.data(), b.size(), 0);
  for (int s = 0; s < 64; s += 8) b.push_back(static_cast<std::uint8_t>(sum >> s));
}

}  // namespace dnsarena::sim
