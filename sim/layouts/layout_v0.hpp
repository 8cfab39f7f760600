// SPDX-License-Identifier: GPL-3.0-or-later
// Layout v0, the published fleet's "before" shape: every list and string is growable.
//
// The entry carries creation time, inception instant, TTL, hit counter, rcode and four
// separate booleans, and eight growable fields (std::vector 24 B / std::string 32 B,
// each with a capacity): key name, key tag, answer, authority, additional, extended
// errors, the ECS option echoed back, the zone the answer came from. Lists are filled
// with push_back, so they keep the spare capacity of their growth (1, 2, 4, ...).
// Each record has its own owner string (a copy of the qname for most records), class,
// type, TTL, and rdata as a std::variant holding every alternative inline: as large as
// a NAPTR (three strings, a name, two integers: 136 B, 144 B with the tag), even for an A.
#pragma once
#include <chrono>
#include <cstdint>
#include <variant>

#include "heap_keys.hpp"
#include "heap_response_writer.hpp"
#include "layout.hpp"
#include "rdata_model.hpp"

namespace dnsarena::sim::layouts::v0 {

using Model = RdataModel<CString, CVector>;
using RData = std::variant<Model::A, Model::Aaaa, Model::Name, Model::Txt, Model::Mx, Model::Soa, Model::Naptr,
                           Model::Unknown>;

struct Record {
  CString owner;  // always stored, even when it is the qname
  std::uint16_t rclass = 1;
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
  RData rdata;
};

struct ExtendedError {
  std::uint16_t code = 0;
  CString text;
};

struct Entry {
  std::int64_t created = 0;                           // wall-clock seconds at insert
  std::chrono::steady_clock::time_point inception{};  // when the answer arrived
  std::uint32_t ttl = 0;
  std::uint64_t hits = 0;
  CVector<Record> answer, authority, additional;
  CVector<ExtendedError> extended_errors;
  CVector<std::uint8_t> ecs_reply;  // the ECS option to echo (empty in the generated mix)
  CString zone;                     // the zone the answer came from (empty in the mix)
  std::uint8_t rcode = 0;
  bool authentic_data = false;
  bool negative = false;
  bool stale = false;
};

static_assert(sizeof(RData) == 144, "v0 rdata: NAPTR (4 strings of 32 B + 2 u16) and the variant index");
static_assert(sizeof(Record) == 184, "v0 record: owner 32 + class/type/ttl 8 + rdata 144");

struct Traits {
  static constexpr const char* kName = "v0";
  using Key = GrowableKey;
  using Value = Entry;
  static Entry make_value(const EntryInput& in, std::uint32_t now);
  static bool expired(const Entry& e, std::uint32_t now) {
    return entry_expired(static_cast<std::uint32_t>(e.created), e.ttl, now);
  }
  static cache::ResponseResult respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w);
};

}  // namespace dnsarena::sim::layouts::v0
