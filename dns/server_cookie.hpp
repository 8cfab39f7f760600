// SPDX-License-Identifier: GPL-3.0-or-later
// DNS cookies (RFC 7873) as a server makes and checks them, in the interoperable format
// of RFC 9018, so cookies of any server of a pool sharing the secret (BIND, Knot, Unbound,
// PowerDNS, this one) are valid at every other.
//
//   COOKIE option (code 10)  offset size  field
//                            0      2     option code (10)
//                            2      2     option length: 8 (client cookie alone) or 16..40
//                            4      8     client cookie (the client's, echoed)
//                            12     0..32 server cookie: 8..32 bytes when present
//
//   server cookie (RFC 9018) offset size  field
//                            0      1     version (1)
//                            1      3     reserved (0)
//                            4      4     timestamp: unix seconds (serial arithmetic,
//                                         RFC 1982), network order
//                            8      8     hash: SipHash-2-4 (siphash.hpp) under the
//                                         16-byte server secret of
//                                         client cookie | version | reserved | timestamp |
//                                         client IP (4 or 16 bytes, network order),
//                                         its 8 bytes little-endian (the SipHash vectors')
//
// A server cookie is valid when its hash matches under the current secret or the
// previous one (a secret rollover, RFC 9018 4.4 and Appendix B) and its timestamp is at
// most kCookiePastSeconds behind the clock and kCookieFutureSeconds ahead (RFC 9018 4.3:
// a pool's clocks may disagree by minutes). A valid cookie older than
// kCookieRefreshSeconds, or made under the previous secret, is answered with a new one.
//
// Costs: one SipHash over 28 (IPv4) or 40 (IPv6) bytes per make or check: about 200
// instructions, nothing allocated.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "dns/siphash.hpp"

namespace dnsarena::dns {

inline constexpr std::uint16_t kOptionCookie = 10;
inline constexpr std::size_t kClientCookieBytes = 8;
inline constexpr std::size_t kServerCookieBytes = 16;  // what this server makes (RFC 9018)
inline constexpr std::size_t kMinCookieBytes = 16, kMaxCookieBytes = 40;  // with a server cookie
inline constexpr std::size_t kMaxCookieOptionBytes = 4 + kMaxCookieBytes;
inline constexpr std::uint8_t kServerCookieVersion = 1;
inline constexpr std::int32_t kCookiePastSeconds = 3600, kCookieFutureSeconds = 300;
inline constexpr std::int32_t kCookieRefreshSeconds = 1800;

// An option length RFC 7873 4 allows: a client cookie alone, or with a server cookie of
// 8 to 32 bytes. Any other makes the query FORMERR (RFC 7873 5.2.2).
constexpr bool cookie_length_ok(std::size_t n) { return n == kClientCookieBytes || (n >= kMinCookieBytes && n <= kMaxCookieBytes); }

// The COOKIE option of a query as received (len 0: none), and after the worker looked at
// it, the one its answer carries.
struct Cookie {
  std::uint8_t len = 0;
  std::array<std::uint8_t, kMaxCookieBytes> bytes{};

  bool operator==(const Cookie& o) const {
    if (len != o.len) return false;
    for (std::size_t i = 0; i < len; ++i)
      if (bytes[i] != o.bytes[i]) return false;
    return true;
  }
};

// The server secrets: cookies are made under `current`; `previous` (when has_previous)
// still validates, until the next change replaces it.
struct CookieSecrets {
  SipHashKey current{};
  SipHashKey previous{};
  bool has_previous = false;
};

enum class CookieCheck {
  fresh,    // valid, made under the current secret within kCookieRefreshSeconds: echoed
  refresh,  // valid, but older than that or under the previous secret: answered with a new one
  invalid,  // none, a client cookie alone, another format, a wrong hash, out of the window
};

// Checks the server cookie of `cookie` (bytes past the client cookie) for the client at
// `client_ip` (4 or 16 bytes) at `now` (unix seconds).
CookieCheck check_server_cookie(const Cookie& cookie, std::span<const std::uint8_t> client_ip, std::uint32_t now,
                                const CookieSecrets& secrets);

// Writes a new server cookie for the client cookie in `cookie` (its first 8 bytes) under
// secrets.current at `now` after it: cookie.len becomes 24.
// REQUIRES: cookie.len >= kClientCookieBytes.
void make_server_cookie(Cookie& cookie, std::span<const std::uint8_t> client_ip, std::uint32_t now,
                        const CookieSecrets& secrets);

// Writes the COOKIE option (layout above) for `cookie`; returns its size, 0 when len is 0.
std::size_t write_cookie_option(const Cookie& cookie, std::uint8_t* out);

}  // namespace dnsarena::dns
