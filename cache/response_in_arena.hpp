// SPDX-License-Identifier: GPL-3.0-or-later
// The common hit's response written straight from the entry in the arena, with no
// private copy of the entry: the fused read of both lookups (Cache::read_slot_response,
// slot_read.hpp). Not installed; include it only from the cache's .cpp files.
//
// The entry is read as aligned 8-byte words through relaxed atomic loads
// (relaxed_load_at), each value once: a writer may be recycling the region under us, so
// every byte read may be torn, and the caller re-checks the region's generation AFTER
// this walk and throws the response away if it changed. What keeps a torn walk harmless:
//   - `len` is read once by the caller and checked against the region's fill (so
//     [entry, entry + padded len) lies inside the region); every read here is of bytes
//     below `len`, so no word outside the entry is ever loaded;
//   - `at` grows by at least one byte a record, so the walk ends after <= len turns;
//   - every store to `out` is checked against the size limit first.
// A torn walk can thus write garbage into `out` and return true; the caller's
// generation check is what makes sure such a response is never answered.
//
// It handles the records of the seed mix only: every record at the qname with every
// elision bit (type = qtype, class IN, the entry's TTL) and an implied (A, AAAA) or one-byte
// rdata length of a type without compressible names. Anything else (other owners, own
// types, classes or TTLs, wide counts, RFC 8482 mode, a response that does not fit) gives
// up (returns false) and the caller takes the copying path (write_response_direct, then
// write_response()), so the bytes are always write_response()'s
// (tests/cache/fused_read_test.cpp compares the three on the seed mix).
// FORMAT-DEPENDENT: walks the entry layout of entry_format.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../wire/name_compressor.hpp"
#include "entry_format.hpp"
#include "relaxed_copy.hpp"
#include "response_direct.hpp"

namespace dnsarena::cache {

// Copies the n bytes at byte offset p of the entry words `w` to dst as whole aligned
// words, one relaxed load and one store each (no funnel shift): the first word lands at
// dst - (p & 7), so up to 7 bytes before dst and up to 7 after dst + n are overwritten
// too. The caller writes the record head (the 12 bytes before dst) afterwards, and the
// bytes after dst + n are the next record's or past the response.
// REQUIRES: p + n within the entry's length; [dst - 7, dst + n + 7) inside the buffer.
[[gnu::always_inline]] inline void copy_words_from_arena(std::uint8_t* dst, const std::uint64_t* w, std::size_t p,
                                                         std::size_t n) {
  const std::uint64_t* s = w + p / 8;
  std::uint8_t* d = dst - (p & 7);
  const std::size_t words = ((p & 7) + n + 7) / 8;
#pragma GCC unroll 4
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint64_t v = __atomic_load_n(s + i, __ATOMIC_RELAXED);
    std::memcpy(d + 8 * i, &v, 8);
  }
}

// Whether the key blob's k bytes equal the entry's bytes at kEntryKeyOffset (12). The
// key starts in the high half of word 1, so words 2, 3, ... hold key bytes 4-11, 12-19, ...
// whole: one aligned load and compare each, no funnel shift; the last word is masked.
// REQUIRES: k >= 8, kEntryKeyOffset + k within the entry.
[[gnu::always_inline]] inline bool key_equal_in_arena(const std::uint64_t* w, const std::uint8_t* blob, std::size_t k) {
  static_assert(kEntryKeyOffset == 12, "the key starts 4 bytes into word 1");
  std::uint32_t b4;
  std::memcpy(&b4, blob, 4);
  std::uint64_t diff = (__atomic_load_n(w + 1, __ATOMIC_RELAXED) >> 32) ^ b4, b;
  std::size_t i = 4;  // key bytes [i, i + 8) are word (i + 12) / 8
  for (; i + 8 <= k; i += 8) {
    std::memcpy(&b, blob + i, 8);
    diff |= __atomic_load_n(w + (i + 12) / 8, __ATOMIC_RELAXED) ^ b;
  }
  if (const std::size_t r = k - i; r != 0) {  // 1..7 key bytes left, the low bytes of one word
    std::memcpy(&b, blob + k - 8, 8);
    const std::uint64_t mask = (std::uint64_t{1} << (8 * r)) - 1;
    diff |= (__atomic_load_n(w + (i + 12) / 8, __ATOMIC_RELAXED) ^ (b >> (8 * (8 - r)))) & mask;
  }
  return diff == 0;
}

// Whether the walk below can write an entry whose first record's descriptor is at byte
// `at` (an entry with records): the forms it handles, tested on the first record alone,
// so that entries it cannot write (CNAME chains, negative answers with the zone's SOA:
// owners other than the qname) go to the copying path before the key compare and the
// question are spent on them (serve's stream has many such entries).
[[gnu::always_inline]] inline bool in_arena_first_record_ok(const std::uint64_t* w, std::size_t at, std::uint16_t qtype) {
  constexpr std::uint8_t kElided = kDescOwnerIsQname | kDescTypeIsQtype | kDescTtlIsEntryTtl | kDescClassIn;
  const std::uint8_t desc = relaxed_load_byte(w, at);
  if (qtype == wire::kTypeA || qtype == wire::kTypeAaaa) return desc == (kElided | kDescRdlenImplied);
  return desc == (kElided | kDescRdlenU8) && wire::compressible_rdata(qtype).names == 0;
}

// The response of the entry whose words start at `w`, header fields as read by the
// caller, written into out (see the top of this file). `qtype` is the key's (its blob
// matched the entry's). Returns false to give up.
// REQUIRES: kEntryKeyOffset + key_length + 3 <= len; the words up to len readable.
[[gnu::always_inline]] inline bool write_response_in_arena(const std::uint64_t* w, std::size_t len, std::size_t key_length, std::uint8_t info,
                                    std::uint32_t expire, std::uint32_t entry_ttl, std::uint16_t qtype,
                                    const QueryInfo& q, std::uint32_t now, const ResponseOptions& o, std::uint8_t* out,
                                    std::size_t capacity, ResponseResult* result) {
  if (o.one_answer_rrset || (info & kInfoWideCounts) != 0) return false;
  std::size_t at = kEntryKeyOffset + key_length;
  const std::uint64_t c = relaxed_load_at(w, at, 3);
  const std::uint8_t counts[3] = {static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(c >> 8),
                                  static_cast<std::uint8_t>(c >> 16)};
  at += 3;
  const std::size_t records_limit = direct_write_question(q, o, out, capacity);
  if (records_limit == 0) return false;
  std::size_t pos = 12 + q.qname.size() + 4;
  const std::uint32_t rttl = remaining_ttl(entry_ttl, expire - entry_ttl, now);
  const std::uint64_t word0 = record_head_word0(qtype, 1, rttl);
  constexpr std::uint8_t kElided = kDescOwnerIsQname | kDescTypeIsQtype | kDescTtlIsEntryTtl | kDescClassIn;
  std::uint32_t records = 0;
  // copy_words_from_arena writes up to 7 bytes past the rdata: records must end 8 bytes
  // before the buffer's end (else the copying path writes this response).
  const std::size_t room = capacity - 8 < records_limit ? capacity - 8 : records_limit;
  if (qtype == wire::kTypeA) {
    // The commonest entries: 1-4 records of one byte (desc) + 4 bytes (rdata), one load.
    while (at < len) {
      if (at + 5 > len || pos + 16 > records_limit) return false;
      const std::uint64_t x = relaxed_load_at(w, at, 5);
      if (static_cast<std::uint8_t>(x) != (kElided | kDescRdlenImplied)) return false;
      put_record_head(out + pos, word0, rttl, 4);
      const auto a = static_cast<std::uint32_t>(x >> 8);
      std::memcpy(out + pos + 12, &a, 4);
      pos += 16;
      at += 5;
      ++records;
    }
  } else {
    // AAAA (desc + 16 bytes) or a one-byte rdata length (TXT and the like).
    const bool aaaa = qtype == wire::kTypeAaaa;
    if (!aaaa && wire::compressible_rdata(qtype).names != 0) return false;
    const std::uint8_t want = aaaa ? (kElided | kDescRdlenImplied) : (kElided | kDescRdlenU8);
    while (at < len) {
      if (at + 2 > len) return false;
      const std::uint64_t head = relaxed_load_at(w, at, 2);
      if (static_cast<std::uint8_t>(head) != want) return false;
      const std::size_t rdlen = aaaa ? 16 : static_cast<std::uint8_t>(head >> 8);
      const std::size_t data = at + (aaaa ? 1 : 2);
      if (data + rdlen > len || pos + 12 + rdlen > room) return false;
      copy_words_from_arena(out + pos + 12, w, data, rdlen);
      put_record_head(out + pos, word0, rttl, rdlen);
      pos += 12 + rdlen;
      at = data + rdlen;
      ++records;
    }
  }
  if (records != std::uint32_t{counts[0]} + counts[1] + counts[2]) return false;
  direct_write_header(info, expire - entry_ttl, counts, q, o, out, pos, result);
  result->expire = expire;
  result->ttl = entry_ttl;
  return true;
}

}  // namespace dnsarena::cache
