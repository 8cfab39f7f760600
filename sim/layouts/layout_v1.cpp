// SPDX-License-Identifier: GPL-3.0-or-later
#include "layout_v1.hpp"

#include "heap_layout.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::layouts {
namespace v1 {

namespace {
using Wire = RdataWire<Model>;

BoxedSlice<Record> make_section(std::span<const cache::RecordData> records, std::span<const std::uint8_t> qname) {
  BoxedSlice<Record> list(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    const cache::RecordData& r = records[i];
    Record& rec = list[i];
    rec.owner = BoxedBytes(r.owner.empty() ? qname : r.owner);
    rec.rclass = r.rclass;
    rec.type = r.type;
    rec.ttl = r.ttl;
    rec.rdata = parse_rdata<Model>(r.type, r.rdata, [](auto&& alt) { return RData(std::move(alt)); });
  }
  return list;
}

void write_section(const BoxedSlice<Record>& list, std::span<const std::uint8_t> qname, std::uint32_t created,
                   std::uint32_t now, HeapResponseWriter& w) {
  for (const Record& r : list) {
    const auto owner = r.owner.span();
    w.add(wire::wire_names_equal_ci(owner, qname), owner, r.type, r.rclass, cache::remaining_ttl(r.ttl, created, now),
          Wire::variant_size(r.rdata), [&](std::uint8_t* p) { Wire::variant_write(r.rdata, p); });
  }
}
}  // namespace

Entry Traits::make_value(const EntryInput& in, std::uint32_t now) {
  const cache::Answer& a = *in.answer;
  Entry e;
  e.created = now;
  e.inception = std::chrono::steady_clock::time_point(std::chrono::seconds(now));
  e.ttl = entry_ttl_of(a);
  e.rcode = a.rcode;
  e.authentic_data = a.authentic_data;
  e.negative = a.sections[cache::kAnswer].empty();
  e.answer = make_section(a.sections[cache::kAnswer], in.qname);
  e.authority = make_section(a.sections[cache::kAuthority], in.qname);
  e.additional = make_section(a.sections[cache::kAdditional], in.qname);
  return e;
}

cache::ResponseResult Traits::respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w) {
  ++e.hits;
  const auto qname = key.name.span();
  const auto created = static_cast<std::uint32_t>(e.created);
  write_section(e.answer, qname, created, now, w);
  write_section(e.authority, qname, created, now, w);
  write_section(e.additional, qname, created, now, w);
  const std::uint16_t counts[3] = {static_cast<std::uint16_t>(e.answer.size()),
                                   static_cast<std::uint16_t>(e.authority.size()),
                                   static_cast<std::uint16_t>(e.additional.size())};
  return w.finish(e.rcode, e.authentic_data, counts);
}

}  // namespace v1

std::unique_ptr<Layout> make_layout_v1() { return make_heap_layout<v1::Traits>(); }

}  // namespace dnsarena::sim::layouts
