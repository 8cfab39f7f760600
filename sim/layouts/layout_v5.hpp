// SPDX-License-Identifier: GPL-3.0-or-later
// Layout v5 = v4 + the published fleet's change 5: record data as raw wire bytes. All records'
// rdata of an entry live in one allocation, each as a 2-byte big-endian length prefix and
// the wire bytes, built in a reused per-thread scratch buffer and copied once. A record
// keeps only its owner (elided when the qname), class, type and TTL; the response copies
// rdata straight from the blob (names inside stay uncompressed, as in cache/).
//
//   rdata blob:  | len0 (u16 BE) | rdata0 ... | len1 | rdata1 ... | ...   (records in order)
#pragma once
#include <chrono>
#include <cstdint>

#include "entry_flags.hpp"
#include "heap_keys.hpp"
#include "heap_response_writer.hpp"
#include "layout.hpp"

namespace dnsarena::sim::layouts::v5 {

struct Record {
  BoxedBytes owner;  // empty: the owner is the query name
  std::uint16_t rclass = 1;
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
};

struct ExtendedError {
  std::uint16_t code = 0;
  BoxedBytes text;
};

struct Entry {
  std::int64_t created = 0;
  std::chrono::steady_clock::time_point inception{};
  std::uint64_t hits = 0;
  BoxedSlice<Record> records;
  BoxedBytes rdata;  // see the blob diagram above
  BoxedSlice<ExtendedError> extended_errors;
  BoxedBytes ecs_reply;
  BoxedBytes zone;
  std::uint32_t ttl = 0;
  std::uint16_t authority_start = 0;
  std::uint16_t additional_start = 0;
  std::uint8_t flags = 0;
};

static_assert(sizeof(Record) == 24, "v5 record: owner 16 + class/type/ttl 8");
static_assert(sizeof(Entry) == 120, "v5 entry: v4's 104 + the rdata blob's 16");

struct Traits {
  static constexpr const char* kName = "v5";
  using Key = BoxedKey;
  using Value = Entry;
  static Entry make_value(const EntryInput& in, std::uint32_t now);
  static bool expired(const Entry& e, std::uint32_t now) {
    return entry_expired(static_cast<std::uint32_t>(e.created), e.ttl, now);
  }
  static cache::ResponseResult respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w);
};

}  // namespace dnsarena::sim::layouts::v5
