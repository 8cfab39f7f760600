// SPDX-License-Identifier: GPL-3.0-or-later
// The median of a set of measurements, as the benches quote them: the middle value, or the
// mean of the two middle values for an even count; 0 for none. O(n) (nth_element).
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace dnsarena::common {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const std::size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
  const double upper = v[m];
  if (v.size() % 2 != 0) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m));
  return (lower + upper) / 2.0;
}

}  // namespace dnsarena::common
