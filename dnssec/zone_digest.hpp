// SPDX-License-Identifier: GPL-3.0-or-later
// ZONEMD (RFC 8976): the message digest of a whole zone, and the check of a zone's own
// ZONEMD records against it. Used on the local root copy (workers/local_root.hpp) and by
// `dnsarena zonemd PATH` (workers/zonemd_command.cpp); the root zone carries a SHA-384 ZONEMD
// since 2023.
//
// ZONEMD RDATA (RFC 8976 section 2.2), network byte order:
//   offset | size | field
//   0      | 4    | serial      the SOA serial of the zone version the digest is of
//   4      | 1    | scheme      1 SIMPLE (the only one defined); 0 and 240-255 reserved
//   5      | 1    | hash        1 SHA-384 (48-byte digest), 2 SHA-512 (64 bytes)
//   6      | n    | digest      at least 12 bytes (section 2.2.4)
//
// The SIMPLE digest (section 3.3): the hash, through OpenSSL's EVP (no hash of ours), of
// every record of the zone in canonical form (RFC 4034 6.2 as libknot applies it, with
// RFC 6840 5.1: owner lowercase, the names inside RDATA of the types 6.2 lists lowercase,
// nothing compressed), each one as
//   owner | type (2) | class (2) | TTL (4) | RDLENGTH (2) | RDATA
// in canonical order (RFC 4034 6.1 and 6.3: owner, then type, then RDATA as unsigned
// bytes), a record present twice digested once (section 3.3.1; the TTL is not part of
// the identity: the lower one is kept, as dnspython does). Left out (section 3.3.1): the
// ZONEMD RRset at the apex, the RRSIGs at the apex covering ZONEMD, and records outside
// the zone. Everything else counts: other RRSIGs, glue, data occluded by a delegation,
// ZONEMD records below the apex.
//
// Verification (section 4, steps 3-8, each ZONEMD at the apex on its own): a record is
// usable when its serial equals the SOA's (step 3), its scheme is SIMPLE (step 4), its
// hash algorithm is SHA-384 or SHA-512 (step 5) and its digest has that hash's length
// (step 6; section 2.2.4's 12-byte floor is below both). Two records with the same scheme
// and hash algorithm are not allowed (section 2); neither of them is used. The zone
// verifies when one usable record's digest equals the computed one (steps 7-8, "only
// one ... needs to verify"). When no record has a scheme and algorithm this code knows,
// the zone cannot be checked: ZonemdStatus::unsupported, which the caller may treat as a
// zone without ZONEMD (the DNSSEC analogue: a zone signed only with unknown algorithms
// is insecure, not bogus). Checking the ZONEMD RRset's signatures (section 4 steps 1-2)
// is the caller's part: apex_zonemd() gives the set and its RRSIGs.
//
// Costs: add() copies each record once (canonical form), verify() sorts them once
// (O(n log n)) and hashes each once per distinct supported algorithm among the ZONEMD
// records (at most 2 passes). The root zone (~22,000 records, 2 MB): see
// docs/operator-guide.md ("Local root") for the measured time. Memory: about the zone's
// wire size. The number of records is the caller's bound (LocalRoot::kMaxRecords).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "dnssec/rrset.hpp"

namespace dnsarena::dnssec {

inline constexpr std::uint16_t kTypeZonemd = 63;
inline constexpr std::uint8_t kZonemdSchemeSimple = 1;
inline constexpr std::uint8_t kZonemdHashSha384 = 1, kZonemdHashSha512 = 2;

struct Zonemd {
  std::uint32_t serial = 0;
  std::uint8_t scheme = 0;
  std::uint8_t hash = 0;
  Bytes digest;
};
// The fields of ZONEMD RDATA; nullopt when it is shorter than the 6 fixed bytes.
std::optional<Zonemd> parse_zonemd(std::span<const std::uint8_t> rdata);

// The digest length of a hash algorithm this code computes (48, 64), else 0.
std::size_t zonemd_digest_length(std::uint8_t hash);

enum class ZonemdStatus {
  verified,     // a usable ZONEMD matched
  absent,       // no ZONEMD at the apex
  unsupported,  // ZONEMD records, none with a scheme and hash algorithm known here
  failed,       // a usable ZONEMD did not match, or none was usable (serial, length, duplicates)
};
const char* zonemd_status_name(ZonemdStatus s);

struct ZonemdVerdict {
  ZonemdStatus status = ZonemdStatus::absent;
  // verified: "SHA-384 digest 62e6...". failed / unsupported: why, for each ZONEMD at
  // the apex ("ZONEMD 1 1: the zone's digest is X, the record says Y"), joined by "; ".
  std::string detail;
  std::uint8_t hash = 0;  // verified: the algorithm that matched
};

// A zone's records, collected then checked. REQUIRES of add(): well-formed,
// uncompressed RDATA of `type` (what libzscanner produces).
class ZoneDigest {
public:
  explicit ZoneDigest(Bytes apex);  // wire name; lowercased
  void add(std::span<const std::uint8_t> owner, std::uint16_t type, std::uint16_t klass, std::uint32_t ttl,
           std::span<const std::uint8_t> rdata);

  // The SIMPLE digest of the records added (scheme 1), or nullopt for a hash algorithm
  // not computed here.
  std::optional<Bytes> compute(std::uint8_t hash);
  // Section 4 steps 3-8 against the ZONEMD records at the apex; `soa_serial` is the
  // zone's SOA serial.
  ZonemdVerdict verify(std::uint32_t soa_serial);
  // The ZONEMD RRset at the apex with the RRSIGs covering it (empty rdata: none);
  // duplicates removed once verify() or compute() ran.
  Rrset apex_zonemd() const;
  // The serial of the SOA at the apex (the last one added), or nullopt: none, malformed.
  std::optional<std::uint32_t> soa_serial() const { return soa_serial_; }
  // The records to digest (distinct ones once verify() or compute() ran).
  std::size_t records() const { return records_.size(); }

private:
  struct Record {
    Bytes owner;  // lowercase
    std::uint16_t type;
    std::uint16_t klass;
    std::uint32_t ttl;
    Bytes rdata;  // canonical
  };
  void sort_once();

  Bytes apex_;
  std::vector<Record> records_;  // digested ones (the exclusions of section 3.3.1 left out)
  Rrset zonemd_;                 // the apex ZONEMD set and its RRSIGs
  std::optional<std::uint32_t> soa_serial_;
  bool sorted_ = false;
};

}  // namespace dnsarena::dnssec
