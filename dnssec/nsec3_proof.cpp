// SPDX-License-Identifier: GPL-3.0-or-later
// NSEC3 proofs (denial.hpp, RFC 5155 section 8).
#include "dnssec/nsec3_proof.hpp"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>

#include "dnssec/c_libraries.hpp"

namespace dnsarena::dnssec {

namespace {

struct Nsec3View {
  const Rrset* set = nullptr;  // the set it was read from
  Bytes owner_hash;  // decoded first label of the owner
  Bytes next_hash;
  std::uint8_t flags = 0;
  std::uint16_t iterations = 0;
  Bytes salt;
  std::span<const std::uint8_t> bitmap;
  bool has(std::uint16_t type) const {
    return dnssec_nsec_bitmap_contains(bitmap.data(), static_cast<std::uint16_t>(bitmap.size()), type);
  }
  bool opt_out() const { return flags & 1; }
};

std::optional<Bytes> base32hex_decode(std::span<const std::uint8_t> text) {
  Bytes out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::uint8_t c : text) {
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'v') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'V') v = c - 'A' + 10;
    else return std::nullopt;
    acc = (acc << 5) | static_cast<std::uint32_t>(v);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  return out;
}

// The records of the zone with one set of parameters (the first usable record's); records
// with other parameters or an unknown hash algorithm are ignored (RFC 5155 8.1, 8.2).
std::vector<Nsec3View> views(const DenialSets& d, std::span<const std::uint8_t> zone) {
  std::vector<Nsec3View> out;
  for (const Rrset* s : d.nsec3) {
    if (s->owner.empty() || strip_labels(s->owner, 1) != Bytes(zone.begin(), zone.end())) continue;
    const auto owner_hash = base32hex_decode({s->owner.data() + 1, s->owner[0]});
    if (!owner_hash) continue;
    for (const Bytes& rd : s->rdata) {
      if (rd.size() < 6 || rd[0] != 1) continue;
      Nsec3View v;
      v.set = s;
      v.owner_hash = *owner_hash;
      v.flags = rd[1];
      v.iterations = static_cast<std::uint16_t>(rd[2] << 8 | rd[3]);
      const std::size_t salt_len = rd[4];
      if (5 + salt_len + 1 > rd.size()) continue;
      v.salt.assign(rd.begin() + 5, rd.begin() + 5 + static_cast<std::ptrdiff_t>(salt_len));
      const std::size_t hash_len = rd[5 + salt_len];
      const std::size_t at = 6 + salt_len;
      if (at + hash_len > rd.size()) continue;
      v.next_hash.assign(rd.begin() + static_cast<std::ptrdiff_t>(at), rd.begin() + static_cast<std::ptrdiff_t>(at + hash_len));
      v.bitmap = std::span<const std::uint8_t>(rd).subspan(at + hash_len);
      if (!out.empty() && (v.iterations != out[0].iterations || v.salt != out[0].salt)) continue;
      out.push_back(std::move(v));
    }
  }
  return out;
}

// Hashes names with the records' parameters, each name at most once, within the budget.
class Hasher {
public:
  Hasher(const Nsec3View& params, Budget& budget) : iterations_(params.iterations), salt_(params.salt), budget_(budget) {}
  std::optional<Bytes> operator()(std::span<const std::uint8_t> name) {
    Bytes key(name.begin(), name.end());
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    if (!budget_.take_nsec3_hash()) return std::nullopt;
    Bytes h = nsec3_hash(name, iterations_, salt_);
    memo_.emplace(std::move(key), h);
    return h;
  }

private:
  std::uint16_t iterations_;
  Bytes salt_;
  Budget& budget_;
  std::map<Bytes, Bytes> memo_;
};

const Nsec3View* match(const std::vector<Nsec3View>& vs, const Bytes& h) {
  for (const Nsec3View& v : vs)
    if (v.owner_hash == h) return &v;
  return nullptr;
}
const Nsec3View* cover(const std::vector<Nsec3View>& vs, const Bytes& h) {
  for (const Nsec3View& v : vs) {
    if (v.owner_hash.size() != h.size() || v.next_hash.size() != h.size()) continue;
    if (v.owner_hash < v.next_hash ? (v.owner_hash < h && h < v.next_hash) : (v.owner_hash < h || h < v.next_hash))
      return &v;
  }
  return nullptr;
}

struct Encloser {
  Proof status = Proof::not_proven;
  Bytes ce;
  const Nsec3View* next_closer_cover = nullptr;
  const Nsec3View* ce_match = nullptr;
};

// Reports the views a proven proof relied on through d.used and d.opt_out; returns `p`.
Proof report(const DenialSets& d, Proof p, std::initializer_list<const Nsec3View*> relied) {
  if (p != Proof::proven) return p;
  for (const Nsec3View* v : relied) {
    if (!v) continue;
    if (d.used && std::ranges::find(*d.used, v->set) == d.used->end()) d.used->push_back(v->set);
    if (d.opt_out && v->opt_out()) *d.opt_out = true;
  }
  return p;
}

// RFC 5155 8.3: the closest provable encloser of `name` and the record covering the next closer.
Encloser closest_encloser(const std::vector<Nsec3View>& vs, std::span<const std::uint8_t> zone,
                          std::span<const std::uint8_t> name, Hasher& hash) {
  Encloser e;
  Bytes next_closer(name.begin(), name.end());
  Bytes candidate = next_closer;
  const unsigned zl = label_count(zone);
  while (label_count(candidate) >= zl) {
    const auto h = hash(candidate);
    if (!h) return {Proof::limit};
    if (const Nsec3View* m = match(vs, *h)) {
      if (candidate == next_closer) return e;  // the name itself exists: no encloser proof
      // A delegation (NS without SOA) or DNAME at the encloser proves nothing below it.
      if ((m->has(kTypeNs) && !m->has(kTypeSoa)) || m->has(kTypeDname)) return e;
      const auto hn = hash(next_closer);
      if (!hn) return {Proof::limit};
      const Nsec3View* c = cover(vs, *hn);
      if (!c) return e;
      return {Proof::proven, candidate, c, m};
    }
    if (label_count(candidate) == zl) break;
    next_closer = candidate;
    candidate = strip_labels(candidate, 1);
  }
  return e;
}

bool nodata_at(const Nsec3View& v, std::uint16_t qtype) {
  if (v.has(qtype) || v.has(kTypeCname)) return false;
  // A parent-side record at a cut proves only the absence of DS (RFC 6840 4.4); a zone's
  // apex record nothing about its DS, which lives in the parent (RFC 4035 2.4).
  if (qtype != kTypeDs && v.has(kTypeNs) && !v.has(kTypeSoa)) return false;
  if (qtype == kTypeDs && v.has(kTypeSoa)) return false;
  return true;
}

// Shared preamble: the views, and the iteration bound (RFC 9276).
std::optional<Proof> prepare(const DenialSets& d, std::span<const std::uint8_t> zone, Budget& budget,
                             std::vector<Nsec3View>& vs) {
  vs = views(d, zone);
  if (vs.empty()) return Proof::not_proven;
  if (vs[0].iterations > budget.limits().max_nsec3_iterations) {
    budget.counters().nsec3_iterations_over = true;
    return Proof::insecure;
  }
  return std::nullopt;
}

}  // namespace

Bytes nsec3_hash(std::span<const std::uint8_t> name, std::uint16_t iterations, std::span<const std::uint8_t> salt) {
  dnssec_nsec3_params_t p{};
  p.algorithm = DNSSEC_NSEC3_ALGORITHM_SHA1;
  p.iterations = iterations;
  p.salt = dnssec_binary_t{salt.size(), const_cast<std::uint8_t*>(salt.data())};
  const dnssec_binary_t data{name.size(), const_cast<std::uint8_t*>(name.data())};
  dnssec_binary_t out{};
  if (dnssec_nsec3_hash(&data, &p, &out) != DNSSEC_EOK) return {};
  Bytes h(out.data, out.data + out.size);
  dnssec_binary_free(&out);
  return h;
}

Proof nsec3_nxdomain(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                     Budget& budget) {
  std::vector<Nsec3View> vs;
  if (auto early = prepare(d, zone, budget, vs)) return *early;
  Hasher hash(vs[0], budget);
  const Encloser e = closest_encloser(vs, zone, qname, hash);
  if (e.status != Proof::proven) return e.status;
  const auto hw = hash(wildcard_of(e.ce));
  if (!hw) return Proof::limit;
  const Nsec3View* w = cover(vs, *hw);
  if (!w) return Proof::not_proven;
  if (e.next_closer_cover->opt_out()) return Proof::insecure;
  return report(d, Proof::proven, {e.ce_match, e.next_closer_cover, w});
}

Proof nsec3_nodata(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                   std::uint16_t qtype, Budget& budget) {
  std::vector<Nsec3View> vs;
  if (auto early = prepare(d, zone, budget, vs)) return *early;
  Hasher hash(vs[0], budget);
  const auto hq = hash(qname);
  if (!hq) return Proof::limit;
  if (const Nsec3View* m = match(vs, *hq)) return report(d, nodata_at(*m, qtype) ? Proof::proven : Proof::not_proven, {m});
  const Encloser e = closest_encloser(vs, zone, qname, hash);
  if (e.status != Proof::proven) return e.status;
  // DS NODATA under an opt-out span (RFC 5155 8.6): insecure.
  if (qtype == kTypeDs) return e.next_closer_cover->opt_out() ? Proof::insecure : Proof::not_proven;
  // Wildcard NODATA (8.7): *.ce exists without the type.
  const auto hw = hash(wildcard_of(e.ce));
  if (!hw) return Proof::limit;
  const Nsec3View* w = match(vs, *hw);
  if (!w || !nodata_at(*w, qtype)) return Proof::not_proven;
  return report(d, Proof::proven, {e.ce_match, e.next_closer_cover, w});
}

Proof nsec3_wildcard_answer(const DenialSets& d, std::span<const std::uint8_t> zone,
                            std::span<const std::uint8_t> qname, unsigned labels, Budget& budget) {
  std::vector<Nsec3View> vs;
  if (auto early = prepare(d, zone, budget, vs)) return *early;
  const unsigned ql = label_count(qname);
  if (labels >= ql) return Proof::not_proven;
  Hasher hash(vs[0], budget);
  const auto hn = hash(strip_labels(qname, ql - labels - 1));  // the next closer name
  if (!hn) return Proof::limit;
  return cover(vs, *hn) ? Proof::proven : Proof::not_proven;
}

CutProof nsec3_no_ds(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> name,
                     Budget& budget) {
  std::vector<Nsec3View> vs;
  if (auto early = prepare(d, zone, budget, vs))
    return *early == Proof::insecure ? CutProof::insecure_delegation : CutProof::not_proven;
  Hasher hash(vs[0], budget);
  const auto h = hash(name);
  if (!h) return CutProof::limit;
  if (const Nsec3View* m = match(vs, *h)) {
    if (m->has(kTypeDs) || m->has(kTypeSoa) || m->has(kTypeCname)) return CutProof::not_proven;
    return m->has(kTypeNs) ? CutProof::insecure_delegation : CutProof::no_cut;
  }
  const Encloser e = closest_encloser(vs, zone, name, hash);
  if (e.status == Proof::limit) return CutProof::limit;
  if (e.status != Proof::proven) {
    // No record for the name and no encloser proof: an empty non-terminal has a record of
    // its own in NSEC3 (RFC 5155 7.1), so a name without one may be under opt-out only.
    return CutProof::not_proven;
  }
  return e.next_closer_cover->opt_out() ? CutProof::insecure_delegation : CutProof::not_proven;
}

}  // namespace dnsarena::dnssec
