// SPDX-License-Identifier: GPL-3.0-or-later
// Zone file text to records, through libzscanner (Knot DNS's zone parser): the RPZ files
// and the local_data entries are read by the same parser knotd uses, $ORIGIN, $TTL,
// $INCLUDE and relative names included. Every error is thrown as PolicyError
// "SOURCE:LINE: what".
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "policy/rule_set.hpp"

namespace dnsarena::policy {

struct ScannedRecord {
  WireName owner;  // lowercase wire form
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
  WireName rdata;  // wire form, names uncompressed
  unsigned line = 0;
};

class ZoneScanner {
public:
  // `source` names the input in errors (a path, or "local_data[3]"). `origin`: "." when
  // the text names everything absolutely or sets $ORIGIN.
  ZoneScanner(std::string source, const std::string& origin, std::uint32_t default_ttl = 3600);
  ~ZoneScanner();
  ZoneScanner(const ZoneScanner&) = delete;
  ZoneScanner& operator=(const ZoneScanner&) = delete;

  void open_file(const std::string& path);
  // REQUIRES: `text` outlives the scanner's reading.
  void open_text(std::string_view text);
  // The next record; false at the end. Throws PolicyError at the first error.
  bool next(ScannedRecord& r);
  [[noreturn]] void fail(unsigned line, const std::string& what) const;
  const std::string& source() const { return source_; }

private:
  struct State;
  std::unique_ptr<State> s_;
  std::string source_;
};

}  // namespace dnsarena::policy
