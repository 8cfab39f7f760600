// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/traffic/upstream_zone.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/bytes.hpp"
#include "dns/opt_record.hpp"
#include "wire/address_prefix.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::traffic {

namespace {

void set16(Bytes& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::uint8_t>(v >> 8);
  b[at + 1] = static_cast<std::uint8_t>(v);
}
void put_pointer(Bytes& b, std::size_t offset) { common::append_u16(b, static_cast<std::uint16_t>(0xC000 | offset)); }

std::uint64_t hash_name(std::span<const std::uint8_t> wire) { return XXH3_64bits(wire.data(), wire.size()); }

Bytes lower(std::span<const std::uint8_t> wire) {
  Bytes out(wire.begin(), wire.end());
  for (auto& c : out) c = wire::ascii_lower(c);
  return out;
}

// Header offsets.
constexpr std::size_t kAnCount = 6, kNsCount = 8, kArCount = 10;

// Writes header + question of the response to `q` with `rcode` (low 4 bits).
void write_header_question(const dns::Message& q, std::uint16_t rcode, Bytes& out) {
  out.clear();
  common::append_u16(out, q.id);
  std::uint16_t flags = 0x8000 | 0x0400;  // QR, AA
  flags |= static_cast<std::uint16_t>((q.opcode & 0xF) << 11);
  if (q.rd) flags |= 0x0100;
  flags |= rcode & 0xF;
  common::append_u16(out, flags);
  common::append_u16(out, q.qname.empty() ? 0 : 1);
  common::append_u16(out, 0);
  common::append_u16(out, 0);
  common::append_u16(out, 0);
  if (!q.qname.empty()) {
    out += q.qname;
    common::append_u16(out, q.qtype);
    common::append_u16(out, q.qclass);
  }
}

// Appends the OPT record echoing the client's EDNS, with an ECS option when asked.
void write_opt(const dns::Message& q, std::uint16_t rcode, const dns::EcsOption* ecs, Bytes& out) {
  std::uint8_t opt[wire::kOptRecordBytes + dns::kMaxEcsOptionBytes];
  const dns::EcsOption none;
  out.append(opt, dns::write_opt_record(rcode, q.do_bit, ecs ? *ecs : none, ecs ? ecs->scope_prefix : 0, opt));
  set16(out, kArCount, 1);
}

constexpr std::uint64_t kMaxUpstreamNames = 100'000'000;

}  // namespace

UpstreamZone::UpstreamZone(const TrafficProfile& profile, std::uint64_t seed, std::string_view zone_text,
                           double ttl_scale)
    : profile_(profile), seed_(seed), ttl_scale_(ttl_scale), gen_(profile, seed), names_(profile.names) {
  if (!(ttl_scale > 0 && ttl_scale <= 1))
    throw std::invalid_argument("TTL scale " + std::to_string(ttl_scale) + " is outside (0, 1]");
  // NOTE: the name index below costs 16 B per name; the profile schema allows fleet-sized
  // universes that only the model (sim/fleet) can afford.
  if (profile.names > kMaxUpstreamNames)
    throw std::invalid_argument("profile: names " + std::to_string(profile.names) + " exceeds the upstream's limit of " +
                                std::to_string(kMaxUpstreamNames));
  zone_ = lower(wire::name_to_wire(zone_text));
  if (zone_.size() > 64) throw std::invalid_argument("zone name longer than 64 bytes: " + std::string(zone_text));
  index_.reserve(names_);
  GeneratedEntry e;
  for (std::uint64_t i = 0; i < names_; ++i) {
    gen_.generate(i, e);
    index_.emplace_back(hash_name(e.qname), i);
  }
  std::sort(index_.begin(), index_.end());
}

std::optional<std::uint64_t> UpstreamZone::find_relative(std::span<const std::uint8_t> rel) const {
  const std::uint64_t h = hash_name(rel);
  auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(h, std::uint64_t{0}));
  GeneratedEntry e;
  for (; it != index_.end() && it->first == h; ++it) {
    gen_.generate(it->second, e);
    if (e.qname.size() == rel.size() && std::equal(e.qname.begin(), e.qname.end(), rel.begin()))
      return it->second;
  }
  return std::nullopt;
}

Bytes UpstreamZone::name_wire(std::uint64_t i) const {
  Bytes n = gen_.generate(i).qname;
  n.pop_back();  // root
  return n + zone_;
}

std::string UpstreamZone::name_text(std::uint64_t i) const { return wire::wire_to_text(name_wire(i)); }

std::uint32_t UpstreamZone::served_ttl(std::uint32_t ttl) const {
  if (ttl_scale_ == 1.0) return ttl;
  return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::llround(ttl * ttl_scale_)));
}

void UpstreamZone::write_soa(Bytes& out, std::size_t zone_offset, std::uint32_t ttl) const {
  ttl = served_ttl(ttl);
  put_pointer(out, zone_offset);
  common::append_u16(out, wire::kTypeSoa);
  common::append_u16(out, 1);
  common::append_u32(out, ttl);
  const std::size_t len_at = out.size();
  common::append_u16(out, 0);
  out += Bytes{2, 'n', 's'};
  put_pointer(out, zone_offset);
  out += Bytes{10, 'h', 'o', 's', 't', 'm', 'a', 's', 't', 'e', 'r'};
  put_pointer(out, zone_offset);
  for (std::uint32_t v : {2026113001u, 7200u, 900u, 1209600u, ttl}) common::append_u32(out, v);
  set16(out, len_at, static_cast<std::uint16_t>(out.size() - len_at - 2));
}

void UpstreamZone::vary_for_subnet(std::uint64_t i, const dns::EcsOption& ecs, std::uint8_t scope, std::uint16_t type,
                                   std::vector<Bytes>& rdatas) const {
  // The subnet the answer is valid for: the client address cut to min(source, scope).
  const unsigned bits = std::min<unsigned>(ecs.source_prefix, scope);
  std::array<std::uint8_t, 16> net = ecs.address;
  wire::clear_bits_past_prefix(net, bits);
  const std::uint64_t subnet_hash = XXH3_64bits_withSeed(net.data(), net.size(), (ecs.family << 8) | bits);
  SplitMix64 rng(seed_ ^ (i * 0x9E3779B97F4A7C15ULL) ^ subnet_hash);
  for (Bytes& rd : rdatas) {
    if (type == wire::kTypeTxt) {
      for (std::size_t c = 1; c < rd.size(); ++c) rd[c] = static_cast<std::uint8_t>(' ' + rng.next() % 95);
    } else {
      for (auto& byte : rd) byte = static_cast<std::uint8_t>(rng.next());
    }
  }
}

void UpstreamZone::error_response(const dns::Message& query, std::uint16_t rcode, Bytes& out) {
  write_header_question(query, rcode, out);
  if (query.edns) write_opt(query, rcode, nullptr, out);
}

ResponseInfo UpstreamZone::respond(const dns::Message& q, bool udp, Bytes& out) const {
  ResponseInfo info;
  auto fail = [&](std::uint16_t rcode) {
    error_response(q, rcode, out);
    info.rcode = rcode;
    return info;
  };
  if (q.opcode != 0) return fail(wire::kRcodeNotImp);
  if (q.edns && q.edns_version > 0) return fail(16);  // BADVERS
  if (q.qclass != 1) return fail(wire::kRcodeRefused);
  const Bytes qname = lower(q.qname);
  if (qname.size() < zone_.size() || !std::equal(zone_.begin(), zone_.end(), qname.end() - zone_.size()))
    return fail(wire::kRcodeRefused);
  // The zone must start at a label boundary of the query name.
  std::size_t pos = 0;
  while (pos < qname.size() - zone_.size()) pos += qname[pos] + 1u;
  if (pos != qname.size() - zone_.size()) return fail(wire::kRcodeRefused);
  const std::size_t zone_offset = 12 + pos;
  Bytes rel(qname.begin(), qname.begin() + static_cast<std::ptrdiff_t>(pos));
  rel.push_back(0);

  // What the name is.
  enum class Kind { apex, ns, entry, cdn_target, unknown } kind = Kind::unknown;
  std::uint64_t index = 0;
  if (pos == 0) {
    kind = Kind::apex;
  } else if (rel == Bytes{2, 'n', 's', 0}) {
    kind = Kind::ns;
  } else if (auto i = find_relative(rel)) {
    kind = Kind::entry;
    index = *i;
  } else if (rel.size() > 4 && rel[0] == 3 && rel[1] == 'c' && rel[2] == 'd' && rel[3] == 'n') {
    if (auto j = find_relative(std::span<const std::uint8_t>(rel).subspan(4))) {
      const GeneratedEntry e = gen_.generate(*j);
      if (!e.cname_target.empty() && !e.negative) {
        kind = Kind::cdn_target;
        index = *j;
      }
    }
  }

  GeneratedEntry e;
  if (kind == Kind::entry || kind == Kind::cdn_target) gen_.generate(index, e);
  const bool ecs_dependent = (kind == Kind::entry || kind == Kind::cdn_target) && !e.negative &&
                             e.ecs.family != cache::EcsFamily::none;
  dns::EcsOption ecs_reply = q.ecs;
  if (q.ecs.present) {
    const std::uint8_t scope = q.ecs.family == 1 ? profile_.ecs_prefix : profile_.ecs_prefix_v6;
    ecs_reply.scope_prefix = (ecs_dependent && q.ecs.source_prefix > 0) ? scope : 0;
  }

  write_header_question(q, 0, out);
  std::uint16_t ancount = 0, nscount = 0;
  std::uint16_t rcode = 0;
  auto add_rr_header = [&](std::size_t owner_offset, std::uint16_t type, std::uint32_t ttl) {
    put_pointer(out, owner_offset);
    common::append_u16(out, type);
    common::append_u16(out, 1);
    common::append_u32(out, served_ttl(ttl));
  };
  auto negative = [&](std::uint16_t code, std::uint32_t ttl) {
    rcode = code;
    write_soa(out, zone_offset, ttl);
    nscount = 1;
  };
  const bool any = q.qtype == wire::kTypeAny;
  switch (kind) {
    case Kind::apex:
      if (q.qtype == wire::kTypeSoa || any) {
        write_soa(out, zone_offset, profile_.negative_ttl);
        ++ancount;
      }
      if (q.qtype == wire::kTypeNs || any) {
        add_rr_header(zone_offset, wire::kTypeNs, 3600);
        common::append_u16(out, 4);
        out += Bytes{2, 'n', 's'};
        put_pointer(out, zone_offset);
        ++ancount;
      }
      if (ancount == 0) negative(0, profile_.negative_ttl);
      break;
    case Kind::ns:
      if (q.qtype == wire::kTypeA || any) {
        add_rr_header(12, wire::kTypeA, 3600);
        common::append_u16(out, 4);
        out += Bytes{127, 0, 0, 1};
        ++ancount;
      } else {
        negative(0, profile_.negative_ttl);
      }
      break;
    case Kind::unknown:
      negative(wire::kRcodeNxDomain, profile_.negative_ttl);
      break;
    case Kind::entry:
    case Kind::cdn_target: {
      if (e.negative) {
        negative(e.rcode, e.ttl);
        break;
      }
      std::size_t owner = 12;
      if (kind == Kind::entry && !e.cname_target.empty()) {
        add_rr_header(12, wire::kTypeCname, e.ttl);
        common::append_u16(out, 6);
        owner = out.size();  // the target name starts here: "cdn" + pointer to the qname
        out += Bytes{3, 'c', 'd', 'n'};
        put_pointer(out, 12);
        ++ancount;
        if (q.qtype == wire::kTypeCname) break;
      }
      if (q.qtype == e.qtype || any) {
        std::vector<Bytes> rdatas = e.rdatas;
        if (ecs_dependent && ecs_reply.scope_prefix > 0)
          vary_for_subnet(index, q.ecs, ecs_reply.scope_prefix, e.qtype, rdatas);
        for (const Bytes& rd : rdatas) {
          add_rr_header(owner, e.qtype, e.ttl);
          common::append_u16(out, static_cast<std::uint16_t>(rd.size()));
          out += rd;
          ++ancount;
        }
      } else {
        negative(0, e.ttl);  // NODATA (after the CNAME, if any)
      }
      break;
    }
  }
  set16(out, kAnCount, ancount);
  set16(out, kNsCount, nscount);
  out[3] = static_cast<std::uint8_t>((out[3] & 0xF0) | (rcode & 0xF));
  if (q.edns) write_opt(q, rcode, q.ecs.present ? &ecs_reply : nullptr, out);

  const std::size_t limit = !udp ? 65535 : q.edns ? std::max<std::size_t>(q.udp_payload, 512) : 512;
  info.rcode = rcode;
  info.nodata = rcode == 0 && ancount == 0;
  info.ecs_scoped = q.ecs.present && ecs_reply.scope_prefix > 0;
  if (out.size() > limit) {
    write_header_question(q, rcode, out);
    out[2] |= 0x02;  // TC
    if (q.edns) write_opt(q, rcode, q.ecs.present ? &ecs_reply : nullptr, out);
    info.truncated = true;
  }
  return info;
}

std::string upstream_name(const TrafficProfile& profile, std::uint64_t seed, std::uint64_t i, std::string_view zone) {
  Bytes n = EntryGenerator(profile, seed).generate(i).qname;
  n.pop_back();
  n += wire::name_to_wire(zone);
  for (auto& c : n) c = wire::ascii_lower(c);
  return wire::wire_to_text(n);
}

std::uint16_t upstream_type(const TrafficProfile& profile, std::uint64_t seed, std::uint64_t i) {
  return EntryGenerator(profile, seed).generate(i).qtype;
}

}  // namespace dnsarena::sim::traffic
