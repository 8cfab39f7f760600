#include "yaml_reader.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace dnsarena::sim::fleet {

YAML::Node load_yaml_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open file");
  try {
    return YAML::Load(in);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
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
  if (!n.IsScalar()) r.fail_at(n, key, "expected a number");
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
    std::snprintf(buf, sizeof buf, "value %g out of range [%g, %g]", v, lo, hi);
    fail_at(n, key, buf);
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
  const double v = to_double(*this, n, key);
  if (v != std::floor(v)) fail_at(n, key, "expected a whole number, got '" + n.Scalar() + "'");
  if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)))
    fail_at(n, key, "value " + n.Scalar() + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
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
    const std::string k = it->first.as<std::string>();
    if (!used_.count(k)) fail_at(it->first, k, "unknown key");
  }
}

std::int64_t parse_date_days(const std::string& s) {
  int y = 0, m = 0, d = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%c", &y, &m, &d, &extra) != 3)
    throw std::invalid_argument("expected a date YYYY-MM-DD, got '" + s + "'");
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{static_cast<unsigned>(m)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) throw std::invalid_argument("not a valid date: '" + s + "'");
  return std::chrono::sys_days{ymd}.time_since_epoch().count();
}

std::string format_date_days(std::int64_t days) {
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days}}};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()));
  return buf;
}

}  // namespace dnsarena::sim::fleet
