// SPDX-License-Identifier: GPL-3.0-or-later
#include "entry_generator.hpp"

#include <algorithm>

namespace dnsarena::sim {

namespace {
const Bytes kZoneApex = {4, 'z', 'o', 'n', 'e', 0};
}  // namespace

cache::Answer GeneratedEntry::answer(std::vector<cache::RecordData>& records) const {
  records.clear();
  cache::Answer a;
  a.ttl = ttl;
  a.rcode = rcode;
  if (negative) {
    records.push_back(soa_record(kZoneApex, ttl, soa_rdata));
    a.sections[cache::kAuthority] = records;
    return a;
  }
  if (!cname_target.empty()) {
    cache::RecordData c;
    c.type = 5;
    c.ttl = ttl;
    c.rdata = cname_target;
    records.push_back(c);
  }
  for (const Bytes& rd : rdatas) {
    cache::RecordData r;
    r.owner = cname_target;  // empty = the qname
    r.type = qtype;
    r.ttl = ttl;
    r.rdata = rd;
    records.push_back(r);
  }
  a.sections[cache::kAnswer] = records;
  return a;
}

EntryGenerator::EntryGenerator(const TrafficProfile& profile, std::uint64_t seed)
    : profile_(profile),
      ttl_min_(profile.ttl.lowest()),
      ttl_max_(profile.ttl.highest()),
      ecs_subnets_(std::max<std::uint32_t>(1, profile.ecs_subnets)),
      txt_min_bytes_(std::min(256u, profile.other_rdata_min)),
      txt_max_bytes_(std::min(256u, profile.other_rdata_max)),
      seed_(seed) {}

void EntryGenerator::generate(std::uint64_t i, GeneratedEntry& out) const {
  SplitMix64 rng(seed_ * 0x9E3779B97F4A7C15ULL ^ (i + 1) * 0xD1B54A32D192ED03ULL);
  out.qname.clear();
  const TrafficProfile& p = profile_;
  const unsigned labels = static_cast<unsigned>(rng.range(p.labels_min, p.labels_max));
  for (unsigned l = 0; l < labels; ++l) {
    const unsigned len = static_cast<unsigned>(rng.range(p.label_bytes_min, p.label_bytes_max));
    out.qname.push_back(static_cast<std::uint8_t>(len));
    for (unsigned c = 0; c < len; ++c) out.qname.push_back(static_cast<std::uint8_t>('a' + rng.next() % 26));
  }
  out.qname.push_back(0);
  const double u = rng.unit() * (p.share_a + p.share_aaaa + p.share_other);
  out.qtype = u < p.share_a ? wire::kTypeA : u < p.share_a + p.share_aaaa ? wire::kTypeAaaa : 16;
  out.ttl = static_cast<std::uint32_t>(rng.range(ttl_min_, ttl_max_));
  // Optional traits; each draws from the stream only when its share is non-zero, so the
  // published mix (all shares 0) stays exactly as it was.
  out.ecs = cache::EcsTag{};
  out.negative = false;
  out.rcode = 0;
  out.cname_target.clear();
  out.soa_rdata.clear();
  if (p.ecs_share > 0 && rng.unit() < p.ecs_share) {
    out.ecs.family = cache::EcsFamily::ipv4;
    out.ecs.prefix = p.ecs_prefix;
    const std::uint32_t subnet = static_cast<std::uint32_t>(rng.range(0, ecs_subnets_ - 1));
    out.ecs.address = {10, static_cast<std::uint8_t>(subnet >> 8), static_cast<std::uint8_t>(subnet), 0};
  }
  if (p.negative_share > 0 && rng.unit() < p.negative_share) {
    out.negative = true;
    out.rcode = rng.next() % 2 ? 3 : 0;  // NXDOMAIN or NODATA
    out.rdatas.clear();
    // SOA rdata: mname, rname, serial, refresh, retry, expire, minimum.
    const Bytes mname = {2, 'n', 's', 4, 'z', 'o', 'n', 'e', 0};
    const Bytes rname = {10, 'h', 'o', 's', 't', 'm', 'a', 's', 't', 'e', 'r', 4, 'z', 'o', 'n', 'e', 0};
    out.soa_rdata = mname + rname;
    for (std::uint32_t v : {2026113001u, 7200u, 900u, 1209600u, out.ttl})
      for (int b = 3; b >= 0; --b) out.soa_rdata.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    return;
  }
  if (p.cname_share > 0 && rng.unit() < p.cname_share) {
    out.cname_target = {3, 'c', 'd', 'n'};
    out.cname_target.append(out.qname);
    if (out.cname_target.size() > wire::kMaxNameWire) out.cname_target.clear();
  }
  const unsigned n = static_cast<unsigned>(rng.range(p.records_min, p.records_max));
  out.rdatas.resize(n);
  for (unsigned r = 0; r < n; ++r) {
    Bytes& rd = out.rdatas[r];
    rd.clear();
    if (out.qtype == wire::kTypeA) {
      const std::uint64_t v = rng.next();
      for (int b = 0; b < 4; ++b) rd.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    } else if (out.qtype == wire::kTypeAaaa) {
      const std::uint64_t v1 = rng.next(), v2 = rng.next();
      for (int b = 0; b < 8; ++b) rd.push_back(static_cast<std::uint8_t>(v1 >> (8 * b)));
      for (int b = 0; b < 8; ++b) rd.push_back(static_cast<std::uint8_t>(v2 >> (8 * b)));
    } else {
      // TXT: one character-string; the whole rdata is 64..224 bytes.
      const unsigned total = static_cast<unsigned>(rng.range(txt_min_bytes_, txt_max_bytes_));
      rd.push_back(static_cast<std::uint8_t>(total - 1));
      for (unsigned c = 1; c < total; ++c) rd.push_back(static_cast<std::uint8_t>(' ' + rng.next() % 95));
    }
  }
}

}  // namespace dnsarena::sim
