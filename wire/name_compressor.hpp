// SPDX-License-Identifier: GPL-3.0-or-later
// Name compression (RFC 1035 section 4.1.4) for responses written from cache entries.
//
// Purpose: a response must not be larger than the authoritative server's for the same
// records, or a client at a small UDP size gets TC where the server's answer fitted.
// Every name the wire format lets us compress is: owners, and the names inside the rdata
// of NS, CNAME, PTR, MX and SOA (RFC 3597 section 4 freezes that list: SRV, DNAME,
// NAPTR, RRSIG and NSEC names are written whole, as their RFCs require).
//
// How: the compressor remembers where names were written in the message (the start of
// every label written in full, so every suffix is a target). To write a name it looks for
// the longest suffix already in the message, writes the labels before it and a 2-byte
// pointer. Targets are compared case-insensitively by walking the message (following
// pointers, which always point backwards, so the walk ends).
//
// Costs: a table of kMaxTargets offsets on the stack; writing a name of L labels against
// T targets costs at most L*T name comparisons of a few bytes. Owners equal to the qname
// never get here (the writer points them at the question directly).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "constants.hpp"

namespace dnsarena::wire {

// The rdata of `type` with names the writer may compress, as (prefix bytes, names, suffix
// bytes): MX is 2 bytes then a name; SOA two names then 20 bytes; NS, CNAME, PTR one name.
struct CompressibleRdata {
  std::size_t prefix = 0;     // bytes copied before the first name
  unsigned names = 0;         // names that follow (0: not compressible)
};
inline CompressibleRdata compressible_rdata(std::uint16_t type) {
  switch (type) {
    case kTypeNs: case kTypeCname: case kTypePtr: return {0, 1};
    case kTypeMx: return {2, 1};   // preference, exchange
    case kTypeSoa: return {0, 2};  // mname, rname, then five u32
    default: return {};
  }
}

class NameCompressor {
public:
  static constexpr int kMaxTargets = 48;
  static constexpr std::size_t kMaxPointerOffset = 0x3FFF;

  explicit NameCompressor(std::uint8_t* message) : msg_(message) {}

  // Remembers the name written in full (or ending in a pointer) at `offset`.
  void add(std::size_t offset);

  // Writes `name` (uncompressed wire form, valid) at message + offset, compressed against
  // the names added so far, and adds what it wrote. Returns the bytes written.
  // REQUIRES: the buffer has name.size() bytes free at offset (the most it writes).
  std::size_t write(std::span<const std::uint8_t> name, std::size_t offset);

  // Writes the rdata of a record of `type` at message + offset, its names compressed
  // when the type allows (compressible_rdata above); rdata whose names do not parse, and
  // every other type, is copied verbatim. Returns the bytes written (the RDLENGTH).
  // REQUIRES: rdata.size() bytes free at offset; rdata does not overlap the message.
  std::size_t write_rdata(std::uint16_t type, std::span<const std::uint8_t> rdata, std::size_t offset);

private:
  // Offset of a message name equal (case aside) to the uncompressed suffix, or -1.
  int find(const std::uint8_t* suffix) const;
  bool equals_at(std::size_t offset, const std::uint8_t* name) const;

  std::uint8_t* msg_;
  std::uint16_t targets_[kMaxTargets];
  int count_ = 0;
};

}  // namespace dnsarena::wire
