// SPDX-License-Identifier: GPL-3.0-or-later
// Extended DNS Errors (RFC 8914): the EDNS option that says why an answer is stale or why
// a SERVFAIL was given, or that a response policy blocked or rewrote the answer.
//
//   offset size  field
//   0      2     OPTION-CODE 15
//   2      2     OPTION-LENGTH 2 (no EXTRA-TEXT: the code says it all, and an attacker
//                who triggers failures gets no free bytes of amplification)
//   4      2     INFO-CODE
//
// The option rides in the OPT record, so only EDNS clients get it (a client without EDNS
// gets the same answer without the option, RFC 8914 section 3).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

namespace dnsarena::dns {

inline constexpr std::uint16_t kOptionCodeEde = 15;
inline constexpr std::size_t kEdeOptionBytes = 6;

// The INFO-CODEs this resolver sends (RFC 8914 section 4).
enum class ExtendedError : std::uint16_t {
  // The DNSSEC codes (1, 2, 6-10, 12) are dnssec/verdict.hpp's Ede, cast to this type
  // where a bogus answer is written (workers/query_pipeline_upstream.cpp).
  dnssec_bogus = 6,             // a name the failure cache holds as bogus (workers/failure_cache.hpp)
  stale_answer = 3,             // answered from an expired entry (serve-stale, RFC 8767)
  blocked = 15,                 // a response policy blocked the name (NXDOMAIN, NODATA; policy/)
  filtered = 17,                // a response policy rewrote the answer with local data (policy/)
  prohibited = 18,              // a response policy refused the name (local_zone refuse; policy/)
  stale_nxdomain = 19,          // the same for a negative (NXDOMAIN) entry
  no_reachable_authority = 22,  // no upstream answered within the time allowed
  network_error = 23,           // the upstreams answered with errors (SERVFAIL, REFUSED, bad replies)
};

// Writes the option above. Returns kEdeOptionBytes.
std::size_t write_ede_option(ExtendedError code, std::uint8_t* out);

}  // namespace dnsarena::dns
