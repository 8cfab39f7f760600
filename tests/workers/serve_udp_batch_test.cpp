// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena serve`'s UDP batch (recvmmsg -> answers -> sendmmsg) with a query from a
// source no answer can go to. A raw socket forges the source port 0;
// the worker is stopped while the burst queues, so the forged and the normal queries are
// read in one batch.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <thread>

#include "tests/workers/hostile_clients.hpp"
#include "tests/workers/service_fixture.hpp"
#include "common/loopback.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;

TEST_CASE("sendmmsg: an answer that cannot be sent (source port 0) does not drop the rest of the batch",
          "[serve][udp][hostile][timing]") {
  Service s({}, 1);
  REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).answered);  // cached: answered in the batch
  const auto kids = s.serve->children();
  REQUIRE(kids.size() == 1);

  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = dnsarena::common::loopback_v4(s.port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);

  constexpr int kNormal = 30;
  REQUIRE(::kill(kids[0], SIGSTOP) == 0);
  std::this_thread::sleep_for(100ms);
  for (int i = 0; i < kNormal; ++i) {
    // A forged query from 127.0.0.1:0 before every normal one.
    REQUIRE(raw_udp_send(0, s.port, make_query(static_cast<std::uint16_t>(0x8000 + i), "a.test", 1)));
    const auto q = make_query(static_cast<std::uint16_t>(100 + i), "a.test", 1);
    REQUIRE(::send(fd, q.data(), q.size(), 0) == static_cast<ssize_t>(q.size()));
  }
  REQUIRE(::kill(kids[0], SIGCONT) == 0);

  std::set<std::uint16_t> ids;
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (ids.size() < kNormal && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) != 1) continue;
    std::uint8_t buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n >= 12) ids.insert(static_cast<std::uint16_t>((buf[0] << 8) | buf[1]));
  }
  ::close(fd);
  WARN(ids.size() << " of " << kNormal << " normal queries answered, each batch mixed with forged port-0 sources");
  CHECK(ids.size() == kNormal);
  // The skipped answers are counted: one per forged source, none dropped for a full buffer.
  CHECK(s.total("udp_answers_unsendable") == kNormal);
  CHECK(s.total("udp_answers_dropped") == 0);
  CHECK(s.serve->children().size() == 1);
  CHECK(s.total("restarts") == 0);
}

TEST_CASE("one recvmmsg batch mixing hits, misses, ECS, FORMERR, REFUSED and NOTIMP: each answer is its own query's",
          "[serve][udp][timing]") {
  // The batch path checks every datagram, looks the plain-key ones up together and
  // resolves the misses after (worker.cpp, answer_batch): a mix-up of batch positions
  // would answer one query with another's records, rcode or ID.
  Service s({}, 1);
  REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).answered);
  REQUIRE(udp_exchange(s.port, make_query(2, "b.test", 28)).answered);
  std::vector<std::vector<std::uint8_t>> queries;
  auto with_id = [](std::vector<std::uint8_t> q, std::uint16_t id) {
    q[0] = static_cast<std::uint8_t>(id >> 8);
    q[1] = static_cast<std::uint8_t>(id);
    return q;
  };
  for (int round = 0; round < 3; ++round) {
    const auto base = static_cast<std::uint16_t>(1000 + 100 * round);
    queries.push_back(make_query(base + 0, "a.test", 1));                                 // hit
    queries.push_back(make_query(base + 1, "B.Test", 28));                                // hit, case kept
    queries.push_back(make_query(base + 2, "miss" + std::to_string(round) + ".test", 1));  // miss: upstream
    queries.push_back(make_ecs_query(base + 3, "a.test", 1, 24, {10, 1, 2, 0}));          // hit, ECS echoed
    auto truncated = make_query(base + 4, "a.test", 1, 0);
    truncated.resize(truncated.size() - 3);  // the question cut short: FORMERR
    queries.push_back(truncated);
    auto chaos = make_query(base + 5, "a.test", 1, 0);
    chaos[chaos.size() - 1] = 3;  // class CH: REFUSED
    queries.push_back(chaos);
    auto notify = make_query(base + 6, "a.test", 1, 0);
    notify[2] = static_cast<std::uint8_t>((notify[2] & 0x87) | (4 << 3));  // opcode NOTIFY: NOTIMP
    queries.push_back(notify);
    queries.push_back(make_query(base + 7, "a.test", 1, 0));  // hit without EDNS
  }
  const auto kids = s.serve->children();
  REQUIRE(kids.size() == 1);
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = dnsarena::common::loopback_v4(s.port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::kill(kids[0], SIGSTOP) == 0);  // the burst queues and is read as one batch
  std::this_thread::sleep_for(100ms);
  for (const auto& q : queries) REQUIRE(::send(fd, q.data(), q.size(), 0) == static_cast<ssize_t>(q.size()));
  REQUIRE(::kill(kids[0], SIGCONT) == 0);
  std::map<std::uint16_t, DnsReply> replies;
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (replies.size() < queries.size() && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) != 1) continue;
    std::vector<std::uint8_t> buf(4096);
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n < 12) continue;
    buf.resize(static_cast<std::size_t>(n));
    const DnsReply r = parse_reply(buf);
    replies[r.id] = r;
  }
  ::close(fd);
  REQUIRE(replies.size() == queries.size());
  // The reference: each query alone, afterwards (the misses are cached by then and
  // answer with the same records).
  for (const auto& q : queries) {
    const std::uint16_t id = static_cast<std::uint16_t>((q[0] << 8) | q[1]);
    INFO("query id " << id);
    const DnsReply alone = udp_exchange(s.port, with_id(q, static_cast<std::uint16_t>(id ^ 0x4000)));
    REQUIRE(alone.answered);
    const DnsReply& batched = replies.at(id);
    CHECK(batched.rcode() == alone.rcode());
    CHECK(batched.extended_rcode == alone.extended_rcode);
    CHECK(batched.answers == alone.answers);
    CHECK(batched.has_opt == alone.has_opt);
    CHECK(batched.ecs_scope == alone.ecs_scope);
    // The question as asked (its case) follows the header in both.
    if (batched.wire.size() >= 20 && alone.wire.size() >= 20)
      CHECK(std::vector<std::uint8_t>(batched.wire.begin() + 12, batched.wire.begin() + 20) ==
            std::vector<std::uint8_t>(alone.wire.begin() + 12, alone.wire.begin() + 20));
  }
  CHECK(replies.at(1004).rcode() == 1);  // FORMERR
  CHECK(replies.at(1005).rcode() == 5);  // REFUSED
  CHECK(replies.at(1006).rcode() == 4);  // NOTIMP
  CHECK(!replies.at(1000).answers.empty());
  CHECK(replies.at(1003).ecs_scope == 0);
}
