// SPDX-License-Identifier: GPL-3.0-or-later
// The common hit's response written in one walk over the entry bytes (the batched
// lookup's fast path, cache_batch_read.cpp).
//
// write_response() (response_writer.hpp) decodes each record into a RecordView, then
// writes it, keeping a name-compression table for owners and rdata names. Most hits need
// none of that: every owner is the qname (a 2-byte pointer to the question) and no rdata
// holds a compressible name (A, AAAA, TXT, ...). For those entries this walk decodes each
// record descriptor and writes the record at once, with the same bounds checks as
// EntryReader::next().
//
// It gives up (returns false, having possibly scribbled on `out`) on anything else: an
// owner other than the qname, a type whose rdata names write_response() compresses, a
// response that does not fit (TC handling), RFC 8482 single-RRset mode, or any malformed
// byte. The caller then runs write_response(), which rewrites the whole buffer. So every
// response is byte-identical to write_response()'s (tests/cache/response_direct_test.cpp
// compares them on 3,000 entries of the seed mix and on hand-made ones).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "response_writer.hpp"

namespace dnsarena::cache {

// `entry`: a whole entry (header, key, counts, records) whose key blob, of `key_length`
// bytes, was compared byte for byte with the lookup key.
// REQUIRES: `out` has `capacity` bytes.
bool write_response_direct(std::span<const std::uint8_t> entry, std::size_t key_length, const QueryInfo& query,
                           std::uint32_t now, const ResponseOptions& options, std::uint8_t* out, std::size_t capacity,
                           ResponseResult* result);

// The OPT record write_response() appends when options.edns: its size, and writing it
// at p (returns the size). Shared by both writers (response_writer.cpp).
std::size_t opt_record_size(const ResponseOptions& options);
std::size_t write_opt_record(const ResponseOptions& options, std::uint8_t* p);

// Pieces of both one-walk writers (write_response_direct here and write_response_in_arena,
// response_in_arena.hpp), inline so each walk compiles them into its loop.

// Copies n bytes without a library call when n is small: whole words, the last one
// overlapping the one before (no byte past dst + n is written). Runs over 64 bytes (long TXT rdata)
// go to memcpy, which moves them 32 bytes at a time.
inline void copy_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  if (n > 64) {
    std::memcpy(dst, src, n);
  } else if (n >= 8) {
    std::uint64_t w;
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&w, src + i, 8);
      std::memcpy(dst + i, &w, 8);
    }
    std::memcpy(&w, src + n - 8, 8);
    std::memcpy(dst + n - 8, &w, 8);
  } else if (n >= 4) {
    std::uint32_t w;
    std::memcpy(&w, src, 4);
    std::memcpy(dst, &w, 4);
    std::memcpy(&w, src + n - 4, 4);
    std::memcpy(dst + n - 4, &w, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// The 12 fixed bytes of a record whose owner is the question's name:
// |C0 0C|type|class|ttl|rdlength| (big-endian), as one u64 and one u32 store. The first
// word depends on type, class and TTL only, so a run of records with every elision bit
// shares one (record_head_word0, computed once per entry); each byte swap is one bswap,
// cheaper than building the words from 16-bit swaps.
inline std::uint64_t record_head_word0(std::uint16_t type, std::uint16_t rclass, std::uint32_t ttl) {
  return __builtin_bswap64((std::uint64_t{0xC00C} << 48) | (std::uint64_t{type} << 32) | (std::uint64_t{rclass} << 16) |
                           (ttl >> 16));
}
inline void put_record_head(std::uint8_t* p, std::uint64_t word0, std::uint32_t ttl, std::size_t rdlen) {
  const std::uint32_t w1 = __builtin_bswap32((ttl << 16) | static_cast<std::uint32_t>(rdlen));
  std::memcpy(p, &word0, 8);
  std::memcpy(p + 8, &w1, 4);
}

// Writes the question section at out + 12 and returns the bytes the records may end at
// (the size limit less the OPT record's room), or 0 when the question and OPT record do
// not fit (write_response() handles that). The records start at 12 + qname + 4.
// REQUIRES: `out` has `capacity` bytes.
inline std::size_t direct_write_question(const QueryInfo& q, const ResponseOptions& o, std::uint8_t* out,
                                         std::size_t capacity) {
  const std::size_t limit = capacity < o.max_size ? capacity : o.max_size;
  const std::size_t question_end = 12 + q.qname.size() + 4;
  const std::size_t opt = o.edns ? 11 + o.edns_options.size() : 0;  // opt_record_size()
  if (question_end + opt > limit) return 0;
  copy_bytes(out + 12, q.qname.data(), q.qname.size());
  const std::uint32_t qtype_qclass = __builtin_bswap32((std::uint32_t{q.qtype} << 16) | q.qclass);
  std::memcpy(out + 12 + q.qname.size(), &qtype_qclass, 4);
  return limit - opt;
}

// Appends the OPT record (when options.edns) at `pos`, writes the 12-byte header (id,
// flags from the query and the entry's info byte, the section counts) and sets *result.
// `inserted`: the entry's insert time (ResponseOptions::ad_trusted_after).
inline void direct_write_header(std::uint8_t info, std::uint32_t inserted, const std::uint8_t counts[3],
                                const QueryInfo& q, const ResponseOptions& o, std::uint8_t* out, std::size_t pos,
                                ResponseResult* result) {
  const std::uint16_t from_query = q.flags & (wire::kOpcodeMask | wire::kFlagRd | wire::kFlagCd);
  std::uint16_t flags = static_cast<std::uint16_t>(wire::kFlagQr | wire::kFlagRa | from_query | (info & kInfoRcodeMask));
  if ((info & kInfoAuthenticData) && inserted > o.ad_trusted_after && (o.edns_do || (q.flags & wire::kFlagAd)))
    flags |= wire::kFlagAd;
  std::uint32_t additional = counts[2];
  if (o.edns) {
    pos += write_opt_record(o, out + pos);
    ++additional;
  }
  // |id|flags| and |qdcount 1|ancount|nscount|arcount|, big-endian, in two stores.
  const std::uint32_t id_flags = __builtin_bswap32((std::uint32_t{q.id} << 16) | flags);
  const std::uint64_t section_counts = __builtin_bswap64((std::uint64_t{1} << 48) | (std::uint64_t{counts[0]} << 32) |
                                                         (std::uint64_t{counts[1]} << 16) | additional);
  std::memcpy(out, &id_flags, 4);
  std::memcpy(out + 4, &section_counts, 8);
  *result = {pos, false};
}

}  // namespace dnsarena::cache
