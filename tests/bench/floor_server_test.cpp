// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench floor-server`, the floor bench serve measures the servers against:
// every query comes back as its own answer (QR set) over UDP and TCP, and what is not a
// query is dropped without stopping it.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/child_process.hpp"
#include "common/loopback.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;

// A query for a.test. A: header (id, RD), one question.
Bytes query(std::uint16_t id) {
  Bytes q{static_cast<std::uint8_t>(id >> 8), static_cast<std::uint8_t>(id), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
  const Bytes question{1, 'a', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};
  q.insert(q.end(), question.begin(), question.end());
  return q;
}

struct Socket {
  int fd;
  explicit Socket(int type) : fd(::socket(AF_INET, type | SOCK_CLOEXEC, 0)) {}
  ~Socket() { ::close(fd); }
  bool readable(int ms) const {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, ms) == 1;
  }
};

Bytes udp_ask(std::uint16_t port, const Bytes& msg, int wait_ms = 2000) {
  Socket s(SOCK_DGRAM);
  const sockaddr_in to = dnsarena::common::loopback_v4(port);
  ::sendto(s.fd, msg.data(), msg.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  if (!s.readable(wait_ms)) return {};
  Bytes in(65536);
  const ssize_t n = ::recv(s.fd, in.data(), in.size(), 0);
  in.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return in;
}

Bytes framed(const Bytes& msg) {
  Bytes f{static_cast<std::uint8_t>(msg.size() >> 8), static_cast<std::uint8_t>(msg.size())};
  f.insert(f.end(), msg.begin(), msg.end());
  return f;
}

// Reads until `want` bytes came, the peer closed, or 2 s passed.
Bytes tcp_read(const Socket& s, std::size_t want) {
  Bytes got;
  std::uint8_t buf[4096];
  while (got.size() < want && s.readable(2000)) {
    const ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.insert(got.end(), buf, buf + n);
  }
  return got;
}

struct FloorServer {
  std::uint16_t port = dnsarena::common::free_loopback_port();
  std::string log = "/tmp/floor_server_test_" + std::to_string(::getpid()) + ".log";
  dnsarena::common::ChildProcess child;
  FloorServer() {
    dnsarena::common::SpawnOptions o;
    o.log_path = log;
    o.truncate_log = true;
    child = dnsarena::common::ChildProcess({DNSARENA_BIN, "bench", "floor-server", "--port", std::to_string(port)}, o);
    for (int i = 0; i < 100 && udp_ask(port, query(1), 50).empty(); ++i) {
    }
  }
  ~FloorServer() { std::remove(log.c_str()); }
  std::string output() const {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

}  // namespace

TEST_CASE("bench floor-server: each query comes back as its answer over UDP and TCP and garbage is dropped",
          "[bench][floor][process]") {
  FloorServer f;
  REQUIRE(f.child.running());

  const Bytes q = query(0x1234);
  Bytes expected = q;
  expected[2] |= 0x80;
  CHECK(udp_ask(f.port, q) == expected);
  CHECK(udp_ask(f.port, {1, 2, 3, 4, 5}, 300).empty());  // shorter than a header: no answer
  CHECK(udp_ask(f.port, q) == expected);                  // and it goes on

  {  // Two queries in one write, the second split across two writes: two answers, in order.
    Socket s(SOCK_STREAM);
    const sockaddr_in to = dnsarena::common::loopback_v4(f.port);
    REQUIRE(::connect(s.fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0);
    Bytes both = framed(query(7));
    const Bytes second = framed(query(8));
    both.insert(both.end(), second.begin(), second.begin() + 5);
    REQUIRE(::send(s.fd, both.data(), both.size(), 0) == static_cast<ssize_t>(both.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(::send(s.fd, second.data() + 5, second.size() - 5, 0) == static_cast<ssize_t>(second.size() - 5));
    const Bytes got = tcp_read(s, 2 * second.size());
    REQUIRE(got.size() == 2 * second.size());
    CHECK(got[2] == 0);
    CHECK(got[3] == 7);
    CHECK((got[4] & 0x80) != 0);
    CHECK(got[second.size() + 3] == 8);
    CHECK((got[second.size() + 4] & 0x80) != 0);
  }
  {  // A message shorter than a header: the connection is closed.
    Socket s(SOCK_STREAM);
    const sockaddr_in to = dnsarena::common::loopback_v4(f.port);
    REQUIRE(::connect(s.fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0);
    const Bytes bad = framed({1, 2, 3});
    REQUIRE(::send(s.fd, bad.data(), bad.size(), 0) == static_cast<ssize_t>(bad.size()));
    CHECK(tcp_read(s, 1).empty());  // EOF, no answer
  }
  CHECK(udp_ask(f.port, q) == expected);

  f.child.stop();  // SIGTERM: it stops and says what it answered
  REQUIRE(f.child.exit_code() == 0);
  const std::string out = f.output();
  INFO(out);
  CHECK(out.find("TCP answers") != std::string::npos);
  CHECK(out.find(" 2 TCP answers") != std::string::npos);
  CHECK(out.find(" 2 dropped") != std::string::npos);
}

TEST_CASE("bench floor-server: a port it cannot bind is a clear error", "[bench][floor][process]") {
  FloorServer first;
  REQUIRE(first.child.running());
  dnsarena::common::SpawnOptions o;
  o.log_path = first.log + ".second";
  o.truncate_log = true;
  dnsarena::common::ChildProcess second({DNSARENA_BIN, "bench", "floor-server", "--port", std::to_string(first.port)}, o);
  REQUIRE(second.wait_exit(std::chrono::seconds(10)));
  const std::string out = second.log_tail();
  std::remove(o.log_path.c_str());
  INFO(out);
  CHECK(second.exit_code() == 1);
  CHECK(out.find("bind: Address already in use") != std::string::npos);
  CHECK(first.child.running());
}
