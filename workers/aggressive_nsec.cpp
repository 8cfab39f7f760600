// SPDX-License-Identifier: GPL-3.0-or-later
// Aggressive use of validated NSEC and NSEC3 ranges (aggressive_nsec.hpp).
#include "workers/aggressive_nsec.hpp"

#include <algorithm>
#include <deque>
#include <cstring>
#include <optional>

#include "common/mix_hash.hpp"
#include "common/monotonic_clock.hpp"
#include "dns/opt_record.hpp"
#include "dns/server_cookie.hpp"
#include "dnssec/denial.hpp"
#include "dnssec/limits.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::workers {

using dnssec::Bytes;
using dnssec::Rrset;
using wire::get16, wire::put16, wire::put32;

namespace {

// A record in the table (the bytes NsecRanges keeps), uncompressed wire:
//   zone name | u8 nsec_rrs | u8 soa_rrs | nsec_rrs RRs | soa_rrs RRs
// RR: owner name | u16 type | u32 TTL | u16 rdlength | rdata (class IN). The NSEC set's
// RRs are its NSEC (or NSEC3) record, then its RRSIGs; the SOA set's are the SOA, then
// its RRSIGs. The first RR's type tells an NSEC range from an NSEC3 one.
struct Rr {
  std::span<const std::uint8_t> owner;
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
  std::span<const std::uint8_t> rdata;
};
struct Record {
  std::span<const std::uint8_t> zone;
  std::vector<Rr> nsec, soa;
  std::uint32_t expires = 0;
};

void append_name(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> name) {
  out.insert(out.end(), name.begin(), name.end());
}
void append_rr(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> owner, std::uint16_t type,
               std::uint32_t ttl, std::span<const std::uint8_t> rdata) {
  append_name(out, owner);
  const std::uint8_t fixed[8] = {static_cast<std::uint8_t>(type >> 8), static_cast<std::uint8_t>(type),
                                 static_cast<std::uint8_t>(ttl >> 24), static_cast<std::uint8_t>(ttl >> 16),
                                 static_cast<std::uint8_t>(ttl >> 8),  static_cast<std::uint8_t>(ttl),
                                 static_cast<std::uint8_t>(rdata.size() >> 8), static_cast<std::uint8_t>(rdata.size())};
  out.insert(out.end(), fixed, fixed + 8);
  out.insert(out.end(), rdata.begin(), rdata.end());
}
// One set (its records, then the RRSIGs that cover it) as RRs, its count of RRs at
// out[count_at]; false when it has more than 255 (not recorded).
bool append_set(std::vector<std::uint8_t>& out, const Rrset& s, std::uint32_t ttl, std::size_t count_at) {
  if (s.rdata.size() + s.rrsigs.size() > 255) return false;
  for (const Bytes& rd : s.rdata) append_rr(out, s.owner, s.type, ttl, rd);
  for (const Bytes& sig : s.rrsigs) append_rr(out, s.owner, dnssec::kTypeRrsig, ttl, sig);
  out[count_at] = static_cast<std::uint8_t>(s.rdata.size() + s.rrsigs.size());
  return true;
}

std::optional<Record> parse_record(std::span<const std::uint8_t> b) {
  Record r;
  std::size_t pos = wire::wire_name_length(b);
  if (pos == 0 || pos + 2 > b.size()) return std::nullopt;
  r.zone = b.first(pos);
  const unsigned counts[2] = {b[pos], b[pos + 1]};
  pos += 2;
  for (unsigned set = 0; set < 2; ++set)
    for (unsigned i = 0; i < counts[set]; ++i) {
      const std::size_t n = wire::wire_name_length(b.subspan(pos));
      if (n == 0 || pos + n + 8 > b.size()) return std::nullopt;
      Rr rr;
      rr.owner = b.subspan(pos, n);
      pos += n;
      rr.type = get16(b.data() + pos);
      rr.ttl = std::uint32_t{get16(b.data() + pos + 2)} << 16 | get16(b.data() + pos + 4);
      const std::size_t rdlen = get16(b.data() + pos + 6);
      pos += 8;
      if (pos + rdlen > b.size()) return std::nullopt;
      rr.rdata = b.subspan(pos, rdlen);
      pos += rdlen;
      (set == 0 ? r.nsec : r.soa).push_back(rr);
    }
  if (r.nsec.empty() || (r.nsec[0].type != dnssec::kTypeNsec && r.nsec[0].type != dnssec::kTypeNsec3) ||
      r.soa.empty() || r.soa[0].type != dnssec::kTypeSoa)
    return std::nullopt;
  return r;
}

// The NSEC or NSEC3 set of a record, as the validator's proofs read it.
Rrset nsec_set(const Record& r) {
  Rrset s;
  s.owner.assign(r.nsec[0].owner.begin(), r.nsec[0].owner.end());
  s.type = r.nsec[0].type;
  s.rdata.emplace_back(r.nsec[0].rdata.begin(), r.nsec[0].rdata.end());
  return s;
}

// An NSEC3 set the table keeps: one record of hash algorithm 1 (SHA-1, RFC 5155 8.1),
// iterations within the bound (RFC 9276: more make the zone insecure), owned by a hash
// label directly below `zone`.
bool usable_nsec3(const Rrset& s, std::span<const std::uint8_t> zone, std::uint32_t max_iterations) {
  const Bytes& rd = s.rdata[0];
  if (rd.size() < 6 || rd[0] != 1 || std::uint32_t{get16(rd.data() + 2)} > max_iterations) return false;
  return dnssec::label_count(s.owner) == dnssec::label_count(zone) + 1 && dnssec::is_subdomain(s.owner, zone);
}

// The NSEC answer the ranges `sets` prove for (qname, qtype) below `zone`: its rcode, and
// in `use` the fewest of the sets that prove it (indexes). False: none proven.
bool prove_nsec(const std::vector<Rrset>& sets, std::span<const std::uint8_t> zone, const Bytes& qname,
                std::uint16_t qtype, dnssec::Budget& budget, std::uint16_t& rcode, std::vector<std::size_t>& use) {
  // Whether the ranges `subset` (indexes into sets) prove the answer `rc`.
  auto proves = [&](const std::vector<std::size_t>& subset, std::uint16_t rc) {
    dnssec::DenialSets d;
    for (const std::size_t i : subset) d.nsec.push_back(&sets[i]);
    if (rc == wire::kRcodeNoError) return dnssec::prove_nodata(d, zone, qname, qtype, budget) == dnssec::Proof::proven;
    if (dnssec::prove_nxdomain(d, zone, qname, budget) != dnssec::Proof::proven) return false;
    // A range whose next name lies below the name shows it exists (an empty non-terminal).
    for (const std::size_t i : subset) {
      const Bytes& rd = sets[i].rdata[0];
      const std::size_t n = wire::wire_name_length(rd);
      if (n == 0) return false;
      const Bytes next = dnssec::lowercase_name({rd.data(), n});
      if (next.size() > qname.size() && dnssec::is_subdomain(next, qname)) return false;
    }
    return true;
  };
  std::vector<std::size_t> all(sets.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  rcode = wire::kRcodeNxDomain;
  if (!proves(all, rcode)) {
    rcode = wire::kRcodeNoError;
    if (!proves(all, rcode)) return false;
  }
  // The fewest ranges that prove it: one, else two (NXDOMAIN: the name's and the wildcard's).
  use.clear();
  for (std::size_t i = 0; i < sets.size() && use.empty(); ++i)
    if (proves({i}, rcode)) use = {i};
  for (std::size_t i = 0; i < sets.size() && use.empty(); ++i)
    for (std::size_t j = i + 1; j < sets.size() && use.empty(); ++j)
      if (proves({i, j}, rcode)) use = {i, j};
  if (use.empty()) use = all;
  return true;
}

struct Nsec3Proof {
  std::uint16_t rcode;
  std::vector<std::size_t> use;  // indexes of the sets the proof relied on
};

// The NSEC3 answer the ranges `sets` prove for (qname, qtype) below `zone`, by the
// validator's proofs (RFC 5155 8.4-8.7): NXDOMAIN (closest encloser, next closer and
// wildcard covered; tried first: for a name that exists it stops after one hash), else
// NODATA (a record at the name without the type, or the wildcard's).
// Nothing from a proof that relied on a range with the Opt-Out flag, except NODATA from
// the record of the name itself: an Opt-Out range may hide an insecure delegation at any
// name it covers (RFC 5155 6, RFC 8198 4.2). Every hash is taken from `budget`: at most
// the name's labels below the zone plus two per proof, two proofs.
std::optional<Nsec3Proof> prove_nsec3(const std::vector<Rrset>& sets, std::span<const std::uint8_t> zone,
                                      const Bytes& qname, std::uint16_t qtype, dnssec::Budget& budget) {
  std::vector<const Rrset*> used;
  bool opt_out = false;
  dnssec::DenialSets d;
  for (const Rrset& s : sets) d.nsec3.push_back(&s);
  d.used = &used;
  d.opt_out = &opt_out;
  std::uint16_t rcode = wire::kRcodeNxDomain;
  if (dnssec::prove_nxdomain(d, zone, qname, budget) != dnssec::Proof::proven) {
    used.clear();
    opt_out = false;
    rcode = wire::kRcodeNoError;
    if (dnssec::prove_nodata(d, zone, qname, qtype, budget) != dnssec::Proof::proven) return std::nullopt;
  }
  // One set used: NODATA from the name's own record (a wildcard NODATA uses at least the
  // encloser's record and the wildcard's, two owners).
  if (opt_out && !(rcode == wire::kRcodeNoError && used.size() == 1)) return std::nullopt;
  Nsec3Proof p{rcode, {}};
  for (const Rrset* s : used) p.use.push_back(static_cast<std::size_t>(s - sets.data()));
  return p;
}

bool meta_type(std::uint16_t t) { return t == 0 || (t >= 128 && t <= 255); }  // RFC 6895 3.1 (ANY, AXFR, ...)

}  // namespace

std::uint64_t nsec_name_hash(std::span<const std::uint8_t> name) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ name.size();
  for (std::size_t i = 0; i < name.size(); i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, name.data() + i, std::min<std::size_t>(8, name.size() - i));
    h = common::fmix64(h ^ w);
  }
  return h ? h : 1;
}

AggressiveNsec::AggressiveNsec(const ServeConfig& cfg, NsecRanges* host, DnssecCounters::Row& counters)
    : cfg_(cfg),
      on_(cfg.dnssec.validating() && cfg.dnssec.aggressive_nsec),
      table_(host),
      counters_(counters) {
  if (!on_) return;
  if (!table_) {
    own_ = std::make_unique<NsecRanges>(16, false);
    table_ = own_.get();
  }
  scratch_.resize(NsecRanges::kCapacity);
}

AggressiveNsec::~AggressiveNsec() = default;

void AggressiveNsec::learn(const dnssec::Response& r, const dnssec::Outcome& o, std::uint32_t now) {
  if (!on_ || o.verdict != dnssec::Verdict::secure) return;
  if (r.rcode != wire::kRcodeNoError && r.rcode != wire::kRcodeNxDomain) return;
  std::vector<std::uint8_t> rec;
  for (const Rrset& s : r.authority) {
    if ((s.type != dnssec::kTypeNsec && s.type != dnssec::kTypeNsec3) || s.rdata.size() != 1 || s.rrsigs.empty())
      continue;
    const auto sig = dnssec::parse_rrsig(s.rrsigs[0]);
    if (!sig || !dnssec::is_subdomain(s.owner, sig->signer)) continue;
    const Bytes& zone = sig->signer;
    if (s.type == dnssec::kTypeNsec3 && !usable_nsec3(s, zone, cfg_.dnssec.limits.max_nsec3_iterations)) continue;
    const Rrset* soa = dnssec::find_rrset(r.authority, zone, dnssec::kTypeSoa);
    if (!soa || soa->rdata.size() != 1 || soa->rrsigs.empty() || soa->rdata[0].size() < 20) continue;
    const std::uint8_t* m = soa->rdata[0].data() + soa->rdata[0].size() - 4;
    const std::uint32_t minimum = std::uint32_t{get16(m)} << 16 | get16(m + 2);
    const std::uint32_t ttl =
        std::min({s.ttl, soa->ttl, minimum, o.max_ttl, cfg_.ttl_ceiling, cfg_.negative_ttl_ceiling});
    if (ttl == 0) continue;
    rec.clear();
    append_name(rec, zone);
    rec.push_back(0);
    rec.push_back(0);
    const std::size_t counts = zone.size();
    if (!append_set(rec, s, ttl, counts) || !append_set(rec, *soa, ttl, counts + 1)) continue;
    table_->put(nsec_name_hash(zone), nsec_name_hash(s.owner), now + ttl, rec, common::monotonic_ms());
  }
}

std::size_t AggressiveNsec::answer(const dns::ClientQuery& q, const CheckedQuery& c, std::uint32_t now,
                                   std::uint8_t* out, std::size_t cap) {
  if (!on_ || q.cd() || q.qclass != 1 || meta_type(q.qtype)) return 0;
  const Bytes qname = dnssec::lowercase_name(q.qname());
  const unsigned labels = dnssec::label_count(qname);
  std::deque<Bytes> records;  // the copies parsed's spans point into (a deque never moves them)
  std::vector<Record> parsed;
  Bytes zone;
  for (unsigned strip = 0; strip <= labels && records.empty(); ++strip) {
    zone = dnssec::strip_labels(qname, strip);
    table_->for_zone(nsec_name_hash(zone), now, scratch_, [&](std::span<const std::uint8_t> b, std::uint32_t expires) {
      std::optional<Record> r = parse_record(b);
      if (r && std::ranges::equal(r->zone, zone)) {
        records.emplace_back(b.begin(), b.end());
        r = parse_record(records.back());  // its spans into the kept copy
        r->expires = expires;
        parsed.push_back(std::move(*r));
      }
      return true;
    });
  }
  // The closest zone with ranges decides: a range of a zone above it proves nothing below
  // its cut (RFC 6840 4.1), so none is looked for there.
  if (parsed.empty()) return 0;
  // One kind of range decides: NSEC when the zone has any (a zone moving to NSEC3 keeps
  // its NSEC ranges until they expire; each was proven when learned).
  const bool nsec3 = std::ranges::none_of(parsed, [](const Record& r) { return r.nsec[0].type == dnssec::kTypeNsec; });
  std::erase_if(parsed, [&](const Record& r) { return (r.nsec[0].type == dnssec::kTypeNsec3) != nsec3; });
  std::vector<Rrset> sets;
  sets.reserve(parsed.size());
  for (const Record& r : parsed) sets.push_back(nsec_set(r));

  dnssec::Budget budget(cfg_.dnssec.limits);
  std::uint16_t rcode = wire::kRcodeNxDomain;
  std::vector<std::size_t> use;
  if (nsec3) {
    const std::optional<Nsec3Proof> p = prove_nsec3(sets, zone, qname, q.qtype, budget);
    counters_.add(DnssecCounter::nsec3_hashes, budget.counters().nsec3_hashes);
    if (budget.counters().nsec3_hash_limit_hit) counters_.add(DnssecCounter::nsec3_hash_limit);
    if (!p) return 0;
    rcode = p->rcode;
    use = p->use;
  } else {
    if (!prove_nsec(sets, zone, qname, q.qtype, budget, rcode, use)) return 0;
  }

  // The answer: header, question, authority (SOA; with DO its RRSIGs and the NSEC or
  // NSEC3 records with theirs), OPT.
  const bool with_dnssec = q.do_bit;
  const std::size_t cookie_bytes = q.edns && q.cookie.len ? 4u + q.cookie.len : 0;
  const std::size_t opt_bytes = q.edns ? wire::kOptRecordBytes + dns::kMaxEcsOptionBytes + cookie_bytes : 0;
  const std::size_t limit = std::min(cap, c.limit);
  std::size_t pos = wire::kHeaderBytes + q.qname_len + 4;
  if (pos + opt_bytes > limit) return 0;
  std::uint16_t records_written = 0;
  std::uint32_t expires = UINT32_MAX;
  for (const std::size_t i : use) expires = std::min(expires, parsed[i].expires);
  const std::uint32_t left = expires > now ? expires - now : 0;
  auto write = [&](const Rr& rr) {
    const std::size_t n = rr.owner.size() + 10 + rr.rdata.size();
    if (pos + n + opt_bytes > limit) return false;
    std::memcpy(out + pos, rr.owner.data(), rr.owner.size());
    pos += rr.owner.size();
    put16(out + pos, rr.type);
    put16(out + pos + 2, 1);
    put32(out + pos + 4, std::min(rr.ttl, left));
    put16(out + pos + 8, static_cast<std::uint16_t>(rr.rdata.size()));
    std::memcpy(out + pos + 10, rr.rdata.data(), rr.rdata.size());
    pos += 10 + rr.rdata.size();
    ++records_written;
    return true;
  };
  const Record& first = parsed[use[0]];
  for (std::size_t k = 0; k < (with_dnssec ? first.soa.size() : 1); ++k)
    if (!write(first.soa[k])) return 0;
  if (with_dnssec)
    for (const std::size_t i : use)
      for (const Rr& rr : parsed[i].nsec)
        if (!write(rr)) return 0;

  put16(out, q.id);
  const bool ad = q.do_bit || (q.flags & wire::kFlagAd);
  put16(out + 2, static_cast<std::uint16_t>(wire::kFlagQr | (q.flags & (wire::kOpcodeMask | wire::kFlagRd)) |
                                            wire::kFlagRa | (ad ? wire::kFlagAd : 0) | rcode));
  put16(out + 4, 1);
  put16(out + 6, 0);
  put16(out + 8, records_written);
  put16(out + 10, q.edns ? 1 : 0);
  std::size_t qpos = wire::kHeaderBytes;
  std::memcpy(out + qpos, q.qname_storage.data(), q.qname_len);
  qpos += q.qname_len;
  put16(out + qpos, q.qtype);
  put16(out + qpos + 2, q.qclass);
  if (q.edns) {
    const std::size_t opt = pos;
    pos += dns::write_opt_record(rcode, q.do_bit, q.ecs, 0, out + pos);
    const std::size_t extra = dns::write_cookie_option(q.cookie, out + pos);
    pos += extra;
    put16(out + opt + 9, static_cast<std::uint16_t>(get16(out + opt + 9) + extra));
  }
  counters_.add(DnssecCounter::aggressive_nsec_answers);
  return pos;
}

}  // namespace dnsarena::workers
