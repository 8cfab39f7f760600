// SPDX-License-Identifier: GPL-3.0-or-later
// Response rate limiting is per host: with two workers, one client subnet asking from
// many source ports (which SO_REUSEPORT spreads over both workers) gets the configured
// number of answers per second, not twice as many (workers/rate_limit_table.hpp).
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {

double wall_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

struct FloodResult {
  std::map<long, unsigned> full_per_second;  // wall-clock second -> full answers received
  unsigned full = 0, slipped = 0, sent = 0;
  long first_second = 0, last_second = 0;    // the seconds the flood ran in (partly)
};

// Sends `per_ms` queries for `name` every millisecond for `seconds`, round-robin from
// `sockets` UDP sockets (each its own source port, all 127.0.0.1), and counts the answers
// by the wall-clock second they arrived in.
FloodResult flood(std::uint16_t port, const std::string& name, unsigned sockets, unsigned per_ms, double seconds) {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  REQUIRE(ep >= 0);
  std::vector<int> fds;
  for (unsigned i = 0; i < sockets; ++i) {
    const int fd = connected_udp_socket(port);
    REQUIRE(fd >= 0);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    REQUIRE(::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
    fds.push_back(fd);
  }
  FloodResult r;
  const double start = wall_seconds();
  const double end = start + seconds;
  r.first_second = static_cast<long>(start);
  r.last_second = static_cast<long>(end);
  double next_send = start;
  unsigned next_fd = 0;
  std::uint16_t id = 0;
  // Drain for 300 ms after the last query so late answers are counted too.
  while (wall_seconds() < end + 0.3) {
    const double now = wall_seconds();
    if (now < end && now >= next_send) {
      for (unsigned k = 0; k < per_ms; ++k) {
        const std::vector<std::uint8_t> q = make_query(++id, name, 1);
        if (::send(fds[next_fd], q.data(), q.size(), 0) > 0) ++r.sent;
        next_fd = (next_fd + 1) % fds.size();
      }
      next_send += 0.001;
    }
    epoll_event evs[64];
    const int n = ::epoll_wait(ep, evs, 64, 1);
    for (int i = 0; i < n; ++i) {
      std::uint8_t buf[1500];
      ssize_t got;
      while ((got = ::recv(evs[i].data.fd, buf, sizeof buf, 0)) > 0) {
        const DnsReply reply = parse_reply({buf, buf + got});
        if (reply.tc()) ++r.slipped;
        else {
          ++r.full;
          ++r.full_per_second[static_cast<long>(wall_seconds())];
        }
      }
    }
  }
  for (int fd : fds) ::close(fd);
  ::close(ep);
  return r;
}

}  // namespace

TEST_CASE("rate limiting holds per host: two workers answer one subnet at the configured rate, not twice it",
          "[serve][access][rrl][timing]") {
  constexpr unsigned kRate = 100;
  Service s({"-c", write_config("rate_limit:\n  responses_per_second: 100\n  slip: 2\n")}, 2);
  REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).rcode() == 0);  // warm the cache
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));           // that answer's second is over
  // 1,000 queries per second (10x the rate) from 64 source ports, for 4.5 s.
  const FloodResult r = flood(s.port, "a.test", 64, 1, 4.5);
  std::string per_second;
  for (const auto& [sec, n] : r.full_per_second) per_second += std::to_string(n) + " ";
  WARN("sent " << r.sent << ", full answers " << r.full << ", slipped " << r.slipped << "; per second: " << per_second);
  // Both workers answered: the flood was spread over them (else the test proves nothing).
  const nlohmann::json stats = serve_stats(s.segment);
  unsigned workers_limiting = 0;
  for (const auto& row : stats["rows"])
    if (row.contains("worker") && row["rate_limited"].get<std::uint64_t>() > 0) ++workers_limiting;
  CHECK(workers_limiting == 2);
  // Every whole second of the flood: about the rate (main: each worker answered the rate, 2x).
  unsigned whole_seconds = 0;
  for (long sec = r.first_second + 1; sec < r.last_second; ++sec) {
    const unsigned n = r.full_per_second.count(sec) ? r.full_per_second.at(sec) : 0;
    INFO("second " << sec - r.first_second << ": " << n << " full answers");
    CHECK(n >= kRate * 7 / 10);
    CHECK(n <= kRate * 13 / 10);
    ++whole_seconds;
  }
  CHECK(whole_seconds >= 3);
  CHECK(r.full <= kRate * (r.last_second - r.first_second + 1) + kRate / 10);
  CHECK(r.slipped > 0);  // slip 2 still sends every second limited answer with TC
}

namespace {

// The full answers of each whole second of the flood.
std::vector<unsigned> whole_seconds(const FloodResult& r) {
  std::vector<unsigned> v;
  for (long sec = r.first_second + 1; sec < r.last_second; ++sec)
    v.push_back(r.full_per_second.count(sec) ? r.full_per_second.at(sec) : 0);
  return v;
}

}  // namespace

TEST_CASE("rate limiting per host survives a worker's kill -9, and a SIGHUP reload applies a new rate",
          "[serve][access][rrl][reload][timing]") {
  const std::string path = write_config("rate_limit:\n  responses_per_second: 100\n");
  Service s({"--config", path}, 2);
  REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).rcode() == 0);
  REQUIRE(eventually([&] { return s.serve->children().size() == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));

  // A worker killed in the middle of the flood: its replacement counts on in the same
  // table (nothing was locked), so no second gets more than the rate.
  const pid_t victim = s.serve->children().front();
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ::kill(victim, SIGKILL);
  });
  const FloodResult killed = flood(s.port, "a.test", 64, 1, 4.5);
  killer.join();
  const std::vector<unsigned> k = whole_seconds(killed);
  std::string ks;
  for (unsigned n : k) ks += std::to_string(n) + " ";
  WARN("rate 100, a worker killed after 1.5 s: full answers per whole second: " << ks);
  CHECK(s.total("restarts") == 1);
  CHECK(k.size() >= 3);
  for (unsigned n : k) {
    CHECK(n >= 70);
    CHECK(n <= 130);
  }

  // A new rate by SIGHUP: the new workers apply it to the same table.
  std::ofstream(path) << "rate_limit:\n  responses_per_second: 40\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return s.serve->log().find("reloaded: 2 workers replaced") != std::string::npos; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const FloodResult reloaded = flood(s.port, "a.test", 64, 1, 3.5);
  const std::vector<unsigned> r = whole_seconds(reloaded);
  std::string rs;
  for (unsigned n : r) rs += std::to_string(n) + " ";
  WARN("rate 40 after SIGHUP: full answers per whole second: " << rs);
  CHECK(r.size() >= 2);
  for (unsigned n : r) {
    CHECK(n >= 28);
    CHECK(n <= 52);
  }
}
