#include "seed_mix.hpp"

namespace dnsarena::sim {

cache::Answer GeneratedEntry::answer(std::vector<cache::RecordData>& records) const {
  records.clear();
  for (const Bytes& rd : rdatas) {
    cache::RecordData r;
    r.type = qtype;
    r.ttl = ttl;
    r.rdata = rd;
    records.push_back(r);
  }
  cache::Answer a;
  a.ttl = ttl;
  a.sections[cache::kAnswer] = records;
  return a;
}

void EntryGenerator::generate(std::uint64_t i, GeneratedEntry& out) const {
  SplitMix64 rng(seed_ * 0x9E3779B97F4A7C15ULL ^ (i + 1) * 0xD1B54A32D192ED03ULL);
  out.qname.clear();
  const unsigned labels = static_cast<unsigned>(rng.range(p_.min_labels, p_.max_labels));
  for (unsigned l = 0; l < labels; ++l) {
    const unsigned len = static_cast<unsigned>(rng.range(p_.label_min, p_.label_max));
    out.qname.push_back(static_cast<std::uint8_t>(len));
    for (unsigned c = 0; c < len; ++c) out.qname.push_back(static_cast<std::uint8_t>('a' + rng.next() % 26));
  }
  out.qname.push_back(0);
  const double u = rng.unit() * (p_.share_a + p_.share_aaaa + p_.share_txt);
  out.qtype = u < p_.share_a ? cache::kTypeA : u < p_.share_a + p_.share_aaaa ? cache::kTypeAAAA : 16;
  out.ttl = static_cast<std::uint32_t>(rng.range(p_.ttl_min, p_.ttl_max));
  const unsigned n = static_cast<unsigned>(rng.range(p_.min_records, p_.max_records));
  out.rdatas.resize(n);
  for (unsigned r = 0; r < n; ++r) {
    Bytes& rd = out.rdatas[r];
    rd.clear();
    if (out.qtype == cache::kTypeA) {
      const std::uint64_t v = rng.next();
      for (int b = 0; b < 4; ++b) rd.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    } else if (out.qtype == cache::kTypeAAAA) {
      const std::uint64_t v1 = rng.next(), v2 = rng.next();
      for (int b = 0; b < 8; ++b) rd.push_back(static_cast<std::uint8_t>(v1 >> (8 * b)));
      for (int b = 0; b < 8; ++b) rd.push_back(static_cast<std::uint8_t>(v2 >> (8 * b)));
    } else {
      // TXT: one character-string; the whole rdata is 64..224 bytes.
      const unsigned total = static_cast<unsigned>(rng.range(p_.txt_min_bytes, p_.txt_max_bytes));
      rd.push_back(static_cast<std::uint8_t>(total - 1));
      for (unsigned c = 1; c < total; ++c) rd.push_back(static_cast<std::uint8_t>(' ' + rng.next() % 95));
    }
  }
}

}  // namespace dnsarena::sim
