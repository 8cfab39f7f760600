// SPDX-License-Identifier: GPL-3.0-or-later
// The naive heap cache the benchmark measures dnsarena against, in the same run.
//
// What a straightforward C++ cache looks like before any of the seed's changes:
// std::unordered_map from a std::string key to an entry holding three std::vectors of
// records; each record has its own std::string owner and a std::variant rdata as large as
// its largest alternative (a NAPTR-like struct of three strings, a name and two
// integers). Same key bytes, same answers, same response bytes as the arena.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/entry_codec.hpp"
#include "cache/response_writer.hpp"

namespace dnsarena::bench {

struct NaptrLikeRdata {
  std::string flags, services, regexp, replacement;
  std::uint16_t order = 0, preference = 0;
};
using BaselineRdata = std::variant<std::array<std::uint8_t, 4>, std::array<std::uint8_t, 16>, std::string, NaptrLikeRdata>;

struct BaselineRecord {
  std::string owner;
  std::uint16_t type = 0, rclass = 1;
  std::uint32_t ttl = 0;
  BaselineRdata rdata;
};

struct BaselineEntry {
  std::vector<BaselineRecord> sections[3];
  std::uint32_t inserted = 0, ttl = 0;
  std::uint8_t rcode = 0;
  bool authentic_data = false;
  std::uint64_t hits = 0;
};

class BaselineCache {
public:
  void insert(const cache::CacheKey& key, const cache::Answer& answer, std::uint32_t now);
  // Returns the response size, 0 on miss.
  std::size_t lookup_response(const cache::CacheKey& key, const cache::QueryInfo& q, std::uint32_t now,
                              std::uint8_t* out, std::size_t capacity);
  std::size_t size() const { return map_.size(); }

private:
  std::unordered_map<std::string, BaselineEntry> map_;
};

}  // namespace dnsarena::bench
