// SPDX-License-Identifier: GPL-3.0-or-later
// Layout v4 = v3 + the published fleet's change 4: the rdata variant keeps only A (4 B) and AAAA
// (16 B) inline; every larger alternative (name, TXT, MX, SOA, NAPTR, unknown) is boxed
// behind one pointer. The variant shrinks from NAPTR size to 24 B, so an A or AAAA
// record saves 56 B here; a boxed alternative costs one more allocation, rounded up to
// the allocator's size class, and one more pointer to chase at read time.
#pragma once
#include <chrono>
#include <cstdint>
#include <variant>

#include "entry_flags.hpp"
#include "heap_keys.hpp"
#include "heap_response_writer.hpp"
#include "layout.hpp"
#include "rdata_model.hpp"

namespace dnsarena::sim::layouts::v4 {

using Model = RdataModel<BoxedBytes, BoxedSlice>;
using RData = std::variant<Model::A, Model::Aaaa, Box<Model::Name>, Box<Model::Txt>, Box<Model::Mx>, Box<Model::Soa>,
                           Box<Model::Naptr>, Box<Model::Unknown>>;

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

static_assert(sizeof(RData) == 24, "v4 rdata: AAAA (16 B) or a pointer, and the variant index");
static_assert(sizeof(Record) == 48, "v4 record: owner 16 + class/type/ttl 8 + rdata 24");

struct Traits {
  static constexpr const char* kName = "v4";
  using Key = BoxedKey;
  using Value = Entry;
  static Entry make_value(const EntryInput& in, std::uint32_t now);
  static bool expired(const Entry& e, std::uint32_t now) {
    return entry_expired(static_cast<std::uint32_t>(e.created), e.ttl, now);
  }
  static cache::ResponseResult respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w);
};

}  // namespace dnsarena::sim::layouts::v4
