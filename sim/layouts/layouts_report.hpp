// SPDX-License-Identifier: GPL-3.0-or-later
// Rendering measure_layouts() rows: the human table (with the published fleet's figures
// beside v0 and v5, our v5/v0 ratios against theirs, and the targets checked)
// and the JSON array of rows.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "layout_measure.hpp"

namespace dnsarena::sim::layouts {

// The published fleet's figures (../shared/SEED-NOTES.md, "Their results").
struct PublishedFigures {
  double net_bytes, alloc_bytes, insert_per_s, lookup_ns;
};
inline constexpr PublishedFigures kPublishedBefore{953, 1100, 625'000, 828};
inline constexpr PublishedFigures kPublishedAfter{420, 461, 893'000, 670};

struct ReportContext {
  std::uint64_t entries = 0;
  std::uint64_t seed = 0;
  TrafficProfile profile;
  bool speed = true;
  bool alloc_estimate = false;  // allocated bytes are an estimate (no jemalloc)
  std::vector<std::uint64_t> live_entries;  // per row, after the fill
};

void print_table(std::ostream& os, const std::vector<LayoutRow>& rows, const ReportContext& ctx);
// The rows as a JSON array (sim layouts --json puts it under "layouts").
nlohmann::json rows_json(const std::vector<LayoutRow>& rows);

}  // namespace dnsarena::sim::layouts
