// SPDX-License-Identifier: GPL-3.0-or-later
#include "admin/knot_text.hpp"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern "C" {
#include <libknot/libknot.h>
#include <libzscanner/scanner.h>
}

namespace dnsarena::admin {

namespace {

std::string dump_with(const knot_rrset_t* rr, bool generic) {
  knot_dump_style_t style = KNOT_DUMP_STYLE_DEFAULT;
  style.wrap = false;
  style.show_class = true;
  style.show_ttl = true;
  style.verbose = false;
  style.original_ttl = false;
  style.empty_ttl = false;
  style.human_ttl = false;
  style.generic = generic;
  style.hide_crypto = false;
  style.color = nullptr;
  size_t size = 256;
  char* buf = static_cast<char*>(std::malloc(size));
  const int n = knot_rrset_txt_dump(rr, &buf, &size, &style);
  std::string out = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  std::free(buf);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\t')) out.pop_back();
  return out;
}

}  // namespace

std::string record_to_text(std::span<const std::uint8_t> owner, std::uint16_t type, std::uint16_t rclass,
                           std::uint32_t ttl, std::span<const std::uint8_t> rdata) {
  knot_rrset_t* rr = knot_rrset_new(owner.data(), type, rclass, ttl, nullptr);
  if (!rr) throw std::runtime_error("out of memory");
  if (knot_rrset_add_rdata(rr, rdata.data(), static_cast<uint16_t>(rdata.size()), nullptr) != KNOT_EOK) {
    knot_rrset_free(rr, nullptr);
    throw std::runtime_error("cannot build a record for text");
  }
  std::string text = dump_with(rr, false);
  if (text.empty()) text = dump_with(rr, true);
  knot_rrset_free(rr, nullptr);
  if (text.empty()) throw std::runtime_error("libknot cannot write record of type " + type_to_text(type) + " as text");
  return text;
}

struct RecordParser::Scanner {
  zs_scanner_t zs;
};

RecordParser::RecordParser() : scanner_(new Scanner) {
  if (zs_init(&scanner_->zs, ".", KNOT_CLASS_IN, 0) != 0) {
    delete scanner_;
    throw std::runtime_error("libzscanner: cannot initialise");
  }
}

RecordParser::~RecordParser() {
  zs_deinit(&scanner_->zs);
  delete scanner_;
}

WireRecord RecordParser::parse(const std::string& line) {
  zs_scanner_t* s = &scanner_->zs;
  const std::string input = line + "\n";
  if (zs_set_input_string(s, input.data(), input.size()) != 0)
    throw std::invalid_argument("libzscanner: cannot read the line");
  for (;;) {
    if (zs_parse_record(s) != 0) throw std::invalid_argument(std::string("libzscanner: ") + zs_strerror(s->error.code));
    if (s->state == ZS_STATE_DATA) break;
    if (s->state == ZS_STATE_ERROR) throw std::invalid_argument(std::string("libzscanner: ") + zs_strerror(s->error.code));
    if (s->state == ZS_STATE_EOF || s->state == ZS_STATE_STOP) throw std::invalid_argument("no record on the line");
  }
  WireRecord r;
  r.owner.assign(s->r_owner, s->r_owner + s->r_owner_length);
  r.type = s->r_type;
  r.rclass = s->r_class;
  r.ttl = s->r_ttl;
  r.rdata.assign(s->r_data, s->r_data + s->r_data_length);
  return r;
}

std::string type_to_text(std::uint16_t type) {
  char buf[64];
  if (knot_rrtype_to_string(type, buf, sizeof buf) < 0) return "TYPE" + std::to_string(type);
  return buf;
}

std::uint16_t type_from_text(const std::string& text) {
  std::uint16_t t = 0;
  if (knot_rrtype_from_string(text.c_str(), &t) != 0) throw std::invalid_argument("unknown RR type '" + text + "'");
  return t;
}

}  // namespace dnsarena::admin
