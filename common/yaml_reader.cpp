// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/yaml_reader.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace dnsarena::common {

YAML::Node load_yaml_file(const std::string& path) {
  // A directory opens as an ifstream and fails only on the first read, inside yaml-cpp,
  // with std::ios_base::failure (found by fuzz_yaml_config: a fleet's `from: .`).
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw ConfigError(path + ": not a regular file");
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open file");
  try {
    return YAML::Load(in);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": YAML syntax error: " + e.msg);
  } catch (const std::ios_base::failure& e) {
    throw ConfigError(path + ": cannot read: " + e.what());
  }
}

YAML::Node parse_yaml_text(std::string_view text, const std::string& source) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw ConfigError(source + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": YAML syntax error: " + e.msg);
  }
}

std::string where(const std::string& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0) return file;
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

MapReader::MapReader(std::string file, YAML::Node node, std::string context)
    : file_(std::move(file)), node_(std::move(node)), context_(std::move(context)) {
  if (!node_.IsMap())
    throw ConfigError(where(file_, node_) + ": " + (context_.empty() ? std::string("document") : "key '" + context_ + "'") +
                      ": expected a mapping of keys to values");
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
    if (!seen.insert(k).second) fail_at(it->first, k, "duplicate key");
  }
}

void MapReader::fail(const std::string& key, const std::string& what) const {
  const YAML::Node n = node_[key];
  fail_at(n.IsDefined() ? n : node_, key, what);
}

void MapReader::fail_at(const YAML::Node& n, const std::string& key, const std::string& what) const {
  throw ConfigError(where(file_, n) + ": key '" + key_path(key) + "': " + what);
}

bool MapReader::has(const std::string& key) const { return node_[key].IsDefined() && !node_[key].IsNull(); }

YAML::Node MapReader::get(const std::string& key, bool required) {
  used_.insert(key);
  YAML::Node n = node_[key];
  if (!n.IsDefined() || n.IsNull()) {
    if (required) fail_at(node_, key, "missing required key");
    return YAML::Node();
  }
  return n;
}

namespace {
double to_double(const MapReader& r, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) r.fail_at(n, key, "expected a scalar number");
  try {
    return n.as<double>();
  } catch (const YAML::Exception&) {
    r.fail_at(n, key, "expected a number, got '" + n.Scalar() + "'");
  }
}
}  // namespace

double MapReader::number(const std::string& key, double lo, double hi) {
  const YAML::Node n = get(key, true);
  const double v = to_double(*this, n, key);
  if (!(v >= lo && v <= hi)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "out of range: must be in [%g, %g], got ", lo, hi);
    fail_at(n, key, buf + n.Scalar());
  }
  return v;
}

double MapReader::number_or(const std::string& key, double fallback, double lo, double hi) {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  return number(key, lo, hi);
}

std::uint64_t MapReader::integer(const std::string& key, std::uint64_t lo, std::uint64_t hi) {
  const YAML::Node n = get(key, true);
  if (!n.IsScalar()) fail_at(n, key, "expected a scalar number");
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    fail_at(n, key, "expected a non-negative integer, got '" + n.Scalar() + "'");
  }
  if (v != std::floor(v)) fail_at(n, key, "expected a non-negative integer, got '" + n.Scalar() + "'");
  if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)))
    fail_at(n, key, "out of range: must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                        n.Scalar());
  return static_cast<std::uint64_t>(v);
}

std::uint64_t MapReader::integer_or(const std::string& key, std::uint64_t fallback, std::uint64_t lo, std::uint64_t hi) {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  return integer(key, lo, hi);
}

std::string MapReader::text(const std::string& key) {
  const YAML::Node n = get(key, true);
  if (!n.IsScalar()) fail_at(n, key, "expected a string");
  return n.Scalar();
}

std::string MapReader::text_or(const std::string& key, const std::string& fallback) {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  return text(key);
}

bool MapReader::boolean_or(const std::string& key, bool fallback) {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  const YAML::Node n = get(key, true);
  try {
    if (n.IsScalar()) return n.as<bool>();
  } catch (const YAML::Exception&) {
  }
  fail_at(n, key, "expected true or false");
}

MapReader MapReader::map(const std::string& key) {
  const YAML::Node n = get(key, true);
  if (!n.IsMap()) fail_at(n, key, "expected a mapping");
  return MapReader(file_, n, key_path(key));
}

YAML::Node MapReader::sequence(const std::string& key) {
  const YAML::Node n = get(key, true);
  if (!n.IsSequence()) fail_at(n, key, "expected a list");
  return n;
}

YAML::Node MapReader::raw(const std::string& key) { return get(key, false); }

void MapReader::finish() {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
    if (used_.count(k)) continue;
    std::string known;
    for (const std::string& u : used_) known += (known.empty() ? "" : ", ") + u;
    fail_at(it->first, k, "unknown key (known: " + known + ")");
  }
}

}  // namespace dnsarena::common
