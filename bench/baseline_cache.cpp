// SPDX-License-Identifier: GPL-3.0-or-later
#include "baseline_cache.hpp"

#include <cstring>

#include "wire/constants.hpp"

namespace dnsarena::bench {

namespace {

using wire::put16;

std::string as_string(std::span<const std::uint8_t> s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }

}  // namespace

void BaselineCache::insert(const cache::CacheKey& key, const cache::Answer& answer, std::uint32_t now) {
  BaselineEntry e;
  e.inserted = now;
  e.rcode = answer.rcode;
  e.authentic_data = answer.authentic_data;
  e.ttl = answer.ttl;
  for (int s = 0; s < 3; ++s) {
    for (const cache::RecordData& r : answer.sections[s]) {
      BaselineRecord rec;
      rec.owner = r.owner.empty() ? as_string(key.qname()) : as_string(r.owner);
      rec.type = r.type;
      rec.rclass = r.rclass;
      rec.ttl = r.ttl;
      if (r.type == wire::kTypeA && r.rdata.size() == 4) {
        std::array<std::uint8_t, 4> a;
        std::memcpy(a.data(), r.rdata.data(), 4);
        rec.rdata = a;
      } else if (r.type == wire::kTypeAaaa && r.rdata.size() == 16) {
        std::array<std::uint8_t, 16> a;
        std::memcpy(a.data(), r.rdata.data(), 16);
        rec.rdata = a;
      } else {
        rec.rdata = as_string(r.rdata);
      }
      e.sections[s].push_back(std::move(rec));
    }
  }
  map_[as_string(key.blob())] = std::move(e);
}

std::size_t BaselineCache::lookup_response(const cache::CacheKey& key, const cache::QueryInfo& q, std::uint32_t now,
                                           std::uint8_t* out, std::size_t capacity) {
  auto it = map_.find(as_string(key.blob()));
  if (it == map_.end()) return 0;
  BaselineEntry& e = it->second;
  if (now >= e.inserted + e.ttl) return 0;
  ++e.hits;
  const std::size_t qend = 12 + q.qname.size() + 4;
  if (qend > capacity) return 0;
  put16(out, q.id);
  put16(out + 2, static_cast<std::uint16_t>(wire::kFlagQr | wire::kFlagRa | (q.flags & wire::kFlagRd) | e.rcode));
  put16(out + 4, 1);
  std::memcpy(out + 12, q.qname.data(), q.qname.size());
  put16(out + 12 + q.qname.size(), q.qtype);
  put16(out + 14 + q.qname.size(), q.qclass);
  std::size_t pos = qend;
  const std::string qname = as_string(key.qname());
  for (int s = 0; s < 3; ++s) {
    put16(out + 6 + 2 * s, static_cast<std::uint16_t>(e.sections[s].size()));
    for (const BaselineRecord& r : e.sections[s]) {
      const std::uint8_t* rd;
      std::size_t rdlen;
      if (auto* a = std::get_if<std::array<std::uint8_t, 4>>(&r.rdata)) rd = a->data(), rdlen = 4;
      else if (auto* b = std::get_if<std::array<std::uint8_t, 16>>(&r.rdata)) rd = b->data(), rdlen = 16;
      else if (auto* t = std::get_if<std::string>(&r.rdata)) rd = reinterpret_cast<const std::uint8_t*>(t->data()), rdlen = t->size();
      else return 0;
      const bool ptr = r.owner == qname;
      const std::size_t need = (ptr ? 2 : r.owner.size()) + 10 + rdlen;
      if (pos + need > capacity) return 0;
      if (ptr) put16(out + pos, 0xC00C), pos += 2;
      else std::memcpy(out + pos, r.owner.data(), r.owner.size()), pos += r.owner.size();
      put16(out + pos, r.type);
      put16(out + pos + 2, r.rclass);
      const std::uint32_t left = cache::remaining_ttl(r.ttl, e.inserted, now);
      put16(out + pos + 4, static_cast<std::uint16_t>(left >> 16));
      put16(out + pos + 6, static_cast<std::uint16_t>(left));
      put16(out + pos + 8, static_cast<std::uint16_t>(rdlen));
      pos += 10;
      std::memcpy(out + pos, rd, rdlen);
      pos += rdlen;
    }
  }
  return pos;
}

}  // namespace dnsarena::bench
