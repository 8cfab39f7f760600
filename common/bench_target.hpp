// SPDX-License-Identifier: GPL-3.0-or-later
// One row of a benchmark's targets table: the figure, the rule it must meet, and whether
// it did (printed as a table and as the JSON object's "targets").
#pragma once

namespace dnsarena::common {

struct BenchTarget {
  const char* metric;
  double value;
  const char* rule;
  bool met;
};

}  // namespace dnsarena::common
