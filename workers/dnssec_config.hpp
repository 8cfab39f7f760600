// SPDX-License-Identifier: GPL-3.0-or-later
// The dnssec: section of the serve config: whether the workers validate forwarded answers
// (validation_jobs.hpp), against which trust anchors, and the validator's bounds.
//
//   dnssec:
//     trust_anchor_file: /usr/share/dns/root.ds   DS or DNSKEY records in zone-file syntax
//                                  (trust_anchors.hpp); relative to the config's directory
//     validate: true               default true when a trust anchor file is set; true
//                                  without one is an error
//     negative_trust_anchors: [example.com]   RFC 7646: names at and below are insecure
//     aggressive_nsec: true        RFC 8198: NXDOMAIN / NODATA from validated NSEC and NSEC3
//                                  (not Opt-Out) ranges without an upstream query
//                                  (aggressive_nsec.hpp); default
//                                  true, used only when validating (Unbound aggressive-nsec,
//                                  Knot Resolver's default)
//     limits: {max_key_tag_collisions: 4, max_signature_validations: 16,
//              max_nsec3_hashes: 64, max_nsec3_iterations: 150}   (dnssec/limits.hpp)
//     auto_update: false           RFC 5011: the supervisor probes the trust point's DNSKEY
//                                  set and writes trust_anchor_file back; a change of the
//                                  trusted keys reaches the workers as a reload does
//                                  (trust_anchor_updater.hpp). Off by default: the file is
//                                  rewritten in place, and a packaged read-only file
//                                  (/usr/share/dns/root.ds) is the operator's to replace
//                                  (Unbound: auto-trust-anchor-file instead of
//                                  trust-anchor-file; Knot Resolver: trust_anchors.add_file
//                                  with managed = true). The file must hold one trust
//                                  point (autotrust, DNSKEY or DS lines of one zone)
//     auto_update_min_interval_s: 3600    the floor of the probe interval (RFC 5011 2.3:
//                                  1 h; 1 .. 3600, lower only for tests)
//     auto_update_hold_down_s: 2592000    the add and remove hold-downs (RFC 5011 2.4: 30
//                                  days; 1 .. 2592000, lower only for tests); the add
//                                  hold-down is never below the DNSKEY set's original TTL
//
// The anchor file is read when the config is loaded (a bad file is a config error with
// TrustAnchorError's "FILE:LINE: what"), so a reload that breaks it keeps the old config.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dnssec/limits.hpp"
#include "dnssec/trust_anchors.hpp"

namespace dnsarena::common {
class MapReader;  // common/yaml_reader.hpp
}

namespace dnsarena::workers {

struct DnssecConfig {
  bool validate = false;
  bool aggressive_nsec = true;  // when validating
  std::string trust_anchor_file;                    // as resolved (absolute or cwd-relative)
  std::vector<std::string> negative_trust_anchors;  // as written
  dnssec::Limits limits;
  bool auto_update = false;
  std::uint32_t auto_update_min_interval_s = 3600;
  std::uint32_t auto_update_hold_down_s = 30 * 86400;
  // The file's anchors with the negative ones; null without a trust_anchor_file.
  std::shared_ptr<const dnssec::TrustAnchors> anchors;

  bool validating() const { return validate && anchors != nullptr; }
};

// The anchors of d.trust_anchor_file as it is now, with d's negative trust anchors.
// Throws dnssec::TrustAnchorError.
std::shared_ptr<const dnssec::TrustAnchors> read_anchors(const DnssecConfig& d);

// Reads the section's keys into `d` (the caller rejects unknown keys). `config_dir`: the
// directory a relative trust_anchor_file is read from. Throws common::ConfigError.
void read_dnssec_config(common::MapReader& s, const std::string& config_dir, DnssecConfig& d);

}  // namespace dnsarena::workers
