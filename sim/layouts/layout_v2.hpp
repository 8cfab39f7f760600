// SPDX-License-Identifier: GPL-3.0-or-later
// Layout v2 = v1 + the published fleet's change 2: answer, authority and additional in one record
// list with two u16 section offsets (instead of three pointer+length lists), and the
// booleans and rcode packed into one flag byte (entry_flags.hpp), which also removes
// padding. Records are v1's: owner always stored, rdata a NAPTR-sized variant.
#pragma once
#include <chrono>
#include <cstdint>
#include <variant>

#include "entry_flags.hpp"
#include "heap_keys.hpp"
#include "heap_response_writer.hpp"
#include "layout.hpp"
#include "rdata_model.hpp"

namespace dnsarena::sim::layouts::v2 {

using Model = RdataModel<BoxedBytes, BoxedSlice>;
using RData = std::variant<Model::A, Model::Aaaa, Model::Name, Model::Txt, Model::Mx, Model::Soa, Model::Naptr,
                           Model::Unknown>;

struct Record {
  BoxedBytes owner;  // always stored
  std::uint16_t rclass = 1;
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
  RData rdata;
};

struct ExtendedError {
  std::uint16_t code = 0;
  BoxedBytes text;
};

struct Entry {
  std::int64_t created = 0;
  std::chrono::steady_clock::time_point inception{};
  std::uint64_t hits = 0;
  BoxedSlice<Record> records;          // answer, then authority, then additional
  BoxedSlice<ExtendedError> extended_errors;
  BoxedBytes ecs_reply;
  BoxedBytes zone;
  std::uint32_t ttl = 0;
  std::uint16_t authority_start = 0;   // index of the first authority record
  std::uint16_t additional_start = 0;  // index of the first additional record
  std::uint8_t flags = 0;              // entry_flags.hpp
};

static_assert(sizeof(Record) == 104, "v2 record: as v1");
static_assert(sizeof(Entry) == 104, "v2 entry: 3 x 8 + 4 slices x 16 + ttl 4 + offsets 4 + flags 1, padded to 8");

struct Traits {
  static constexpr const char* kName = "v2";
  using Key = BoxedKey;
  using Value = Entry;
  static Entry make_value(const EntryInput& in, std::uint32_t now);
  static bool expired(const Entry& e, std::uint32_t now) {
    return entry_expired(static_cast<std::uint32_t>(e.created), e.ttl, now);
  }
  static cache::ResponseResult respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w);
};

}  // namespace dnsarena::sim::layouts::v2
