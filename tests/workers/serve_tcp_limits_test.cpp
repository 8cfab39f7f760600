// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena serve` against hostile TCP clients and descriptor exhaustion (TCP
// limits, slow clients, descriptors): real serve processes on loopback, attackers in this
// process (hostile_clients.hpp). Each case fails without the bound it covers.
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "tests/workers/hostile_clients.hpp"
#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;

namespace {

// Sends as much of `data` as the socket takes within `budget`; returns the bytes sent.
std::size_t send_for(int fd, const std::vector<std::uint8_t>& data, std::chrono::milliseconds budget) {
  const auto start = std::chrono::steady_clock::now();
  std::size_t done = 0;
  while (done < data.size() && elapsed_ms(start) < static_cast<std::uint64_t>(budget.count())) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) break;
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, 50);
  }
  return done;
}

}  // namespace

TEST_CASE("a TCP client that pipelines 10,000 queries and never reads: worker memory bounded, others answered",
          "[serve][tcp][hostile][timing]") {
  TempConfig cfg("tcp: {idle_timeout_ms: 3000, max_connections: 64}\n");
#if defined(__SANITIZE_ADDRESS__)
  // ASan's quarantine keeps every freed block (256 MiB by default), so RSS would grow
  // with the bytes allocated per query rather than with what the worker holds: turn it
  // off for this serve child only.
  const char* inherited = std::getenv("ASAN_OPTIONS");
  const std::string saved_asan = inherited ? inherited : "";
  ::setenv("ASAN_OPTIONS", (saved_asan + (saved_asan.empty() ? "" : ":") + "quarantine_size_mb=0").c_str(), 1);
  Service s({"--config", cfg.path()}, 1);
  if (inherited) ::setenv("ASAN_OPTIONS", saved_asan.c_str(), 1);
  else ::unsetenv("ASAN_OPTIONS");
#else
  Service s({"--config", cfg.path()}, 1);
#endif
  // big.test TXT: about 850 bytes per answer, from the cache after the first query.
  const DnsReply warm = tcp_exchange(s.port, make_query(1, "big.test", 16));
  REQUIRE(warm.answered);
  REQUIRE(warm.answers.size() == 4);
  const auto kids = s.serve->children();
  REQUIRE(kids.size() == 1);
  const pid_t worker = kids[0];
  const std::uint64_t rss_before = vm_rss_kib(worker);

  // The attacker: a small receive window, 10,000 queries written as fast as the server
  // takes them, nothing ever read.
  const int fd = tcp_connect_from("127.0.0.1", s.port, 4096);
  REQUIRE(fd >= 0);
  std::vector<std::uint8_t> stream;
  for (int i = 0; i < 10000; ++i) {
    const auto q = tcp_framed(make_query(static_cast<std::uint16_t>(i), "big.test", 16));
    stream.insert(stream.end(), q.begin(), q.end());
  }
  const std::size_t sent = send_for(fd, stream, 5s);
  std::this_thread::sleep_for(500ms);  // let the worker answer what it read
  const std::uint64_t rss_after = vm_rss_kib(worker);
  const std::uint64_t growth_kib = rss_after > rss_before ? rss_after - rss_before : 0;
  WARN("attacker sent " << sent << " of " << stream.size() << " bytes; worker VmRSS " << rss_before << " -> "
                        << rss_after << " KiB (+" << growth_kib << " KiB)");
  CHECK(growth_kib < 8 * 1024);

  // The same worker still answers a normal client at once.
  const DnsReply ok = tcp_exchange(s.port, make_query(2, "a.test", 1));
  REQUIRE(ok.answered);
  CHECK(ok.answers.size() == 2);

  // Output that cannot drain is given up after the idle timeout (3 s, swept every second).
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(closed_by_peer(fd, 8s));
  WARN("non-reading connection closed after " << elapsed_ms(t0) << " ms");
  ::close(fd);
  CHECK(s.serve->children().size() == 1);
  CHECK(s.total("restarts") == 0);
}

TEST_CASE("one TCP connection pipelining 1,000 misses holds at most 100 upstream queries", "[serve][tcp][hostile][timing]") {
  Service s({}, 1);
  s.upstream.set_mode(UpstreamMode::silent);  // nothing comes back within the test
  const int fd = tcp_connect_from("127.0.0.1", s.port);
  REQUIRE(fd >= 0);
  std::vector<std::uint8_t> stream;
  for (int i = 0; i < 1000; ++i) {
    const auto q = tcp_framed(make_query(static_cast<std::uint16_t>(i), "miss" + std::to_string(i) + ".test", 1));
    stream.insert(stream.end(), q.begin(), q.end());
  }
  REQUIRE(send_for(fd, stream, 1s) == stream.size());
  std::this_thread::sleep_for(150ms);  // under the 300 ms upstream timeout: none has finished
  const std::uint64_t asked = s.upstream.queries();
  WARN("upstream queries in flight from one pipelining connection: " << asked);
  CHECK(asked > 0);
  CHECK(asked <= 100);
  ::close(fd);
}

TEST_CASE("slow TCP clients over the connection limit: a normal TCP query is still answered",
          "[serve][tcp][hostile][timing]") {
  // 2 workers x 16 connections; 64 attackers from 64 loopback addresses each trickle one
  // byte per second and reconnect when closed. Long idle timeout: only the eviction of the
  // oldest idle connection can let a new client in.
  TempConfig cfg("tcp: {idle_timeout_ms: 30000, max_connections: 16}\n");
  Service s({"--config", cfg.path()}, 2);
  REQUIRE(tcp_exchange(s.port, make_query(1, "a.test", 1)).answered);

  constexpr int kAttackers = 64;
  std::atomic<bool> stop{false};
  std::atomic<unsigned> reconnects{0};
  std::thread attacker([&] {
    std::vector<int> fds(kAttackers, -1);
    std::vector<std::size_t> pos(kAttackers, 0);
    const auto query = tcp_framed(make_query(7, "a.test", 1));
    auto source = [](int i) { return "127.0.1." + std::to_string(i + 1); };
    for (int i = 0; i < kAttackers; ++i) fds[i] = tcp_connect_from(source(i), s.port);
    while (!stop) {
      for (int i = 0; i < kAttackers && !stop; ++i) {
        pollfd p{fds[i], POLLIN | POLLRDHUP, 0};
        const bool dead = fds[i] < 0 || (::poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLRDHUP | POLLIN))) ||
                          ::send(fds[i], &query[pos[i] % (query.size() - 1)], 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1;
        ++pos[i];
        if (dead) {
          if (fds[i] >= 0) ::close(fds[i]);
          fds[i] = tcp_connect_from(source(i), s.port);
          pos[i] = 0;
          ++reconnects;
        }
      }
      for (int t = 0; t < 10 && !stop; ++t) std::this_thread::sleep_for(100ms);
    }
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  });
  std::this_thread::sleep_for(2500ms);  // every slot is taken

  unsigned answered = 0;
  std::uint64_t worst_ms = 0;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const DnsReply r = tcp_exchange(s.port, make_query(static_cast<std::uint16_t>(100 + i), "a.test", 1), 3s);
    worst_ms = std::max(worst_ms, elapsed_ms(t0));
    if (r.answered && r.answers.size() == 2) ++answered;
    std::this_thread::sleep_for(200ms);
  }
  stop = true;
  attacker.join();
  WARN(answered << " of 10 normal TCP queries answered among " << kAttackers << " slow clients (slowest "
                << worst_ms << " ms, attacker reconnects " << reconnects.load() << ")");
  CHECK(answered == 10);
  CHECK(worst_ms < 3000);
  CHECK(s.total("restarts") == 0);
}

TEST_CASE("a TCP client that trickles bytes without completing a message is closed after the idle timeout",
          "[serve][tcp][hostile][timing]") {
  TempConfig cfg("tcp: {idle_timeout_ms: 2000}\n");
  Service s({"--config", cfg.path()}, 1);
  const int fd = tcp_connect_from("127.0.0.1", s.port);
  REQUIRE(fd >= 0);
  const auto query = tcp_framed(make_query(7, "a.test", 1));
  const auto t0 = std::chrono::steady_clock::now();
  bool closed = false;
  // One byte every 300 ms (a byte alone does not reset the idle clock): never a whole message.
  for (std::size_t i = 0; i + 1 < query.size() && !closed && elapsed_ms(t0) < 7000; ++i) {
    if (::send(fd, &query[i], 1, MSG_NOSIGNAL) != 1) closed = true;
    else closed = closed_by_peer(fd, 300ms);
  }
  const std::uint64_t after = elapsed_ms(t0);
  ::close(fd);
  WARN("trickling connection " << (closed ? "closed" : "still open") << " after " << after << " ms");
  CHECK(closed);
  CHECK(after < 4500);  // 2 s timeout + a 1 s sweep period + slack
}

TEST_CASE("per-client TCP connection limit: one address cannot take every slot", "[serve][tcp][hostile][timing]") {
  TempConfig cfg("tcp: {idle_timeout_ms: 30000, max_connections: 64, max_connections_per_client: 4}\n");
  Service s({"--config", cfg.path()}, 1);
  std::vector<int> fds;
  for (int i = 0; i < 10; ++i) fds.push_back(tcp_connect_from("127.0.2.1", s.port));
  unsigned open = 0;
  for (int fd : fds) {
    REQUIRE(fd >= 0);
    if (!closed_by_peer(fd, 300ms)) ++open;
  }
  WARN(open << " of 10 connections from one address kept open (limit 4)");
  CHECK(open == 4);
  // Another address is served.
  const DnsReply r = tcp_exchange(s.port, make_query(3, "a.test", 1));
  CHECK(r.answered);
  for (int fd : fds) ::close(fd);
}

TEST_CASE("descriptors: RLIMIT_NOFILE raised at start, EMFILE on accept does not spin", "[serve][tcp][hostile][timing]") {
  // Start serve with a low soft limit (inherited), as a default shell would give it.
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(1024, saved.rlim_max);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  std::unique_ptr<Service> sp;
  try {
    sp = std::make_unique<Service>(std::vector<std::string>{}, 1);
  } catch (...) {
    ::setrlimit(RLIMIT_NOFILE, &saved);
    throw;
  }
  ::setrlimit(RLIMIT_NOFILE, &saved);
  Service& s = *sp;
  REQUIRE(tcp_exchange(s.port, make_query(1, "a.test", 1)).answered);
  const auto kids = s.serve->children();
  REQUIRE(kids.size() == 1);
  const pid_t worker = kids[0];
  const std::uint64_t expected = std::min<std::uint64_t>(saved.rlim_max, 65536);
  CHECK(nofile_soft_limit(worker) == expected);

  // Leave the worker two spare descriptors (soft limit only: raising a hard limit back
  // needs CAP_SYS_RESOURCE), then connect more clients than that.
  const unsigned used = open_fds(worker);
  rlimit tight{used + 2, saved.rlim_max};
  REQUIRE(::prlimit(worker, RLIMIT_NOFILE, &tight, nullptr) == 0);
  std::vector<int> fds;
  for (int i = 0; i < 20; ++i) fds.push_back(tcp_connect_from("127.0.3." + std::to_string(i + 1), s.port));
  std::this_thread::sleep_for(300ms);
  const std::uint64_t ticks0 = cpu_ticks(worker);
  std::this_thread::sleep_for(1000ms);
  const std::uint64_t ticks = cpu_ticks(worker) - ticks0;
  const long hz = ::sysconf(_SC_CLK_TCK);
  WARN("worker CPU while at EMFILE with 18 connections waiting: " << ticks << " ticks of " << hz << " in 1 s");
  CHECK(ticks < static_cast<std::uint64_t>(hz) / 5);  // under 20% of a core (it spun at 100%)

  // Descriptors come back: the worker accepts again and answers.
  rlimit back{expected, saved.rlim_max};
  REQUIRE(::prlimit(worker, RLIMIT_NOFILE, &back, nullptr) == 0);
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  const auto t0 = std::chrono::steady_clock::now();
  DnsReply r;
  while (!r.answered && elapsed_ms(t0) < 5000) r = tcp_exchange(s.port, make_query(2, "a.test", 1), 1s);
  CHECK(r.answered);
  CHECK(s.total("restarts") == 0);
}
