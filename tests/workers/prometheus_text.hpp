// SPDX-License-Identifier: GPL-3.0-or-later
// A strict reader of Prometheus's text exposition format 0.0.4, for the tests of
// /metrics: what a scraper would refuse (or promtool check metrics reports) is an error
// here, so a test needs no Prometheus installed.
//
// Checked: every sample line is `name{label="value",...} number` with legal names and
// escapes; each family has at most one TYPE line, before its samples, and its samples
// are contiguous; no series appears twice; a counter's name ends in _total; a histogram
// family has only _bucket (with le), _sum and _count series, and per label set its
// buckets are cumulative (never decreasing as le grows), end with le="+Inf", and that
// bucket equals _count.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace dnsarena::test {

struct PrometheusText {
  std::vector<std::string> errors;         // empty: the text is valid
  std::map<std::string, double> samples;   // "name{labels as written}" -> value
  std::map<std::string, std::string> types;  // family -> counter, gauge, histogram...
  // The value of series `key` ("name{labels}" exactly as written, "name" without labels);
  // -1 when absent.
  double value(const std::string& key) const {
    const auto it = samples.find(key);
    return it == samples.end() ? -1 : it->second;
  }
};

PrometheusText parse_prometheus_text(const std::string& text);

}  // namespace dnsarena::test
