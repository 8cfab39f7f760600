// SPDX-License-Identifier: GPL-3.0-or-later
// What a validation concludes (RFC 4035 section 4.3) and the RFC 8914 extended error that
// says why, with the work it took (limits.hpp).
//
//   secure         a chain of signatures from a trust anchor proves the data
//   insecure       a proof (signed) that the zone is unsigned, or the chain ends in what
//                  this validator may not judge: an unsupported algorithm or DS digest
//                  (RFC 4035 5.2, RFC 8624), NSEC3 iterations above the bound (RFC 9276),
//                  a negative trust anchor (RFC 7646)
//   bogus          a chain of trust exists and the data fails it: answer SERVFAIL + EDE
//   indeterminate  no trust anchor covers the name: the data is neither proven nor refuted
//
// The EDE INFO-CODEs a bogus or insecure verdict carries (RFC 8914 section 4); `none` for
// secure and indeterminate, and for insecure proven by a signed NSEC / NSEC3 (no error).
#pragma once
#include <cstdint>
#include <string_view>

namespace dnsarena::dnssec {

enum class Verdict : std::uint8_t { secure, insecure, bogus, indeterminate };

enum class Ede : std::uint16_t {
  none = 0xffff,
  unsupported_dnskey_algorithm = 1,
  unsupported_ds_digest_type = 2,
  dnssec_bogus = 6,
  signature_expired = 7,
  signature_not_yet_valid = 8,
  dnskey_missing = 9,
  rrsigs_missing = 10,
  nsec_missing = 12,
};

inline std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::secure: return "secure";
    case Verdict::insecure: return "insecure";
    case Verdict::bogus: return "bogus";
    case Verdict::indeterminate: return "indeterminate";
  }
  return "?";
}

// A verdict with its reason: the EDE and, for logs and tests, a short static text.
struct Outcome {
  Verdict verdict = Verdict::indeterminate;
  Ede ede = Ede::none;
  std::string_view why;  // static text ("no DNSKEY matches the DS set", ...)
  // Secure: the longest the validated data may be cached (RFC 4035 5.3.3): the least, over
  // the RRSIGs that proved its sets, of the original TTL and the time to expiration.
  std::uint32_t max_ttl = UINT32_MAX;

  static Outcome secure() { return {Verdict::secure, Ede::none, "secure"}; }
  static Outcome insecure(Ede e, std::string_view w) { return {Verdict::insecure, e, w}; }
  static Outcome bogus(Ede e, std::string_view w) { return {Verdict::bogus, e, w}; }
};

}  // namespace dnsarena::dnssec
