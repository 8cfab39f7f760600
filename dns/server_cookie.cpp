// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/server_cookie.hpp"

#include <cstring>

#include "wire/constants.hpp"

namespace dnsarena::dns {

namespace {

// The hash of the layout in server_cookie.hpp: the first 16 bytes of `cookie` (client
// cookie, version, reserved, timestamp) then the client's address. Copies of constant
// sizes, so the compiler writes them as a few moves.
std::uint64_t cookie_hash(const std::uint8_t* cookie, std::span<const std::uint8_t> client_ip, const SipHashKey& key) {
  std::uint8_t msg[kClientCookieBytes + 8 + 16];
  std::memcpy(msg, cookie, kClientCookieBytes + 8);
  if (client_ip.size() == 4) {
    std::memcpy(msg + kClientCookieBytes + 8, client_ip.data(), 4);
    return siphash24(key, msg, kClientCookieBytes + 8 + 4);
  }
  std::memcpy(msg + kClientCookieBytes + 8, client_ip.data(), 16);
  return siphash24(key, msg, kClientCookieBytes + 8 + 16);
}

// The cookie's hash bytes against `key`'s hash, as one comparison of the whole word (no
// early exit on the first differing byte).
bool hash_matches(const std::uint8_t* cookie, std::span<const std::uint8_t> client_ip, const SipHashKey& key) {
  const std::uint64_t h = cookie_hash(cookie, client_ip, key);
  std::uint64_t stored = 0;
  for (int i = 7; i >= 0; --i) stored = (stored << 8) | cookie[kClientCookieBytes + 8 + i];
  return stored == h;
}

}  // namespace

CookieCheck check_server_cookie(const Cookie& cookie, std::span<const std::uint8_t> client_ip, std::uint32_t now,
                                const CookieSecrets& secrets) {
  if (cookie.len != kClientCookieBytes + kServerCookieBytes) return CookieCheck::invalid;
  const std::uint8_t* server = cookie.bytes.data() + kClientCookieBytes;
  if (server[0] != kServerCookieVersion) return CookieCheck::invalid;
  const std::uint32_t stamp = (std::uint32_t{server[4]} << 24) | (std::uint32_t{server[5]} << 16) |
                              (std::uint32_t{server[6]} << 8) | server[7];
  const auto age = static_cast<std::int32_t>(now - stamp);  // serial arithmetic: wraps in 2106
  if (age > kCookiePastSeconds || age < -kCookieFutureSeconds) return CookieCheck::invalid;
  if (hash_matches(cookie.bytes.data(), client_ip, secrets.current))
    return age > kCookieRefreshSeconds ? CookieCheck::refresh : CookieCheck::fresh;
  if (secrets.has_previous && hash_matches(cookie.bytes.data(), client_ip, secrets.previous)) return CookieCheck::refresh;
  return CookieCheck::invalid;
}

void make_server_cookie(Cookie& cookie, std::span<const std::uint8_t> client_ip, std::uint32_t now,
                        const CookieSecrets& secrets) {
  std::uint8_t* server = cookie.bytes.data() + kClientCookieBytes;
  server[0] = kServerCookieVersion;
  server[1] = server[2] = server[3] = 0;
  server[4] = static_cast<std::uint8_t>(now >> 24);
  server[5] = static_cast<std::uint8_t>(now >> 16);
  server[6] = static_cast<std::uint8_t>(now >> 8);
  server[7] = static_cast<std::uint8_t>(now);
  const std::uint64_t h = cookie_hash(cookie.bytes.data(), client_ip, secrets.current);
  for (int i = 0; i < 8; ++i) server[8 + i] = static_cast<std::uint8_t>(h >> (8 * i));
  cookie.len = kClientCookieBytes + kServerCookieBytes;
}

std::size_t write_cookie_option(const Cookie& cookie, std::uint8_t* out) {
  if (cookie.len == 0) return 0;
  wire::put16(out, kOptionCookie);
  wire::put16(out + 2, cookie.len);
  if (cookie.len == kClientCookieBytes + kServerCookieBytes)  // ours: a copy of constant size
    std::memcpy(out + 4, cookie.bytes.data(), kClientCookieBytes + kServerCookieBytes);
  else
    std::memcpy(out + 4, cookie.bytes.data(), cookie.len);
  return 4u + cookie.len;
}

}  // namespace dnsarena::dns
