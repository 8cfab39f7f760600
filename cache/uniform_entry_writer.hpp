// SPDX-License-Identifier: GPL-3.0-or-later
// An entry of the simplest form written in place, record by record: a positive answer
// (rcode 0, no AD) whose records all are answer records at the qname, of the qtype,
// class IN, at the entry's TTL. The caller writes each record's rdata where add_record()
// points, so nothing is gathered into spans first (the fleet simulator: its answers are
// made of pool bytes, a TXT's length byte first).
//
// The bytes are exactly encode_entry_into()'s for the same answer (Answer.ttl = ttl, each
// RecordData {owner empty, type = qtype, class 1, ttl, rdata}): the same header, counts
// and descriptors (an A or AAAA rdata of its size elided to its descriptor, an rdata under
// 256 bytes with a one-byte length, else two), zero padding to 8 bytes
// (tests/cache/codec_test.cpp compares the two on every case).
// Cost: a few stores per record and the rdata's own bytes; no pass over the records to size
// the buffer (the caller gives the rdata total), no per-record tests of owner, type or class.
// FORMAT-DEPENDENT: writes the entry layout of entry_format.hpp.
//
//   UniformEntryWriter w(key, ttl, now, count, rdata_bytes, buf);
//   for each record: std::memcpy(w.add_record(len), rdata, len);
//   const std::size_t len = w.finish(&padded);   // buf[0, padded) is the entry; 0: too long
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cache_key.hpp"
#include "entry_format.hpp"

namespace dnsarena::cache {

static_assert(std::endian::native == std::endian::little, "expire and ttl are stored little-endian by memcpy");

class UniformEntryWriter {
public:
  // `count` records whose rdata add up to `rdata_bytes`; `buf` is only grown (never
  // shrunk or cleared). REQUIRES: key built (blob of at least kKeyFixedBytes).
  UniformEntryWriter(const CacheKey& key, std::uint32_t ttl, std::uint32_t now, std::size_t count,
                     std::size_t rdata_bytes, std::vector<std::uint8_t>& buf) {
    const auto blob = key.blob();
    qtype_ = key.qtype();
    implied_ = qtype_ == wire::kTypeA ? 4 : qtype_ == wire::kTypeAaaa ? 16 : 0;
    // Worst case: wide counts, a descriptor and a two-byte length per record, 8 bytes of
    // padding slack (the padding store below).
    const std::size_t worst = kEntryHeaderBytes + blob.size() + 6 + 3 * count + rdata_bytes + 8;
    if (buf.size() < worst) buf.resize(worst);
    base_ = buf.data();
    const bool wide = count > 255;
    base_[kEntryInfoOffset] = wide ? kInfoWideCounts : 0;
    base_[3] = 0;
    const std::uint64_t expire64 = std::uint64_t{now} + ttl;
    const std::uint32_t expire = expire64 > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<std::uint32_t>(expire64);
    const std::uint32_t stored_ttl = expire - now;
    std::memcpy(base_ + kEntryExpireOffset, &expire, 4);  // little-endian (x86-64)
    std::memcpy(base_ + kEntryTtlOffset, &stored_ttl, 4);
    std::memcpy(base_ + kEntryKeyOffset, blob.data(), blob.size());
    p_ = base_ + kEntryKeyOffset + blob.size();
    if (wide) {
      *p_++ = static_cast<std::uint8_t>(count >> 8);
      *p_++ = static_cast<std::uint8_t>(count);
      for (int i = 0; i < 4; ++i) *p_++ = 0;
    } else {
      *p_++ = static_cast<std::uint8_t>(count);
      *p_++ = 0;
      *p_++ = 0;
    }
  }
  // Where the next record's `rdlen` rdata bytes go. REQUIRES: at most `count` records
  // whose rdata add up to at most `rdata_bytes`.
  std::uint8_t* add_record(std::size_t rdlen) {
    constexpr std::uint8_t kAll = kDescOwnerIsQname | kDescTypeIsQtype | kDescTtlIsEntryTtl | kDescClassIn;
    if (implied_ != 0 && rdlen == implied_) {
      *p_++ = kAll | kDescRdlenImplied;
    } else if (rdlen < 256) {
      *p_++ = kAll | kDescRdlenU8;
      *p_++ = static_cast<std::uint8_t>(rdlen);
    } else {
      *p_++ = kAll;
      *p_++ = static_cast<std::uint8_t>(rdlen >> 8);
      *p_++ = static_cast<std::uint8_t>(rdlen);
    }
    std::uint8_t* at = p_;
    p_ += rdlen;
    return at;
  }

  // Writes the length and the zero padding; returns the unpadded length and sets
  // *padded, or returns 0 (and *padded 0) when the entry is longer than kMaxEntryBytes.
  std::size_t finish(std::size_t* padded) {
    const std::size_t len = static_cast<std::size_t>(p_ - base_);
    if (len > kMaxEntryBytes) {
      *padded = 0;
      return 0;
    }
    base_[kEntryLenOffset] = static_cast<std::uint8_t>(len);
    base_[kEntryLenOffset + 1] = static_cast<std::uint8_t>(len >> 8);
    std::memset(base_ + len, 0, 8);  // covers [len, padded): worst has 8 bytes of slack
    *padded = padded_entry_size(len);
    return len;
  }

private:
  std::uint8_t* base_;
  std::uint8_t* p_;
  std::uint16_t qtype_;
  std::size_t implied_;
};

}  // namespace dnsarena::cache
