// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/interop/mismatch_table.hpp"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

namespace dnsarena::interop {

void MismatchTable::add(const std::string& category, const std::string& example) {
  Row& r = rows_[category];
  if (r.count++ == 0) r.example = example;
}

std::uint64_t MismatchTable::total() const {
  std::uint64_t t = 0;
  for (const auto& [c, r] : rows_) t += r.count;
  return t;
}

std::string MismatchTable::render(const std::string& title, std::size_t example_width) const {
  std::size_t w = 8;
  for (const auto& [c, r] : rows_) w = std::max(w, c.size());
  std::ostringstream o;
  o << title << ": " << compared_ << " replies compared, " << total() << " mismatches\n";
  if (rows_.empty()) return o.str();
  o << "  " << std::string("category") << std::string(w - 8, ' ') << "   count  example\n";
  for (const auto& [c, r] : rows_) {
    std::string count = std::to_string(r.count);
    std::string ex = r.example.size() > example_width ? r.example.substr(0, example_width) + "..." : r.example;
    o << "  " << c << std::string(w - c.size(), ' ') << std::string(8 - std::min<std::size_t>(8, count.size()), ' ')
      << count << "  " << ex << "\n";
  }
  return o.str();
}

std::string MismatchTable::json(const std::string& title) const {
  nlohmann::json j{{"title", title}, {"compared", compared_}, {"mismatches", total()}};
  j["categories"] = nlohmann::json::object();
  for (const auto& [c, r] : rows_) j["categories"][c] = {{"count", r.count}, {"example", r.example}};
  return j.dump();
}

}  // namespace dnsarena::interop
