// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/policy_compiler.hpp"

#include <bit>
#include <cstring>

#include "policy/name_hash.hpp"

namespace dnsarena::policy {

namespace {

std::size_t align_up(std::size_t n) { return (n + kRecordAlign - 1) & ~(kRecordAlign - 1); }

std::size_t data_bytes(const Rule& r) {
  std::size_t n = 0;
  for (const LocalRecord& rec : r.records) n += kRrHeadBytes + rec.rdata.size();
  return n;
}

unsigned label_count(const WireName& name) {
  unsigned n = 0;
  for (std::size_t pos = 0; pos < name.size() && name[pos] != 0; pos += name[pos] + 1u) ++n;
  return n;
}

// The SOA rdata a zone's negative answers carry (empty: none). An SOA rdata is two names
// and 20 bytes: at most 530 bytes.
WireName zone_soa(const ZoneReport& z) { return z.has_soa && z.soa.rdata.size() <= 0xFFFF ? z.soa.rdata : WireName{}; }

}  // namespace

std::uint32_t slot_count_for(std::size_t rules) {
  const std::size_t want = rules + rules / 3 + 1;
  return static_cast<std::uint32_t>(std::bit_ceil(std::max<std::size_t>(16, want)));
}

// 8 to 16 bits per trigger (1 MiB at 1 M rules): about 3 to 5% of names pass falsely and
// cost a slot probe, while the filter mostly stays in a core's L2 (a 16-to-32-bit filter,
// 2 MiB, passed 1% falsely but was read from L3: the no-match lookup took 1.5-3 ns longer,
// docs/benchmarking.md).
std::uint32_t filter_words_for(std::size_t rules) {
  return static_cast<std::uint32_t>(std::bit_ceil(std::max<std::size_t>(1, rules / 8)));
}

std::vector<std::uint8_t> compile_policy(const RuleSet& set) {
  const std::vector<Rule>& rules = set.rules();
  const std::uint32_t slots = slot_count_for(rules.size());
  const std::uint32_t words = filter_words_for(rules.size());
  const std::size_t records_offset = sizeof(ImageHeader) + 8ull * slots + 8ull * words;
  std::size_t bytes = records_offset;
  for (const Rule& r : rules) {
    const std::size_t data = data_bytes(r);
    if (data > 0xFFFF) throw PolicyError("policy: the local data of " + std::to_string(r.records.size()) +
                                         " records at one name exceed 65535 bytes");
    bytes += align_up(sizeof(RuleRecordHead) + r.name.size() + data);
  }
  const std::vector<ZoneReport>& zones = set.zones();
  const std::size_t zones_offset = bytes;
  bytes += 4 * zones.size();
  for (const ZoneReport& z : zones) bytes += align_up(sizeof(ZoneInfoHead) + z.origin.size() + zone_soa(z).size());
  if (bytes > 0xFFFFFFFFull) throw PolicyError("policy: the compiled image exceeds 4 GiB");
  std::vector<std::uint8_t> image(bytes, 0);
  ImageHeader h{};
  h.magic = kImageMagic;
  h.format_version = kImageFormatVersion;
  h.header_bytes = sizeof(ImageHeader);
  h.image_bytes = bytes;
  h.slot_count = slots;
  h.rule_count = static_cast<std::uint32_t>(rules.size());
  h.slots_offset = sizeof(ImageHeader);
  h.records_offset = static_cast<std::uint32_t>(records_offset);
  h.zone_count = static_cast<std::uint32_t>(set.zones().size());
  h.filter_words = words;
  auto* slot = reinterpret_cast<std::uint64_t*>(image.data() + sizeof(ImageHeader));
  auto* filter = slot + slots;
  std::size_t pos = records_offset;
  // The slots and filter words are written in hash order, at random: those of the rule
  // kPrefetchAhead later are prefetched (a 1M-rule image otherwise waits for a cache miss
  // or two per rule).
  constexpr std::size_t kPrefetchAhead = 8;
  for (std::size_t k = 0; k < rules.size(); ++k) {
    const Rule& r = rules[k];
    if (k + kPrefetchAhead < rules.size()) {
      const std::uint64_t ahead = rules[k + kPrefetchAhead].hash;
      __builtin_prefetch(&slot[ahead & (slots - 1)], 1);
      __builtin_prefetch(&filter[filter_word(ahead, words)], 1);
    }
    RuleRecordHead head{};
    head.name_len = static_cast<std::uint8_t>(r.name.size());
    head.flags = static_cast<std::uint8_t>((r.wildcard ? kFlagWildcard : 0) |
                                           (static_cast<unsigned>(r.action) << kActionShift) |
                                           (static_cast<unsigned>(r.kind) << kKindShift));
    head.zone = r.zone;
    head.rr_count = static_cast<std::uint16_t>(r.records.size());
    head.data_len = static_cast<std::uint16_t>(data_bytes(r));
    std::uint8_t* p = image.data() + pos;
    std::memcpy(p, &head, sizeof head);
    std::memcpy(p + sizeof head, r.name.data(), r.name.size());
    std::uint8_t* d = p + sizeof head + r.name.size();
    for (const LocalRecord& rec : r.records) {
      const std::uint16_t rdlen = static_cast<std::uint16_t>(rec.rdata.size());
      std::memcpy(d, &rec.type, 2);
      std::memcpy(d + 2, &rdlen, 2);
      std::memcpy(d + 4, &rec.ttl, 4);
      std::memcpy(d + kRrHeadBytes, rec.rdata.data(), rdlen);
      d += kRrHeadBytes + rdlen;
    }
    const std::uint64_t hash = r.hash;  // RuleSet computed it (rule_set.cpp)
    std::uint32_t tag = static_cast<std::uint32_t>(hash >> 32);
    if (tag == 0) tag = 1;
    std::size_t i = hash & (slots - 1);
    while (slot[i] != 0) i = (i + 1) & (slots - 1);
    slot[i] = slot_of(static_cast<std::uint32_t>(pos / kRecordAlign), tag);
    filter[filter_word(hash, words)] |= filter_bits(hash);
    if (r.kind == TriggerKind::qname) {
      const unsigned labels = label_count(r.name);
      (r.wildcard ? h.wildcard_labels : h.exact_labels) |= label_bit(labels);
    } else {
      std::uint64_t* lens = r.kind == TriggerKind::client_ip ? h.client_ip_lens : h.response_ip_lens;
      lens[r.name[0] / 64] |= std::uint64_t{1} << (r.name[0] % 64);
    }
    pos += align_up(sizeof head + r.name.size() + head.data_len);
  }
  h.zones_offset = static_cast<std::uint32_t>(zones_offset);
  pos = zones_offset + 4 * zones.size();
  for (std::size_t z = 0; z < zones.size(); ++z) {
    const std::uint32_t at = static_cast<std::uint32_t>(pos);
    std::memcpy(image.data() + zones_offset + 4 * z, &at, 4);
    const WireName soa = zone_soa(zones[z]);
    ZoneInfoHead head{};
    head.origin_len = static_cast<std::uint8_t>(zones[z].origin.size());
    head.flags = zones[z].has_soa ? kZoneHasSoa : 0;
    head.soa_len = static_cast<std::uint16_t>(soa.size());
    head.soa_ttl = zones[z].soa.ttl;
    std::uint8_t* p = image.data() + pos;
    std::memcpy(p, &head, sizeof head);
    std::memcpy(p + sizeof head, zones[z].origin.data(), zones[z].origin.size());
    std::memcpy(p + sizeof head + zones[z].origin.size(), soa.data(), soa.size());
    pos += align_up(sizeof head + zones[z].origin.size() + soa.size());
  }
  std::memcpy(image.data(), &h, sizeof h);
  return image;
}

}  // namespace dnsarena::policy
