// SPDX-License-Identifier: GPL-3.0-or-later
// The known entries a warm-upgrade test writes into a segment, by any writer whose API
// has the shape of cache/cache.hpp (the current one, or an old format's when its image in
// tests/cache/fixtures/ was written), so the test can check each one after a migration.
//
//   warm entry i (0 <= i < count)   e<i>.warm.test. A 10.77.<i/256>.<i%256>, TTL `ttl`,
//                                   inserted `age_step * (count - i)` seconds ago
//                                   (e0 is the oldest, e<count-1> the newest)
//   expired entry j (j < expired)   x<j>.warm.test. A 10.78.0.<j%256>, TTL 10, inserted
//                                   1,000 seconds ago (dead: a migration skips it)
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dnsarena::test {

struct WarmSpec {
  unsigned count = 50;
  unsigned expired = 0;
  std::uint32_t ttl = 3600;
  std::uint32_t age_step = 2;
};

inline std::string warm_name(unsigned i) { return "e" + std::to_string(i) + ".warm.test."; }
inline std::array<std::uint8_t, 4> warm_address(unsigned i) {
  return {10, 77, static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i)};
}
inline std::uint32_t warm_age(const WarmSpec& s, unsigned i) { return s.age_step * (s.count - i); }

// Wire form of a dotted name with a trailing dot.
inline std::vector<std::uint8_t> warm_wire(const std::string& dotted) {
  std::vector<std::uint8_t> w;
  std::size_t start = 0;
  for (std::size_t dot; (dot = dotted.find('.', start)) != std::string::npos; start = dot + 1) {
    w.push_back(static_cast<std::uint8_t>(dot - start));
    w.insert(w.end(), dotted.begin() + static_cast<long>(start), dotted.begin() + static_cast<long>(dot));
  }
  w.push_back(0);
  return w;
}

// Inserts the entries of `s` oldest first. Returns how many the cache took.
template <class Cache, class CacheKey, class Answer, class RecordData, class Inserted>
unsigned write_warm_entries(Cache& cache, const WarmSpec& s, std::uint32_t now, Inserted is_inserted) {
  unsigned taken = 0;
  auto put = [&](const std::string& name, std::array<std::uint8_t, 4> addr, std::uint32_t ttl, std::uint32_t at) {
    const std::vector<std::uint8_t> wire = warm_wire(name);
    const CacheKey key(wire, 1);
    RecordData rec;
    rec.type = 1;
    rec.ttl = ttl;
    rec.rdata = addr;
    Answer answer;
    answer.ttl = ttl;
    answer.sections[0] = {&rec, 1};
    taken += is_inserted(cache.insert(key, answer, at)) ? 1 : 0;
  };
  for (unsigned j = 0; j < s.expired; ++j)
    put("x" + std::to_string(j) + ".warm.test.", {10, 78, 0, static_cast<std::uint8_t>(j)}, 10, now - 1000);
  for (unsigned i = 0; i < s.count; ++i) put(warm_name(i), warm_address(i), s.ttl, now - warm_age(s, i));
  return taken;
}

}  // namespace dnsarena::test
