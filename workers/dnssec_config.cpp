// SPDX-License-Identifier: GPL-3.0-or-later
// The dnssec: section of the serve config (dnssec_config.hpp).
#include "workers/dnssec_config.hpp"

#include <filesystem>
#include <stdexcept>

#include "common/yaml_reader.hpp"
#include "dnssec/autotrust.hpp"
#include "dnssec/rrset.hpp"

namespace dnsarena::workers {

void read_dnssec_config(common::MapReader& s, const std::string& config_dir, DnssecConfig& d) {
  const YAML::Node file_node = s.raw("trust_anchor_file");
  if (!file_node.IsNull()) {
    if (!file_node.IsScalar() || file_node.as<std::string>().empty())
      s.fail_at(file_node, "trust_anchor_file", "expected a file name");
    std::filesystem::path file = file_node.as<std::string>();
    if (file.is_relative() && !config_dir.empty()) file = std::filesystem::path(config_dir) / file;
    d.trust_anchor_file = file.string();
  }
  const bool has_validate = s.has("validate");
  d.validate = s.boolean_or("validate", !d.trust_anchor_file.empty());
  if (d.validate && d.trust_anchor_file.empty())
    s.fail(has_validate ? "validate" : "trust_anchor_file", "validation needs a trust_anchor_file");

  d.aggressive_nsec = s.boolean_or("aggressive_nsec", d.aggressive_nsec);

  auto anchors = std::make_shared<dnssec::TrustAnchors>();
  if (!d.trust_anchor_file.empty()) {
    try {
      anchors->add_file(d.trust_anchor_file);
    } catch (const dnssec::TrustAnchorError& e) {
      s.fail_at(file_node, "trust_anchor_file", e.what());
    }
  }
  if (const YAML::Node ntas = s.raw("negative_trust_anchors"); !ntas.IsNull()) {
    if (!ntas.IsSequence()) s.fail("negative_trust_anchors", "expected a list of domain names");
    if (d.trust_anchor_file.empty())
      s.fail("negative_trust_anchors", "negative trust anchors need a trust_anchor_file");
    for (const auto& item : ntas) {
      if (!item.IsScalar()) s.fail_at(item, "negative_trust_anchors", "expected a domain name");
      const std::string text = item.as<std::string>();
      try {
        anchors->add_negative(dnssec::name_from_text(text));
      } catch (const std::invalid_argument& e) {
        s.fail_at(item, "negative_trust_anchors", "not a domain name: '" + text + "'");
      }
      d.negative_trust_anchors.push_back(text);
    }
  }
  if (s.node()["limits"].IsDefined()) {
    if (s.node()["limits"].IsNull()) s.fail("limits", "expected a mapping of keys");
    common::MapReader l = s.map("limits");
    dnssec::Limits& lim = d.limits;
    auto bound = [&](const char* key, std::uint32_t& v, std::uint64_t lo, std::uint64_t hi) {
      v = static_cast<std::uint32_t>(l.integer_or(key, v, lo, hi));
    };
    bound("max_key_tag_collisions", lim.max_key_tag_collisions, 1, 64);
    bound("max_signature_validations", lim.max_signature_validations, 1, 1024);
    bound("max_nsec3_hashes", lim.max_nsec3_hashes, 1, 4096);
    bound("max_nsec3_iterations", lim.max_nsec3_iterations, 0, 2500);  // RFC 5155 10.3's largest
    l.finish();
  }
  d.auto_update = s.boolean_or("auto_update", d.auto_update);
  d.auto_update_min_interval_s =
      static_cast<std::uint32_t>(s.integer_or("auto_update_min_interval_s", d.auto_update_min_interval_s, 1, 3600));
  d.auto_update_hold_down_s =
      static_cast<std::uint32_t>(s.integer_or("auto_update_hold_down_s", d.auto_update_hold_down_s, 1, 30 * 86400));
  if (d.auto_update) {
    if (d.trust_anchor_file.empty()) s.fail("auto_update", "RFC 5011 updates need a trust_anchor_file");
    try {
      dnssec::read_trust_point(d.trust_anchor_file);
    } catch (const std::exception& e) {
      s.fail("auto_update", std::string("the trust_anchor_file is not one trust point: ") + e.what());
    }
  }
  if (!d.trust_anchor_file.empty()) d.anchors = std::move(anchors);
}

std::shared_ptr<const dnssec::TrustAnchors> read_anchors(const DnssecConfig& d) {
  auto anchors = std::make_shared<dnssec::TrustAnchors>();
  anchors->add_file(d.trust_anchor_file);
  for (const std::string& nta : d.negative_trust_anchors) anchors->add_negative(dnssec::name_from_text(nta));
  return anchors;
}

}  // namespace dnsarena::workers
