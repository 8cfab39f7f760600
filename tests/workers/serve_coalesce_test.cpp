// SPDX-License-Identifier: GPL-3.0-or-later
// One upstream query per name per host, for answers the cache does not take: clients of
// both workers ask at once while the upstream takes 300 ms; the worker that asks hands
// its answer to the other through the host's answer slot (workers/answer_slots.hpp), so
// the upstream sees one query whether or not the answer could be cached. And when the
// asking worker is killed, the clients parked on the other are still answered.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;

namespace {

constexpr int kTogether = 20;

std::size_t times_asked(const TestUpstream& up, std::string name) {
  std::size_t n = 0;
  for (std::string got : up.names_received()) {
    std::transform(got.begin(), got.end(), got.begin(), [](unsigned char c) { return std::tolower(c); });
    n += got == name;
  }
  return n;
}

// kTogether clients, each on its own socket (so SO_REUSEPORT spreads them over the
// workers), ask at once; returns how many replies `good` accepted.
int ask_together(std::uint16_t port, const std::function<std::vector<std::uint8_t>(std::uint16_t id)>& query,
                 const std::function<bool(const DnsReply&)>& good, std::chrono::milliseconds timeout = 3000ms) {
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kTogether; ++i)
    clients.emplace_back([&, i] {
      const DnsReply r = udp_exchange(port, query(static_cast<std::uint16_t>(100 + i)), timeout);
      if (r.answered && r.id == 100 + i && good(r)) ++ok;
    });
  for (auto& c : clients) c.join();
  return ok.load();
}

// The pid among `pids` holding a UDP socket connected to 127.0.0.1:port (0: none).
pid_t pid_connected_to(const std::vector<pid_t>& pids, std::uint16_t port) {
  char remote[32];
  std::snprintf(remote, sizeof remote, "0100007F:%04X", port);
  std::ifstream udp("/proc/net/udp");
  std::string line;
  std::vector<std::string> inodes;
  std::getline(udp, line);  // the column names
  while (std::getline(udp, line)) {
    std::istringstream in(line);
    std::string sl, local, rem, st, queues, timer, retr, uid, tout, inode;
    in >> sl >> local >> rem >> st >> queues >> timer >> retr >> uid >> tout >> inode;
    if (rem == remote) inodes.push_back("socket:[" + inode + "]");
  }
  for (pid_t pid : pids) {
    std::error_code ec;
    for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
      if (std::find(inodes.begin(), inodes.end(), target) != inodes.end()) return pid;
    }
  }
  return 0;
}

}  // namespace

TEST_CASE("coalescing: an answer the cache does not take reaches every waiting worker from one upstream query",
          "[serve][coalesce][timing]") {
  struct Case {
    const char* what;
    const char* name;  // as the upstream sees it
    std::function<std::vector<std::uint8_t>(std::uint16_t)> query;
    std::function<bool(const DnsReply&)> good;
  };
  const Case cases[] = {
      {"TTL 0", "zero.test.", [](std::uint16_t id) { return make_query(id, "zero.test", 1); },
       [](const DnsReply& r) { return r.rcode() == 0 && r.answers.size() == 1 && r.answers[0] == "1 c000020a"; }},
      {"ECS scope /24 for a /16 source", "ecs.test.",
       [](std::uint16_t id) { return make_ecs_query(id, "ecs.test", 1, 16, {203, 0, 0, 0}); },
       [](const DnsReply& r) { return r.rcode() == 0 && r.ecs_scope == 24 && r.answers.size() == 1; }},
      {"NXDOMAIN without SOA", "nosoa.test.", [](std::uint16_t id) { return make_query(id, "nosoa.test", 1); },
       [](const DnsReply& r) { return r.rcode() == 3 && r.records.empty(); }},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.what) {
      Service s({"--ecs", "forward", "--upstream-timeout-ms", "1000"}, 2);  // no retry within the delay
      s.upstream.set_delay(300ms);
      CHECK(ask_together(s.port, c.query, c.good) == kTogether);
      CHECK(times_asked(s.upstream, c.name) == 1);
      // Both workers had clients: those of the one that did not ask waited for the other.
      CHECK(s.total("upstream_joined") >= 1);
      CHECK(s.total("upstream_slot_answers") >= 1);
      CHECK(s.total("upstream_slot_full") == 0);
    }
  }
}

TEST_CASE("coalescing: the asking worker killed with the claim held, the clients parked on the other are answered",
          "[serve][coalesce][timing]") {
  Service s({"--upstream-timeout-ms", "1000"}, 2);  // no retry within the delay
  s.upstream.set_delay(500ms);
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kTogether; ++i)
    clients.emplace_back([&, i] {
      const DnsReply r = udp_exchange(s.port, make_query(static_cast<std::uint16_t>(100 + i), "zero.test", 1), 3000ms);
      if (r.answered && r.rcode() == 0 && r.answers.size() == 1) ++ok;
    });
  // The query is at the upstream (which holds it 500 ms) and the other worker's clients
  // are parked on its claim.
  REQUIRE(eventually([&] { return times_asked(s.upstream, "zero.test.") == 1 && s.total("upstream_joined") >= 1; }));
  const std::uint64_t parked = s.total("upstream_joined");
  const pid_t owner = pid_connected_to(s.serve->children(), s.upstream.port());
  REQUIRE(owner > 0);
  REQUIRE(::kill(owner, SIGKILL) == 0);
  for (auto& t : clients) t.join();
  // The owner's own clients went with it; every parked one was answered: the replacement
  // worker released the dead claim, and the parked clients' worker asked again.
  CHECK(ok >= static_cast<int>(parked));
  CHECK(ok < kTogether);  // the killed worker's clients: the test killed the asking worker
  CHECK(times_asked(s.upstream, "zero.test.") == 2);
}
