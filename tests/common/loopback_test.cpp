// SPDX-License-Identifier: GPL-3.0-or-later
// common/loopback: free_loopback_port() hands out ports that are free for UDP and TCP and
// reserved across processes (an OFD lock per port in kPortLockFile, dropped at exit).
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "common/child_process.hpp"
#include "common/loopback.hpp"
#include "common/socket_owners.hpp"

using namespace dnsarena::common;
using namespace std::chrono_literals;

namespace {

// Whether byte `port` of the lock file is locked, asked through a new open of the file:
// F_OFD_GETLK reports a conflicting lock of any other open file description, this
// process's own reservations included.
bool reserved_elsewhere(std::uint16_t port) {
  const int fd = ::open(kPortLockFile, O_RDWR | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct flock l{};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  l.l_start = port;
  l.l_len = 1;
  REQUIRE(::fcntl(fd, F_OFD_GETLK, &l) == 0);
  ::close(fd);
  return l.l_type != F_UNLCK;
}

bool binds(std::uint16_t port, int type) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  const sockaddr_in a = loopback_v4(port);
  const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

std::set<std::uint16_t> read_ports(const std::string& path) {
  std::set<std::uint16_t> ports;
  std::ifstream f(path);
  unsigned p = 0;
  while (f >> p) ports.insert(static_cast<std::uint16_t>(p));
  return ports;
}

constexpr int kChildPorts = 40;

}  // namespace

// Run by the test below in a separate process (exec of this binary): reserves
// kChildPorts ports, writes them to $DNSARENA_PORTS_OUT and waits to be killed.
TEST_CASE("port reservation: the other process", "[.][common][ports-child]") {
  const char* out = std::getenv("DNSARENA_PORTS_OUT");
  REQUIRE(out != nullptr);
  std::string text;
  for (int i = 0; i < kChildPorts; ++i) text += std::to_string(free_loopback_port()) + "\n";
  const std::string tmp = std::string(out) + ".part";
  std::ofstream(tmp) << text;
  std::rename(tmp.c_str(), out);
  for (;;) ::pause();
}

TEST_CASE("free ports: free for UDP and TCP, never the same one twice in a process", "[common][ports]") {
  std::set<std::uint16_t> seen;
  for (int i = 0; i < 100; ++i) {
    const std::uint16_t p = free_loopback_port();
    CHECK(p != 0);
    CHECK(seen.insert(p).second);
    CHECK(reserved_elsewhere(p));
    CHECK(binds(p, SOCK_DGRAM));
    CHECK(binds(p, SOCK_STREAM));
  }
}

TEST_CASE("free ports: outside the kernel's ephemeral range, where no client socket is handed them", "[common][ports]") {
  unsigned low = 0, high = 0;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  REQUIRE(high >= low);
  // With nothing outside the range (low <= 10000, high 65535) the kernel's pick is all
  // there is: then every port is inside it.
  const bool room_outside = low > 10000 || high < 65535;
  int inside = 0;
  for (int i = 0; i < 50; ++i) {
    const std::uint16_t p = free_loopback_port();
    if (p >= low && p <= high) ++inside;
    CHECK(binds(p, SOCK_DGRAM));
    CHECK(binds(p, SOCK_STREAM));
  }
  CHECK(inside == (room_outside ? 0 : 50));
}

TEST_CASE("free ports: another process's reserved ports are skipped until it dies", "[common][ports]") {
  const std::string out = "/tmp/dnsarena-ports-test-" + std::to_string(::getpid());
  ::unlink(out.c_str());
  ::setenv("DNSARENA_PORTS_OUT", out.c_str(), 1);
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  self[n] = '\0';
  ChildProcess other({self, "port reservation: the other process"}, {.log_path = out + ".log", .truncate_log = true});
  std::set<std::uint16_t> theirs;
  for (int i = 0; i < 500 && theirs.empty(); ++i) {
    REQUIRE(other.running());
    std::this_thread::sleep_for(20ms);
    theirs = read_ports(out);
  }
  REQUIRE(theirs.size() == kChildPorts);
  // The kernel picks bind(0) ports at random, so these 200 draws meet one of the 40
  // only by chance (~25%); the lock checks below are what fails without the reservation.
  for (int i = 0; i < 200; ++i) CHECK(theirs.count(free_loopback_port()) == 0);
  for (const std::uint16_t p : theirs) CHECK(reserved_elsewhere(p));
  other.stop(2s);  // SIGTERM: its fd, and with it every lock, is gone
  int still = 0;
  for (const std::uint16_t p : theirs) still += reserved_elsewhere(p);
  CHECK(still == 0);
  ::unlink(out.c_str());
  ::unlink((out + ".log").c_str());
}

TEST_CASE("socket owners: a listening process is found by its pid, others are not", "[common][ports]") {
  const std::uint16_t port = free_loopback_port();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = loopback_v4(port);
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  CHECK_FALSE(process_listens_tcp(::getpid(), port));  // bound, not listening
  REQUIRE(::listen(fd, 4) == 0);
  CHECK(process_listens_tcp(::getpid(), port));
  CHECK_FALSE(process_listens_tcp(::getpid(), free_loopback_port()));
  CHECK(bound_socket_inodes(true, port).size() == 1);
  // A child holding the socket (inherited across fork) is one of its holders; this
  // process is never listed among them.
  ChildProcess holder = ChildProcess::run([] { ::pause(); return 0; });
  std::this_thread::sleep_for(50ms);
  const auto holders = socket_holders(bound_socket_inodes(true, port));
  REQUIRE(holders.size() == 1);
  CHECK(holders[0].pid == holder.pid());
  CHECK(describe_holders(holders) == "pid " + std::to_string(holder.pid()) + " (" + holders[0].name + ")");
  CHECK(process_listens_tcp(holder.pid(), port));
  holder.stop(2s);
  ::close(fd);
  CHECK_FALSE(process_listens_tcp(::getpid(), port));
}
