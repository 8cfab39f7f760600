// SPDX-License-Identifier: GPL-3.0-or-later
// Layout v1 = v0 + the published fleet's change 1: fixed-size boxed slices instead of growable
// vectors and strings. Every string and list is a pointer and a length (16 B instead of
// 24 B / 32 B), with exactly its elements on the heap: no capacity field, no spare
// capacity from push_back growth, no inline string buffer. Everything else is v0's,
// including the three section lists, the four booleans and the per-record owner.
#pragma once
#include <chrono>
#include <cstdint>
#include <variant>

#include "heap_keys.hpp"
#include "heap_response_writer.hpp"
#include "layout.hpp"
#include "rdata_model.hpp"

namespace dnsarena::sim::layouts::v1 {

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
  std::uint32_t ttl = 0;
  std::uint64_t hits = 0;
  BoxedSlice<Record> answer, authority, additional;
  BoxedSlice<ExtendedError> extended_errors;
  BoxedBytes ecs_reply;
  BoxedBytes zone;
  std::uint8_t rcode = 0;
  bool authentic_data = false;
  bool negative = false;
  bool stale = false;
};

static_assert(sizeof(RData) == 80, "v1 rdata: NAPTR (4 boxed strings of 16 B + 2 u16) and the variant index");
static_assert(sizeof(Record) == 104, "v1 record: owner 16 + class/type/ttl 8 + rdata 80");

struct Traits {
  static constexpr const char* kName = "v1";
  using Key = BoxedKey;
  using Value = Entry;
  static Entry make_value(const EntryInput& in, std::uint32_t now);
  static bool expired(const Entry& e, std::uint32_t now) {
    return entry_expired(static_cast<std::uint32_t>(e.created), e.ttl, now);
  }
  static cache::ResponseResult respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w);
};

}  // namespace dnsarena::sim::layouts::v1
