// SPDX-License-Identifier: GPL-3.0-or-later
// Several listen addresses, IPv4 and IPv6, and wildcard binds: every address answers over
// UDP and TCP, and a wildcard socket answers each datagram from the address it was sent
// to. The clients' UDP sockets are connected to the address they ask, so the kernel hands
// them only a reply from that very address; recvfrom's source is checked as well.
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>

#include "tests/test_skip.hpp"
#include "tests/workers/service_fixture.hpp"
#include "workers/serve_config.hpp"

using namespace dnsarena::test;

namespace {

// Whether this host has the IPv6 loopback (a container may run without IPv6).
bool have_ipv6_loopback() {
  const int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

constexpr const char* kNoIpv6Loopback =
    "this host has no IPv6 loopback (::1 cannot be bound); `ip -6 addr show lo` is empty";

// N of worker 0's "descriptors per worker: limit L: N open + ..." line (0 before it).
unsigned open_at_start(const std::string& log) {
  static const std::regex line("descriptors per worker: limit [0-9]+: ([0-9]+) open");
  std::smatch m;
  return std::regex_search(log, m, line) ? static_cast<unsigned>(std::stoul(m[1])) : 0;
}

std::string at(const std::string& host, std::uint16_t port) { return host + ":" + std::to_string(port); }

// Asks `server` over UDP, then TCP, for `name`: both answered NOERROR, the UDP reply from
// the address asked. A name not yet cached is answered over UDP when the upstream's reply
// comes (the worker's upstream completion path), a cached one from the batch path.
void check_answers_from(const std::string& server, const std::string& name = "a.test", std::uint16_t qtype = 1) {
  INFO("asking " << server << " for " << name);
  std::string from;
  const DnsReply udp = udp_exchange_at(server, make_query(7, name, qtype), &from);
  REQUIRE(udp.answered);
  CHECK(udp.rcode() == 0);
  CHECK(udp.id == 7);
  CHECK(from == server);
  const DnsReply tcp = tcp_exchange_at(server, make_query(8, name, qtype));
  REQUIRE(tcp.answered);
  CHECK(tcp.rcode() == 0);
  CHECK(tcp.id == 8);
}

}  // namespace

TEST_CASE("serve on 127.0.0.1 and [::1]: both answer over UDP and TCP", "[serve][listen]") {
  if (!have_ipv6_loopback()) return skip_test(kNoIpv6Loopback);
  const std::uint16_t port = free_port();
  Service s({"--listen", at("127.0.0.1", port), "--listen", at("[::1]", port)}, 2, port);
  check_answers_from(at("127.0.0.1", port));
  check_answers_from(at("[::1]", port));
  // One upstream query: the second address's answers came from the cache both share.
  CHECK(s.upstream.queries() == 1);
  CHECK(s.serve->log().find("serving DNS on 127.0.0.1:" + std::to_string(port) + ", [::1]:" + std::to_string(port)) !=
        std::string::npos);
  // The descriptor budget counts the second address's sockets (its UDP socket and TCP
  // listener): two more open at start than a serve on one address.
  Service one_address({}, 2);
  CHECK(eventually([&] { return open_at_start(s.serve->log()) > 0 && open_at_start(one_address.serve->log()) > 0; }));
  CHECK(open_at_start(s.serve->log()) == open_at_start(one_address.serve->log()) + 2);
  // Only the listed addresses: 127.0.0.2 is not served.
  CHECK_FALSE(udp_exchange_at(at("127.0.0.2", port), make_query(9, "a.test", 1), nullptr,
                              std::chrono::milliseconds(300))
                  .answered);
}

TEST_CASE("serve on 0.0.0.0 answers 127.0.0.1 and 127.0.0.2, each from the address asked", "[serve][listen]") {
  const std::uint16_t port = free_port();
  Service s({"--listen", at("0.0.0.0", port)}, 2, port);
  check_answers_from(at("127.0.0.2", port));  // a miss: answered when the upstream replies
  CHECK(s.upstream.queries() == 1);
  check_answers_from(at("127.0.0.1", port));  // a hit
  check_answers_from(at("127.0.0.2", port));
  CHECK(s.upstream.queries() == 1);
  // Many datagrams at once (one batch per wakeup, a control buffer per message), to both
  // addresses: every reply reaches its connected socket.
  std::vector<int> fds;
  for (int i = 0; i < 32; ++i) {
    const dnsarena::workers::Endpoint to =
        dnsarena::workers::Endpoint::parse(at(i % 2 ? "127.0.0.2" : "127.0.0.1", port));
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&to.addr), to.len) == 0);
    const auto q = make_query(static_cast<std::uint16_t>(100 + i), "a.test", 1);
    REQUIRE(::send(fd, q.data(), q.size(), 0) == static_cast<ssize_t>(q.size()));
    fds.push_back(fd);
  }
  unsigned answered = 0;
  for (int fd : fds) {
    pollfd p{fd, POLLIN, 0};
    std::uint8_t buf[1500];
    if (::poll(&p, 1, 2000) == 1 && ::recv(fd, buf, sizeof buf, 0) > 12) ++answered;
    ::close(fd);
  }
  CHECK(answered == fds.size());
}

TEST_CASE("serve on [::] and 0.0.0.0 on one port: ::1 answered from ::1, IPv4 still served", "[serve][listen]") {
  if (!have_ipv6_loopback()) return skip_test(kNoIpv6Loopback);
  const std::uint16_t port = free_port();
  // [::] is IPv6 only (IPV6_V6ONLY), so 0.0.0.0 on the same port is a socket of its own.
  Service s({"--listen", at("0.0.0.0", port), "--listen", at("[::]", port)}, 2, port);
  check_answers_from(at("[::1]", port));
  check_answers_from(at("[::1]", port));  // now from the cache
  check_answers_from(at("127.0.0.2", port), "aaaa.test", 28);
  check_answers_from(at("127.0.0.2", port), "aaaa.test", 28);
  CHECK(s.upstream.queries() == 2);
}

TEST_CASE("listen: one address or a list, and an empty, repeated or malformed one is an error naming the key",
          "[serve][listen][config]") {
  using dnsarena::workers::load_serve_config;
  const auto one = load_serve_config(write_config("listen: 127.0.0.1:5300\n"));
  REQUIRE(one.listen.size() == 1);
  CHECK(one.listen[0].text == "127.0.0.1:5300");
  const auto two = load_serve_config(write_config("listen: [127.0.0.1:5300, \"[::1]:5300\", 0.0.0.0:5301]\n"));
  REQUIRE(two.listen.size() == 3);
  CHECK(two.listen[1].family() == AF_INET6);
  CHECK_FALSE(two.listen[1].wildcard());
  CHECK(two.listen[2].wildcard());
  CHECK(dnsarena::workers::join_endpoints(two.listen) == "127.0.0.1:5300, [::1]:5300, 0.0.0.0:5301");

  const std::string empty = write_config("upstreams: [127.0.0.1:53]\nlisten: []\n");
  CHECK_THROWS_WITH(load_serve_config(empty),
                    Catch::Contains(empty + ":2:9: key 'listen'") && Catch::Contains("at least one address:port"));
  // The same address twice, whatever its spelling.
  const std::string twice = write_config("listen: [\"[::1]:53\", 127.0.0.1:53, \"[0:0::1]:53\"]\n");
  CHECK_THROWS_WITH(load_serve_config(twice),
                    Catch::Contains("key 'listen'") && Catch::Contains("'[0:0::1]:53' is listed twice (as '[::1]:53')"));
  const std::string bad = write_config("listen: [127.0.0.1:53, \"[::1:53\"]\n");
  CHECK_THROWS_WITH(load_serve_config(bad),
                    Catch::Contains(bad + ":1:24: key 'listen'") && Catch::Contains("is not [IPv6]:port"));
  const std::string bad_host = write_config("listen: [localhost:53]\n");
  CHECK_THROWS_WITH(load_serve_config(bad_host),
                    Catch::Contains("key 'listen'") && Catch::Contains("'localhost' is not an IPv4 or IPv6 address"));

  // The flag: repeatable, checked the same way.
  const std::string ok = write_config("upstreams: [127.0.0.1:53]\n");
  int status = -1;
  std::string out = run_command(dnsarena_binary() + " serve --check-config " + ok +
                                    " --listen 127.0.0.1:5300 --listen '[::1]:5300' 2>&1",
                                &status);
  CHECK(status == 0);
  CHECK(out.find("valid: listen 127.0.0.1:5300, [::1]:5300,") != std::string::npos);
  out = run_command(dnsarena_binary() + " serve --check-config " + ok +
                        " --listen 127.0.0.1:5300 --listen 127.0.0.1:5300 2>&1",
                    &status);
  CHECK(status == 1);
  CHECK(out.find("listen: '127.0.0.1:5300' is listed twice") != std::string::npos);
  out = run_command(dnsarena_binary() + " serve --check-config " + ok + " --listen 127.0.0.1 2>&1", &status);
  CHECK(status == 1);
  CHECK(out.find("--listen: '127.0.0.1' is not address:port") != std::string::npos);
}

TEST_CASE("SIGHUP: a changed listen list needs a restart and keeps the running addresses", "[serve][listen][reload]") {
  TestUpstream upstream;
  const std::uint16_t port = free_port();
  const std::string segment = unique_segment("listen-reload");
  auto config = [&](const std::string& listen) {
    return "listen: " + listen + "\nupstreams: [127.0.0.1:" + std::to_string(upstream.port()) +
           "]\nworkers: 1\ncache: {segment: " + segment + ", max_entries: 1000, arena_bytes: 8M}\nstats: "
           "{metrics_listen: \"\"}\n";
  };
  const std::string path = write_config(config("[" + at("127.0.0.1", port) + "]"));
  {
    ServeProcess serve({"--config", path}, port);
    REQUIRE(serve.wait_ready());
    check_answers_from(at("127.0.0.1", port));
    std::ofstream(path) << config("[" + at("127.0.0.1", port) + ", " + at("127.0.0.2", port) + "]");
    REQUIRE(::kill(serve.pid(), SIGHUP) == 0);
    CHECK(eventually([&] { return serve.log().find("listen changed; it needs a restart") != std::string::npos; }));
    CHECK(eventually([&] { return serve.log().find("reloaded:") != std::string::npos; }));
    check_answers_from(at("127.0.0.1", port));
    CHECK_FALSE(udp_exchange_at(at("127.0.0.2", port), make_query(9, "a.test", 1), nullptr,
                                std::chrono::milliseconds(300))
                    .answered);
    CHECK(serve.stop() == 0);
  }
  dnsarena::cache::Segment::remove(segment);
}
