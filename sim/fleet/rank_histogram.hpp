// SPDX-License-Identifier: GPL-3.0-or-later
// Exact order statistics of a multiset whose values come from a known finite set.
//
// The fleet's RSS values all come from the age tables (one value per curve, version and
// age), so each value is replaced by its index in the sorted set of distinct values
// once, up front. The multiset is then a count per index plus a count per block of
// kBlock indices: add/remove are O(1), and the k-th smallest is found by walking the
// block counts, then the counts inside one block: O(V / kBlock + kBlock). A step of
// 10,000 instances, of which most do not change, costs their changes plus one walk,
// instead of nth_element over all of them per percentile.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dnsarena::sim::fleet {

class RankHistogram {
public:
  static constexpr std::size_t kBlock = 1024;

  explicit RankHistogram(std::size_t distinct_values)
      : counts_(distinct_values, 0), blocks_(distinct_values / kBlock + 1, 0) {}

  void add(std::uint32_t index) {
    ++counts_[index];
    ++blocks_[index / kBlock];
  }
  void remove(std::uint32_t index) {
    --counts_[index];
    --blocks_[index / kBlock];
  }

  // out[j] = index of the value of rank ranks[j] (0-based, the ranks[j]+1-th smallest).
  // REQUIRES: ranks ascending, each below the number of values held.
  void select(const std::size_t* ranks, std::size_t n, std::uint32_t* out) const {
    std::size_t below = 0;  // values in blocks before `b`
    std::size_t b = 0;
    for (std::size_t j = 0; j < n; ++j) {
      while (below + blocks_[b] <= ranks[j]) below += blocks_[b++];
      std::size_t at = below;
      std::size_t i = b * kBlock;
      while (at + counts_[i] <= ranks[j]) at += counts_[i++];
      out[j] = static_cast<std::uint32_t>(i);
    }
  }

private:
  std::vector<std::uint32_t> counts_;
  std::vector<std::uint32_t> blocks_;
};

}  // namespace dnsarena::sim::fleet
