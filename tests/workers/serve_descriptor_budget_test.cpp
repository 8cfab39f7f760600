// SPDX-License-Identifier: GPL-3.0-or-later
// The descriptor budget (workers/descriptor_budget.hpp): serve started under a low
// RLIMIT_NOFILE (hard limit too, so the supervisor cannot raise it), a flood of misses
// to an upstream that never answers, and meanwhile TCP queries for a cached name: they
// are answered, since the misses can hold only the upstream share of the descriptors.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cache/segment.hpp"
#include "common/child_process.hpp"
#include "common/socket_owners.hpp"
#include "tests/workers/serve_harness.hpp"
#include "tests/workers/test_upstream.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;

namespace {

// `dnsarena serve ARGS` with RLIMIT_NOFILE soft and hard set to `nofile` before exec.
class LimitedServe {
public:
  LimitedServe(rlim_t nofile, std::vector<std::string> args, std::uint16_t port) : port_(port) {
    static int n = 0;
    log_path_ = "/tmp/dnsarena-serve-nofile-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".log";
    std::vector<std::string> argv{dnsarena_binary(), "serve"};
    forward_test_zone(args);
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string log = log_path_;
    child_ = dnsarena::common::ChildProcess::run([argv, log, nofile]() {
      const rlimit lim{nofile, nofile};
      if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) return 126;
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0) return 126;
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
      ::alarm(0);  // run()'s alarm would outlive exec
      std::vector<char*> cargv;
      for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
      cargv.push_back(nullptr);
      ::execv(cargv[0], cargv.data());
      return 127;
    });
  }
  ~LimitedServe() { child_.stop(5s); }
  bool wait_ready() {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!child_.running()) return false;
      if (dnsarena::common::accepts_tcp(port_) && dnsarena::common::process_listens_tcp(child_.pid(), port_))
        return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  std::string log() const {
    std::ifstream f(log_path_);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }

private:
  dnsarena::common::ChildProcess child_;
  std::uint16_t port_;
  std::string log_path_;
};

// Sends one query for a new name under "flood." every `every_us` from `sockets` UDP
// sockets in turn until `stop`, reading (and discarding) whatever comes back.
void miss_flood(std::uint16_t port, unsigned sockets, unsigned every_us, const std::atomic<bool>& stop,
                std::atomic<unsigned>& sent) {
  std::vector<int> fds;
  for (unsigned i = 0; i < sockets; ++i) {
    const int fd = connected_udp_socket(port);
    if (fd < 0) break;
    fds.push_back(fd);
  }
  std::uint8_t buf[1500];
  for (unsigned i = 0; !stop && !fds.empty(); ++i) {
    const int fd = fds[i % fds.size()];
    const std::string name = "m" + std::to_string(i) + ".flood";
    const std::vector<std::uint8_t> q = make_query(static_cast<std::uint16_t>(i), name, 1);
    if (::send(fd, q.data(), q.size(), 0) > 0) ++sent;
    while (::recv(fd, buf, sizeof buf, 0) > 0) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(every_us));
  }
  for (int fd : fds) ::close(fd);
}

}  // namespace

TEST_CASE("descriptors: under a low RLIMIT_NOFILE a flood of misses to a silent upstream leaves TCP clients answered",
          "[serve][tcp][hostile][descriptors][timing]") {
  TestUpstream answering;
  TestUpstream silent;
  silent.set_mode(UpstreamMode::silent);
  const std::uint16_t port = free_port();
  const std::string segment = unique_segment("nofile");
  constexpr rlim_t kNofile = 256;
  {
    LimitedServe serve(kNofile,
                       {"--listen", "127.0.0.1:" + std::to_string(port), "--segment", segment, "--workers", "2",
                        "--max-entries", "10000", "--arena-bytes", "8M", "--no-metrics", "--log-level", "info",
                        "--upstream", "127.0.0.1:" + std::to_string(silent.port()), "--forward-zone",
                        "test=127.0.0.1:" + std::to_string(answering.port()), "-c",
                        write_config("tcp:\n  max_connections: 64\n")},
                       port);
    REQUIRE(serve.wait_ready());
    REQUIRE(udp_answered_within(port, make_query(1, "a.test", 1)));  // a.test is now cached
    // The split is logged once, with the limit the worker found.
    const std::string log = serve.log();
    INFO(log);
    CHECK(log.find("descriptors per worker: limit 256:") != std::string::npos);
    REQUIRE(tcp_exchange(port, make_query(2, "a.test", 1)).rcode() == 0);

    // About 2,000 misses per second, each a new name, to the upstream that never answers:
    // each would hold a socket for its three attempts (7 s) if nothing bounded them.
    std::atomic<bool> stop{false};
    std::atomic<unsigned> sent{0};
    std::thread flood([&] { miss_flood(port, 32, 500, stop, sent); });
    std::this_thread::sleep_for(1500ms);  // the workers' upstream tables fill
    unsigned asked = 0, answered = 0;
    const auto until = std::chrono::steady_clock::now() + 4s;
    while (std::chrono::steady_clock::now() < until) {
      const DnsReply r = tcp_exchange(port, make_query(static_cast<std::uint16_t>(100 + asked), "a.test", 1), 1500ms);
      ++asked;
      if (r.answered && r.rcode() == 0 && r.answers.size() == 2) ++answered;
      std::this_thread::sleep_for(100ms);
    }
    stop = true;
    flood.join();
    WARN("misses sent " << sent << ", TCP queries answered " << answered << " of " << asked);
    CHECK(sent > 5000);
    CHECK(silent.queries() > 100);
    CHECK(asked >= 10);
    CHECK(answered == asked);
    // The flood did fill the upstream share: queries were given up or refused to stay in it.
    const nlohmann::json stats = serve_stats(segment);
    const std::uint64_t bounded = stats["total"]["upstream_jostled"].get<std::uint64_t>() +
                                  stats["total"]["upstream_overload"].get<std::uint64_t>();
    WARN("upstream_jostled " << stats["total"]["upstream_jostled"] << ", upstream_overload "
                              << stats["total"]["upstream_overload"]);
    CHECK(bounded > 0);
  }
  dnsarena::cache::Segment::remove(segment);
}

TEST_CASE("descriptors: a limit too small for the configured split is said at start, and TCP still answers",
          "[serve][tcp][descriptors]") {
  TestUpstream upstream;
  const std::uint16_t port = free_port();
  const std::string segment = unique_segment("nofile-small");
  {
    // 128 descriptors cannot hold 256 TCP connections and 64 upstream queries.
    LimitedServe serve(128,
                       {"--listen", "127.0.0.1:" + std::to_string(port), "--segment", segment, "--workers", "1",
                        "--max-entries", "10000", "--arena-bytes", "8M", "--no-metrics", "--log-level", "info",
                        "--upstream", "127.0.0.1:" + std::to_string(upstream.port())},
                       port);
    REQUIRE(serve.wait_ready());
    REQUIRE(udp_answered_within(port, make_query(1, "a.test", 1)));
    const std::string log = serve.log();
    INFO(log);
    CHECK(log.find("descriptors per worker: limit 128:") != std::string::npos);
    CHECK(log.find("the limit cannot hold the connection bounds (tcp, tls, https.max_connections) and 64 upstream "
                   "queries") != std::string::npos);
    CHECK(log.find("(of 256 configured)") != std::string::npos);
    const DnsReply r = tcp_exchange(port, make_query(2, "a.test", 1));
    CHECK(r.answered);
    CHECK(r.rcode() == 0);
  }
  dnsarena::cache::Segment::remove(segment);
}
