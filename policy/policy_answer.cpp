// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/policy_answer.hpp"

#include <algorithm>
#include <cstring>

#include "wire/constants.hpp"

namespace dnsarena::policy {

using namespace wire;

namespace {

constexpr std::size_t kRecordFixed = 10;  // type, class, ttl, rdlength
constexpr std::size_t kSoaNumbers = 20;   // serial, refresh, retry, expire, minimum

bool answers(const LocalRr& rr, std::uint16_t qtype, bool has_cname) {
  if (has_cname) return rr.type == kTypeCname;
  return qtype == kTypeAny || rr.type == qtype;
}

std::uint32_t get32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// The SOA a negative answer of `m` carries (owner empty: none).
struct Soa {
  std::span<const std::uint8_t> owner;
  std::uint32_t ttl = 0;
  std::span<const std::uint8_t> rdata;
};

Soa soa_of(const PolicyView& view, const Match& m) {
  const ZoneApex z = view.zone(m.zone);
  Soa s;
  if (z.has_soa) {
    s = {z.origin, z.soa_ttl, z.soa};
  } else if (z.origin.empty()) {
    // The config's local zone: the SOA in the local data of the trigger's name, the zone's
    // apex for a `*.` rule (local_zone.hpp).
    const Match apex = m.wildcard ? view.find(PolicyView::trigger(m)) : m;
    if (apex && !apex.wildcard && apex.zone == m.zone)
      PolicyView::for_each_record(apex, [&](const LocalRr& rr) {
        if (rr.type == kTypeSoa && s.owner.empty()) s = {PolicyView::trigger(apex), rr.ttl, rr.rdata};
      });
  }
  if (s.rdata.size() < kSoaNumbers + 2) return {};
  s.ttl = std::min(s.ttl, get32(s.rdata.data() + s.rdata.size() - 4));  // RFC 2308 section 3
  return s;
}

std::uint8_t* write_fixed(std::uint8_t* p, std::uint16_t type, std::uint32_t ttl, std::size_t rdlen) {
  put16(p, type);
  put16(p + 2, kClassIn);
  put32(p + 4, ttl);
  put16(p + 8, static_cast<std::uint16_t>(rdlen));
  return p + kRecordFixed;
}

}  // namespace

std::size_t add_rule_records(const PolicyView& view, const Match& m, std::uint16_t qtype, std::size_t owner_at,
                             std::span<const std::uint8_t> owner, std::uint8_t* out, std::size_t size,
                             std::size_t opt_at, std::size_t limit, std::size_t cap) {
  const std::size_t owner_bytes = owner_at ? 2 : owner.size();
  const bool local = m.action == Action::local_data;
  bool has_cname = false;
  std::size_t bytes = 0;
  unsigned count = 0;
  if (local) {
    PolicyView::for_each_record(m, [&](const LocalRr& rr) { has_cname |= rr.type == kTypeCname; });
    PolicyView::for_each_record(m, [&](const LocalRr& rr) {
      if (!answers(rr, qtype, has_cname)) return;
      bytes += owner_bytes + kRecordFixed + rr.rdata.size();
      ++count;
    });
  }
  const Soa soa = count == 0 ? soa_of(view, m) : Soa{};  // NXDOMAIN or NODATA: the zone's SOA
  const std::size_t soa_bytes = soa.owner.empty() ? 0 : soa.owner.size() + kRecordFixed + soa.rdata.size();
  if (bytes + soa_bytes == 0) return size;
  if (size + bytes + soa_bytes > std::min(limit, cap) || count > 0xFFFF) {
    put16(out + 2, static_cast<std::uint16_t>(get16(out + 2) | kFlagTc));
    return size;
  }
  std::memmove(out + opt_at + bytes + soa_bytes, out + opt_at, size - opt_at);  // the OPT record, if any
  std::uint8_t* p = out + opt_at;
  if (count)
    PolicyView::for_each_record(m, [&](const LocalRr& rr) {
      if (!answers(rr, qtype, has_cname)) return;
      if (owner_at) put16(p, static_cast<std::uint16_t>(0xC000 | owner_at));
      else std::memcpy(p, owner.data(), owner.size());
      p = write_fixed(p + owner_bytes, rr.type, rr.ttl, rr.rdata.size());
      std::memcpy(p, rr.rdata.data(), rr.rdata.size());
      p += rr.rdata.size();
    });
  if (soa_bytes) {
    std::memcpy(p, soa.owner.data(), soa.owner.size());
    p = write_fixed(p + soa.owner.size(), kTypeSoa, soa.ttl, soa.rdata.size());
    std::memcpy(p, soa.rdata.data(), soa.rdata.size());
  }
  put16(out + 6, static_cast<std::uint16_t>(get16(out + 6) + count));
  if (soa_bytes) put16(out + 8, static_cast<std::uint16_t>(get16(out + 8) + 1));
  return size + bytes + soa_bytes;
}

PolicyAnswer write_policy_answer(const PolicyView& view, const Match& m, const dns::ClientQuery& q, std::size_t limit,
                                 std::uint8_t* out, std::size_t cap) {
  std::uint16_t rcode = kRcodeNoError;
  dns::ExtendedError ede = dns::ExtendedError::blocked;
  switch (m.action) {
    case Action::passthru: return {};
    case Action::drop: return {true, 0};
    case Action::refuse:
      return {true, dns::write_error_response(q, kRcodeRefused, out, cap, dns::ExtendedError::prohibited)};
    case Action::nxdomain: rcode = kRcodeNxDomain; break;
    case Action::nodata: break;
    case Action::local_data: ede = dns::ExtendedError::filtered; break;
  }
  const std::size_t base = dns::write_error_response(q, rcode, out, cap, ede);
  if (base == 0 || q.qname_len == 0) return {true, base};
  const std::size_t question_end = kHeaderBytes + q.qname_len + 4;
  return {true, add_rule_records(view, m, q.qtype, kHeaderBytes, {}, out, base, question_end, limit, cap)};
}

}  // namespace dnsarena::policy
