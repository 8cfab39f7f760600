// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/workers/prometheus_text.hpp"

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <utility>

namespace dnsarena::test {

namespace {

bool name_char(char c, bool first, bool colon) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

bool valid_name(const std::string& s, bool colon) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!name_char(s[i], i == 0, colon)) return false;
  return true;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool parse_number(const std::string& s, double& v) {
  if (s == "+Inf") v = INFINITY;
  else if (s == "-Inf") v = -INFINITY;
  else if (s == "NaN") v = NAN;
  else {
    if (s.empty()) return false;
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return false;
  }
  return true;
}

// The family a sample belongs to: a histogram's _bucket/_sum/_count series belong to the
// name without the suffix when that name was declared a histogram.
std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"})
    if (ends_with(name, suffix)) {
      const std::string base = name.substr(0, name.size() - std::string(suffix).size());
      const auto it = types.find(base);
      if (it != types.end() && it->second == "histogram") return base;
    }
  return name;
}

struct Series {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

// Parses `line` into `s`; returns an error text, empty when the line is well formed.
std::string parse_sample(const std::string& line, Series& s) {
  std::size_t i = 0;
  while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
  s.name = line.substr(0, i);
  if (!valid_name(s.name, true)) return "bad metric name";
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      std::size_t eq = line.find('=', i);
      if (eq == std::string::npos) return "label without '='";
      const std::string label = line.substr(i, eq - i);
      if (!valid_name(label, false)) return "bad label name '" + label + "'";
      i = eq + 1;
      if (i >= line.size() || line[i] != '"') return "label value not quoted";
      ++i;
      std::string value;
      for (;; ++i) {
        if (i >= line.size()) return "unterminated label value";
        if (line[i] == '"') break;
        if (line[i] == '\\') {
          if (++i >= line.size() || (line[i] != '\\' && line[i] != '"' && line[i] != 'n')) return "bad escape";
        }
        value += line[i];
      }
      ++i;  // the closing quote
      s.labels.emplace_back(label, value);
      if (i < line.size() && line[i] == ',') ++i;
      else if (i >= line.size() || line[i] != '}') return "expected ',' or '}'";
    }
    if (i >= line.size()) return "unterminated label set";
    ++i;
  }
  if (i >= line.size() || line[i] != ' ') return "no value";
  std::string rest = line.substr(i + 1);
  if (const std::size_t sp = rest.find(' '); sp != std::string::npos) {
    double ts = 0;  // an optional integer timestamp
    if (!parse_number(rest.substr(sp + 1), ts)) return "bad timestamp";
    rest = rest.substr(0, sp);
  }
  if (!parse_number(rest, s.value)) return "bad value '" + rest + "'";
  return {};
}

}  // namespace

PrometheusText parse_prometheus_text(const std::string& text) {
  PrometheusText out;
  std::set<std::string> finished;  // families whose samples ended (another family followed)
  std::string current;             // the family of the previous sample or TYPE line
  // Histograms: per family and label set (le aside), the buckets in order and the count.
  struct Buckets {
    std::vector<std::pair<double, double>> le_value;
    double count = -1;
  };
  std::map<std::string, Buckets> histograms;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  auto error = [&](const std::string& what) { out.errors.push_back("line " + std::to_string(number) + ": " + what); };
  auto enter = [&](const std::string& family) {
    if (family == current) return;
    if (!current.empty()) finished.insert(current);
    if (finished.count(family)) error("family " + family + " is not contiguous");
    current = family;
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream words(line.substr(1));
      std::string keyword, name, type;
      words >> keyword >> name >> type;
      if (keyword != "TYPE") continue;  // HELP and plain comments
      if (!valid_name(name, true)) error("bad family name in TYPE");
      if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" && type != "untyped")
        error("unknown type " + type);
      if (out.types.count(name)) error("second TYPE line for " + name);
      if (type == "counter" && !ends_with(name, "_total")) error("counter " + name + " does not end in _total");
      out.types[name] = type;
      enter(name);
      continue;
    }
    Series s;
    if (const std::string e = parse_sample(line, s); !e.empty()) {
      error(e + ": " + line);
      continue;
    }
    const std::string family = family_of(s.name, out.types);
    const auto type = out.types.find(family);
    if (type == out.types.end()) error("sample of " + s.name + " before any TYPE line");
    enter(family);
    std::string key = s.name, rest;
    std::string le;
    for (const auto& [k, v] : s.labels) {
      if (k == "le") le = v;
      else rest += (rest.empty() ? "" : ",") + k + "=\"" + v + "\"";
      key += std::string(key == s.name ? "{" : ",") + k + "=\"" + v + "\"";
    }
    if (key != s.name) key += "}";
    if (!out.samples.emplace(key, s.value).second) error("duplicate series " + key);
    if (type != out.types.end() && type->second == "histogram") {
      Buckets& b = histograms[family + "{" + rest + "}"];
      if (s.name == family + "_bucket") {
        double bound = 0;
        if (le.empty() || !parse_number(le, bound)) error("bucket without a numeric le: " + line);
        else b.le_value.emplace_back(bound, s.value);
      } else if (s.name == family + "_count") {
        b.count = s.value;
      } else if (s.name != family + "_sum") {
        error("series " + s.name + " in histogram " + family);
      }
    }
  }
  for (const auto& [series, b] : histograms) {
    if (b.le_value.empty() || !std::isinf(b.le_value.back().first)) {
      out.errors.push_back(series + ": no le=\"+Inf\" bucket last");
      continue;
    }
    for (std::size_t i = 1; i < b.le_value.size(); ++i)
      if (b.le_value[i].first <= b.le_value[i - 1].first || b.le_value[i].second < b.le_value[i - 1].second)
        out.errors.push_back(series + ": buckets not cumulative in le order");
    if (b.count != b.le_value.back().second) out.errors.push_back(series + ": _count differs from the +Inf bucket");
  }
  return out;
}

}  // namespace dnsarena::test
