// SPDX-License-Identifier: GPL-3.0-or-later
// serve's `mrc:` section: the miss-ratio curves' sampling (miss_ratio_curves.hpp says
// what each bound is for). Its own header so that serve_config.hpp needs no cache code.
#pragma once
#include <cstdint>

namespace dnsarena::workers {

struct MrcSettings {
  bool enabled = true;
  double sample_rate = 0.001;                  // R before the bounds below
  std::uint64_t min_sampled_entries = 1'000;   // R C at least this (R <= 1)
  std::uint64_t max_sampled_entries = 65'536;  // R C at most this
  static constexpr std::uint64_t kMaxSampledEntriesLimit = 1ull << 24;  // bounds the curves' memory
  bool operator==(const MrcSettings&) const = default;
};

}  // namespace dnsarena::workers
