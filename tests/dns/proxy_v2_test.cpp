// SPDX-License-Identifier: GPL-3.0-or-later
// The PROXY v2 header parser (dns/proxy_v2.hpp): the shapes a balancer sends (PROXY INET
// and INET6 over either transport, LOCAL UNSPEC, TLVs), the spec's own example bytes,
// every malformed shape with its reason, the stream's incomplete starts, and the bound.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dns/proxy_v2.hpp"

namespace dnsarena::dns {
namespace {

using Verdict = ProxyV2::Verdict;
using Malformed = ProxyV2::Malformed;

sockaddr_storage addr(const char* ip, std::uint16_t port) {
  sockaddr_storage ss{};
  if (std::strchr(ip, ':')) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    ::inet_pton(AF_INET6, ip, &a->sin6_addr);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    ::inet_pton(AF_INET, ip, &a->sin_addr);
  }
  return ss;
}

std::string ip_of(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof buf);
  else if (ss.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof buf);
  return buf;
}

sockaddr_storage source_of(const ProxyV2& r) {
  sockaddr_storage ss{};
  r.source(ss);
  return ss;
}

sockaddr_storage destination_of(const ProxyV2& r) {
  sockaddr_storage ss{};
  r.destination(ss);
  return ss;
}

std::vector<std::uint8_t> v4_header(ProxyV2Transport t = ProxyV2Transport::dgram, std::size_t padding = 0) {
  const sockaddr_storage s = addr("192.0.2.7", 40000), d = addr("127.0.0.1", 53);
  return build_proxy_v2(&s, &d, t, padding);
}

ProxyV2 parse_whole(const std::vector<std::uint8_t>& b, ProxyV2Transport t = ProxyV2Transport::dgram) {
  return parse_proxy_v2(b, t, true);
}

void set_len(std::vector<std::uint8_t>& h, std::size_t len) {
  h[14] = static_cast<std::uint8_t>(len >> 8);
  h[15] = static_cast<std::uint8_t>(len);
}

}  // namespace

TEST_CASE("proxy_v2: a PROXY INET header over a datagram gives the client's address and its length") {
  std::vector<std::uint8_t> b = v4_header();
  REQUIRE(b.size() == 28);
  const std::uint8_t query[3] = {0xAB, 0xCD, 0xEF};
  b.insert(b.end(), query, query + 3);  // the DNS message follows
  const ProxyV2 r = parse_whole(b);
  REQUIRE(r.verdict == Verdict::ok);
  CHECK_FALSE(r.local);
  CHECK(r.length == 28);
  CHECK(r.family == AF_INET);
  const sockaddr_storage src = source_of(r);
  CHECK(src.ss_family == AF_INET);
  CHECK(ip_of(src) == "192.0.2.7");
  CHECK(ntohs(reinterpret_cast<const sockaddr_in&>(src).sin_port) == 40000);
  sockaddr_storage again{};
  CHECK(r.source(again) == sizeof(sockaddr_in));
  CHECK(ip_of(destination_of(r)) == "127.0.0.1");
}

TEST_CASE("proxy_v2: the spec's example bytes, PROXY TCP4, parse as written") {
  // proxy-protocol.txt 2.2: \r\n\r\n\0\r\nQUIT\n, 0x21 (v2 PROXY), 0x11 (INET STREAM), len 12.
  const std::vector<std::uint8_t> b = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A,
                                       0x21, 0x11, 0x00, 0x0C, 10,   0,    0,    1,    10,   0,    0,    2,
                                       0x1F, 0x90, 0x00, 0x35};
  const ProxyV2 r = parse_proxy_v2(b, ProxyV2Transport::stream, false);
  REQUIRE(r.verdict == Verdict::ok);
  const sockaddr_storage src = source_of(r);
  CHECK(ip_of(src) == "10.0.0.1");
  CHECK(ntohs(reinterpret_cast<const sockaddr_in&>(src).sin_port) == 8080);
  CHECK(ip_of(destination_of(r)) == "10.0.0.2");
}

TEST_CASE("proxy_v2: PROXY INET6 over a stream, with TLVs") {
  const sockaddr_storage s = addr("2001:db8::7", 1234), d = addr("::1", 53);
  const std::vector<std::uint8_t> b = build_proxy_v2(&s, &d, ProxyV2Transport::stream, 20);
  const ProxyV2 r = parse_proxy_v2(b, ProxyV2Transport::stream, false);
  REQUIRE(r.verdict == Verdict::ok);
  CHECK(r.length == 16 + 36 + 3 + 20);
  CHECK(r.tlvs == 1);
  CHECK(r.family == AF_INET6);
  CHECK(ip_of(source_of(r)) == "2001:db8::7");
  sockaddr_storage ss{};
  CHECK(r.source(ss) == sizeof(sockaddr_in6));
  CHECK(ntohs(reinterpret_cast<const sockaddr_in6&>(ss).sin6_port) == 1234);
}

TEST_CASE("proxy_v2: LOCAL UNSPEC (a health check) is accepted without an address") {
  const std::vector<std::uint8_t> b = build_proxy_v2(nullptr, nullptr, ProxyV2Transport::stream);
  REQUIRE(b.size() == 16);
  const ProxyV2 r = parse_proxy_v2(b, ProxyV2Transport::stream, false);
  REQUIRE(r.verdict == Verdict::ok);
  CHECK(r.local);
  CHECK(r.length == 16);
  CHECK(r.family == AF_UNSPEC);
  // LOCAL with an INET address block (some balancers send one): accepted, addresses ignored.
  std::vector<std::uint8_t> inet = v4_header();
  inet[12] = 0x20;
  const ProxyV2 l = parse_whole(inet);
  REQUIRE(l.verdict == Verdict::ok);
  CHECK(l.local);
  CHECK(l.family == AF_UNSPEC);
}

TEST_CASE("proxy_v2: bytes that are not a header, or only the start of one") {
  const std::vector<std::uint8_t> dns_query = {0x12, 0x34, 0x01, 0x00, 0x00, 0x01};
  CHECK(parse_whole(dns_query).verdict == Verdict::not_proxy);
  CHECK(parse_whole({}).verdict == Verdict::not_proxy);
  // A TCP query whose length prefix is 0x0D0A starts like the signature but leaves it.
  std::vector<std::uint8_t> near = v4_header();
  near[7] = 'X';
  CHECK(parse_proxy_v2(near, ProxyV2Transport::stream, false).verdict == Verdict::not_proxy);
  // proxy-protocol v1 ("PROXY TCP4 ...") is not accepted.
  const std::string v1 = "PROXY TCP4 192.0.2.7 127.0.0.1 40000 53\r\n";
  CHECK(parse_whole({v1.begin(), v1.end()}).verdict == Verdict::not_proxy);

  const std::vector<std::uint8_t> whole = v4_header(ProxyV2Transport::stream, 30);
  for (std::size_t n = 1; n < whole.size(); ++n) {
    const std::vector<std::uint8_t> head(whole.begin(), whole.begin() + static_cast<long>(n));
    INFO("first " << n << " bytes");
    CHECK(parse_proxy_v2(head, ProxyV2Transport::stream, false).verdict == Verdict::incomplete);
    const ProxyV2 d = parse_proxy_v2(head, ProxyV2Transport::dgram, true);
    CHECK(d.verdict == Verdict::malformed);
  }
  CHECK(parse_proxy_v2(whole, ProxyV2Transport::stream, false).verdict == Verdict::ok);
}

TEST_CASE("proxy_v2: every malformed shape is refused with its reason") {
  struct Case {
    const char* name;
    std::vector<std::uint8_t> bytes;
    ProxyV2Transport transport;
    Malformed why;
  };
  std::vector<Case> cases;
  auto with = [](auto edit, ProxyV2Transport t = ProxyV2Transport::dgram) {
    std::vector<std::uint8_t> h = v4_header(t);
    edit(h);
    return h;
  };
  cases.push_back({"version 1 in ver_cmd", with([](auto& h) { h[12] = 0x11; }), ProxyV2Transport::dgram, Malformed::version});
  cases.push_back({"version 3", with([](auto& h) { h[12] = 0x31; }), ProxyV2Transport::dgram, Malformed::version});
  cases.push_back({"command 2", with([](auto& h) { h[12] = 0x22; }), ProxyV2Transport::dgram, Malformed::command});
  cases.push_back({"command 15", with([](auto& h) { h[12] = 0x2F; }), ProxyV2Transport::dgram, Malformed::command});
  cases.push_back({"family UNIX", with([](auto& h) { h[13] = 0x32; }), ProxyV2Transport::dgram, Malformed::family});
  cases.push_back({"family 4", with([](auto& h) { h[13] = 0x42; }), ProxyV2Transport::dgram, Malformed::family});
  cases.push_back({"transport 3", with([](auto& h) { h[13] = 0x13; }), ProxyV2Transport::dgram, Malformed::family});
  cases.push_back({"PROXY UNSPEC family", with([](auto& h) { h[13] = 0x02; }), ProxyV2Transport::dgram,
                   Malformed::proxy_unspec});
  cases.push_back({"PROXY UNSPEC transport", with([](auto& h) { h[13] = 0x10; }), ProxyV2Transport::dgram,
                   Malformed::proxy_unspec});
  cases.push_back({"STREAM on a datagram", with([](auto& h) { h[13] = 0x11; }), ProxyV2Transport::dgram,
                   Malformed::transport});
  cases.push_back({"DGRAM on a stream", with([](auto& h) { h[13] = 0x12; }, ProxyV2Transport::stream),
                   ProxyV2Transport::stream, Malformed::transport});
  cases.push_back({"INET len 11", with([](auto& h) { set_len(h, 11); h.pop_back(); }), ProxyV2Transport::dgram,
                   Malformed::short_addresses});
  cases.push_back({"INET6 family with INET's 12 bytes", with([](auto& h) { h[13] = 0x22; }), ProxyV2Transport::dgram,
                   Malformed::short_addresses});
  cases.push_back({"len 497: 513 bytes", with([](auto& h) { set_len(h, 497); h.resize(513); }), ProxyV2Transport::dgram,
                   Malformed::too_long});
  cases.push_back({"len 65535", with([](auto& h) { set_len(h, 65535); }), ProxyV2Transport::dgram, Malformed::too_long});
  cases.push_back({"TLV value past len", with([](auto& h) {
                     h.insert(h.end(), {0x04, 0x00, 0x05, 0, 0});  // says 5, has 2
                     set_len(h, 12 + 5);
                   }),
                   ProxyV2Transport::dgram, Malformed::tlv_overrun});
  cases.push_back({"TLV head cut (2 of 3 bytes)", with([](auto& h) {
                     h.insert(h.end(), {0x04, 0x00});
                     set_len(h, 12 + 2);
                   }),
                   ProxyV2Transport::dgram, Malformed::tlv_overrun});
  cases.push_back({"second TLV overruns", with([](auto& h) {
                     h.insert(h.end(), {0x04, 0x00, 0x01, 0xAA, 0x01, 0xFF, 0xFF});
                     set_len(h, 12 + 7);
                   }),
                   ProxyV2Transport::dgram, Malformed::tlv_overrun});
  cases.push_back({"datagram shorter than len", with([](auto& h) { h.resize(20); }), ProxyV2Transport::dgram,
                   Malformed::truncated});
  cases.push_back({"datagram of the prefix only", with([](auto& h) { h.resize(14); }), ProxyV2Transport::dgram,
                   Malformed::truncated});
  for (const Case& c : cases) {
    INFO(c.name);
    const ProxyV2 r = parse_proxy_v2(c.bytes, c.transport, true);
    CHECK(r.verdict == Verdict::malformed);
    CHECK(std::string(proxy_v2_malformed_name(r.why)) == proxy_v2_malformed_name(c.why));
    // A stream says malformed as soon as its bytes show it (no waiting for a bad header).
    if (c.why != Malformed::truncated) {
      const ProxyV2 s = parse_proxy_v2(c.bytes, c.transport, false);
      CHECK(s.verdict == Verdict::malformed);
    }
  }
}

TEST_CASE("proxy_v2: the header bound is 512 bytes including the prefix") {
  const std::vector<std::uint8_t> at = v4_header(ProxyV2Transport::dgram, 512 - 28 - 3);
  REQUIRE(at.size() == 512);
  CHECK(parse_whole(at).verdict == Verdict::ok);
  const std::vector<std::uint8_t> over = v4_header(ProxyV2Transport::dgram, 512 - 28 - 3 + 1);
  const ProxyV2 r = parse_whole(over);
  CHECK(r.verdict == Verdict::malformed);
  CHECK(r.why == Malformed::too_long);
  // A stream knows it from the 16-byte prefix alone: no need to buffer what follows.
  const std::vector<std::uint8_t> prefix(over.begin(), over.begin() + 16);
  CHECK(parse_proxy_v2(prefix, ProxyV2Transport::dgram, false).verdict == Verdict::malformed);
}

}  // namespace dnsarena::dns
