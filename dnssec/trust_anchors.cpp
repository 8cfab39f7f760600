// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/trust_anchors.hpp"

#include "dnssec/c_libraries.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <functional>
#include <memory>

namespace dnsarena::dnssec {

namespace {

struct ScanContext {
  std::string what;
  std::string error;
  std::vector<std::tuple<Bytes, std::uint16_t, Bytes>> records;
};

void on_record(zs_scanner_t* s) {
  auto* ctx = static_cast<ScanContext*>(s->process.data);
  if (!ctx->error.empty()) return;
  const std::string where = ctx->what + ":" + std::to_string(s->line_counter) + ": ";
  if (s->r_class != 1) {
    ctx->error = where + "trust anchor of class " + std::to_string(s->r_class) + ", only IN";
  } else if (s->r_type != kTypeDs && s->r_type != kTypeDnskey) {
    ctx->error = where + "record of type " + std::to_string(s->r_type) + " in a trust anchor file (only DS and DNSKEY)";
  } else {
    ctx->records.emplace_back(lowercase_name({s->r_owner, s->r_owner_length}), s->r_type,
                              Bytes(s->r_data, s->r_data + s->r_data_length));
  }
}

void on_error(zs_scanner_t* s) {
  auto* ctx = static_cast<ScanContext*>(s->process.data);
  if (ctx->error.empty())
    ctx->error = ctx->what + ":" + std::to_string(s->line_counter) + ": " + zs_strerror(s->error.code);
  s->state = ZS_STATE_STOP;
}

void scan(const std::string& what, const std::function<int(zs_scanner_t*)>& set_input,
          std::vector<std::tuple<Bytes, std::uint16_t, Bytes>>& out) {
  auto s = std::make_unique<zs_scanner_t>();
  if (zs_init(s.get(), ".", 1, 3600) != 0) throw TrustAnchorError(what + ": cannot start the zone parser");
  ScanContext ctx{what, {}, {}};
  const bool ok = set_input(s.get()) == 0 && zs_set_processing(s.get(), on_record, on_error, &ctx) == 0;
  if (!ok) {
    const std::string err = what + ": " + zs_strerror(s->error.code);
    zs_deinit(s.get());
    throw TrustAnchorError(err);
  }
  zs_parse_all(s.get());
  if (ctx.error.empty() && s->error.code != 0 && s->error.fatal)
    ctx.error = what + ": " + zs_strerror(s->error.code);
  zs_deinit(s.get());
  if (!ctx.error.empty()) throw TrustAnchorError(ctx.error);
  out = std::move(ctx.records);
}

}  // namespace

std::vector<AnchorRecord> scan_anchor_records(const std::string& text, const std::string& what) {
  std::vector<std::tuple<Bytes, std::uint16_t, Bytes>> records;
  scan(what, [&](zs_scanner_t* s) { return zs_set_input_string(s, text.data(), text.size()); }, records);
  std::vector<AnchorRecord> out;
  out.reserve(records.size());
  for (auto& [owner, type, rdata] : records) out.push_back({std::move(owner), type, std::move(rdata)});
  return out;
}

void TrustAnchors::add_record(const Bytes& owner, std::uint16_t type, std::span<const std::uint8_t> rdata) {
  if (type == kTypeDnskey && rdata.size() >= 2 && (rdata[1] & 0x80)) return;  // revoked (RFC 5011)
  auto it = std::find_if(anchors_.begin(), anchors_.end(), [&](const TrustAnchor& a) { return a.zone == owner; });
  if (it == anchors_.end()) {
    anchors_.push_back(TrustAnchor{owner, {}, {}});
    it = anchors_.end() - 1;
  }
  (type == kTypeDs ? it->ds : it->dnskeys).emplace_back(rdata.begin(), rdata.end());
}

void TrustAnchors::add_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw TrustAnchorError(path + ": cannot be read: " + std::strerror(errno));
  std::stringstream text;
  text << f.rdbuf();
  add_text(text.str(), path);
}

void TrustAnchors::add_text(const std::string& given, const std::string& what) {
  // An autotrust file (RFC 5011, autotrust.hpp) marks each key's state: only valid (2) and
  // missing (3) keys are anchors; a key in its add hold-down (1) is not yet, a revoked
  // one (4) never again. Such lines are blanked, so errors keep their line numbers.
  std::string text;
  std::istringstream lines(given);
  for (std::string line; std::getline(lines, line);) {
    if (const std::size_t at = line.find(";;state="); at != std::string::npos) {
      const char state = at + 8 < line.size() ? line[at + 8] : '?';
      if (state != '2' && state != '3') line.clear();
    }
    text += line;
    text += '\n';
  }
  std::vector<std::tuple<Bytes, std::uint16_t, Bytes>> records;
  scan(what, [&](zs_scanner_t* s) { return zs_set_input_string(s, text.data(), text.size()); }, records);
  if (records.empty()) throw TrustAnchorError(what + ": no DS or DNSKEY record");
  for (const auto& [owner, type, rdata] : records) add_record(owner, type, rdata);
}

void TrustAnchors::add_negative(const Bytes& zone) {
  const Bytes z = lowercase_name(zone);
  if (std::find(negative_.begin(), negative_.end(), z) == negative_.end()) negative_.push_back(z);
}

bool TrustAnchors::remove_negative(const Bytes& zone) {
  return std::erase(negative_, lowercase_name(zone)) > 0;
}

TrustAnchors::Governing TrustAnchors::governing(std::span<const std::uint8_t> name) const {
  Governing g;
  for (const TrustAnchor& a : anchors_)
    if (is_subdomain(name, a.zone) && (!g.anchor || a.zone.size() > g.anchor->zone.size())) g.anchor = &a;
  const Bytes* nta = nullptr;
  for (const Bytes& n : negative_)
    if (is_subdomain(name, n) && (!nta || n.size() > nta->size())) nta = &n;
  if (nta && (!g.anchor || label_count(*nta) >= label_count(g.anchor->zone))) g.negative = *nta;
  return g;
}

}  // namespace dnsarena::dnssec
