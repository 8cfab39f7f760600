// SPDX-License-Identifier: GPL-3.0-or-later
// Test helpers: answers that own their bytes, and a record-by-record comparison of a
// decoded entry against the answer it was encoded from.
#pragma once
#include <catch2/catch.hpp>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "cache/entry_codec.hpp"
#include "cache/response_writer.hpp"
#include "common/bytes.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::test {

using common::Bytes;  // owned wire bytes (common/bytes.hpp)

inline Bytes wire_name(std::string_view text) { return wire::name_to_wire(text); }

inline Bytes bytes_of(std::initializer_list<int> v) {
  Bytes b;
  for (int x : v) b.push_back(static_cast<std::uint8_t>(x));
  return b;
}
inline Bytes text_bytes(std::string_view s) { return Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); }
inline void put_u16(Bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v));
}
inline void put_u32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}

// rdata builders for types with names inside.
inline Bytes mx_rdata(std::uint16_t pref, std::string_view exchange) {
  Bytes b;
  put_u16(b, pref);
  return b + wire_name(exchange);
}
inline Bytes srv_rdata(std::uint16_t prio, std::uint16_t weight, std::uint16_t port, std::string_view target) {
  Bytes b;
  put_u16(b, prio);
  put_u16(b, weight);
  put_u16(b, port);
  return b + wire_name(target);
}
inline Bytes soa_rdata(std::string_view mname, std::string_view rname, std::uint32_t serial, std::uint32_t minimum) {
  Bytes b = wire_name(mname) + wire_name(rname);
  for (std::uint32_t v : {serial, 7200u, 3600u, 1209600u, minimum}) put_u32(b, v);
  return b;
}
inline Bytes txt_rdata(std::string_view text) {
  Bytes b;
  b.push_back(static_cast<std::uint8_t>(text.size()));
  return b + text_bytes(text);
}

// The fixed clock (seconds) of tests that insert and read at one time.
inline constexpr std::uint32_t kNow = 1'700'000'000;

inline constexpr std::uint16_t kA = 1, kNS = 2, kCNAME = 5, kSOA = 6, kMX = 15, kTXT = 16, kAAAA = 28, kSRV = 33;

// An Answer whose records own their bytes (cache::Answer only holds spans).
class OwnedAnswer {
public:
  std::uint8_t rcode = 0;
  bool authentic_data = false;
  std::uint32_t ttl = 0;

  // `owner` empty = the query name.
  OwnedAnswer& add(cache::Section s, Bytes owner, std::uint16_t type, std::uint32_t rttl, Bytes rdata,
                   std::uint16_t rclass = 1) {
    store_.push_back(std::move(owner));
    const Bytes& o = store_.back();
    store_.push_back(std::move(rdata));
    const Bytes& r = store_.back();
    cache::RecordData rec;
    rec.owner = {o.data(), o.size()};
    rec.type = type;
    rec.rclass = rclass;
    rec.ttl = rttl;
    rec.rdata = {r.data(), r.size()};
    records_[s].push_back(rec);
    return *this;
  }
  cache::Answer answer() const {
    cache::Answer a;
    a.rcode = rcode;
    a.authentic_data = authentic_data;
    a.ttl = ttl;
    for (unsigned s = 0; s < 3; ++s) a.sections[s] = records_[s];
    return a;
  }
  const std::vector<cache::RecordData>& section(unsigned s) const { return records_[s]; }

private:
  std::deque<Bytes> store_;  // deque: references stay valid as it grows
  std::vector<cache::RecordData> records_[3];
};

inline Bytes lower(std::span<const std::uint8_t> name) {
  Bytes b(name.begin(), name.end());
  for (auto& c : b) c = wire::ascii_lower(c);
  return b;
}
inline std::string hex_of(std::span<const std::uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto c : b) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

// REQUIREs that `entry` decodes to exactly the records of `a` (in order), for a key whose
// lowercase qname is `qname`: owners (elided or stored, lowercased), types, classes, TTLs
// as inserted, rdata byte-exact, section counts, rcode, AD.
inline void require_entry_matches(std::span<const std::uint8_t> entry, std::span<const std::uint8_t> qname,
                                  const cache::Answer& a) {
  cache::EntryReader r(entry);
  REQUIRE(r.valid());
  REQUIRE(r.validate_all());
  REQUIRE(r.rcode() == a.rcode);
  REQUIRE(r.authentic_data() == a.authentic_data);
  REQUIRE(lower(r.qname()) == lower(qname));
  for (unsigned s = 0; s < 3; ++s) REQUIRE(r.count(static_cast<cache::Section>(s)) == a.sections[s].size());
  cache::RecordView v;
  for (unsigned s = 0; s < 3; ++s) {
    for (std::size_t i = 0; i < a.sections[s].size(); ++i) {
      const cache::RecordData& want = a.sections[s][i];
      INFO("section " << s << " record " << i);
      REQUIRE(r.next(v));
      const bool want_owner_q = want.owner.empty() || wire::wire_names_equal_ci(want.owner, qname);
      REQUIRE(v.owner_is_qname == want_owner_q);
      REQUIRE(hex_of(v.owner) == hex_of(want_owner_q ? lower(qname) : lower(want.owner)));
      REQUIRE(v.type == want.type);
      REQUIRE(v.rclass == want.rclass);
      REQUIRE(v.ttl == want.ttl);
      REQUIRE(hex_of(v.rdata) == hex_of(want.rdata));
    }
  }
  REQUIRE_FALSE(r.next(v));
  REQUIRE(r.records_valid());
}

// Response options that reach every branch of write_response, picked by r: EDNS or not,
// a client limit that forces TC or drops additional records, RFC 8482 mode, a tiny
// buffer; with `edns_option`, also EDNS with an ECS option (kept in *edns_option).
inline cache::ResponseOptions varied_response_options(std::uint64_t r, std::size_t* capacity,
                                                      Bytes* edns_option = nullptr) {
  cache::ResponseOptions o;
  *capacity = 4096;
  switch (r % (edns_option ? 7 : 6)) {
    case 0: break;
    case 1: o.edns = true; o.edns_do = true; break;
    case 2: o.max_size = 512; break;
    case 3: o.max_size = 60 + r % 80; o.edns = true; break;
    case 4: o.one_answer_rrset = true; break;
    case 6:
      o.edns = true;
      *edns_option = bytes_of({0, 8, 0, 7, 0, 1, 24, 0, 198, 51, 100});  // ECS 198.51.100.0/24
      o.edns_options = *edns_option;
      break;
    default: *capacity = 20 + r % 120; break;
  }
  return o;
}

}  // namespace dnsarena::test
