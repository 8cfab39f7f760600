// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/fit/tap_tally.hpp"

#include <algorithm>

#include "dns/message.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::fit {

namespace {

constexpr std::uint64_t kNsPerHour = 3'600'000'000'000ull;

std::string lower_key(const common::Bytes& wire) {
  std::string key(wire.begin(), wire.end());
  for (char& c : key) c = static_cast<char>(wire::ascii_lower(static_cast<std::uint8_t>(c)));
  return key;
}

// SOA rdata (names decompressed): mname, rname, serial, refresh, retry, expire, minimum.
std::uint32_t soa_minimum(const common::Bytes& rdata) {
  if (rdata.size() < 22) return 0;
  const std::size_t at = rdata.size() - 4;
  return (std::uint32_t{rdata[at]} << 24) | (std::uint32_t{rdata[at + 1]} << 16) | (std::uint32_t{rdata[at + 2]} << 8) |
         rdata[at + 3];
}

std::string subnet_key(const dns::EcsOption& e) {
  std::string k;
  k.push_back(static_cast<char>(e.family));
  k.push_back(static_cast<char>(e.source_prefix));
  const unsigned bytes = (e.source_prefix + 7u) / 8u;
  k.append(reinterpret_cast<const char*>(e.address.data()), std::min<unsigned>(bytes, 16));
  return k;
}

void add_query(TapTally& t, const TapMessage& m, const dns::Message& q) {
  ++t.client_queries;
  NameTally& n = t.names[lower_key(q.qname)];
  ++n.queries;
  ++n.by_bucket[type_bucket(q.qtype)];
  if (m.time_ns != 0) {
    t.first_query_ns = std::min(t.first_query_ns, m.time_ns);
    t.last_query_ns = std::max(t.last_query_ns, m.time_ns);
    HourTally& h = t.hours[m.time_ns / kNsPerHour];
    ++h.queries;
    h.first_ns = std::min(h.first_ns, m.time_ns);
    h.last_ns = std::max(h.last_ns, m.time_ns);
  }
  if (q.ecs.present) {
    n.ecs_asked = true;
    ++t.ecs_queries;
    ++t.ecs_subnets[subnet_key(q.ecs)];
  }
}

void add_response(TapTally& t, const TapMessage& m, const dns::Message& r, bool upstream) {
  NameTally& n = t.names[lower_key(r.qname)];
  const TypeBucket bucket = type_bucket(r.qtype);
  if (r.ecs.present && r.ecs.scope_prefix > 0) {
    n.ecs_scoped = true;
    ++(r.ecs.family == dns::kEcsFamilyIpv4 ? t.ecs_scopes_v4 : t.ecs_scopes_v6)[r.ecs.scope_prefix];
  }
  if (r.tc) return;  // no records to read; the retry over TCP (or not) says the rest
  if (r.rcode != wire::kRcodeNoError && r.rcode != wire::kRcodeNxDomain) return;  // failures say nothing of the name
  std::uint8_t records = 0;
  std::uint32_t ttl = ~0u;
  std::vector<std::uint16_t> sizes;
  for (const dns::Record& rec : r.answer) {
    ttl = std::min(ttl, rec.ttl);
    if (rec.type != r.qtype) continue;
    ++records;
    sizes.push_back(static_cast<std::uint16_t>(rec.rdata.size()));
  }
  if (records == 0) {  // negative: NXDOMAIN, or NODATA (possibly behind a CNAME)
    if (r.rcode == wire::kRcodeNxDomain) n.nxdomain = true;
    else n.nodata_buckets |= static_cast<std::uint8_t>(1u << bucket);
    if (n.soa_minimum == 0)
      for (const dns::Record& rec : r.authority)
        if (rec.type == wire::kTypeSoa) n.soa_minimum = soa_minimum(rec.rdata);
    return;
  }
  n.positive_buckets |= static_cast<std::uint8_t>(1u << bucket);
  AnswerShape& s = n.shape;
  // An upstream's answer beats a client's (whose TTL may be counted down); else the earliest.
  const bool better = s.records == 0 || (upstream && !s.from_upstream) ||
                      (upstream == s.from_upstream && m.time_ns != 0 && m.time_ns < s.time_ns);
  if (!better) return;
  s.time_ns = m.time_ns != 0 ? m.time_ns : s.time_ns;
  s.from_upstream = upstream;
  s.bucket = bucket;
  s.records = records;
  s.cname = !r.answer.empty() && r.answer.front().type == wire::kTypeCname;
  s.ttl = ttl;
  s.rdata_bytes = std::move(sizes);
}

}  // namespace

TypeBucket type_bucket(std::uint16_t qtype) {
  return qtype == wire::kTypeA ? kBucketA : qtype == wire::kTypeAaaa ? kBucketAaaa : kBucketOther;
}

void TapTally::add(const TapMessage& m) {
  dns::Message msg;
  const bool response = m.type == TapType::client_response || m.type == TapType::forwarder_response;
  if (dns::parse_message(m.wire, msg, response) != dns::ParseStatus::ok || msg.qname.empty()) {
    ++unparsable;
    return;
  }
  switch (m.type) {
    case TapType::client_query: add_query(*this, m, msg); break;
    case TapType::client_response:
      ++client_responses;
      add_response(*this, m, msg, false);
      break;
    case TapType::forwarder_query: ++forwarder_queries; break;
    case TapType::forwarder_response:
      ++forwarder_responses;
      add_response(*this, m, msg, true);
      break;
  }
}

}  // namespace dnsarena::sim::fit
