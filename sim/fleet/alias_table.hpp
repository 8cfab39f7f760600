// SPDX-License-Identifier: GPL-3.0-or-later
// Walker's alias method (Vose's construction): draws index i with probability
// w_i / sum(w) in O(1) from one 64-bit random number.
//
// Layout: one 8-byte cell per index: the threshold (u32, probability of keeping the
// cell's own index, scaled to 2^32) and the alias (u32). A draw takes the cell from the
// high 32 bits of the random number (multiply-shift, no division) and compares the low
// 32 bits with the threshold: one memory access per draw.
// Costs: build O(n) time, 8n bytes (2 MiB huge pages from 2 MiB on: huge_page_allocator.hpp).
// Weights need not be normalized; n < 2^32.
#pragma once
#include <cstdint>
#include <vector>

#include "huge_page_allocator.hpp"

namespace dnsarena::sim::fleet {

class AliasTable {
public:
  AliasTable() = default;
  explicit AliasTable(const std::vector<double>& weights) {
    const std::size_t n = weights.size();
    cells_.resize(n);
    if (n == 0) return;
    double sum = 0;
    for (double w : weights) sum += w;
    std::vector<double> scaled(n);
    std::vector<std::uint32_t> small, large;
    for (std::size_t i = 0; i < n; ++i) {
      scaled[i] = sum > 0 ? weights[i] * static_cast<double>(n) / sum : 1.0;
      (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const std::uint32_t s = small.back(), l = large.back();
      small.pop_back();
      cells_[s] = {threshold(scaled[s]), l};
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    // Leftovers are 1 up to rounding: they keep their own index.
    for (std::uint32_t i : large) cells_[i] = {kAlways, i};
    for (std::uint32_t i : small) cells_[i] = {kAlways, i};
  }

  std::size_t size() const { return cells_.size(); }
  bool empty() const { return cells_.empty(); }

  // REQUIRES: !empty(). `r` is a uniform 64-bit random number.
  std::uint32_t draw(std::uint64_t r) const {
    const std::uint32_t i = cell_of(r);
    const Cell c = cells_[i];
    return static_cast<std::uint32_t>(r) < c.threshold || c.threshold == kAlways ? i : c.alias;
  }
  // The cell draw(r) reads: prefetch it when drawing many values.
  void prefetch(std::uint64_t r) const { __builtin_prefetch(&cells_[cell_of(r)]); }

private:
  std::uint32_t cell_of(std::uint64_t r) const { return static_cast<std::uint32_t>(((r >> 32) * cells_.size()) >> 32); }
  static constexpr std::uint32_t kAlways = 0xFFFFFFFFu;
  static std::uint32_t threshold(double p) {
    const double t = p * 4294967296.0;
    return t >= 4294967295.0 ? kAlways : static_cast<std::uint32_t>(t);
  }
  struct Cell {
    std::uint32_t threshold;
    std::uint32_t alias;
  };
  std::vector<Cell, HugePageAllocator<Cell>> cells_;
};

}  // namespace dnsarena::sim::fleet
