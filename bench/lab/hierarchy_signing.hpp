// SPDX-License-Identifier: GPL-3.0-or-later
// The keys of the signed lab hierarchy (dns_hierarchy.hpp, HierarchyOptions::signed_zones):
// generated before any knotd starts, so that every parent zone file carries its
// children's DS and the root's DS is the trust anchor.
//
// keymgr makes one CSK (ECDSA P-256, algorithm 13) per signed zone in a KASP database of
// its own (DIR/kasp). Each knotd that serves a signed zone gets a copy of that database
// (install()) and signs at load (`dnssec-signing: on`, a policy with `manual: on`: the
// generated keys are used as they are); the two root servers thus sign with the same key.
//
//   signed, NSEC     . net. com. example.com. hoster.org. example.org.
//   signed, NSEC3    org. (no salt, 0 iterations)
//   bogus            bogus.com.: signed, but the DS com. carries for it matches no key
//   insecure         every other zone (no DS in its parent): outside.com., sub.example.com.,
//                    lame.com., silent.com., slow.com., broken.com.
//
// The anchor file (anchor_file()) holds the root's DS (digest SHA-256) in zone-file
// syntax: what serve's dnssec.trust_anchor_file, Unbound's trust-anchor-file and Knot
// Resolver's trust_anchors.add_file read.
//
// Cost: one keymgr run per zone to generate and one to print its DS (about 20 runs, well
// under a second for ECDSA keys).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace dnsarena::bench {

class HierarchyKeys {
public:
  // Generates the keys in `dir`/kasp and writes the anchor file in `dir`. Throws
  // std::runtime_error (with keymgr's output) when keymgr cannot be run or fails.
  explicit HierarchyKeys(const std::string& dir);

  // Whether `origin` ("com.", "." ...) is signed (bogus.com. included).
  static bool is_signed(const std::string& origin);
  // The knotd policy `origin` is signed with ("" when unsigned).
  static const char* policy(const std::string& origin);
  // The policies of knot.conf (a "policy:" section) for the knotds that sign.
  static const char* policy_section();
  // Zone-file lines of the DS records the zone `origin` carries for its children.
  std::string ds_lines(const std::string& origin) const;
  // A copy of the KASP database into `kasp_dir` (a knotd's database storage + "/keys").
  void install(const std::string& kasp_dir) const;
  const std::string& anchor_file() const { return anchor_file_; }

private:
  std::string keymgr(const std::vector<std::string>& args) const;

  std::string dir_;
  std::string anchor_file_;
  std::vector<std::pair<std::string, std::string>> ds_;  // (child origin, its DS lines)
};

}  // namespace dnsarena::bench
