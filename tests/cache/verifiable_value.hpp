// SPDX-License-Identifier: GPL-3.0-or-later
// Values whose every byte can be checked by a reader that knows only the key.
//
// A writer stores, for key k, version v, writer w, an answer of 1-4 TXT records plus one
// A record in the additional section (owner differs from the qname). Each TXT rdata is
//
//   | len | k u32 | v u32 | w u16 | record# u8 | filler (pseudo-random from k,v,w,#) | xxh64 |
//
// so a reader decodes (k, v, w) from the first record, rebuilds the whole answer from
// them, encodes it the same way and compares the entry byte for byte (all but the
// `expire` field, which depends on when it was inserted). A torn or foreign read, an
// entry of another key, or a corrupted byte anywhere is a mismatch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/entry_codec.hpp"
#include "test_answers.hpp"

namespace dnsarena::test {

struct ValueId {
  std::uint32_t key = 0;
  std::uint32_t version = 0;
  std::uint16_t writer = 0;
};

inline constexpr std::uint32_t kVerifiableTtl = 3600;

// The key "k<k>.verify.test" TXT.
cache::CacheKey verifiable_key(std::uint32_t k);

// The deterministic answer for `id`.
OwnedAnswer verifiable_answer(const ValueId& id);

// Encodes the value for `id` (padded, ready for insert_encoded), as inserted at `now`.
std::vector<std::uint8_t> encode_verifiable(const ValueId& id, std::uint32_t now);

// Checks that `entry` (a validated copy returned by lookup of verifiable_key(k)) is exactly
// the value some writer wrote for k. Returns an empty string when it is, else what is
// wrong. Fills *id with what it decoded.
std::string verify_entry(std::span<const std::uint8_t> entry, std::uint32_t k, ValueId* id = nullptr);

}  // namespace dnsarena::test
