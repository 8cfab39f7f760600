// SPDX-License-Identifier: GPL-3.0-or-later
#include "layout_v5.hpp"

#include <vector>

#include "heap_layout.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::layouts {
namespace v5 {

Entry Traits::make_value(const EntryInput& in, std::uint32_t now) {
  // Reused across inserts (not per entry, so not counted): the published fleet's scratch buffer.
  static thread_local std::vector<std::uint8_t> scratch;
  scratch.clear();
  const cache::Answer& a = *in.answer;
  Entry e;
  e.created = now;
  e.inception = std::chrono::steady_clock::time_point(std::chrono::seconds(now));
  e.ttl = entry_ttl_of(a);
  e.flags = pack_entry_flags(a.rcode, a.authentic_data, a.sections[cache::kAnswer].empty());
  const std::size_t n0 = a.sections[0].size(), n1 = a.sections[1].size(), n2 = a.sections[2].size();
  e.authority_start = static_cast<std::uint16_t>(n0);
  e.additional_start = static_cast<std::uint16_t>(n0 + n1);
  e.records = BoxedSlice<Record>(n0 + n1 + n2);
  std::size_t i = 0;
  for (const auto& sec : a.sections)
    for (const cache::RecordData& r : sec) {
      Record& rec = e.records[i++];
      if (!r.owner.empty() && !wire::wire_names_equal_ci(r.owner, in.qname)) rec.owner = BoxedBytes(r.owner);
      rec.rclass = r.rclass;
      rec.type = r.type;
      rec.ttl = r.ttl;
      scratch.push_back(static_cast<std::uint8_t>(r.rdata.size() >> 8));
      scratch.push_back(static_cast<std::uint8_t>(r.rdata.size()));
      scratch.insert(scratch.end(), r.rdata.begin(), r.rdata.end());
    }
  e.rdata = BoxedBytes(std::span<const std::uint8_t>(scratch));
  return e;
}

cache::ResponseResult Traits::respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w) {
  ++e.hits;
  (void)key;
  const auto created = static_cast<std::uint32_t>(e.created);
  const std::uint8_t* p = e.rdata.data();
  for (const Record& r : e.records) {
    const std::size_t len = static_cast<std::size_t>((p[0] << 8) | p[1]);
    w.add_bytes(r.owner.empty(), r.owner.span(), r.type, r.rclass, cache::remaining_ttl(r.ttl, created, now),
                {p + 2, len});
    p += 2 + len;
  }
  const std::uint16_t counts[3] = {e.authority_start, static_cast<std::uint16_t>(e.additional_start - e.authority_start),
                                   static_cast<std::uint16_t>(e.records.size() - e.additional_start)};
  return w.finish(e.flags & kRcodeMask, (e.flags & kFlagAuthenticData) != 0, counts);
}

}  // namespace v5

std::unique_ptr<Layout> make_layout_v5() { return make_heap_layout<v5::Traits>(); }

}  // namespace dnsarena::sim::layouts
