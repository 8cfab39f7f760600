// SPDX-License-Identifier: GPL-3.0-or-later
// The one-record-list entry shared by layouts v2, v3 and v4 (the published fleet's change 2): the
// records of all three sections in one boxed slice, with two u16 section starts and the
// flags packed in a byte. The three layouts differ in their types (see their headers)
// and in two policies only, passed in here:
//   OwnerStorage   v2 stores every owner; v3 and v4 leave it empty when it is the qname
//                  (change 3) and rebuild it from the key when answering;
//   to_rdata       how a parsed rdata alternative becomes the layout's RData: held inline
//                  (v2, v3) or boxed unless it is A/AAAA (v4, change 4).
#pragma once
#include <chrono>
#include <cstdint>
#include <span>
#include <utility>

#include "entry_flags.hpp"
#include "heap_response_writer.hpp"
#include "layout.hpp"
#include "rdata_model.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::layouts {

enum class OwnerStorage { always, elide_qname };

template <class Model, class Entry, class ToRdata>
Entry make_single_list_entry(const EntryInput& in, std::uint32_t now, OwnerStorage owners, ToRdata&& to_rdata) {
  const cache::Answer& a = *in.answer;
  Entry e;
  e.created = now;
  e.inception = std::chrono::steady_clock::time_point(std::chrono::seconds(now));
  e.ttl = entry_ttl_of(a);
  e.flags = pack_entry_flags(a.rcode, a.authentic_data, a.sections[cache::kAnswer].empty());
  const std::size_t n0 = a.sections[0].size(), n1 = a.sections[1].size(), n2 = a.sections[2].size();
  e.authority_start = static_cast<std::uint16_t>(n0);
  e.additional_start = static_cast<std::uint16_t>(n0 + n1);
  e.records = decltype(e.records)(n0 + n1 + n2);
  std::size_t i = 0;
  for (const auto& sec : a.sections)
    for (const cache::RecordData& r : sec) {
      auto& rec = e.records[i++];
      if (owners == OwnerStorage::always)
        rec.owner = BoxedBytes(r.owner.empty() ? in.qname : r.owner);
      else if (!r.owner.empty() && !wire::wire_names_equal_ci(r.owner, in.qname))
        rec.owner = BoxedBytes(r.owner);
      rec.rclass = r.rclass;
      rec.type = r.type;
      rec.ttl = r.ttl;
      rec.rdata = parse_rdata<Model>(r.type, r.rdata, to_rdata);
    }
  return e;
}

template <class Model, class Entry>
cache::ResponseResult respond_single_list(std::span<const std::uint8_t> qname, Entry& e, std::uint32_t now,
                                          OwnerStorage owners, HeapResponseWriter& w) {
  using Wire = RdataWire<Model>;
  ++e.hits;
  const auto created = static_cast<std::uint32_t>(e.created);
  for (const auto& r : e.records) {
    const auto owner = r.owner.span();
    const bool owner_is_qname =
        owners == OwnerStorage::always ? wire::wire_names_equal_ci(owner, qname) : r.owner.empty();
    w.add(owner_is_qname, owner, r.type, r.rclass, cache::remaining_ttl(r.ttl, created, now),
          Wire::variant_size(r.rdata), [&](std::uint8_t* p) { Wire::variant_write(r.rdata, p); });
  }
  const std::uint16_t counts[3] = {e.authority_start, static_cast<std::uint16_t>(e.additional_start - e.authority_start),
                                   static_cast<std::uint16_t>(e.records.size() - e.additional_start)};
  return w.finish(e.flags & kRcodeMask, (e.flags & kFlagAuthenticData) != 0, counts);
}

}  // namespace dnsarena::sim::layouts
