// SPDX-License-Identifier: GPL-3.0-or-later
// Layout v3 = v2 + the published fleet's change 3: a record's owner name is elided (empty, no heap
// bytes) when it equals the query name, and rebuilt from the key at read time (the
// response writes it as a pointer to the question). It is stored only when it differs,
// e.g. for the records behind a CNAME or the SOA of a negative answer.
#pragma once
#include <chrono>
#include <cstdint>
#include <variant>

#include "entry_flags.hpp"
#include "heap_keys.hpp"
#include "heap_response_writer.hpp"
#include "layout.hpp"
#include "rdata_model.hpp"

namespace dnsarena::sim::layouts::v3 {

using Model = RdataModel<BoxedBytes, BoxedSlice>;
using RData = std::variant<Model::A, Model::Aaaa, Model::Name, Model::Txt, Model::Mx, Model::Soa, Model::Naptr,
                           Model::Unknown>;

struct Record {
  BoxedBytes owner;  // empty: the owner is the query name
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
  BoxedSlice<Record> records;
  BoxedSlice<ExtendedError> extended_errors;
  BoxedBytes ecs_reply;
  BoxedBytes zone;
  std::uint32_t ttl = 0;
  std::uint16_t authority_start = 0;
  std::uint16_t additional_start = 0;
  std::uint8_t flags = 0;
};

static_assert(sizeof(Record) == 104 && sizeof(Entry) == 104, "v3 structs: as v2 (only heap bytes change)");

struct Traits {
  static constexpr const char* kName = "v3";
  using Key = BoxedKey;
  using Value = Entry;
  static Entry make_value(const EntryInput& in, std::uint32_t now);
  static bool expired(const Entry& e, std::uint32_t now) {
    return entry_expired(static_cast<std::uint32_t>(e.created), e.ttl, now);
  }
  static cache::ResponseResult respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w);
};

}  // namespace dnsarena::sim::layouts::v3
