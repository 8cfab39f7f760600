// SPDX-License-Identifier: GPL-3.0-or-later
// Automated updates of a DNSSEC trust anchor (RFC 5011): the state of each key of a trust
// point, the transitions a validated DNSKEY set makes, and the trust point's file.
//
// A trust point is one zone's anchor (the root's, usually). Its keys, each in a state:
//
//   state      trusted  how a key gets there
//   addpend    no       seen in a validated DNSKEY set, not yet an anchor: the add
//                       hold-down (30 days, or longer: the set's original TTL) runs
//   valid      yes      its add hold-down passed with the key still published, or it came
//                       in the configured anchor
//   missing    yes      a valid key no longer in the set (RFC 5011 4.: still trusted)
//   revoked    no       published with the REVOKE bit and self-signed by it (RFC 5011
//                       2.1): never trusted again; forgotten after the remove hold-down
//
// observe() takes the answer to "DNSKEY of the trust point, DO+CD": the set counts only
// when a trusted key (valid or missing, not revoked in this set) signed it and the
// signature verifies now (dnskey_trust.hpp, the validator's own code, with its limits).
// A key is identified by its RDATA with the REVOKE bit cleared, so its revoked form is
// the same key. A key that was addpend and disappears is forgotten (RFC 5011 4.: the
// hold-down starts over if it comes back). A failed probe changes no key; it sets the
// retry time.
//
// Probe timing (RFC 5011 2.3): after a success, MAX(1 h, MIN(15 days, 1/2 the set's
// original TTL, 1/2 the time to its RRSIGs' expiration)); after a failure,
// MAX(1 h, MIN(1 day, 1/10 of each)); the 1 h floor is AutotrustLimits::min_interval_s
// (lowered only by tests, through serve's dnssec.auto_update_min_interval_s).
//
// The file is Unbound's autotrust format (`;;id:`, `;;last_queried:`, ... header
// comments, one DNSKEY line per key with `;;state=N [ NAME ] ;;count=N ;;lastchange=T`),
// which Unbound's `auto-trust-anchor-file` reads and writes and which
// TrustAnchors::add_file reads (revoked keys ignored, comments ignored). A plain DS or
// DNSKEY file (dns-root-data's root.ds, a hand-written key) is read as a trust point whose
// keys are all valid; a DS anchor becomes the DNSKEYs it matches at the first successful
// probe. Written back atomically: a temporary file in the same directory, fsync, rename.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dnssec/limits.hpp"
#include "dnssec/rrset.hpp"
#include "dnssec/verdict.hpp"

namespace dnsarena::dnssec {

// Unbound's numbering (its autotrust files carry it).
enum class KeyState : std::uint8_t { start = 0, addpend = 1, valid = 2, missing = 3, revoked = 4, removed = 5 };
std::string_view key_state_name(KeyState s);

struct AutotrustKey {
  Bytes dnskey;                    // RDATA as last seen (REVOKE bit as published)
  KeyState state = KeyState::valid;
  std::uint32_t last_change = 0;   // when it entered `state` (seconds since the epoch): an
                                   // addpend key's add hold-down and a revoked key's remove
                                   // hold-down run from it
};

struct TrustPoint {
  Bytes zone;  // lowercase wire
  std::vector<AutotrustKey> keys;
  std::vector<Bytes> ds;  // a DS anchor not yet turned into keys (root.ds)
  std::uint32_t last_queried = 0, last_success = 0, next_probe = 0;
  std::uint32_t query_failed = 0;
  std::uint32_t query_interval = 0, retry_time = 0;
};

struct AutotrustLimits {
  std::uint32_t add_hold_down_s = 30 * 86400;     // RFC 5011 2.4.1
  std::uint32_t remove_hold_down_s = 30 * 86400;  // RFC 5011 2.4.2
  std::uint32_t min_interval_s = 3600;            // RFC 5011 2.3's floor of the probe interval
};

// What one probe did.
struct ProbeReport {
  bool accepted = false;   // the set was signed by a trusted key and verified
  Outcome outcome;         // why not, when not accepted
  std::vector<std::string> changes;  // one line per key that changed state
  std::uint32_t next_probe = 0;
};

// Reads a trust point file (autotrust, or plain DS / DNSKEY lines of one zone). Throws
// TrustAnchorError naming the file and line.
TrustPoint read_trust_point(const std::string& path);
TrustPoint parse_trust_point(const std::string& text, const std::string& what);
// The file's text (autotrust format).
std::string format_trust_point(const TrustPoint& tp);
// Writes `text` to `path` atomically (same-directory temporary, fsync, rename, fsync of the
// directory). Throws std::runtime_error with the path and errno text.
void write_file_atomically(const std::string& path, const std::string& text);

// The key tag of DNSKEY RDATA (RFC 4034 appendix B), as libdnssec computes it.
std::uint16_t dnskey_tag(const Bytes& dnskey);

// The keys trusted now (valid and missing), as DNSKEY RDATA.
std::vector<Bytes> trusted_keys(const TrustPoint& tp);

// `reply`: the answer to DNSKEY of tp.zone with DO and CD. Applies RFC 5011's transitions
// when the set verifies with a trusted key (or a DS anchor) at `now`.
ProbeReport observe(TrustPoint& tp, const Response& reply, std::uint32_t now, const Limits& limits,
                    const AutotrustLimits& hold = {});
// No usable answer came: the retry time is set, nothing else changes.
ProbeReport observe_failure(TrustPoint& tp, std::uint32_t now, std::string_view why,
                            std::uint32_t min_interval_s = 3600);

}  // namespace dnsarena::dnssec
