// SPDX-License-Identifier: GPL-3.0-or-later
// Bounds on the work of one validation, against validator attacks: KeyTrap
// (CVE-2023-50387: many DNSKEYs sharing one key tag times many RRSIGs makes every
// signature try every key) and NSEC3 hash floods (CVE-2023-50868: many labels times many
// iterations). A Budget is created per validation (one response, or one chain step), every
// signature check and NSEC3 hash is taken from it, and the counts are reported with the
// verdict, so callers can export them.
//
//   bound                      default  exceeded ->
//   max_key_tag_collisions     4        keys beyond it with the RRSIG's tag are not tried
//   max_signature_validations  16       bogus (EDE 6): the validation stops
//   max_nsec3_hashes           64       bogus (EDE 6): the denial is not proven
//   max_nsec3_iterations       150      insecure (RFC 9276 section 3.2; no EDE)
//
// Defaults: Unbound 1.19.1 stops after 8 failed signature checks per RRset and 4 key
// tag collisions; Knot Resolver allows 1-2 crypto failures per RRset. 16 checks cover a
// zone with a KSK, two ZSKs in a rollover and signatures of two algorithms on every set of
// a response with a CNAME, its target and a wildcard denial.
#pragma once
#include <cstdint>

namespace dnsarena::dnssec {

struct Limits {
  std::uint32_t max_key_tag_collisions = 4;
  std::uint32_t max_signature_validations = 16;
  std::uint32_t max_nsec3_hashes = 64;
  std::uint32_t max_nsec3_iterations = 150;
};

// The work one validation did and the bounds it hit.
struct WorkCounters {
  std::uint32_t signature_validations = 0;  // crypto verifications run
  std::uint32_t nsec3_hashes = 0;           // NSEC3 hash computations (each: 1 + iterations SHA-1)
  std::uint32_t key_tag_collisions_skipped = 0;  // keys not tried past max_key_tag_collisions
  bool signature_limit_hit = false;
  bool nsec3_hash_limit_hit = false;
  bool nsec3_iterations_over = false;

  void add(const WorkCounters& o) {
    signature_validations += o.signature_validations;
    nsec3_hashes += o.nsec3_hashes;
    key_tag_collisions_skipped += o.key_tag_collisions_skipped;
    signature_limit_hit |= o.signature_limit_hit;
    nsec3_hash_limit_hit |= o.nsec3_hash_limit_hit;
    nsec3_iterations_over |= o.nsec3_iterations_over;
  }
};

class Budget {
public:
  explicit Budget(const Limits& limits) : limits_(limits) {}
  const Limits& limits() const { return limits_; }
  WorkCounters& counters() { return counters_; }
  const WorkCounters& counters() const { return counters_; }

  // One signature verification; false (and the limit recorded) when none is left.
  bool take_signature_validation() {
    if (counters_.signature_validations >= limits_.max_signature_validations) {
      counters_.signature_limit_hit = true;
      return false;
    }
    ++counters_.signature_validations;
    return true;
  }
  bool take_nsec3_hash() {
    if (counters_.nsec3_hashes >= limits_.max_nsec3_hashes) {
      counters_.nsec3_hash_limit_hit = true;
      return false;
    }
    ++counters_.nsec3_hashes;
    return true;
  }

private:
  Limits limits_;
  WorkCounters counters_;
};

}  // namespace dnsarena::dnssec
