// SPDX-License-Identifier: GPL-3.0-or-later
// DNS64's arithmetic and configuration (workers/dns64.hpp), in one process: RFC 6052's
// address examples at every prefix length and back, the ip6.arpa name of each mapped to
// its in-addr.arpa name, which queries get the DNS64 key flag, the AAAA answer verdict,
// and the dns64 section's errors naming file, line, column and key.
#include <catch2/catch.hpp>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "tests/workers/serve_harness.hpp"
#include "workers/dns64.hpp"
#include "workers/serve_config.hpp"

using namespace dnsarena::workers;

namespace {

std::array<std::uint8_t, 16> v6(const char* text) {
  std::array<std::uint8_t, 16> a{};
  REQUIRE(::inet_pton(AF_INET6, text, a.data()) == 1);
  return a;
}

// The 32-nibble ip6.arpa wire name of `addr`.
std::vector<std::uint8_t> ip6_arpa(const std::array<std::uint8_t, 16>& addr) {
  static const char* hex = "0123456789abcdef";
  std::vector<std::uint8_t> n;
  for (int i = 15; i >= 0; --i) {
    n.insert(n.end(), {1, static_cast<std::uint8_t>(hex[addr[i] & 0xF])});
    n.insert(n.end(), {1, static_cast<std::uint8_t>(hex[addr[i] >> 4])});
  }
  n.insert(n.end(), {3, 'i', 'p', '6', 4, 'a', 'r', 'p', 'a', 0});
  return n;
}

sockaddr_storage client(const char* v4) {
  sockaddr_storage ss{};
  auto& sin = reinterpret_cast<sockaddr_in&>(ss);
  sin.sin_family = AF_INET;
  REQUIRE(::inet_pton(AF_INET, v4, &sin.sin_addr) == 1);
  return ss;
}

dnsarena::dns::ClientQuery query(const std::vector<std::uint8_t>& name, std::uint16_t qtype) {
  dnsarena::dns::ClientQuery q;
  std::memcpy(q.qname_storage.data(), name.data(), name.size());
  q.qname_len = static_cast<std::uint8_t>(name.size());
  q.qtype = qtype;
  return q;
}

}  // namespace

TEST_CASE("dns64: RFC 6052 2.4's examples at every prefix length, and back", "[dns64]") {
  const std::uint8_t ipv4[4] = {192, 0, 2, 33};
  const struct {
    const char* prefix;
    const char* address;
  } examples[] = {
      {"2001:db8::/32", "2001:db8:c000:221::"},
      {"2001:db8:100::/40", "2001:db8:1c0:2:21::"},
      {"2001:db8:122::/48", "2001:db8:122:c000:2:2100::"},
      {"2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"},
      {"2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0"},
      {"2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33"},
      {"64:ff9b::/96", "64:ff9b::192.0.2.33"},
  };
  for (const auto& e : examples) {
    INFO(e.prefix);
    const Dns64Prefix p = Dns64Prefix::parse(e.prefix);
    CHECK(embed_ipv4(p, ipv4) == v6(e.address));
    std::uint8_t back[4];
    REQUIRE(extract_ipv4(p, v6(e.address).data(), back));
    CHECK(std::memcmp(back, ipv4, 4) == 0);
    // The PTR name of the synthesized address maps to 33.2.0.192.in-addr.arpa.
    std::uint8_t name[255];
    const std::size_t n = ptr_ipv4_name(p, ip6_arpa(v6(e.address)), name);
    const std::vector<std::uint8_t> want = {2, '3', '3', 1, '2', 1, '0', 3, '1', '9', '2',
                                            7, 'i', 'n', '-', 'a', 'd', 'd', 'r', 4, 'a', 'r', 'p', 'a', 0};
    CHECK(std::vector<std::uint8_t>(name, name + n) == want);
  }
  // Outside the prefix, or with the u octet or suffix set: not a synthesized address.
  const Dns64Prefix wkp;
  std::uint8_t out[4], name[255];
  CHECK_FALSE(extract_ipv4(wkp, v6("2001:db8::1").data(), out));
  CHECK(ptr_ipv4_name(wkp, ip6_arpa(v6("2001:db8::c000:221")), name) == 0);
  CHECK(ptr_ipv4_name(Dns64Prefix::parse("2001:db8:122:344::/64"), ip6_arpa(v6("2001:db8:122:344:c0:2:2100:1")), name) == 0);
  CHECK(ptr_ipv4_name(Dns64Prefix::parse("2001:db8::/32"), ip6_arpa(v6("2001:db8:c000:221:100::")), name) == 0);
  // A shorter name under the prefix's zone is not an address.
  std::vector<std::uint8_t> partial = ip6_arpa(v6("64:ff9b::c000:221"));
  partial.erase(partial.begin(), partial.begin() + 2);
  CHECK(ptr_ipv4_name(wkp, partial, name) == 0);
}

TEST_CASE("dns64: prefixes of RFC 6052's lengths only, bits 64-71 zero, IPv6 excludes", "[dns64]") {
  CHECK(Dns64Prefix::parse("64:ff9b::/96") == Dns64Prefix{});
  CHECK_THROWS_WITH(Dns64Prefix::parse("64:ff9b::/80"), Catch::Contains("32, 40, 48, 56, 64, 96"));
  CHECK_THROWS_WITH(Dns64Prefix::parse("64:ff9b::"), Catch::Contains("no prefix length"));
  CHECK_THROWS_WITH(Dns64Prefix::parse("192.0.2.0/32"), Catch::Contains("not an IPv6 address"));
  CHECK_THROWS_WITH(Dns64Prefix::parse("2001:db8::1/32"), Catch::Contains("bits set past its length"));
  CHECK_THROWS_WITH(Dns64Prefix::parse("2001:db8:0:0:ff00::/96"), Catch::Contains("bits 64-71"));
  CHECK_THROWS_WITH(parse_dns64_exclude("10.0.0.0/8"), Catch::Contains("not an IPv6 subnet"));
  CHECK(parse_dns64_exclude("::ffff:0:0/96").prefix == 96);
}

TEST_CASE("dns64: the key flag for AAAA and prefix PTR of listed clients, never for DO+CD", "[dns64]") {
  Dns64Config cfg;
  cfg.enabled = true;
  cfg.clients = {Subnet::parse("127.0.0.1/32")};
  const std::vector<std::uint8_t> www = {3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0};
  auto q = query(www, dnsarena::wire::kTypeAaaa);
  CHECK(dns64_key_flag(cfg, q, client("127.0.0.1")) == dnsarena::cache::kKeyDns64);
  CHECK(dns64_key_flag(cfg, q, client("127.0.0.2")) == 0);
  q.do_bit = true;
  CHECK(dns64_key_flag(cfg, q, client("127.0.0.1")) == dnsarena::cache::kKeyDns64);  // DO alone: synthesized
  q.flags |= dnsarena::wire::kFlagCd;
  CHECK(dns64_key_flag(cfg, q, client("127.0.0.1")) == 0);  // DO+CD: the real answer
  CHECK(dns64_key_flag(cfg, query(www, dnsarena::wire::kTypeA), client("127.0.0.1")) == 0);
  CHECK(dns64_key_flag(cfg, query(ip6_arpa(v6("64:ff9b::c000:221")), dnsarena::wire::kTypePtr), client("127.0.0.1")) ==
        dnsarena::cache::kKeyDns64);
  CHECK(dns64_key_flag(cfg, query(ip6_arpa(v6("2001:db8::1")), dnsarena::wire::kTypePtr), client("127.0.0.1")) == 0);
  // A dual-stack socket's IPv4 client (::ffff:127.0.0.1) is the IPv4 client.
  sockaddr_storage mapped{};
  auto& sin6 = reinterpret_cast<sockaddr_in6&>(mapped);
  sin6.sin6_family = AF_INET6;
  REQUIRE(::inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6.sin6_addr) == 1);
  CHECK(dns64_key_flag(cfg, query(www, dnsarena::wire::kTypeAaaa), mapped) == dnsarena::cache::kKeyDns64);
  cfg.clients.clear();  // every client
  CHECK(dns64_key_flag(cfg, query(www, dnsarena::wire::kTypeAaaa), client("127.0.0.2")) == dnsarena::cache::kKeyDns64);
}

TEST_CASE("dns64: an AAAA answer is synthesized when NOERROR holds no AAAA outside the excludes", "[dns64]") {
  const Dns64Config cfg;
  // Header, www.example. AAAA IN, then the records given (owners compressed to the qname).
  auto message = [](std::uint16_t rcode, std::vector<std::vector<std::uint8_t>> answer,
                    std::vector<std::vector<std::uint8_t>> authority) {
    std::vector<std::uint8_t> m = {0, 1, 0x81, static_cast<std::uint8_t>(0x80 | rcode), 0, 1, 0,
                                   static_cast<std::uint8_t>(answer.size()), 0,
                                   static_cast<std::uint8_t>(authority.size()), 0, 0};
    m.insert(m.end(), {3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0, 28, 0, 1});
    for (const auto* section : {&answer, &authority})
      for (const auto& r : *section) m.insert(m.end(), r.begin(), r.end());
    return m;
  };
  auto aaaa = [](const char* text) {
    std::vector<std::uint8_t> r = {0xC0, 12, 0, 28, 0, 1, 0, 0, 1, 0, 0, 16};
    const auto a = v6(text);
    r.insert(r.end(), a.begin(), a.end());
    return r;
  };
  // example. SOA (TTL 600) with MINIMUM 120: the cap is 120.
  std::vector<std::uint8_t> soa = {0xC0, 16, 0, 6, 0, 1, 0, 0, 2, 0x58, 0, 26, 1, 'a', 0, 1, 'b', 0};
  for (std::uint8_t b : {0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 120}) soa.push_back(b);
  auto verdict = [&](const std::vector<std::uint8_t>& m) { return inspect_aaaa_answer(cfg, m.data(), m.size()); };
  const AaaaVerdict nodata = verdict(message(0, {}, {soa}));
  CHECK(nodata.synthesize);
  CHECK(nodata.ttl_cap == 120);
  CHECK_FALSE(verdict(message(0, {aaaa("2001:db8::1")}, {})).synthesize);
  CHECK(verdict(message(0, {aaaa("::ffff:192.0.2.1")}, {})).synthesize);  // only excluded ones
  CHECK_FALSE(verdict(message(0, {aaaa("::ffff:192.0.2.1"), aaaa("2001:db8::1")}, {})).synthesize);
  CHECK_FALSE(verdict(message(3, {}, {soa})).synthesize);  // NXDOMAIN
  CHECK_FALSE(verdict(message(2, {}, {})).synthesize);     // SERVFAIL
  auto tc = message(0, {}, {soa});
  tc[2] |= 0x02;
  CHECK_FALSE(verdict(tc).synthesize);
  Dns64Config none;
  none.exclude.clear();
  const auto mapped = message(0, {aaaa("::ffff:192.0.2.1")}, {});
  CHECK_FALSE(inspect_aaaa_answer(none, mapped.data(), mapped.size()).synthesize);
}

TEST_CASE("dns64 config: off by default, the section turns it on, errors name the key", "[dns64][config]") {
  using dnsarena::test::write_config;
  CHECK_FALSE(load_serve_config(write_config("workers: 1\n")).dns64.enabled);
  const ServeConfig on = load_serve_config(write_config("dns64: {}\n"));
  CHECK(on.dns64.enabled);
  CHECK(on.dns64.prefix == Dns64Prefix{});
  REQUIRE(on.dns64.exclude.size() == 1);
  CHECK(on.dns64.exclude[0] == Subnet::parse("::ffff:0:0/96"));
  CHECK(on.dns64.clients.empty());
  const ServeConfig set = load_serve_config(
      write_config("dns64:\n  prefix: 2001:db8:100::/40\n  exclude: []\n  clients: [192.0.2.0/24, \"2001:db8::/32\"]\n"));
  CHECK(set.dns64.prefix == Dns64Prefix::parse("2001:db8:100::/40"));
  CHECK(set.dns64.exclude.empty());
  CHECK(set.dns64.clients.size() == 2);
  CHECK_THROWS_WITH(load_serve_config(write_config("dns64:\n  prefix: 64:ff9b::/80\n")),
                    Catch::Contains(":2:11") && Catch::Contains("'dns64.prefix'") && Catch::Contains("32, 40"));
  CHECK_THROWS_WITH(load_serve_config(write_config("dns64:\n  exclude: [10.0.0.0/8]\n")),
                    Catch::Contains("'dns64.exclude'") && Catch::Contains("not an IPv6 subnet"));
  CHECK_THROWS_WITH(load_serve_config(write_config("dns64:\n  clients: 10.0.0.0/8\n")),
                    Catch::Contains("'dns64.clients'") && Catch::Contains("expected a list"));
  CHECK_THROWS_WITH(load_serve_config(write_config("dns64:\n  clients: [10.0.0.0/33]\n")),
                    Catch::Contains("'dns64.clients'") && Catch::Contains("prefix '33'"));
  CHECK_THROWS_WITH(load_serve_config(write_config("dns64:\n  prefx: 64:ff9b::/96\n")),
                    Catch::Contains("prefx") && Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(load_serve_config(write_config("dns64:\n")), Catch::Contains("'dns64'"));
}
