// SPDX-License-Identifier: GPL-3.0-or-later
#include "verifiable_value.hpp"

#include <cstring>

#include "sim/workload/checked_filler.hpp"
#include "sim/workload/entry_generator.hpp"

namespace dnsarena::test {

namespace {

std::uint64_t mix(const ValueId& id, std::uint64_t salt) {
  sim::SplitMix64 r((std::uint64_t{id.key} << 32) ^ (std::uint64_t{id.version} * 0x9E3779B97F4A7C15ULL) ^
                    (std::uint64_t{id.writer} << 17) ^ (salt * 0xD1B54A32D192ED03ULL));
  return r.next();
}

Bytes txt_record(const ValueId& id, unsigned index) {
  const std::size_t len = 24 + mix(id, 100 + index) % 200;  // 24..223 bytes of rdata
  Bytes b;
  b.push_back(static_cast<std::uint8_t>(len - 1));  // one TXT character-string
  for (int s = 0; s < 32; s += 8) b.push_back(static_cast<std::uint8_t>(id.key >> s));
  for (int s = 0; s < 32; s += 8) b.push_back(static_cast<std::uint8_t>(id.version >> s));
  b.push_back(static_cast<std::uint8_t>(id.writer));
  b.push_back(static_cast<std::uint8_t>(id.writer >> 8));
  b.push_back(static_cast<std::uint8_t>(index));
  sim::append_checked_filler(b, len, mix(id, 200 + index));
  return b;
}

std::uint32_t load_u32le(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}

}  // namespace

cache::CacheKey verifiable_key(std::uint32_t k) {
  const Bytes name = wire_name("k" + std::to_string(k) + ".verify.test");
  return cache::CacheKey(name, kTXT);
}

OwnedAnswer verifiable_answer(const ValueId& id) {
  OwnedAnswer a;
  a.ttl = kVerifiableTtl;
  const unsigned n = 1 + static_cast<unsigned>(mix(id, 1) % 4);
  for (unsigned i = 0; i < n; ++i) a.add(cache::kAnswer, {}, kTXT, kVerifiableTtl, txt_record(id, i));
  const std::uint64_t ip = mix(id, 2);
  a.add(cache::kAdditional, wire_name("ns.verify.test"), kA, kVerifiableTtl / 2,
        bytes_of({int(ip & 255), int((ip >> 8) & 255), int((ip >> 16) & 255), int((ip >> 24) & 255)}));
  return a;
}

std::vector<std::uint8_t> encode_verifiable(const ValueId& id, std::uint32_t now) {
  std::vector<std::uint8_t> out;
  const OwnedAnswer a = verifiable_answer(id);
  cache::encode_entry(verifiable_key(id.key), a.answer(), now, out);
  return out;
}

std::string verify_entry(std::span<const std::uint8_t> entry, std::uint32_t k, ValueId* id_out) {
  cache::EntryReader r(entry);
  if (!r.valid() || !r.validate_all()) return "entry for key " + std::to_string(k) + " does not parse";
  cache::RecordView first;
  if (!r.next(first) || first.rdata.size() < 24) return "entry for key " + std::to_string(k) + " has no value record";
  ValueId id;
  id.key = load_u32le(first.rdata.data() + 1);
  id.version = load_u32le(first.rdata.data() + 5);
  id.writer = static_cast<std::uint16_t>(first.rdata[9] | (first.rdata[10] << 8));
  if (id_out) *id_out = id;
  if (id.key != k)
    return "lookup of key " + std::to_string(k) + " returned the value of key " + std::to_string(id.key);
  const std::vector<std::uint8_t> want = encode_verifiable(id, r.inserted());
  const std::size_t want_len = std::size_t{want[0]} | (std::size_t{want[1]} << 8);
  if (want_len != r.length())
    return "key " + std::to_string(k) + " v" + std::to_string(id.version) + " w" + std::to_string(id.writer) +
           ": length " + std::to_string(r.length()) + ", expected " + std::to_string(want_len);
  // Every byte but `expire` (4..8), which encodes the insertion time.
  if (std::memcmp(entry.data(), want.data(), 4) != 0 ||
      std::memcmp(entry.data() + 8, want.data() + 8, want_len - 8) != 0) {
    std::size_t at = 0;
    while (at < want_len && (at / 4 == 1 || entry[at] == want[at])) ++at;
    return "key " + std::to_string(k) + " v" + std::to_string(id.version) + " w" + std::to_string(id.writer) +
           ": byte " + std::to_string(at) + " differs from what the writer wrote";
  }
  return {};
}

}  // namespace dnsarena::test
