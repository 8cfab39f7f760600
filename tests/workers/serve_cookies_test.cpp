// SPDX-License-Identifier: GPL-3.0-or-later
// DNS server cookies through a real `dnsarena serve` (workers/server_cookies.hpp): kdig's
// +cookie, malformed options, cookies never cached, a cookie made by one worker valid at
// the others, the rate-limit exemption, cookies_require (BADCOOKIE), cookies: false, and
// the secret across SIGHUP reloads (kept; rolled over with the previous one still valid).
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {

constexpr std::uint16_t kOptionCookie = 10;
const std::vector<std::uint8_t> kClient = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};

std::vector<std::uint8_t> cookie_query(std::uint16_t id, const std::string& name, const std::vector<std::uint8_t>& cookie) {
  return with_edns_option(make_query(id, name, 1), kOptionCookie, cookie);
}

std::vector<std::uint8_t> head(const std::vector<std::uint8_t>& v, std::size_t n) { return {v.begin(), v.begin() + static_cast<long>(std::min(n, v.size()))}; }

// Asks with `cookie` until answered (a fresh service's workers) and returns the reply.
DnsReply ask(std::uint16_t port, std::uint16_t id, const std::vector<std::uint8_t>& cookie) {
  return udp_exchange(port, cookie_query(id, "a.test", cookie));
}

// A reply's cookie after a client-only query: the client cookie and a 16-byte server cookie.
std::vector<std::uint8_t> learn_cookie(std::uint16_t port, std::uint16_t id) {
  const DnsReply r = ask(port, id, kClient);
  REQUIRE(r.answered);
  REQUIRE(r.cookie.size() == 24);
  REQUIRE(head(r.cookie, 8) == kClient);
  return r.cookie;
}

}  // namespace

TEST_CASE("kdig +cookie gets a server cookie, and a second kdig presenting it is accepted", "[serve][cookies]") {
  Service s;
  REQUIRE(udp_answered_within(s.port, make_query(1, "a.test", 1)));
  const std::string base = kdig_program() + " @127.0.0.1 -p " + std::to_string(s.port) + " a.test A +timeout=2 +retry=0 ";
  const std::string first = run_command(base + "+cookie 2>&1");
  INFO(first);
  std::smatch m;
  REQUIRE(std::regex_search(first, m, std::regex("COOKIE: ([0-9A-Fa-f]{16})([0-9A-Fa-f]{32})")));
  const std::string client = m[1], server = m[2];
  CHECK(server.substr(0, 8) == "01000000");  // RFC 9018: version 1, reserved 0
  CHECK(first.find("status: NOERROR") != std::string::npos);
  const std::uint64_t valid_before = s.total("cookie_valid");
  const std::string second = run_command(base + "+cookie=" + client + server + " 2>&1");
  INFO(second);
  CHECK(second.find("status: NOERROR") != std::string::npos);
  REQUIRE(std::regex_search(second, m, std::regex("COOKIE: ([0-9A-Fa-f]{48})")));
  CHECK(m[1] == client + server);  // fresh: echoed as it was
  CHECK(s.total("cookie_valid") == valid_before + 1);
}

TEST_CASE("COOKIE option lengths other than 8 and 16..40 are FORMERR, a foreign server cookie gets a new one",
          "[serve][cookies]") {
  Service s;
  REQUIRE(udp_answered_within(s.port, make_query(1, "a.test", 1)));
  std::uint16_t id = 10;
  for (std::size_t len : {0, 1, 7, 9, 15, 41, 64}) {
    CAPTURE(len);
    const DnsReply r = ask(s.port, ++id, std::vector<std::uint8_t>(len, 0xAB));
    REQUIRE(r.answered);
    CHECK(r.rcode() == 1);
    CHECK(r.cookie.empty());
  }
  for (std::size_t len : {8, 16, 24, 40}) {  // the server part (if any) is not ours: a new one comes back
    CAPTURE(len);
    std::vector<std::uint8_t> c = kClient;
    c.resize(len, 0xCD);
    const DnsReply r = ask(s.port, ++id, c);
    REQUIRE(r.answered);
    CHECK(r.rcode() == 0);
    CHECK_FALSE(r.answers.empty());
    REQUIRE(r.cookie.size() == 24);
    CHECK(head(r.cookie, 8) == kClient);
    CHECK(r.cookie != c);
  }
  CHECK(s.total("cookie_valid") == 0);
}

TEST_CASE("cookies are never cached: each client gets its own back, a cookieless one none", "[serve][cookies]") {
  Service s;
  REQUIRE(udp_answered_within(s.port, cookie_query(1, "a.test", kClient)));
  const std::uint64_t upstream = s.upstream.queries();
  const std::vector<std::uint8_t> other = {9, 8, 7, 6, 5, 4, 3, 2};
  const DnsReply a = ask(s.port, 2, kClient), b = ask(s.port, 3, other);
  const DnsReply plain = udp_exchange(s.port, make_query(4, "a.test", 1));
  CHECK(s.upstream.queries() == upstream);  // all three were hits
  REQUIRE(a.cookie.size() == 24);
  REQUIRE(b.cookie.size() == 24);
  CHECK(head(a.cookie, 8) == kClient);
  CHECK(head(b.cookie, 8) == other);
  CHECK(plain.has_opt);
  CHECK(plain.cookie.empty());
  CHECK(plain.answers == a.answers);
  // A miss answered from upstream carries the cookie too; the entry it left carries none.
  const DnsReply miss = udp_exchange(s.port, cookie_query(5, "b.test", kClient));
  CHECK(head(miss.cookie, 8) == kClient);
  CHECK(udp_exchange(s.port, make_query(6, "b.test", 1)).cookie.empty());
  // Over TCP as over UDP.
  const DnsReply tcp = tcp_exchange(s.port, cookie_query(7, "a.test", other));
  REQUIRE(tcp.cookie.size() == 24);
  CHECK(head(tcp.cookie, 8) == other);
}

TEST_CASE("a cookie made by one worker is valid at every other (one secret for the host)", "[serve][cookies][multiprocess]") {
  Service s({}, 4);
  REQUIRE(udp_answered_within(s.port, make_query(1, "a.test", 1)));
  const std::vector<std::uint8_t> cookie = learn_cookie(s.port, 2);
  // Each exchange has its own source port: SO_REUSEPORT spreads them over the 4 workers.
  for (std::uint16_t id = 10; id < 90; ++id) {
    const DnsReply r = ask(s.port, id, cookie);
    REQUIRE(r.answered);
    CHECK(r.rcode() == 0);
    CHECK(r.cookie == cookie);  // valid and fresh at every worker: echoed
  }
  unsigned workers_validating = 0;
  const nlohmann::json stats = serve_stats(s.segment);
  INFO(stats.dump());
  for (const auto& row : stats["rows"])
    if (row.contains("worker") && row["cookie_valid"].get<std::uint64_t>() > 0) ++workers_validating;
  CHECK(workers_validating >= 3);
  CHECK(s.total("cookie_valid") == 80);
}

TEST_CASE("a client with a valid server cookie is not rate limited, a cookieless one at the same rate is",
          "[serve][cookies][rrl]") {
  // slip 1: every limited query gets a TC answer, so none waits out a timeout.
  Service s({"-c", write_config("rate_limit: {responses_per_second: 10, slip: 1}\n")}, 2);
  REQUIRE(udp_answered_within(s.port, make_query(1, "a.test", 1)));
  const std::vector<std::uint8_t> cookie = learn_cookie(s.port, 2);
  unsigned cookie_full = 0, cookie_tc = 0, plain_full = 0, plain_tc = 0;
  for (std::uint16_t id = 100; id < 200; ++id) {
    const DnsReply c = ask(s.port, id, cookie);
    REQUIRE(c.answered);
    (c.tc() ? cookie_tc : cookie_full) += 1;
    const DnsReply p = udp_exchange(s.port, make_query(static_cast<std::uint16_t>(id + 1000), "a.test", 1));
    REQUIRE(p.answered);
    (p.tc() ? plain_tc : plain_full) += 1;
  }
  INFO("cookie: " << cookie_full << " full, " << cookie_tc << " TC; cookieless: " << plain_full << " full, " << plain_tc << " TC");
  CHECK(cookie_full == 100);
  CHECK(cookie_tc == 0);
  CHECK(plain_tc >= 50);  // 10 per second (and a burst) of 100 asked within a few seconds
  CHECK(s.total("cookie_valid") == 100);
  CHECK(s.total("rate_limited") == plain_tc);
}

TEST_CASE("cookies_require: BADCOOKIE over UDP without a valid cookie, an answer with one, TCP and cookieless answered",
          "[serve][cookies]") {
  Service s({"-c", write_config("cookies_require: true\n")}, 2);
  REQUIRE(udp_answered_within(s.port, make_query(1, "a.test", 1)));
  const DnsReply bad = ask(s.port, 2, kClient);
  REQUIRE(bad.answered);
  CHECK(bad.extended_rcode == 23);
  CHECK_FALSE(bad.tc());
  CHECK(bad.answers.empty());
  REQUIRE(bad.cookie.size() == 24);
  CHECK(head(bad.cookie, 8) == kClient);
  const DnsReply good = ask(s.port, 3, bad.cookie);
  CHECK(good.rcode() == 0);
  CHECK_FALSE(good.answers.empty());
  std::vector<std::uint8_t> forged = bad.cookie;
  forged[23] ^= 1;
  CHECK(ask(s.port, 4, forged).extended_rcode == 23);
  CHECK(tcp_exchange(s.port, cookie_query(5, "a.test", kClient)).rcode() == 0);
  CHECK(udp_exchange(s.port, make_query(6, "a.test", 1)).rcode() == 0);
  CHECK(s.total("cookie_badcookie") == 2);
}

TEST_CASE("cookies: false ignores the option (no cookie back)", "[serve][cookies]") {
  Service s({"-c", write_config("cookies: false\ncookies_require: true\n")}, 1);
  REQUIRE(udp_answered_within(s.port, make_query(1, "a.test", 1)));
  const DnsReply r = ask(s.port, 2, kClient);
  CHECK(r.rcode() == 0);
  CHECK_FALSE(r.answers.empty());
  CHECK(r.cookie.empty());
  CHECK(ask(s.port, 3, std::vector<std::uint8_t>(7, 1)).rcode() == 1);  // still malformed EDNS
}

TEST_CASE("SIGHUP keeps the secret, a new cookie_secret rolls over, the previous one valid until the next change",
          "[serve][cookies][reload]") {
  const std::string path = write_config("cookies_require: true\n");
  Service s({"--config", path}, 2);
  REQUIRE(udp_answered_within(s.port, make_query(1, "a.test", 1)));
  // Waits for the reload: it is logged once the workers it replaced read the socket no
  // more (they were forked with the old secrets), so every answer after it is a new worker's.
  auto reload = [&](const std::string& text, int nth) {
    std::ofstream(path) << text;
    REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
    REQUIRE(eventually([&] { return occurrences(s.serve->log(), "reloaded:") >= static_cast<std::size_t>(nth); }));
  };
  // The random secret made at start survives a reload that does not name one.
  const std::vector<std::uint8_t> c0 = learn_cookie(s.port, 2);
  reload("cookies_require: true\nlog_level: info\n", 1);
  for (std::uint16_t id = 10; id < 20; ++id) CHECK(ask(s.port, id, c0).cookie == c0);

  const std::string s1 = "000102030405060708090a0b0c0d0e0f", s2 = "f0e1d2c3b4a5968778695a4b3c2d1e0f";
  reload("cookies_require: true\ncookie_secret: \"" + s1 + "\"\n", 2);
  const DnsReply r0 = ask(s.port, 30, c0);  // the random one is now the previous: valid, renewed
  CHECK(r0.rcode() == 0);
  REQUIRE(r0.cookie.size() == 24);
  CHECK(r0.cookie != c0);
  const std::vector<std::uint8_t> c1 = r0.cookie;
  CHECK(ask(s.port, 31, c1).cookie == c1);

  reload("cookies_require: true\ncookie_secret: \"" + s2 + "\"\n", 3);
  CHECK(ask(s.port, 40, c0).extended_rcode == 23);  // two changes ago: invalid
  const DnsReply r1 = ask(s.port, 41, c1);           // one change ago: valid, renewed under s2
  CHECK(r1.rcode() == 0);
  CHECK(r1.cookie != c1);
  const std::vector<std::uint8_t> c2 = r1.cookie;
  for (std::uint16_t id = 50; id < 60; ++id) CHECK(ask(s.port, id, c2).cookie == c2);  // every worker

  // The same secret again: nothing changes, c1 stays valid.
  reload("cookies_require: true\ncookie_secret: \"" + s2 + "\"\nlog_level: info\n", 4);
  CHECK(ask(s.port, 60, c1).rcode() == 0);
  CHECK(ask(s.port, 61, c2).cookie == c2);
  CHECK(s.serve->log().find("new cookie_secret") != std::string::npos);
}

TEST_CASE("cookie_secret must be 32 hex digits", "[serve][cookies][reload]") {
  int status = -1;
  const std::string bad = write_config("upstreams: [127.0.0.1:5300]\ncookie_secret: 0011\n");
  const std::string out = run_command(dnsarena_binary() + " serve --check-config " + bad + " 2>&1", &status);
  INFO(out);
  CHECK(status == 1);
  CHECK(out.find("cookie_secret") != std::string::npos);
  CHECK(out.find("32 hex digits") != std::string::npos);
  const std::string good = write_config("upstreams: [127.0.0.1:5300]\ncookie_secret: \"00112233445566778899aabbccddeeff\"\n");
  run_command(dnsarena_binary() + " serve --check-config " + good + " 2>&1", &status);
  CHECK(status == 0);
}
