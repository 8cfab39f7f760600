// SPDX-License-Identifier: GPL-3.0-or-later
// SipHash-2-4 against the paper's test vectors, server cookies against RFC 9018's
// examples and libknot's own cookie functions, the validity window's edges, secret
// rollover, and the parsers' verdicts on COOKIE option lengths.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dns/client_query.hpp"
#include "dns/knot_packet.hpp"
#include "dns/server_cookie.hpp"
#include "dns/siphash.hpp"
#include "wire/constants.hpp"

namespace dnsarena::dns {
namespace {

SipHashKey key_0_to_15() {
  SipHashKey k;
  for (int i = 0; i < 16; ++i) k[i] = static_cast<std::uint8_t>(i);
  return k;
}

std::vector<std::uint8_t> bytes_0_to(std::size_t n) {
  std::vector<std::uint8_t> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<std::uint8_t>(i);
  return m;
}

std::vector<std::uint8_t> unhex(const std::string& h) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<std::uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

std::string hex(const std::uint8_t* p, std::size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

Cookie client_cookie(const std::string& h) {
  Cookie c;
  const auto b = unhex(h);
  std::memcpy(c.bytes.data(), b.data(), b.size());
  c.len = static_cast<std::uint8_t>(b.size());
  return c;
}

CookieSecrets secrets_of(const std::string& h) {
  CookieSecrets s;
  const auto b = unhex(h);
  std::memcpy(s.current.data(), b.data(), 16);
  return s;
}

TEST_CASE("SipHash-2-4 gives the paper's test vectors (key 00..0f, message 00..n-1)", "[cookies]") {
  const SipHashKey k = key_0_to_15();
  // Appendix A of the paper: the 15-byte message.
  CHECK(siphash24(k, bytes_0_to(15).data(), 15) == 0xa129ca6149be45e5ull);
  // The reference implementation's vectors.h, first entries (bytes read little-endian).
  CHECK(siphash24(k, bytes_0_to(0).data(), 0) == 0x726fdb47dd0e0e31ull);
  CHECK(siphash24(k, bytes_0_to(1).data(), 1) == 0x74f839c593dc67fdull);
  CHECK(siphash24(k, bytes_0_to(8).data(), 8) == 0x93f5f5799a932462ull);
}

TEST_CASE("server cookies match RFC 9018's examples", "[cookies]") {
  const CookieSecrets s = secrets_of("e5e973e5a6b2a43f48e7dc849e37bfcf");
  SECTION("A.1: IPv4 client 198.51.100.100") {
    const std::uint8_t ip[4] = {198, 51, 100, 100};
    Cookie c = client_cookie("2464c4abcf10c957");
    make_server_cookie(c, ip, 1559731985, s);
    REQUIRE(c.len == 24);
    CHECK(hex(c.bytes.data(), 24) == "2464c4abcf10c957010000005cf79f111f8130c3eee29480");
    CHECK(check_server_cookie(c, ip, 1559731985, s) == CookieCheck::fresh);
  }
  SECTION("A.2: the same client, a renewed cookie 40 minutes later") {
    const std::uint8_t ip[4] = {198, 51, 100, 100};
    Cookie c = client_cookie("2464c4abcf10c957");
    make_server_cookie(c, ip, 1559734385, s);
    CHECK(hex(c.bytes.data(), 24) == "2464c4abcf10c957010000005cf7a871d4a564a1442aca77");
  }
}

// libknot 3.2's own server cookie functions (what knotd's cookies module runs): the same
// bytes for the same inputs (IPv6 included), and the same verdict at the window's edges.
// Around the 32-bit wrap libknot's window differs (our own wrap check is above).
TEST_CASE("server cookies agree with libknot's, both ways", "[cookies]") {
  CookieSecrets s = secrets_of("000102030405060708090a0b0c0d0e0f");
  for (const int family : {AF_INET, AF_INET6}) {
    CAPTURE(family);
    sockaddr_storage client{};
    std::vector<std::uint8_t> ip;
    if (family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&client);
      a->sin_family = AF_INET;
      REQUIRE(inet_pton(AF_INET, "203.0.113.7", &a->sin_addr) == 1);
      ip.assign(reinterpret_cast<std::uint8_t*>(&a->sin_addr), reinterpret_cast<std::uint8_t*>(&a->sin_addr) + 4);
    } else {
      auto* a = reinterpret_cast<sockaddr_in6*>(&client);
      a->sin6_family = AF_INET6;
      REQUIRE(inet_pton(AF_INET6, "2001:db8::7", &a->sin6_addr) == 1);
      ip.assign(reinterpret_cast<std::uint8_t*>(&a->sin6_addr), reinterpret_cast<std::uint8_t*>(&a->sin6_addr) + 16);
    }
    for (std::uint32_t now : {1'559'731'985u, 1'700'000'000u, 2'000'000'000u}) {
      CAPTURE(now);
      knot_edns_cookie_params_t params{};
      params.version = KNOT_EDNS_COOKIE_VERSION;
      params.timestamp = now;
      params.lifetime_before = kCookiePastSeconds;
      params.lifetime_after = kCookieFutureSeconds;
      params.client_addr = &client;
      std::memcpy(params.secret, s.current.data(), 16);
      knot_edns_cookie_t cc{}, sc{};
      for (int i = 0; i < 8; ++i) cc.data[i] = static_cast<std::uint8_t>(0x30 + i + now);
      cc.len = 8;
      REQUIRE(knot_edns_cookie_server_generate(&sc, &cc, &params) == KNOT_EOK);
      REQUIRE(sc.len == kServerCookieBytes);
      Cookie ours;
      std::memcpy(ours.bytes.data(), cc.data, 8);
      ours.len = 8;
      make_server_cookie(ours, ip, now, s);
      CHECK(hex(ours.bytes.data() + 8, 16) == hex(sc.data, 16));
      for (const std::int64_t shift : {-301, -300, 0, 1800, 3600, 3601}) {
        CAPTURE(shift);
        params.timestamp = static_cast<std::uint32_t>(now + shift);
        const bool knot_ok = knot_edns_cookie_server_check(&sc, &cc, &params) == KNOT_EOK;
        CHECK(knot_ok == (check_server_cookie(ours, ip, params.timestamp, s) != CookieCheck::invalid));
      }
    }
  }
}

TEST_CASE("a server cookie is valid from 1 hour back to 5 minutes ahead, refreshed past 30 minutes", "[cookies]") {
  const CookieSecrets s = secrets_of("000102030405060708090a0b0c0d0e0f");
  const std::uint8_t ip[4] = {192, 0, 2, 1};
  const std::uint32_t made = 1'700'000'000;
  Cookie c = client_cookie("0102030405060708");
  make_server_cookie(c, ip, made, s);
  CHECK(check_server_cookie(c, ip, made, s) == CookieCheck::fresh);
  CHECK(check_server_cookie(c, ip, made + 1800, s) == CookieCheck::fresh);
  CHECK(check_server_cookie(c, ip, made + 1801, s) == CookieCheck::refresh);
  CHECK(check_server_cookie(c, ip, made + 3600, s) == CookieCheck::refresh);
  CHECK(check_server_cookie(c, ip, made + 3601, s) == CookieCheck::invalid);
  CHECK(check_server_cookie(c, ip, made - 300, s) == CookieCheck::fresh);
  CHECK(check_server_cookie(c, ip, made - 301, s) == CookieCheck::invalid);
  SECTION("across the 32-bit wrap (serial arithmetic)") {
    Cookie w = client_cookie("0102030405060708");
    make_server_cookie(w, ip, 0xFFFFFF00u, s);
    CHECK(check_server_cookie(w, ip, 0x00000100u, s) == CookieCheck::fresh);
    CHECK(check_server_cookie(w, ip, 0xFFFFFF00u + 3601u, s) == CookieCheck::invalid);
  }
}

TEST_CASE("a server cookie is bound to the client's cookie, address and the secret", "[cookies]") {
  CookieSecrets s = secrets_of("000102030405060708090a0b0c0d0e0f");
  const std::uint8_t ip[4] = {192, 0, 2, 1};
  const std::uint8_t other_ip[4] = {192, 0, 2, 2};
  const std::uint32_t now = 1'700'000'000;
  Cookie c = client_cookie("0102030405060708");
  make_server_cookie(c, ip, now, s);
  CHECK(check_server_cookie(c, other_ip, now, s) == CookieCheck::invalid);
  for (std::size_t i = 0; i < 24; ++i) {  // any byte changed: the client cookie, version, reserved, time, hash
    Cookie bad = c;
    bad.bytes[i] ^= 0x40;
    CHECK(check_server_cookie(bad, ip, now, s) == CookieCheck::invalid);
  }
  Cookie alone = client_cookie("0102030405060708");
  CHECK(check_server_cookie(alone, ip, now, s) == CookieCheck::invalid);

  SECTION("rollover: the previous secret validates (and asks for a new cookie) until the next change") {
    CookieSecrets next = secrets_of("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
    CHECK(check_server_cookie(c, ip, now, next) == CookieCheck::invalid);
    next.previous = s.current;
    next.has_previous = true;
    CHECK(check_server_cookie(c, ip, now, next) == CookieCheck::refresh);
    Cookie renewed = c;
    make_server_cookie(renewed, ip, now, next);
    CHECK(check_server_cookie(renewed, ip, now, next) == CookieCheck::fresh);
    CookieSecrets third = secrets_of("202122232425262728292a2b2c2d2e2f");
    third.previous = next.current;
    third.has_previous = true;
    CHECK(check_server_cookie(c, ip, now, third) == CookieCheck::invalid);
    CHECK(check_server_cookie(renewed, ip, now, third) == CookieCheck::refresh);
  }
}

// A query for "a." type A with EDNS carrying one COOKIE option of `len` bytes.
std::vector<std::uint8_t> query_with_cookie(std::size_t len) {
  std::vector<std::uint8_t> w = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1, 1, 'a', 0, 0, 1, 0, 1};
  const std::uint8_t opt[] = {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0};
  w.insert(w.end(), opt, opt + sizeof opt);
  const std::size_t rdlen = 4 + len;
  w.push_back(static_cast<std::uint8_t>(rdlen >> 8));
  w.push_back(static_cast<std::uint8_t>(rdlen));
  w.push_back(0);
  w.push_back(10);
  w.push_back(static_cast<std::uint8_t>(len >> 8));
  w.push_back(static_cast<std::uint8_t>(len));
  for (std::size_t i = 0; i < len; ++i) w.push_back(static_cast<std::uint8_t>(0xA0 + i));
  return w;
}

TEST_CASE("COOKIE option lengths: 8 and 16..40 are read, any other is FORMERR, in both parsers", "[cookies]") {
  for (std::size_t len = 0; len <= 48; ++len) {
    CAPTURE(len);
    const bool ok = len == 8 || (len >= 16 && len <= 40);
    std::vector<std::uint8_t> a = query_with_cookie(len), b = a;
    ClientQuery qa, qb;
    const ParseVerdict fast = parse_query(a.data(), a.size(), qa);
    const ParseVerdict knot = parse_query_knot(b.data(), b.size(), qb);
    CHECK(fast == knot);
    CHECK(fast == (ok ? ParseVerdict::ok : ParseVerdict::formerr));
    if (ok) {
      CHECK(qa.cookie == qb.cookie);
      REQUIRE(qa.cookie.len == len);
      CHECK(qa.cookie.bytes[len - 1] == 0xA0 + len - 1);
      // The error response carries the option back, its rdlength counting it.
      std::uint8_t out[512];
      const std::size_t n = write_error_response(qa, wire::kRcodeRefused, out, sizeof out);
      REQUIRE(n == 19 + 11 + 4 + len);
      CHECK(wire::get16(out + 19 + 9) == 4 + len);
      CHECK(wire::get16(out + 19 + 11) == kOptionCookie);
    }
  }
}

}  // namespace
}  // namespace dnsarena::dns
