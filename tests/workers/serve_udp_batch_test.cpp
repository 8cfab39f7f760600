// `dnsarena serve`'s UDP batch (recvmmsg -> answers -> sendmmsg) with a query from a
// source no answer can go to (issue 11, item 4). A raw socket forges the source port 0;
// the worker is stopped while the burst queues, so the forged and the normal queries are
// read in one batch.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
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
