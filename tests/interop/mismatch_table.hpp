// SPDX-License-Identifier: GPL-3.0-or-later
// Counts of the differential test's mismatches by category, with one example each.
//
// Purpose: the report the test prints and checks: one row per category (count, the first
// query that showed it: name, type, query shape, what knotd said vs what dnsarena said),
// plus how many replies were compared, so that "0 mismatches" is never "0 compared".
// The same as one JSON object for scripts (tests/interop/run-large.sh).
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace dnsarena::interop {

class MismatchTable {
public:
  struct Row {
    std::uint64_t count = 0;
    std::string example;
  };
  void add(const std::string& category, const std::string& example);
  void compared(std::uint64_t n = 1) { compared_ += n; }
  std::uint64_t comparisons() const { return compared_; }
  std::uint64_t total() const;
  const std::map<std::string, Row>& rows() const { return rows_; }
  // An aligned text table: category, count, example (cut to `example_width` characters).
  std::string render(const std::string& title, std::size_t example_width = 160) const;
  // One JSON object: {"title", "compared", "mismatches", "categories": {name: {count, example}}}.
  std::string json(const std::string& title) const;

private:
  std::map<std::string, Row> rows_;
  std::uint64_t compared_ = 0;
};

}  // namespace dnsarena::interop
