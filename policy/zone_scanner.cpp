// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/zone_scanner.hpp"

extern "C" {  // the header declares C functions without saying so
#include <libzscanner/scanner.h>
}

#include "wire/dns_name.hpp"

namespace dnsarena::policy {

struct ZoneScanner::State {
  zs_scanner_t zs;
};

ZoneScanner::ZoneScanner(std::string source, const std::string& origin, std::uint32_t default_ttl)
    : s_(new State), source_(std::move(source)) {  // not make_unique: zs_init clears the 206 KB itself
  if (zs_init(&s_->zs, origin.c_str(), 1 /* IN */, default_ttl) != 0)
    throw PolicyError(source_ + ": cannot start the zone parser (origin '" + origin + "')");
}

ZoneScanner::~ZoneScanner() { zs_deinit(&s_->zs); }

void ZoneScanner::fail(unsigned line, const std::string& what) const {
  throw PolicyError(source_ + ":" + std::to_string(line) + ": " + what);
}

void ZoneScanner::open_file(const std::string& path) {
  if (zs_set_input_file(&s_->zs, path.c_str()) != 0)
    throw PolicyError(source_ + ": cannot read: " + zs_strerror(s_->zs.error.code));
}

void ZoneScanner::open_text(std::string_view text) {
  if (zs_set_input_string(&s_->zs, text.data(), text.size()) != 0)
    throw PolicyError(source_ + ": cannot read the text");
}

bool ZoneScanner::next(ScannedRecord& r) {
  zs_scanner_t* s = &s_->zs;
  for (;;) {
    if (zs_parse_record(s) != 0 || s->state == ZS_STATE_ERROR)
      fail(static_cast<unsigned>(s->line_counter), zs_strerror(s->error.code));
    if (s->state == ZS_STATE_EOF || s->state == ZS_STATE_STOP) return false;
    if (s->state == ZS_STATE_DATA) break;
    // ZS_STATE_INCLUDE and directives: the scanner follows them itself.
  }
  r.owner.resize(s->r_owner_length);
  wire::lowercase_copy(r.owner.data(), {s->r_owner, s->r_owner_length});
  r.type = s->r_type;
  r.ttl = s->r_ttl;
  r.rdata.assign(s->r_data, s->r_data + s->r_data_length);
  r.line = static_cast<unsigned>(s->line_counter);
  return true;
}

}  // namespace dnsarena::policy
