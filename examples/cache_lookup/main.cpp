// SPDX-License-Identifier: GPL-3.0-or-later
// A resolver's use of the installed dnsarena::cache: create a segment, insert an answer,
// look it up, answer a query from the cache. Exits 0 when every step agrees.
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <dnsarena/cache/cache.hpp>
#include <dnsarena/wire/constants.hpp>
#include <dnsarena/wire/dns_name.hpp>
#include <string>

namespace dc = dnsarena::cache;
namespace wire = dnsarena::wire;

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "cache_lookup: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  // A private segment for this process: removed when `seg` goes away.
  const std::string name = "dnsarena-example-" + std::to_string(::getpid());
  dc::Geometry g;
  g.max_entries = 1000;
  g.arena_bytes = 4u << 20;
  g.region_bytes = 1u << 20;
  dc::Segment seg = dc::Segment::create(name, g);
  seg.set_remove_on_destroy(true);
  dc::Cache cache(seg);

  // www.example.com. 300 IN A 192.0.2.1
  const auto qname = wire::name_to_wire("www.example.com.");
  const std::array<std::uint8_t, 4> address = {192, 0, 2, 1};
  const dc::RecordData record{.owner = {}, .type = wire::kTypeA, .rclass = wire::kClassIn, .ttl = 300, .rdata = address};
  dc::Answer answer;
  answer.ttl = 300;
  answer.sections[dc::kAnswer] = {&record, 1};

  const dc::CacheKey key({qname.data(), qname.size()}, wire::kTypeA);
  const std::uint32_t now = dc::wall_clock_now();
  if (cache.insert(key, answer, now) != dc::InsertStatus::inserted) return fail("insert was not accepted");

  dc::EntryCopy copy;
  if (cache.lookup(key, now + 10, copy) != dc::LookupStatus::hit) return fail("lookup missed");
  dc::EntryReader entry(copy.span());
  dc::RecordView rec;
  if (!entry.valid() || !entry.next(rec)) return fail("the entry does not decode");
  if (rec.type != wire::kTypeA || rec.rdata.size() != 4 || rec.rdata[3] != 1) return fail("wrong record");

  // The response a worker would send, straight from the cache.
  dc::QueryInfo query;
  query.id = 0x1234;
  query.qname = {qname.data(), qname.size()};
  query.qtype = wire::kTypeA;
  std::array<std::uint8_t, 512> out{};
  const dc::ResponseResult r = cache.lookup_response(key, query, now + 10, dc::ResponseOptions{}, out.data(), out.size());
  if (r.size == 0 || r.truncated) return fail("no response written");
  const unsigned ancount = (out[6] << 8) | out[7];
  if (out[0] != 0x12 || out[1] != 0x34 || ancount != 1) return fail("wrong response header");

  const dc::CacheKey other({qname.data(), qname.size()}, wire::kTypeAaaa);  // never inserted
  if (cache.lookup(other, now, copy) != dc::LookupStatus::miss) return fail("AAAA should miss");

  const dc::CacheStats st = cache.stats();
  std::printf("cache_lookup: inserted and found www.example.com. A 192.0.2.1 (TTL %u); response %zu bytes; "
              "%llu live entry, %.0f bytes/entry\n",
              rec.ttl, r.size, static_cast<unsigned long long>(st.live_entries), st.bytes_per_entry());
  return 0;
}
