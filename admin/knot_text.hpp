// SPDX-License-Identifier: GPL-3.0-or-later
// libknot's text form of records (knot_rrset_txt_dump) and libzscanner's parser of it,
// behind two small functions: the dump text of one record and back. Using the same
// library as Knot DNS, kdig and knotc keeps every RR type's presentation form right
// (and its parser the one that reads zone files), instead of rdata text of our own.
//
// libknot's C headers carry no extern "C" guards (/work/shared/DEPS.md): they are
// included here, inside the .cpp, and nowhere else in admin/.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dnsarena::admin {

// One record in wire terms: owner (uncompressed wire name), type, class, TTL, rdata.
struct WireRecord {
  std::vector<std::uint8_t> owner;
  std::uint16_t type = 0;
  std::uint16_t rclass = 1;
  std::uint32_t ttl = 0;
  std::vector<std::uint8_t> rdata;
};

// "owner TTL CLASS TYPE RDATA" on one line (no newline), as knot_rrset_txt_dump writes
// it; rdata libknot cannot present (malformed for its type) is written in the generic
// form of RFC 3597 ("\# 4 c0000201"), which the parser reads back byte for byte.
std::string record_to_text(std::span<const std::uint8_t> owner, std::uint16_t type, std::uint16_t rclass,
                           std::uint32_t ttl, std::span<const std::uint8_t> rdata);

// Parses one such line with libzscanner (origin "."). Throws std::invalid_argument with
// libzscanner's message.
class RecordParser {
public:
  RecordParser();
  ~RecordParser();
  RecordParser(const RecordParser&) = delete;
  RecordParser& operator=(const RecordParser&) = delete;
  WireRecord parse(const std::string& line);

private:
  struct Scanner;
  Scanner* scanner_;
};

// Type mnemonic ("A", "TYPE65534") and back (throws std::invalid_argument).
std::string type_to_text(std::uint16_t type);
std::uint16_t type_from_text(const std::string& text);

}  // namespace dnsarena::admin
