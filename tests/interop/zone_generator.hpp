// SPDX-License-Identifier: GPL-3.0-or-later
// Zones for the differential test against Knot DNS, generated from a seed.
//
// Purpose: one deterministic description of what knotd serves and what the test asks.
// generate_zones(seed, names) returns the zone files (master-file text) and the list of
// questions; the same seed gives the same bytes (std::mt19937_64 and our own integer
// picks, no std::*_distribution, whose output differs between standard libraries).
//
// Zones (every content zone gets the same kinds of names; long names are sized to its
// origin):
//
//   diff.test.    unsigned   also holds the short-TTL names of the expiry pass
//   sig.test.     signed by knotd (dnssec-signing: on, NSEC)
//   nsec3.test.   signed by knotd with an NSEC3 policy
//   other.test.   unsigned; targets of the CNAMEs that leave a content zone
//
// Kinds of names (round robin over the kinds, so every kind appears once `names` is at
// least kKindCount per zone): A, AAAA, multi-string TXT, MX, SRV, CAA, NAPTR, HTTPS, CNAME
// chains in zone, out of zone (served, and the other zone's NXDOMAIN, and a zone nobody
// serves), chains ending in NXDOMAIN (one of two ~250-byte links: over 512 bytes), DNAME,
// wildcards, empty non-terminals, a delegation with glue, names near 255 bytes, mixed case
// owners, RRsets over 512 and over 1232 bytes, an MX set that fits in 512 bytes only with
// the names in its rdata compressed, NODATA and NXDOMAIN questions. TTLs: 0, 30 s .. one day (the short TTLs of
// 1-2 s are only in the expiry pass, whose timing they need).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace dnsarena::interop {

struct ZoneFile {
  std::string origin;  // "diff.test."
  std::string text;    // master file, $ORIGIN first
  bool dnssec = false;
  bool nsec3 = false;
};

// One question of the main pass. `kind` names what the question exercises ("cname-out",
// "referral", ...): it is printed with a mismatch and groups the cache-behaviour counts.
struct Question {
  std::string qname;  // absolute, with trailing dot, case as in the zone
  std::uint16_t qtype = 0;
  std::string kind;
};

// A record of the expiry pass in diff.test.: queried, then changed with knotc, then
// queried again after its TTL ran out. `rdata` is the value before, `changed` after.
struct ShortTtlRecord {
  std::string owner;  // absolute
  std::string qname;  // what the test asks (a CNAME's owner for the chain case)
  std::uint16_t qtype = 0;
  std::uint32_t ttl = 0;
  std::string type;  // "A", "CNAME"
  std::string rdata;
  std::string changed;
};

struct GeneratedZones {
  std::vector<ZoneFile> zones;
  std::vector<Question> questions;
  std::vector<ShortTtlRecord> short_ttl;
};

// `names`: generated names over all content zones (a few questions each).
GeneratedZones generate_zones(std::uint64_t seed, unsigned names);

}  // namespace dnsarena::interop
