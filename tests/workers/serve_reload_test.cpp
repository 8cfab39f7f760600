// SPDX-License-Identifier: GPL-3.0-or-later
// SIGHUP reload and `serve --check-config`: a changed access_control takes effect
// without a restart while the cache stays warm; a broken file keeps the running config.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/workers/service_fixture.hpp"
#include "tests/workers/tls_test_support.hpp"

using namespace dnsarena::test;

namespace {

unsigned rcode_of(std::uint16_t port, std::uint16_t id) {
  const DnsReply r = udp_exchange(port, make_query(id, "a.test.", 1));
  return r.answered ? r.rcode() : 999;
}

// One query over an open TCP connection, its answer's ID (-1: none within 2 s).
int tcp_ask(int fd, std::uint16_t id) {
  std::vector<std::uint8_t> q = make_query(id, "a.test.", 1);
  std::vector<std::uint8_t> framed{static_cast<std::uint8_t>(q.size() >> 8), static_cast<std::uint8_t>(q.size())};
  framed.insert(framed.end(), q.begin(), q.end());
  if (::send(fd, framed.data(), framed.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(framed.size())) return -1;
  std::vector<std::uint8_t> in;
  while (in.size() < 2 || in.size() < 2u + ((in[0] << 8) | in[1])) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 2000) != 1) return -1;
    std::uint8_t buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return -1;
    in.insert(in.end(), buf, buf + n);
  }
  return in.size() >= 4 ? (in[2] << 8) | in[3] : -1;
}

}  // namespace

TEST_CASE("SIGHUP twice within one drain: the first retired worker still answers its connection",
          "[serve][reload]") {
  // Debug logs: a retired worker says when it stopped accepting ("retired: draining").
  Service s({"--config", write_config("tcp: {idle_timeout_ms: 20000}\n"), "--log-level", "debug"}, 1);
  const auto draining = [&] { return occurrences(s.serve->log(), "retired: draining"); };
  const int first = connect_tcp(s.port);  // held by generation 1
  REQUIRE(first >= 0);
  REQUIRE(tcp_ask(first, 1) == 1);
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return s.serve->log().find("reloaded: 1 workers replaced") != std::string::npos; }));
  // Until generation 1 has stopped accepting, it may take the next connection itself
  // (on a loaded machine it can be a while); then generation 2 would drain at once.
  REQUIRE(eventually([&] { return draining() == 1; }));
  const int second = connect_tcp(s.port);  // held by generation 2
  REQUIRE(second >= 0);
  REQUIRE(tcp_ask(second, 2) == 2);
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);  // generation 1 is still draining
  REQUIRE(eventually([&] { return occurrences(s.serve->log(), "reloaded: 1 workers replaced") >= 2; }));
  REQUIRE(eventually([&] { return draining() == 2; }));
  CHECK(tcp_ask(first, 3) == 3);
  CHECK(tcp_ask(second, 4) == 4);
  CHECK(udp_exchange(s.port, make_query(5, "a.test.", 1)).answered);  // generation 3
  CHECK(s.serve->log().find("SIGKILL") == std::string::npos);
  // A third reload within the drain has no free row left: the oldest draining worker
  // (generation 1) is ended for it, the others keep answering.
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return s.serve->log().find("still running at the next reload: SIGKILL") != std::string::npos; }));
  CHECK(tcp_ask(first, 6) == -1);
  // (`second` is not judged here: the retire signal reaches generation 1 a moment after
  // the reload is logged, and it may have accepted that connection meanwhile.)
  CHECK(udp_exchange(s.port, make_query(7, "a.test.", 1)).answered);
  ::close(first);
  ::close(second);
}

TEST_CASE("SIGHUP: a new access_control takes effect, the cache stays warm, a broken file changes nothing",
          "[serve][reload]") {
  const std::string path = write_config("access_control: [\"127.0.0.0/8 allow\"]\nlog_level: info\n");
  Service s({"--config", path});
  REQUIRE(rcode_of(s.port, 1) == 0);
  const std::uint64_t upstream_before = s.upstream.queries();
  const auto entries_before = serve_stats(s.segment)["entries"].get<std::uint64_t>();
  const auto pids_before = s.serve->children();

  // "reloaded" is logged once no old worker reads the socket any more: from then on every
  // answer is the new config's, at once.
  const auto reloads = [&] { return occurrences(s.serve->log(), "reloaded: 2 workers replaced"); };
  std::ofstream(path) << "access_control: [\"127.0.0.0/8 refuse\"]\nlog_level: info\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return reloads() == 1; }));
  for (std::uint16_t id = 2; id < 22; ++id) CHECK(rcode_of(s.port, id) == 5);  // REFUSED, by every worker
  CHECK(serve_stats(s.segment)["entries"].get<std::uint64_t>() >= entries_before);  // warm
  const auto pids_after = s.serve->children();
  for (pid_t p : pids_before) CHECK(std::find(pids_after.begin(), pids_after.end(), p) == pids_after.end());

  // Back to allow: the answer comes from the cache the old workers filled.
  std::ofstream(path) << "access_control: [\"127.0.0.0/8 allow\"]\nlog_level: info\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return reloads() == 2; }));
  for (std::uint16_t id = 22; id < 30; ++id) CHECK(rcode_of(s.port, id) == 0);
  CHECK(s.upstream.queries() == upstream_before);
  CHECK(s.serve->log().find("has not stopped reading") == std::string::npos);

  // A broken file: logged with its reason, the running config (allow) stays.
  std::ofstream(path) << "access_control: [\"127.0.0.0/8 refuse\"]\nno_such_key: 1\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return s.serve->log().find("keeping the running config") != std::string::npos; }));
  CHECK(s.serve->log().find("no_such_key") != std::string::npos);
  for (std::uint16_t id = 30; id < 40; ++id) CHECK(rcode_of(s.port, id) == 0);
  // A setting that needs a restart is named and kept.
  std::ofstream(path) << "access_control: [\"127.0.0.0/8 allow\"]\nudp: {receive_buffer: 1M}\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return s.serve->log().find("udp buffers changed; it needs a restart") != std::string::npos; }));
  CHECK(rcode_of(s.port, 41) == 0);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("SIGHUP with the old worker stopped: the reload goes on after its bound, named in the log",
          "[serve][reload]") {
  const std::string path = write_config("access_control: [\"127.0.0.0/8 allow\"]\nlog_level: info\n");
  Service s({"--config", path}, 1);
  REQUIRE(rcode_of(s.port, 1) == 0);
  const auto before = s.serve->children();
  REQUIRE(before.size() == 1);
  REQUIRE(::kill(before[0], SIGSTOP) == 0);  // it cannot take its retire signal
  std::ofstream(path) << "access_control: [\"127.0.0.0/8 refuse\"]\nlog_level: info\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] {
    return s.serve->log().find("replaced worker pid " + std::to_string(before[0]) + " has not stopped reading") !=
           std::string::npos;
  }));
  CHECK(eventually([&] { return s.serve->log().find("reloaded: 1 workers replaced") != std::string::npos; }));
  // The stopped worker reads nothing: every answer is the successor's.
  for (std::uint16_t id = 2; id < 10; ++id) CHECK(rcode_of(s.port, id) == 5);
  REQUIRE(::kill(before[0], SIGCONT) == 0);  // it then retires and, with nothing to drain, exits
  CHECK(eventually([&] {
    const auto now = s.serve->children();
    return std::find(now.begin(), now.end(), before[0]) == now.end();
  }));
  CHECK(rcode_of(s.port, 10) == 5);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("serve --check-config: exit 0 with a summary, or 1 with the reason", "[serve][reload]") {
  int status = -1;
  std::string out = run_command(dnsarena_binary() + " serve --check-config " + DNSARENA_SOURCE_DIR +
                                    "/configs/serve.yaml 2>&1",
                                &status);
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("serve.yaml: valid: listen 127.0.0.1:8053") != std::string::npos);
  const std::string bad = write_config("listen: 127.0.0.1:8053\nupstreams: [127.0.0.1:5300]\nttl: {florr: 3}\n");
  out = run_command(dnsarena_binary() + " serve --check-config " + bad + " 2>&1", &status);
  CHECK(status == 1);
  CHECK(out.find(bad + ": invalid: " + bad + ":3:") != std::string::npos);
  const std::string level = write_config("upstreams: [127.0.0.1:5300]\nlog_level: loud\n");
  out = run_command(dnsarena_binary() + " serve --check-config " + level + " 2>&1", &status);
  CHECK(status == 1);
  CHECK(out.find("log_level 'loud'") != std::string::npos);
  out = run_command(dnsarena_binary() + " serve --check-config /nonexistent/dnsarena.yaml 2>&1", &status);
  CHECK(status == 1);
}

TEST_CASE("SIGHUP that takes trust_ad away: what was cached with AD is answered without it, fresh or stale",
          "[serve][reload]") {
  const auto ad_of = [](std::uint16_t port, std::uint16_t id) {
    return udp_exchange(port, make_query(id, "ad.test.", 1, 1232, true));
  };
  SECTION("fresh") {
    const std::string path = write_config("upstreams_trust_ad: true\nlog_level: info\n");
    Service s({"--config", path});
    REQUIRE(ad_of(s.port, 1).ad());
    const std::uint64_t asked = s.upstream.queries();
    const auto reloads = [&] { return occurrences(s.serve->log(), "reloaded: 2 workers replaced"); };
    // Trust kept: the cached AD stands.
    REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
    REQUIRE(eventually([&] { return reloads() == 1; }));
    for (std::uint16_t id = 2; id < 8; ++id) CHECK(ad_of(s.port, id).ad());
    // Trust taken away: the same cached entry, without AD, from every worker.
    std::ofstream(path) << "upstreams_trust_ad: false\nlog_level: info\n";
    REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
    REQUIRE(eventually([&] { return reloads() == 2; }));
    for (std::uint16_t id = 8; id < 20; ++id) {
      const DnsReply r = ad_of(s.port, id);
      REQUIRE(r.answered);
      CHECK(r.rcode() == 0);
      CHECK_FALSE(r.ad());
    }
    CHECK(s.upstream.queries() == asked);  // answered from the cache
    // Trust given back: once the retired workers are gone, an answer fetched again
    // carries AD (the cut ends; it does not stay on every entry).
    std::ofstream(path) << "upstreams_trust_ad: true\nlog_level: info\n";
    REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
    REQUIRE(eventually([&] { return reloads() == 3; }));
    std::uint16_t id = 20;
    CHECK(eventually([&] {
      run_command(dnsarena_binary() + " flush --segment " + s.segment + " ad.test");
      return ad_of(s.port, id++).ad();
    }));
  }
  SECTION("stale") {
    const std::string rest = "ttl: {ceiling: 1}\nstale: {answer_first: true}\nlog_level: info\n";
    const std::string path = write_config("upstreams_trust_ad: true\n" + rest);
    Service s({"--config", path});
    REQUIRE(ad_of(s.port, 1).ad());
    s.upstream.set_mode(UpstreamMode::silent);  // nothing replaces the entry
    std::uint16_t id = 2;
    // Expired: answered stale (EDE 3), with its AD while the trust holds.
    DnsReply stale;
    REQUIRE(eventually([&] { return (stale = ad_of(s.port, id++)).ede == 3; }));
    CHECK(stale.ad());
    std::ofstream(path) << "upstreams_trust_ad: false\n" + rest;
    REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
    REQUIRE(eventually([&] { return s.serve->log().find("reloaded: 2 workers replaced") != std::string::npos; }));
    for (int i = 0; i < 10; ++i) {
      const DnsReply r = ad_of(s.port, id++);
      REQUIRE(r.answered);
      CHECK(r.ede == 3);
      CHECK_FALSE(r.ad());
    }
  }
}

TEST_CASE("a restart that does not trust every name: what an earlier run cached with AD is answered without it",
          "[serve][reload]") {
  Service s({"--config", write_config("upstreams_trust_ad: true\nlog_level: info\n")});
  REQUIRE(udp_exchange(s.port, make_query(1, "ad.test.", 1, 1232, true)).ad());
  const std::uint64_t asked = s.upstream.queries();
  const std::time_t cached_at = std::time(nullptr);
  s.serve.reset();
  // The cut is by whole seconds: the new run starts in a later one than the insert.
  REQUIRE(eventually([&] { return std::time(nullptr) > cached_at; }));
  s.start({"--config", write_config("upstreams_trust_ad: false\nlog_level: info\n")});
  const DnsReply r = udp_exchange(s.port, make_query(2, "ad.test.", 1, 1232, true));
  REQUIRE(r.answered);
  CHECK(r.rcode() == 0);
  CHECK_FALSE(r.ad());
  CHECK(s.upstream.queries() == asked);  // the entry the earlier run cached
}
