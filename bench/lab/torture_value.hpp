// SPDX-License-Identifier: GPL-3.0-or-later
// Values whose every byte a reader can check knowing only the key: the torture
// benchmark's (torture.hpp) writers store them, its readers verify every hit.
//
// For key k, version v, writer w the answer is one TXT record whose rdata is
//
//   | len u8 | k u32le | v u32le | w u16le | filler (SplitMix64 of k,v,w) | xxh64 u64le |
//
// of 24-215 bytes (the length also follows from k,v,w). A reader decodes (k, v, w), encodes
// the same answer again and compares the whole entry byte for byte, all but `expire`. A
// torn copy, the value of another key, or one changed byte anywhere is a mismatch.
// (tests/cache/verifiable_value.hpp is the test suite's richer variant: several records
// and an additional section; this one needs nothing from tests/.)
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"

namespace dnsarena::bench {

inline constexpr std::uint32_t kTortureTtl = 3600;

// The key "k<k>.torture.test" TXT.
cache::CacheKey torture_key(std::uint32_t k);

// The padded entry for (k, version, writer) as inserted at `now`, ready for insert_encoded.
std::vector<std::uint8_t> encode_torture_value(std::uint32_t k, std::uint32_t version, std::uint16_t writer,
                                               std::uint32_t now);

// Empty when `entry` (a validated copy from a lookup of torture_key(k)) is exactly a
// value some writer wrote for k; else what is wrong.
std::string verify_torture_value(std::span<const std::uint8_t> entry, std::uint32_t k);

}  // namespace dnsarena::bench
