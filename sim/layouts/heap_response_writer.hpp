// SPDX-License-Identifier: GPL-3.0-or-later
// The DNS response writer shared by the heap layouts (v0..v5).
//
// It writes exactly what cache::write_response (cache/response_writer.cpp) writes for
// the same entry, query and clock, so the differential test can demand byte-identical
// responses from every layout:
//   - 12-byte header: the query's ID; QR, RA, and opcode/RD/CD from the query; AD when
//     the entry had it and the query asked with DO (our OPT) or AD; the entry's rcode;
//   - the question as the client wrote it;
//   - records with their remaining TTLs; an owner equal to the qname is the pointer
//     0xC00C; other owners and the names in NS, CNAME, PTR, MX and SOA rdata are
//     compressed by wire::NameCompressor, as the arena's writer does;
//   - an OPT record when the query had EDNS;
//   - when the answer or authority records do not fit in min(capacity, max_size):
//     header, question and OPT only, with TC set and zero record counts; when only
//     additional records do not fit, they are left out without TC (the arena's writer
//     also sets TC for a referral's glue; the layouts hold no referrals, so that rule is
//     not repeated here).
// A layout calls add() for each record in section order, then finish().
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include <vector>

#include "cache/entry_codec.hpp"
#include "cache/response_writer.hpp"
#include "wire/name_compressor.hpp"

namespace dnsarena::sim::layouts {

class HeapResponseWriter {
public:
  HeapResponseWriter(const cache::QueryInfo& query, const cache::ResponseOptions& options, std::uint8_t* out,
                     std::size_t capacity);
  // False when not even the header, question and OPT fit (then finish() returns size 0).
  bool started() const { return started_; }

  // Appends one record whose rdata (rdlen bytes) write_rdata(dst) writes at dst.
  // owner_is_qname: the owner is the query name (owner is then ignored).
  template <class WriteRdata>
  void add(bool owner_is_qname, std::span<const std::uint8_t> owner, std::uint16_t type, std::uint16_t rclass,
           std::uint32_t ttl, std::size_t rdlen, WriteRdata&& write_rdata) {
    if (!started_ || !fits_) return;
    std::uint8_t* rdata = begin_record(owner_is_qname, owner, type, rclass, ttl, rdlen);
    if (!rdata) return;
    write_rdata(rdata);
    end_record(type, rdata, rdlen);
  }
  void add_bytes(bool owner_is_qname, std::span<const std::uint8_t> owner, std::uint16_t type, std::uint16_t rclass,
                 std::uint32_t ttl, std::span<const std::uint8_t> rdata);

  // Writes the counts (answer, authority, additional as the entry holds them), flags and OPT.
  cache::ResponseResult finish(std::uint8_t rcode, bool authentic_data, const std::uint16_t counts[3]);

private:
  std::uint8_t* begin_record(bool owner_is_qname, std::span<const std::uint8_t> owner, std::uint16_t type,
                             std::uint16_t rclass, std::uint32_t ttl, std::size_t rdlen);
  void end_record(std::uint16_t type, const std::uint8_t* rdata, std::size_t rdlen);

  const cache::QueryInfo& q_;
  const cache::ResponseOptions& o_;
  std::uint8_t* out_;
  wire::NameCompressor names_;
  std::vector<std::uint8_t> rdata_copy_;  // compressible rdata, moved aside to be rewritten
  std::size_t question_end_ = 0;
  std::size_t records_limit_ = 0;     // the client's limit, less the OPT
  std::size_t records_capacity_ = 0;  // the buffer, less the OPT
  std::size_t pos_ = 0;
  std::size_t last_record_end_ = 0;
  std::uint32_t written_ = 0;
  bool started_ = false;
  bool fits_ = true;
};

// The entry TTL rule of cache::encode_entry: answer.ttl, or the smallest record TTL when 0.
std::uint32_t entry_ttl_of(const cache::Answer& answer);
// The expiry rule of the arena: dead from created + ttl on (clamped to 32 bits).
inline bool entry_expired(std::uint32_t created, std::uint32_t ttl, std::uint32_t now) {
  const std::uint64_t expire = std::uint64_t{created} + ttl;
  return now >= (expire > 0xFFFFFFFFull ? 0xFFFFFFFFull : expire);
}

}  // namespace dnsarena::sim::layouts
