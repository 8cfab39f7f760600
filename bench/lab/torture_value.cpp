// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/torture_value.hpp"

#include <cstring>

#include "cache/entry_codec.hpp"
#include "cache/entry_format.hpp"
#include "sim/workload/checked_filler.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::bench {

namespace {

constexpr std::uint16_t kTxt = 16;

std::vector<std::uint8_t> txt_rdata(std::uint32_t k, std::uint32_t v, std::uint16_t w) {
  sim::SplitMix64 r((std::uint64_t{k} << 32) ^ (std::uint64_t{v} * 0x9E3779B97F4A7C15ULL) ^ (std::uint64_t{w} << 17));
  const std::size_t len = 24 + r.next() % 192;
  std::vector<std::uint8_t> b;
  b.push_back(static_cast<std::uint8_t>(len - 1));  // one TXT character-string
  for (int s = 0; s < 32; s += 8) b.push_back(static_cast<std::uint8_t>(k >> s));
  for (int s = 0; s < 32; s += 8) b.push_back(static_cast<std::uint8_t>(v >> s));
  b.push_back(static_cast<std::uint8_t>(w));
  b.push_back(static_cast<std::uint8_t>(w >> 8));
  sim::append_checked_filler(b, len, r.next());
  return b;
}

std::uint32_t load_u32le(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}

}  // namespace

cache::CacheKey torture_key(std::uint32_t k) {
  const auto name = wire::name_to_wire("k" + std::to_string(k) + ".torture.test");
  return cache::CacheKey({name.data(), name.size()}, kTxt);
}

std::vector<std::uint8_t> encode_torture_value(std::uint32_t k, std::uint32_t version, std::uint16_t writer,
                                               std::uint32_t now) {
  const std::vector<std::uint8_t> rdata = txt_rdata(k, version, writer);
  cache::RecordData rec;
  rec.type = kTxt;
  rec.ttl = kTortureTtl;
  rec.rdata = rdata;
  cache::Answer a;
  a.ttl = kTortureTtl;
  a.sections[cache::kAnswer] = {&rec, 1};
  std::vector<std::uint8_t> out;
  cache::encode_entry(torture_key(k), a, now, out);
  return out;
}

std::string verify_torture_value(std::span<const std::uint8_t> entry, std::uint32_t k) {
  const std::string key = "key " + std::to_string(k);
  cache::EntryReader r(entry);
  if (!r.valid() || !r.validate_all()) return key + ": the entry does not parse";
  cache::RecordView first;
  if (!r.next(first) || first.rdata.size() < 24) return key + ": no value record";
  const std::uint32_t got_k = load_u32le(first.rdata.data() + 1);
  const std::uint32_t v = load_u32le(first.rdata.data() + 5);
  const std::uint16_t w = static_cast<std::uint16_t>(first.rdata[9] | (first.rdata[10] << 8));
  if (got_k != k) return key + ": the value of key " + std::to_string(got_k);
  const std::vector<std::uint8_t> want = encode_torture_value(k, v, w, r.inserted());
  const std::size_t want_len = std::size_t{want[0]} | (std::size_t{want[1]} << 8);
  if (want_len != r.length()) return key + ": length " + std::to_string(r.length()) + ", expected " + std::to_string(want_len);
  // Every byte but expire (which depends on the insert time, checked through inserted()).
  for (std::size_t i = 0; i < want_len; ++i) {
    if (i >= cache::kEntryExpireOffset && i < cache::kEntryExpireOffset + 4) continue;
    if (entry[i] != want[i]) return key + " v" + std::to_string(v) + " w" + std::to_string(w) + ": byte " +
                                    std::to_string(i) + " differs";
  }
  return {};
}

}  // namespace dnsarena::bench
