// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/policy_counters.hpp"

#include <algorithm>
#include <cstring>

namespace dnsarena::workers {

namespace {
constexpr std::size_t kHeaderBytes = 64;
constexpr std::size_t kNamesBytes = kPolicyZoneSlots * kPolicyZoneNameBytes;
constexpr std::size_t kRowBytes = kPolicyZoneSlots * kPolicyKinds * 8;
static_assert(kRowBytes == 8192, "the row layout in policy_counters.hpp");
}  // namespace

PolicyCounters::PolicyCounters(unsigned rows, bool shared) {
  if (rows == 0) rows = 1;
  map_ = common::AnonymousMapping(kHeaderBytes + kNamesBytes + static_cast<std::size_t>(rows) * kRowBytes, shared,
                                  "policy counters table");
  auto* base = static_cast<std::uint8_t*>(map_.data());  // zero-filled: no names, every count 0
  rows_ = reinterpret_cast<std::uint32_t*>(base);
  *rows_ = rows;
  names_ = reinterpret_cast<char*>(base + kHeaderBytes);
  hits_ = reinterpret_cast<std::atomic<std::uint64_t>*>(base + kHeaderBytes + kNamesBytes);
}

void PolicyCounters::set_zone_names(const std::vector<std::string>& names) {
  for (std::size_t z = 0; z < kPolicyZoneSlots; ++z) {
    char* entry = names_ + z * kPolicyZoneNameBytes;
    const std::string_view name = z < names.size() ? std::string_view(names[z]) : std::string_view{};
    const std::size_t n = std::min(name.size(), kPolicyZoneNameBytes - 1);
    if (n) std::memcpy(entry, name.data(), n);  // an empty view's data() may be null
    std::memset(entry + n, 0, kPolicyZoneNameBytes - n);
  }
}

std::vector<PolicyCounters::Zone> PolicyCounters::totals() const {
  std::vector<Zone> out;
  for (std::size_t z = 0; z < kPolicyZoneSlots; ++z) {
    Zone zone;
    const char* entry = names_ + z * kPolicyZoneNameBytes;
    zone.name.assign(entry, ::strnlen(entry, kPolicyZoneNameBytes - 1));
    bool any = false;
    for (unsigned r = 0; r < rows(); ++r)
      for (std::size_t k = 0; k < kPolicyKinds; ++k) {
        const std::uint64_t n = hits_[(r * kPolicyZoneSlots + z) * kPolicyKinds + k].load(std::memory_order_relaxed);
        zone.hits[k] += n;
        any |= n != 0;
      }
    if (zone.name.empty() && !any) continue;
    if (zone.name.empty()) zone.name = "zone" + std::to_string(z);  // counted by a worker of an earlier policy
    out.push_back(std::move(zone));
  }
  return out;
}

}  // namespace dnsarena::workers
