// SPDX-License-Identifier: GPL-3.0-or-later
// DoH request decisions (workers/doh_request.hpp): status order, base64url strictness
// against a reference encoder over random bytes, and the least TTL of an answer.
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "workers/doh_request.hpp"

using namespace dnsarena::workers;

namespace {

// A query header (ID 0, RD) and the question a.test./A.
const std::vector<std::uint8_t> kQuery{0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};

DohStatus check(std::string_view method, std::string_view path, std::string_view type = "",
                std::vector<std::uint8_t> body = {}, bool too_large = false) {
  std::vector<std::uint8_t> msg;
  return check_request({method, path, type, body, too_large}, "/dns-query", msg);
}

}  // namespace

TEST_CASE("doh_request: base64url round trip over random lengths, padding and other alphabets refused", "[doh]") {
  // RFC 4648 10's vectors, padding removed; then the two characters base64url changes.
  const std::string_view foobar = "foobar";
  const char* expected[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
  for (std::size_t n = 0; n <= foobar.size(); ++n)
    CHECK(encode_base64url({reinterpret_cast<const std::uint8_t*>(foobar.data()), n}) == expected[n]);
  CHECK(encode_base64url(std::vector<std::uint8_t>{0xFB, 0xFF}) == "-_8");
  std::mt19937 rng(8484);
  std::vector<std::uint8_t> out;
  for (int n = 0; n < 300; ++n) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    const std::string text = encode_base64url(bytes);
    REQUIRE(decode_base64url(text, out));
    REQUIRE(out == bytes);
    CHECK_FALSE(decode_base64url(text + "=", out));
    if (!text.empty()) {
      std::string bad = text;
      bad[bad.size() / 2] = text[bad.size() / 2] == '+' ? '/' : '+';
      CHECK_FALSE(decode_base64url(bad, out));
    }
  }
  CHECK_FALSE(decode_base64url("A", out));   // 6 bits: not a byte
  CHECK_FALSE(decode_base64url("AB", out));  // 'B' leaves a non-zero bit after the byte
  CHECK(decode_base64url("AA", out));
  CHECK(out == std::vector<std::uint8_t>{0});
  CHECK_FALSE(decode_base64url("AAAAAAB", out));  // two bytes after a block, and 2 bits left over
  CHECK(decode_base64url("AAAAAAA", out));
  CHECK(out == std::vector<std::uint8_t>{0, 0, 0, 0, 0});
  // A character outside the alphabet anywhere, in a block of four or in the tail, is refused.
  for (int n = 1; n < 24; ++n) {
    const std::string text = encode_base64url(std::vector<std::uint8_t>(static_cast<std::size_t>(n), 0xA5));
    for (std::size_t at = 0; at < text.size(); ++at)
      for (const char bad : {'=', '+', '/', '.', '\0', '\x80'}) {
        std::string t = text;
        t[at] = bad;
        INFO(n << " bytes, '" << bad << "' at " << at);
        CHECK_FALSE(decode_base64url(t, out));
      }
  }
}

TEST_CASE("doh_request: statuses in order 404, 405, 413, 415, 400, 200", "[doh]") {
  const std::string get = "/dns-query?dns=" + encode_base64url(kQuery);
  CHECK(check("GET", get) == DohStatus::ok);
  CHECK(check("GET", "/dns-query?a=1&dns=" + encode_base64url(kQuery) + "&b") == DohStatus::ok);
  CHECK(check("POST", "/dns-query", "application/dns-message", kQuery) == DohStatus::ok);
  CHECK(check("POST", "/dns-query?x", "APPLICATION/dns-message ; q=1", kQuery) == DohStatus::ok);
  CHECK(check("GET", "/dns-query2?dns=" + encode_base64url(kQuery)) == DohStatus::not_found);
  CHECK(check("PUT", "/other") == DohStatus::not_found);
  CHECK(check("PUT", get) == DohStatus::method_not_allowed);
  CHECK(check("HEAD", get) == DohStatus::method_not_allowed);
  CHECK(check("POST", "/dns-query", "text/plain", {}, true) == DohStatus::payload_too_large);
  CHECK(check("POST", "/dns-query", "text/plain", kQuery) == DohStatus::unsupported_media_type);
  CHECK(check("POST", "/dns-query", "", kQuery) == DohStatus::unsupported_media_type);
  CHECK(check("POST", "/dns-query", "application/dns-messages", kQuery) == DohStatus::unsupported_media_type);
  CHECK(check("GET", "/dns-query") == DohStatus::bad_request);
  CHECK(check("GET", "/dns-query?dns=") == DohStatus::bad_request);
  CHECK(check("GET", get + "&dns=" + encode_base64url(kQuery)) == DohStatus::bad_request);
  CHECK(check("GET", "/dns-query?dns=" + encode_base64url(std::vector<std::uint8_t>{0, 0, 1, 0})) == DohStatus::bad_request);
  std::vector<std::uint8_t> answer = kQuery;
  answer[2] |= 0x80;
  CHECK(check("POST", "/dns-query", "application/dns-message", answer) == DohStatus::bad_request);
  CHECK(check("POST", "/dns-query", "application/dns-message", {}) == DohStatus::bad_request);
  std::vector<std::uint8_t> msg;
  REQUIRE(check_request({"GET", get, "", {}, false}, "/dns-query", msg) == DohStatus::ok);
  CHECK(msg == kQuery);
}

TEST_CASE("doh_request: min_ttl is the least TTL of every record but OPT, 0 when none or broken", "[doh]") {
  // kQuery as a response with: a.test. A TTL 300, a compressed owner A TTL 60, OPT ("TTL" 0x8000).
  std::vector<std::uint8_t> m = kQuery;
  m[2] |= 0x80;
  m[7] = 2;   // ANCOUNT
  m[11] = 1;  // ARCOUNT
  auto rr = [&](std::vector<std::uint8_t> owner, std::uint16_t type, std::uint32_t ttl, std::vector<std::uint8_t> rdata) {
    m.insert(m.end(), owner.begin(), owner.end());
    const std::uint8_t fixed[] = {static_cast<std::uint8_t>(type >> 8), static_cast<std::uint8_t>(type), 0, 1,
                                  static_cast<std::uint8_t>(ttl >> 24), static_cast<std::uint8_t>(ttl >> 16),
                                  static_cast<std::uint8_t>(ttl >> 8), static_cast<std::uint8_t>(ttl), 0,
                                  static_cast<std::uint8_t>(rdata.size())};
    m.insert(m.end(), fixed, fixed + sizeof fixed);
    m.insert(m.end(), rdata.begin(), rdata.end());
  };
  rr({1, 'a', 4, 't', 'e', 's', 't', 0}, 1, 300, {192, 0, 2, 1});
  rr({0xC0, 12}, 1, 60, {192, 0, 2, 2});
  rr({0}, 41, 0x00008000, {});
  CHECK(min_ttl(m) == 60);
  CHECK(min_ttl(std::vector<std::uint8_t>(m.begin(), m.end() - 3)) == 0);  // cut inside the OPT
  CHECK(min_ttl(kQuery) == 0);                                           // no records
  CHECK(min_ttl(std::vector<std::uint8_t>(m.begin(), m.begin() + 5)) == 0);
}
