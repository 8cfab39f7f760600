#include "layout_v3.hpp"

#include "cache/dns_name.hpp"
#include "heap_layout.hpp"

namespace dnsarena::sim::layouts {
namespace v3 {

namespace {
using Wire = RdataWire<Model>;
}  // namespace

Entry Traits::make_value(const EntryInput& in, std::uint32_t now) {
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
      if (!r.owner.empty() && !cache::wire_names_equal_ci(r.owner, in.qname)) rec.owner = BoxedBytes(r.owner);
      rec.rclass = r.rclass;
      rec.type = r.type;
      rec.ttl = r.ttl;
      rec.rdata = parse_rdata<Model>(r.type, r.rdata, [](auto&& alt) { return RData(std::move(alt)); });
    }
  return e;
}

cache::ResponseResult Traits::respond(const Key& key, Entry& e, std::uint32_t now, HeapResponseWriter& w) {
  ++e.hits;
  (void)key;
  const auto created = static_cast<std::uint32_t>(e.created);
  for (const Record& r : e.records)
    w.add(r.owner.empty(), r.owner.span(), r.type, r.rclass, cache::remaining_ttl(r.ttl, created, now),
          Wire::variant_size(r.rdata), [&](std::uint8_t* p) { Wire::variant_write(r.rdata, p); });
  const std::uint16_t counts[3] = {e.authority_start, static_cast<std::uint16_t>(e.additional_start - e.authority_start),
                                   static_cast<std::uint16_t>(e.records.size() - e.additional_start)};
  return w.finish(e.flags & kRcodeMask, (e.flags & kFlagAuthenticData) != 0, counts);
}

}  // namespace v3

std::unique_ptr<Layout> make_layout_v3() { return make_heap_layout<v3::Traits>(); }

}  // namespace dnsarena::sim::layouts
