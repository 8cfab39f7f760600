// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/server_cookies.hpp"

#include <netinet/in.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <stdexcept>

namespace dnsarena::workers {

dns::SipHashKey parse_cookie_secret(const std::string& hex) {
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw std::invalid_argument("'" + hex + "': not a hex digit: '" + std::string(1, c) + "'");
  };
  if (hex.size() != 32) throw std::invalid_argument("expected 32 hex digits (16 bytes), got " + std::to_string(hex.size()));
  dns::SipHashKey key;
  for (std::size_t i = 0; i < 16; ++i) key[i] = static_cast<std::uint8_t>(digit(hex[2 * i]) << 4 | digit(hex[2 * i + 1]));
  return key;
}

dns::CookieSecrets initial_cookie_secrets(const std::optional<dns::SipHashKey>& configured) {
  dns::CookieSecrets s;
  if (configured) {
    s.current = *configured;
    return s;
  }
  std::size_t got = 0;
  while (got < s.current.size()) {
    const ssize_t n = ::getrandom(s.current.data() + got, s.current.size() - got, 0);
    if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  return s;
}

bool reload_cookie_secrets(dns::CookieSecrets& secrets, const std::optional<dns::SipHashKey>& configured) {
  if (!configured || *configured == secrets.current) return false;
  secrets.previous = secrets.current;
  secrets.has_previous = true;
  secrets.current = *configured;
  return true;
}

bool answer_cookie(dns::Cookie& cookie, const sockaddr_storage& client, std::uint32_t now,
                   const dns::CookieSecrets& secrets) {
  std::span<const std::uint8_t> ip;
  if (client.ss_family == AF_INET) {
    ip = {reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in*>(&client)->sin_addr), 4};
  } else {
    ip = {reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(&client)->sin6_addr), 16};
  }
  const dns::CookieCheck c = dns::check_server_cookie(cookie, ip, now, secrets);
  if (c != dns::CookieCheck::fresh) dns::make_server_cookie(cookie, ip, now, secrets);
  return c != dns::CookieCheck::invalid;
}

}  // namespace dnsarena::workers
