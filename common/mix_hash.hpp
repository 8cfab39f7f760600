// SPDX-License-Identifier: GPL-3.0-or-later
// MurmurHash3's 64-bit finaliser: every input bit reaches every output bit. Mixes a hash
// with a random seed where a table's slot choice must not be predictable from outside.
#pragma once
#include <cstdint>

namespace dnsarena::common {

inline std::uint64_t fmix64(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

}  // namespace dnsarena::common
