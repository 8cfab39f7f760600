// SPDX-License-Identifier: GPL-3.0-or-later
// PROXY protocol v2 in front of serve (proxy_protocol_from, workers/proxy_protocol.hpp):
// hand-built headers over UDP and TCP from a listed 127.0.0.1 carrying 192.0.2.7, judged
// by an access control that allows only 192.0.2.0/24; a headerless query, a malformed
// header and a header from an unlisted 127.0.0.2, dropped and counted; then haproxy
// (send-proxy-v2, TCP mode, to serve's TCP, DoT and DoH listeners) and dnsdist
// (useProxyProtocol, UDP) in front, with kdig as the client; the carried client in ECS
// synthesized from the source, rpz-client-ip, dnstap and the per-client TCP bound. The
// config's strict parsing.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/find_program.hpp"
#include "dns/proxy_v2.hpp"
#include "tests/test_skip.hpp"
#include "tests/workers/hostile_clients.hpp"
#include "tests/workers/service_fixture.hpp"
#include "tests/workers/tls_test_support.hpp"
#include "workers/serve_config.hpp"

using namespace dnsarena::test;
using dnsarena::dns::build_proxy_v2;
using dnsarena::dns::ProxyV2Transport;

namespace {

sockaddr_storage v4(const char* ip, std::uint16_t port) {
  sockaddr_storage ss{};
  auto* a = reinterpret_cast<sockaddr_in*>(&ss);
  a->sin_family = AF_INET;
  a->sin_port = htons(port);
  ::inet_pton(AF_INET, ip, &a->sin_addr);
  return ss;
}

// A header carrying `client` as a balancer in front of 127.0.0.1:`port` writes it.
std::vector<std::uint8_t> header_for(const char* client, std::uint16_t port, ProxyV2Transport t) {
  const sockaddr_storage s = v4(client, 40000), d = v4("127.0.0.1", port);
  return build_proxy_v2(&s, &d, t);
}

std::vector<std::uint8_t> concat(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// What a TCP connection got for one framed query: the answer, or nothing because serve
// closed it.
struct TcpOutcome {
  DnsReply reply;
  bool closed = false;
};

// Sends `bytes` then one framed `query` on connection `fd` (the bytes cut in two writes
// at `cut` when nonzero) and reads the answer (up to 3 s).
TcpOutcome exchange_on(int fd, const std::vector<std::uint8_t>& bytes, const std::vector<std::uint8_t>& query,
                       std::size_t cut = 0) {
  std::vector<std::uint8_t> msg = bytes;
  msg.push_back(static_cast<std::uint8_t>(query.size() >> 8));
  msg.push_back(static_cast<std::uint8_t>(query.size()));
  msg.insert(msg.end(), query.begin(), query.end());
  if (cut && cut < msg.size()) {
    ::send(fd, msg.data(), cut, MSG_NOSIGNAL);
    // Not a synchronization: only to let the two parts travel in separate segments, so
    // that serve most likely reads the first alone and must wait for the rest.
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 100);
    ::send(fd, msg.data() + cut, msg.size() - cut, MSG_NOSIGNAL);
  } else {
    ::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
  }
  TcpOutcome out;
  std::vector<std::uint8_t> in;
  for (int i = 0; i < 60; ++i) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) != 1) continue;
    std::uint8_t buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      out.closed = true;
      break;
    }
    in.insert(in.end(), buf, buf + n);
    if (in.size() >= 2 && in.size() >= 2u + ((in[0] << 8) | in[1])) {
      out.reply = parse_reply({in.begin() + 2, in.begin() + 2 + ((in[0] << 8) | in[1])});
      break;
    }
  }
  return out;
}

// A connection from 127.0.0.1 that sends `prefix` and one query, then is closed.
TcpOutcome proxied_tcp(std::uint16_t port, const std::vector<std::uint8_t>& prefix, const std::vector<std::uint8_t>& query,
                       std::size_t cut = 0) {
  const int fd = tcp_connect_from("127.0.0.1", port);
  TcpOutcome out;
  if (fd >= 0) out = exchange_on(fd, prefix, query, cut);
  ::close(fd);
  return out;
}

std::uint64_t proxy_count(const std::string& segment, const char* outcome) {
  const nlohmann::json stats = serve_stats(segment);
  return stats.contains("answers") && stats["answers"].contains("proxy")
             ? stats["answers"]["proxy"][outcome].get<std::uint64_t>()
             : 0;
}

// The header status kdig printed ("NOERROR", "REFUSED"; "" when it got no answer),
// asking from `source` through 127.0.0.1:`port`.
std::string kdig_status(const char* source, std::uint16_t port, const std::string& extra) {
  const std::string out = run_command(kdig_program() + " -b " + source + " @127.0.0.1 -p " + std::to_string(port) +
                                      " a.test A +timeout=2 +retry=0 " + extra + " 2>&1");
  const std::size_t header = out.find("->>HEADER<<-");  // not +https's "(HTTP/2 ... status: 200)"
  const std::size_t at = header == std::string::npos ? header : out.find("status: ", header);
  if (at == std::string::npos) return "";
  const std::size_t end = out.find(';', at);
  return out.substr(at + 8, end - at - 8);
}

// A balancer (haproxy, dnsdist) run from `config` until the test ends; its log in a
// temporary file.
struct Balancer {
  TempConfig config;
  TempConfig log{""};
  dnsarena::common::ChildProcess process;
  Balancer(const std::string& text, std::vector<std::string> argv) : config(text) {
    for (std::string& a : argv)
      if (a == "CONFIG") a = config.path();
    process = dnsarena::common::ChildProcess(argv, {.log_path = log.path(), .truncate_log = true, .search_path = true});
  }
  std::string log_text() const {
    std::ifstream f(log.path());
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
};

const char* kBalancerAddress = "127.0.0.3";  // the balancers connect from here: the listed source

const char* kAllowDocNet =
    "proxy_protocol_from: [127.0.0.1/32]\n"
    "access_control: [\"192.0.2.0/24 allow\"]\n";

}  // namespace

TEST_CASE("proxy v2 over UDP: the carried client is the one access control judges, and no header, a malformed one "
          "and an unlisted source are dropped and counted",
          "[serve][proxy]") {
  Service s({"--config", write_config(kAllowDocNet)}, 1);
  const auto query = [](std::uint16_t id) { return make_query(id, "a.test", 1); };
  // 192.0.2.7 through the balancer: allowed, answered to the balancer's socket.
  const DnsReply allowed =
      udp_exchange(s.port, concat(header_for("192.0.2.7", s.port, ProxyV2Transport::dgram), query(1)));
  REQUIRE(allowed.answered);
  CHECK(allowed.rcode() == 0);
  CHECK(allowed.id == 1);
  CHECK(allowed.answers.size() == 2);
  // A client outside 192.0.2.0/24 through it: REFUSED.
  const DnsReply refused =
      udp_exchange(s.port, concat(header_for("198.51.100.7", s.port, ProxyV2Transport::dgram), query(2)));
  REQUIRE(refused.answered);
  CHECK(refused.rcode() == 5);
  // LOCAL: the balancer's own address (127.0.0.1) stands, and is not allowed.
  const DnsReply local = udp_exchange(s.port, concat(build_proxy_v2(nullptr, nullptr, ProxyV2Transport::dgram), query(3)));
  REQUIRE(local.answered);
  CHECK(local.rcode() == 5);
  // The balancer's query without a header, and with a TLV running past the header: nothing.
  CHECK_FALSE(udp_exchange(s.port, query(4), std::chrono::milliseconds(300)).answered);
  std::vector<std::uint8_t> bad = header_for("192.0.2.7", s.port, ProxyV2Transport::dgram);
  bad.insert(bad.end(), {0x04, 0x00, 0x09});  // a NOOP TLV of 9 bytes with none of them
  bad[15] = static_cast<std::uint8_t>(bad[15] + 3);
  CHECK_FALSE(udp_exchange(s.port, concat(bad, query(5)), std::chrono::milliseconds(300)).answered);
  // A STREAM header on a datagram is malformed too.
  CHECK_FALSE(udp_exchange(s.port, concat(header_for("192.0.2.7", s.port, ProxyV2Transport::stream), query(6)),
                           std::chrono::milliseconds(300))
                  .answered);
  // 127.0.0.2 is not a listed balancer: its header is dropped, not read as DNS.
  CHECK_FALSE(udp_exchange(s.port, concat(header_for("192.0.2.7", s.port, ProxyV2Transport::dgram), query(7)),
                           std::chrono::milliseconds(300), "127.0.0.2")
                  .answered);
  // ... and its plain query is judged by its own address (refused).
  const DnsReply plain = udp_exchange(s.port, query(8), std::chrono::milliseconds(2000), "127.0.0.2");
  REQUIRE(plain.answered);
  CHECK(plain.rcode() == 5);
  REQUIRE(eventually([&] { return proxy_count(s.segment, "unlisted") == 1; }));
  CHECK(proxy_count(s.segment, "accepted") == 2);
  CHECK(proxy_count(s.segment, "local") == 1);
  CHECK(proxy_count(s.segment, "no_header") == 1);
  CHECK(proxy_count(s.segment, "malformed") == 2);
  CHECK(s.upstream.queries() == 1);  // only 192.0.2.7's miss went upstream
  // `dnsarena stats` prints them on one line.
  const std::string table = run_command(dnsarena_binary() + " stats --segment " + s.segment + " --interval 0");
  CHECK_THAT(table, Catch::Contains("proxy   accepted 2 local 1 no_header 1 malformed 2 unlisted 1"));
}

TEST_CASE("proxy v2 over TCP: the header (also cut in two) names the client, and no header, a malformed one and an "
          "unlisted source close the connection, counted",
          "[serve][proxy]") {
  Service s({"--config", write_config(kAllowDocNet)}, 1);
  const std::vector<std::uint8_t> h = header_for("192.0.2.7", s.port, ProxyV2Transport::stream);
  const TcpOutcome whole = proxied_tcp(s.port, h, make_query(1, "a.test", 1));
  REQUIRE(whole.reply.answered);
  CHECK(whole.reply.rcode() == 0);
  CHECK(whole.reply.answers.size() == 2);
  // Cut inside the signature, and inside the address block: serve waits for the rest.
  for (const std::size_t cut : {std::size_t{5}, std::size_t{20}}) {
    INFO("cut at " << cut);
    const TcpOutcome split = proxied_tcp(s.port, h, make_query(2, "a.test", 1), cut);
    REQUIRE(split.reply.answered);
    CHECK(split.reply.rcode() == 0);
  }
  const TcpOutcome refused = proxied_tcp(s.port, header_for("198.51.100.7", s.port, ProxyV2Transport::stream),
                                         make_query(3, "a.test", 1));
  REQUIRE(refused.reply.answered);
  CHECK(refused.reply.rcode() == 5);
  const TcpOutcome none = proxied_tcp(s.port, {}, make_query(4, "a.test", 1));
  CHECK_FALSE(none.reply.answered);
  CHECK(none.closed);
  std::vector<std::uint8_t> v1 = h;
  v1[12] = 0x11;  // version 1 in a v2 header
  const TcpOutcome bad = proxied_tcp(s.port, v1, make_query(5, "a.test", 1));
  CHECK_FALSE(bad.reply.answered);
  CHECK(bad.closed);
  REQUIRE(eventually([&] { return proxy_count(s.segment, "malformed") == 1; }));
  CHECK(proxy_count(s.segment, "accepted") == 4);
  CHECK(proxy_count(s.segment, "no_header") == 1);
}

TEST_CASE("proxy v2 over TCP from an unlisted source: a header closes the connection, a plain query is answered",
          "[serve][proxy]") {
  // Listed: 127.0.0.2 only; the test's TCP client connects from 127.0.0.1.
  Service s({"--config", write_config("proxy_protocol_from: [127.0.0.2/32]\n")}, 1);
  const TcpOutcome header = proxied_tcp(s.port, header_for("192.0.2.7", s.port, ProxyV2Transport::stream),
                                        make_query(1, "a.test", 1));
  CHECK_FALSE(header.reply.answered);
  CHECK(header.closed);
  const DnsReply plain = tcp_exchange(s.port, make_query(2, "a.test", 1));
  REQUIRE(plain.answered);
  CHECK(plain.rcode() == 0);
  REQUIRE(eventually([&] { return proxy_count(s.segment, "unlisted") == 1; }));
}

TEST_CASE("proxy_protocol_from: a list of subnets, parsed strictly", "[serve][config][proxy]") {
  using dnsarena::workers::load_serve_config;
  const auto cfg = load_serve_config(write_config("proxy_protocol_from: [10.0.0.5, \"fd00::/8\"]\n"));
  REQUIRE(cfg.proxy_protocol_from.size() == 2);
  CHECK(cfg.proxy_protocol_from[0].prefix == 32);
  CHECK(cfg.proxy_protocol_from[1].prefix == 8);
  CHECK(load_serve_config(write_config("log_level: info\n")).proxy_protocol_from.empty());
  CHECK_THROWS_WITH(load_serve_config(write_config("proxy_protocol_from: 10.0.0.5\n")),
                    Catch::Contains("key 'proxy_protocol_from'") && Catch::Contains("expected a list of subnets"));
  CHECK_THROWS_WITH(load_serve_config(write_config("proxy_protocol_from: [10.0.0.0/33]\n")),
                    Catch::Contains(":1:23: key 'proxy_protocol_from'") && Catch::Contains("prefix '33'"));
  CHECK_THROWS_WITH(load_serve_config(write_config("proxy_protocol_from: [balancer.example]\n")),
                    Catch::Contains("not an IPv4 or IPv6 address"));
  CHECK_THROWS_WITH(load_serve_config(write_config("proxy_protocol_from: [[10.0.0.1]]\n")),
                    Catch::Contains("expected a single value"));
  std::string many = "proxy_protocol_from: [";
  for (int i = 0; i < 65; ++i) many += (i ? ", 10.0.0." : "10.0.0.") + std::to_string(i);
  CHECK_THROWS_WITH(load_serve_config(write_config(many + "]\n")), Catch::Contains("at most 64 subnets, got 65"));
}

TEST_CASE("proxy v2 from haproxy (send-proxy-v2) to serve's TCP, DoT and DoH listeners: kdig's own address is "
          "the one serve judges",
          "[serve][proxy][haproxy]") {
  if (!dnsarena::common::find_program("haproxy")) return skip_test("haproxy is not installed (apt package haproxy)");
  kdig_program();
  TestCertificate cert;
  const std::uint16_t tls_port = free_port(), doh_port = free_port(), haproxy_tcp = free_port(),
                      haproxy_tls = free_port(), haproxy_doh = free_port();
  // Only kdig's 127.0.0.1 is allowed; the balancer's own 127.0.0.3 is not.
  Service s({"--config", write_config("proxy_protocol_from: [" + std::string(kBalancerAddress) +
                                      "/32]\naccess_control: [\"127.0.0.1/32 allow\"]\ntls: {listen: [127.0.0.1:" +
                                      std::to_string(tls_port) + "], certificate: " + cert.cert_path() +
                                      ", key: " + cert.key_path() + "}\nhttps: {listen: [127.0.0.1:" +
                                      std::to_string(doh_port) + "]}\n")},
            1);
  const std::string backend = std::string(" send-proxy-v2 source ") + kBalancerAddress + "\n";
  Balancer haproxy("defaults\n  mode tcp\n  timeout connect 2s\n  timeout client 5s\n  timeout server 5s\n"
                   "listen dns_tcp\n  bind 127.0.0.1:" + std::to_string(haproxy_tcp) + "\n  server serve 127.0.0.1:" +
                       std::to_string(s.port) + backend +
                   "listen dns_tls\n  bind 127.0.0.1:" + std::to_string(haproxy_tls) + "\n  server serve 127.0.0.1:" +
                       std::to_string(tls_port) + backend +
                   "listen dns_https\n  bind 127.0.0.1:" + std::to_string(haproxy_doh) + "\n  server serve 127.0.0.1:" +
                       std::to_string(doh_port) + backend,
                   {"haproxy", "-db", "-f", "CONFIG"});
  REQUIRE(eventually([&] {
    return dnsarena::common::accepts_tcp(haproxy_tcp) && dnsarena::common::accepts_tcp(haproxy_tls) &&
           dnsarena::common::accepts_tcp(haproxy_doh);
  }));
  INFO(haproxy.log_text());
  CHECK(kdig_status("127.0.0.1", haproxy_tcp, "+tcp") == "NOERROR");
  CHECK(kdig_status("127.0.0.4", haproxy_tcp, "+tcp") == "REFUSED");
  CHECK(kdig_status("127.0.0.1", haproxy_tls, "+tls") == "NOERROR");
  CHECK(kdig_status("127.0.0.4", haproxy_tls, "+tls") == "REFUSED");
  CHECK(kdig_status("127.0.0.1", haproxy_doh, "+https") == "NOERROR");
  CHECK(kdig_status("127.0.0.4", haproxy_doh, "+https") == "REFUSED");
  REQUIRE(eventually([&] { return proxy_count(s.segment, "accepted") >= 6; }));
  CHECK(proxy_count(s.segment, "malformed") == 0);
  CHECK(proxy_count(s.segment, "no_header") == 0);
}

TEST_CASE("proxy v2 from dnsdist (useProxyProtocol) over UDP: kdig's own address is the one serve judges",
          "[serve][proxy][dnsdist]") {
  if (!dnsarena::common::find_program("dnsdist")) return skip_test("dnsdist is not installed (apt package dnsdist)");
  kdig_program();
  Service s({"--config", write_config("proxy_protocol_from: [" + std::string(kBalancerAddress) +
                                      "/32]\naccess_control: [\"127.0.0.1/32 allow\"]\n")},
            1);
  const std::uint16_t port = free_port();
  // No security polling (a DNS query of its own to the outside); its health check, sent
  // with a header too, must find serve up before it forwards.
  Balancer dnsdist("setSecurityPollSuffix(\"\")\nsetLocal(\"127.0.0.1:" + std::to_string(port) +
                       "\")\nsetACL({\"127.0.0.0/8\"})\nnewServer({address=\"127.0.0.1:" + std::to_string(s.port) +
                       "\", useProxyProtocol=true, source=\"" + kBalancerAddress + "\"})\n",
                   {"dnsdist", "--supervised", "--disable-syslog", "-C", "CONFIG"});
  REQUIRE(eventually([&] { return dnsdist.log_text().find("as 'up'") != std::string::npos; }));
  INFO(dnsdist.log_text());
  CHECK(kdig_status("127.0.0.1", port, "+notcp") == "NOERROR");
  CHECK(kdig_status("127.0.0.4", port, "+notcp") == "REFUSED");
  REQUIRE(eventually([&] { return proxy_count(s.segment, "accepted") >= 2; }));
  CHECK(proxy_count(s.segment, "malformed") == 0);
  CHECK(proxy_count(s.segment, "no_header") == 0);
}

TEST_CASE("proxy v2: ECS synthesized from the source is the carried client's subnet, over UDP and TCP",
          "[serve][proxy][ecs]") {
  Service s({"--config", write_config("proxy_protocol_from: [127.0.0.1/32]\naccess_control: [\"0.0.0.0/0 allow\"]\n"
                                      "ecs: {policy: synthesize}\n")},
            1);
  // ecs.test. answers 10.<b1>.<b2>.1 from the ECS address a.b1.b2.0/24 it was sent
  // (test_upstream.hpp): 127.0.0.1's would be 10.0.0.1.
  const DnsReply udp = udp_exchange(s.port, concat(header_for("192.0.2.7", s.port, ProxyV2Transport::dgram),
                                                   make_query(1, "ecs.test", 1)));
  REQUIRE(udp.answered);
  REQUIRE(udp.answers.size() == 1);
  CHECK(udp.answers[0] == "1 0a000201");  // 10.0.2.1: 192.0.2.0/24
  const TcpOutcome tcp = proxied_tcp(s.port, header_for("198.51.100.7", s.port, ProxyV2Transport::stream),
                                     make_query(2, "ecs.test", 1));
  REQUIRE(tcp.reply.answered);
  REQUIRE(tcp.reply.answers.size() == 1);
  CHECK(tcp.reply.answers[0] == "1 0a336401");  // 10.51.100.1: 198.51.100.0/24
}

TEST_CASE("proxy v2 over TCP: the per-client bound counts the client a header names, not the balancer",
          "[serve][proxy][tcp]") {
  Service s({"--config", write_config("proxy_protocol_from: [127.0.0.1/32]\naccess_control: [\"0.0.0.0/0 allow\"]\n"
                                      "tcp: {idle_timeout_ms: 30000, max_connections_per_client: 2}\n")},
            1);
  std::vector<int> fds;
  // Five clients through the balancer at once: more than its own bound of 2, all served.
  for (int i = 0; i < 5; ++i) {
    const std::string client = "192.0.2." + std::to_string(10 + i);
    fds.push_back(tcp_connect_from("127.0.0.1", s.port));
    const TcpOutcome r = exchange_on(fds.back(), header_for(client.c_str(), s.port, ProxyV2Transport::stream),
                                     make_query(static_cast<std::uint16_t>(i), "a.test", 1));
    INFO(client);
    CHECK(r.reply.answered);
  }
  // One client through it on three connections: the third is over its bound of 2.
  unsigned answered = 0, closed = 0;
  for (int i = 0; i < 3; ++i) {
    fds.push_back(tcp_connect_from("127.0.0.1", s.port));
    const TcpOutcome r = exchange_on(fds.back(), header_for("192.0.2.7", s.port, ProxyV2Transport::stream),
                                     make_query(static_cast<std::uint16_t>(10 + i), "a.test", 1));
    answered += r.reply.answered;
    closed += r.closed;
  }
  CHECK(answered == 2);
  CHECK(closed == 1);
  for (int fd : fds) ::close(fd);
}

TEST_CASE("proxy v2: rpz-client-ip triggers on the carried client, over UDP and TCP, hits included",
          "[serve][proxy][policy]") {
  const std::string zone = write_config("$TTL 60\n@ SOA ns.rpz.test. admin.rpz.test. 1 3600 600 86400 60\n"
                                        "@ NS ns.rpz.test.\n32.7.2.0.192.rpz-client-ip CNAME .\n");
  Service s({"--config", write_config("proxy_protocol_from: [127.0.0.1/32]\naccess_control: [\"0.0.0.0/0 allow\"]\n"
                                      "policy:\n  rpz: [{file: " + zone + ", name: rpz.test.}]\n")},
            1);
  for (std::uint16_t round = 0; round < 2; ++round) {  // a miss, then a hit
    INFO("round " << round);
    const DnsReply other = udp_exchange(s.port, concat(header_for("192.0.2.8", s.port, ProxyV2Transport::dgram),
                                                       make_query(static_cast<std::uint16_t>(1 + round), "a.test", 1)));
    REQUIRE(other.answered);
    CHECK(other.rcode() == 0);
    CHECK(other.answers.size() == 2);
    const DnsReply blocked = udp_exchange(s.port, concat(header_for("192.0.2.7", s.port, ProxyV2Transport::dgram),
                                                         make_query(static_cast<std::uint16_t>(3 + round), "a.test", 1)));
    REQUIRE(blocked.answered);
    CHECK(blocked.rcode() == 3);
    const TcpOutcome tcp = proxied_tcp(s.port, header_for("192.0.2.7", s.port, ProxyV2Transport::stream),
                                       make_query(static_cast<std::uint16_t>(5 + round), "a.test", 1));
    REQUIRE(tcp.reply.answered);
    CHECK(tcp.reply.rcode() == 3);
  }
  // The balancer's own address is not the one the rule names: a plain query from an
  // unlisted 127.0.0.2 is answered.
  CHECK(udp_exchange(s.port, make_query(9, "a.test", 1), std::chrono::milliseconds(2000), "127.0.0.2").rcode() == 0);
}

TEST_CASE("proxy v2: dnstap logs the carried client as the query address, misses, hits and TCP", "[serve][proxy][dnstap]") {
  const std::string dir = "/tmp/dnsarena-proxy-dnstap-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Service s({"--config", write_config("proxy_protocol_from: [127.0.0.1/32]\naccess_control: [\"0.0.0.0/0 allow\"]\n"
                                      "dnstap: {file: " + dir + "/tap, forwarder_query: false, forwarder_response: false}\n")},
            1);
  for (std::uint16_t id = 1; id <= 2; ++id)  // a miss (answered later), then a hit (the batch)
    REQUIRE(udp_exchange(s.port, concat(header_for("192.0.2.7", s.port, ProxyV2Transport::dgram),
                                        make_query(id, "a.test", 1)))
                .answered);
  REQUIRE(proxied_tcp(s.port, header_for("192.0.2.7", s.port, ProxyV2Transport::stream), make_query(3, "a.test", 1))
              .reply.answered);
  REQUIRE(s.serve->stop() == 0);
  int status = 0;
  const std::string yaml = dnsarena::common::run_and_capture({"dnstap-ldns", "-y", "-r", dir + "/tap.0"}, status);
  REQUIRE(status == 0);
  INFO(yaml);
  CHECK(occurrences(yaml, "query_address: \"192.0.2.7\"") == 6);  // 3 queries and their 3 answers
  CHECK(occurrences(yaml, "query_address: \"127.0.0.1\"") == 0);
  std::filesystem::remove_all(dir);
}
