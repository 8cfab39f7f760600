// SPDX-License-Identifier: GPL-3.0-or-later
// Strict reading of YAML config files: every error names file, line, column and key.
// The one reader of fleet, rollout and traffic-profile files (sim/fleet, sim/workload).
//
// Purpose: config files are typed by operators; a typo must fail loudly, not be
// ignored. A MapReader wraps one YAML mapping (a key given twice is an error), hands out
// typed values with range checks, and at finish() rejects every key nobody asked for
// (unknown keys, listing the known ones).
//
// Errors are ConfigError with a message "FILE:LINE:COLUMN: key 'K': what" (1-based line
// and column, as editors show them). yaml-cpp's syntax errors are converted the same way.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/config_error.hpp"

namespace dnsarena::common {

// Loads a YAML file; throws ConfigError naming the file (and the position of a syntax error).
YAML::Node load_yaml_file(const std::string& path);
// Parses YAML text; `source` names it in errors, as load_yaml_file names the file.
YAML::Node parse_yaml_text(std::string_view text, const std::string& source);

// "file:line:col" of a node (1-based).
std::string where(const std::string& file, const YAML::Node& node);

class MapReader {
public:
  // Throws ConfigError when `node` is not a mapping or names a key twice.
  MapReader(std::string file, YAML::Node node, std::string context);

  bool has(const std::string& key) const;
  // Typed accessors; those without a fallback throw when the key is missing. Errors:
  // "expected a scalar number", "expected a number, got 'x'", "expected a non-negative
  // integer, got 'x'", "out of range: must be in [lo, hi], got x".
  double number(const std::string& key, double lo, double hi);
  double number_or(const std::string& key, double fallback, double lo, double hi);
  std::uint64_t integer(const std::string& key, std::uint64_t lo, std::uint64_t hi);
  std::uint64_t integer_or(const std::string& key, std::uint64_t fallback, std::uint64_t lo, std::uint64_t hi);
  std::string text(const std::string& key);
  std::string text_or(const std::string& key, const std::string& fallback);
  bool boolean_or(const std::string& key, bool fallback);
  // A nested mapping / sequence (marks the key as used).
  MapReader map(const std::string& key);
  YAML::Node sequence(const std::string& key);
  YAML::Node raw(const std::string& key);  // the node itself; marks used

  // Throws for the first key that was never read ("unknown key (known: ...)").
  void finish();

  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  [[noreturn]] void fail_at(const YAML::Node& n, const std::string& key, const std::string& what) const;
  const std::string& file() const { return file_; }
  const YAML::Node& node() const { return node_; }
  std::string key_path(const std::string& key) const { return context_.empty() ? key : context_ + "." + key; }

private:
  YAML::Node get(const std::string& key, bool required);
  std::string file_;
  YAML::Node node_;
  std::string context_;
  std::set<std::string> used_;
};

}  // namespace dnsarena::common
