// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena serve` with recursion on (workers/recursive_client.hpp) against the lab
// hierarchy (bench/lab/dns_hierarchy.hpp), every answer compared with Unbound's from the
// same root hints in the same test: referrals with and without glue, a lame and a silent
// server, chains across zones, a DNAME, an answer over TCP, NXDOMAIN, SERVFAIL. Then the
// same names again: answered from the cache, no authoritative query (counted by the
// knotds). And two workers cold-filling the same names: every answer right on both, and
// no more authoritative queries than one worker asks (the cuts and the in-flight
// questions are shared host-wide), reported with Unbound's. Server state shared host-wide
// (workers/infra_table.hpp): a silent server one worker timed out is not asked by the
// other worker, nor by a worker restarted after kill -9; a server that answers FORMERR
// to EDNS is asked without it, at once for every later name. With recursion.local_root
// (RFC 8806): the same answers and no query to a root server, an expired copy not used,
// a broken file refused at start and at reload. Names of one new zone asked at once:
// the queries for its cuts sent once (the others follow them). A flood of names under
// one zone: its server gets no more than recursion.max_queries_per_server a second.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/test_skip.hpp"

#include "bench/lab/dns_hierarchy.hpp"
#include "bench/lab/edns_intolerant_server.hpp"
#include "bench/lab/unbound_process.hpp"
#include "cache/cache.hpp"
#include "cache/segment.hpp"
#include "tests/recursion/answer_set.hpp"
#include "tests/recursion/hints_kresd.hpp"
#include "tests/workers/serve_harness.hpp"
#include "tests/workers/test_upstream.hpp"
#include "workers/infra_table.hpp"

namespace {

using dnsarena::bench::kHierarchyNames;
using dnsarena::test::AnswerSet;

// `dnsarena serve` resolving from the hierarchy's root hints, with `workers` workers.
// CPU time (user + system) of process `pid` so far, in milliseconds (/proc: clock ticks).
double cpu_ms(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::istringstream rest(text.substr(text.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Asks each of `names` (type A) from its own client at once; the rcodes in order (-1: no answer).
std::vector<int> ask_at_once(std::uint16_t port, const std::vector<std::string>& names) {
  std::vector<int> rcodes(names.size(), -1);
  std::vector<std::thread> clients;
  for (std::size_t i = 0; i < names.size(); ++i)
    clients.emplace_back([&, i] { rcodes[i] = dnsarena::test::ask_resolver(port, names[i], 1).rcode; });
  for (auto& t : clients) t.join();
  return rcodes;
}

// `count` names "<prefix><i>.<zone>".
std::vector<std::string> numbered_names(const std::string& prefix, int count, const std::string& zone) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back(prefix + std::to_string(i) + "." + zone);
  return names;
}

struct RecursiveServe {
  std::uint16_t port = dnsarena::test::free_port();
  std::string segment = dnsarena::test::unique_segment("recursion");
  std::unique_ptr<dnsarena::test::ServeProcess> serve;
  // `extra`: more configuration lines (forward zones); `recursion_keys`: more lines of
  // the recursion section.
  RecursiveServe(const dnsarena::bench::DnsHierarchy& h, unsigned workers, const std::string& extra = "",
                 const std::string& recursion_keys = "")
      : RecursiveServe(h.root_hints(), workers, extra, recursion_keys) {}
  RecursiveServe(const std::string& root_hints, unsigned workers, const std::string& extra = "",
                 const std::string& recursion_keys = "") {
    // A failed name stays failed for the whole test: a second pass asks nothing.
    const std::string config =
        dnsarena::test::write_config("recursion:\n  enabled: true\n  root_hints: " + root_hints + "\n" +
                                     recursion_keys + "failure_cache:\n  min_s: 600\n  max_s: 600\n" + extra);
    serve = std::make_unique<dnsarena::test::ServeProcess>(
        std::vector<std::string>{"-c", config, "--segment", segment, "--workers", std::to_string(workers),
                                 "--max-entries", "10000", "--arena-bytes", "8M", "--listen",
                                 "127.0.0.1:" + std::to_string(port), "--no-metrics"},
        port);
    if (!serve->wait_ready()) throw std::runtime_error("serve did not start: " + serve->log());
  }
  ~RecursiveServe() {
    serve.reset();
    dnsarena::cache::Segment::remove(segment);
  }
};

}  // namespace

TEST_CASE("serve with recursion answers every hierarchy name as Unbound does, then from its cache",
          "[hierarchy][unbound][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  REQUIRE(dnsarena::bench::unbound_installed());
  dnsarena::bench::DnsHierarchy h;
  dnsarena::bench::UnboundProcess unbound({.dir = h.dir(), .tag = "serve", .threads = 1, .root_hints = h.root_hints(),
                                           .server_lines = {"qname-minimisation: yes"}});
  RecursiveServe serve(h, 1);
  std::vector<AnswerSet> first;
  for (const auto& n : kHierarchyNames) {
    const AnswerSet ours = dnsarena::test::ask_resolver(serve.port, n.name, n.qtype);
    const AnswerSet theirs = dnsarena::test::ask_resolver(unbound.port(), n.name, n.qtype);
    INFO(n.name << " type " << n.qtype << "\nours:    " << ours.text() << "unbound: " << theirs.text());
    CHECK(ours == theirs);
    CHECK(ours.rcode == n.rcode);  // www.lame.com and www.silent.com too: one good server is enough
    first.push_back(ours);
  }
  // Every answer (NXDOMAIN and the failure too) is held: the second pass asks no authoritative.
  const std::uint64_t before = h.authoritative_queries();
  for (std::size_t i = 0; i < kHierarchyNames.size(); ++i) {
    const auto& n = kHierarchyNames[i];
    INFO(n.name << " type " << n.qtype);
    CHECK(dnsarena::test::ask_resolver(serve.port, n.name, n.qtype) == first[i]);
  }
  CHECK(h.authoritative_queries() == before);
}

TEST_CASE("two serve workers cold-filling the same names ask the authoritatives no more than one worker does",
          "[hierarchy][unbound][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  REQUIRE(dnsarena::bench::unbound_installed());
  dnsarena::bench::DnsHierarchy h;
  // Each name asked from four client sockets at once, so both workers (SO_REUSEPORT picks
  // by source port) get it; the answers must match the single-client reference.
  auto fill = [&](std::uint16_t port) {
    std::vector<AnswerSet> seen;
    for (const auto& n : kHierarchyNames) {
      std::vector<std::thread> clients;
      std::vector<AnswerSet> got(4);
      for (int c = 0; c < 4; ++c)
        clients.emplace_back([&, c] { got[c] = dnsarena::test::ask_resolver(port, n.name, n.qtype); });
      for (auto& t : clients) t.join();
      for (const AnswerSet& g : got) {
        INFO(n.name << " type " << n.qtype << "\n" << g.text() << "vs\n" << got[0].text());
        CHECK(g == got[0]);
        CHECK(g.rcode == n.rcode);
      }
      seen.push_back(got[0]);
    }
    return seen;
  };
  // Each serve starts on a fresh segment: a cold cache, no cut known. What is compared is
  // the questions asked: the knotds' count less the attempts serve timed out and asked
  // again (on a loaded machine a knotd can answer later than the attempt timeout; the
  // silent server's timeouts are not in the knotds' count to begin with).
  auto questions = [&](unsigned workers) {
    const std::uint64_t before = h.authoritative_queries();
    const std::uint64_t silent_before = h.silent_queries();
    RecursiveServe serve(h, workers);
    fill(serve.port);
    const std::uint64_t timeouts = dnsarena::test::serve_stats(serve.segment)["total"].value("upstream_timeouts", 0ull);
    const std::uint64_t silent = h.silent_queries() - silent_before;
    const std::uint64_t knotd_timeouts = timeouts > silent ? timeouts - silent : 0;
    if (knotd_timeouts) WARN(workers << " worker(s): " << knotd_timeouts << " knotd attempts timed out and were asked again");
    return h.authoritative_queries() - before - knotd_timeouts;
  };
  const std::uint64_t one = questions(1);
  const std::uint64_t ours = questions(2);
  const std::uint64_t before = h.authoritative_queries();
  {
    dnsarena::bench::UnboundProcess unbound({.dir = h.dir(), .tag = "two", .threads = 2, .root_hints = h.root_hints(),
                                             .server_lines = {"qname-minimisation: yes"}});
    fill(unbound.port());
  }
  const std::uint64_t unbound = h.authoritative_queries() - before;
  const double names = static_cast<double>(kHierarchyNames.size());
  WARN("cold fill of " << kHierarchyNames.size() << " names by 4 clients each: authoritative queries per name: serve "
                       "1 worker "
                       << one / names << ", 2 workers " << ours / names << " (ratio "
                       << static_cast<double>(ours) / static_cast<double>(one) << "), Unbound (2 threads) "
                       << unbound / names);
  CHECK(one > 0);
  // A cut one worker learned serves the other, and a question one resolves the other waits
  // for: the second worker adds (almost) nothing.
  CHECK(static_cast<double>(ours) <= 1.05 * static_cast<double>(one));
}

TEST_CASE("names of a zone not yet known asked all at once share the queries to the root and the TLD",
          "[hierarchy][unbound][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  REQUIRE(dnsarena::bench::unbound_installed());
  dnsarena::bench::DnsHierarchy h;
  // 48 names of one zone at once on a cold cache: every resolution needs the same cuts
  // (the root's com. referral, com.'s example.com. referral) before its own query. One
  // worker asks each of those once and the others take its reply; asked separately it
  // would be one per resolution in flight (up to 2 x 48 more).
  const std::vector<std::string> names = numbered_names("burst", 48, "example.com.");
  auto burst = [&](std::uint16_t port) {
    const std::uint64_t before = h.authoritative_queries();
    const std::vector<int> rcodes = ask_at_once(port, names);
    for (std::size_t i = 0; i < names.size(); ++i) {
      INFO(names[i]);
      CHECK(rcodes[i] == 3);
    }
    return h.authoritative_queries() - before;
  };
  std::uint64_t ours = 0, unbound = 0;
  {
    RecursiveServe serve(h, 1);
    ours = burst(serve.port);
  }
  {
    dnsarena::bench::UnboundProcess u({.dir = h.dir(), .tag = "burst", .threads = 1, .root_hints = h.root_hints(),
                                       .server_lines = {"qname-minimisation: yes"}});
    unbound = burst(u.port());
  }
  WARN(names.size() << " names of example.com. at once on a cold cache: authoritative queries serve " << ours
                    << ", Unbound " << unbound);
  // Priming, com. from the root, example.com. from com. (minimised: a step or two each),
  // then one per name.
  CHECK(ours <= names.size() + 6);
  CHECK(ours <= unbound);
}

TEST_CASE("names asked all at once while the first root server is silent wait on one query to it",
          "[hierarchy][serve][infra]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  dnsarena::bench::DnsHierarchy h;
  // Root hints whose first server is a socket nobody reads (silent, not refusing), the
  // second the hierarchy's root.
  const std::string silent_address = "127.53.9.9";
  const int silent = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(53);
  ::inet_pton(AF_INET, silent_address.c_str(), &sa.sin_addr);
  REQUIRE(::bind(silent, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0);
  const std::string hints = h.dir() + "/silent-first.hints";
  std::ofstream(hints) << ".  3600000 NS a.root-servers.net.\n.  3600000 NS b.root-servers.net.\n"
                       << "a.root-servers.net. 3600000 A " << silent_address << "\n"
                       << "b.root-servers.net. 3600000 A " << h.address(2) << "\n";
  RecursiveServe serve(hints, 1);
  // On a cold cache, 24 names at once: each resolution starts by asking the first root
  // server (ranked first while nothing is known of it) the same question. Sent once, it
  // times out once, and every resolution moves on to the second server together.
  const std::vector<std::string> names = numbered_names("b", 24, "example.com.");
  const std::vector<int> rcodes = ask_at_once(serve.port, names);
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    CHECK(rcodes[i] == 3);
  }
  std::uint64_t received = 0;
  std::uint8_t buf[512];
  while (::recv(silent, buf, sizeof buf, MSG_DONTWAIT) >= 0) ++received;
  ::close(silent);
  WARN("24 names at once with a silent first root server: " << received << " datagrams to it");
  CHECK(received >= 1);  // it was asked: the followers took the failure path
  CHECK(received <= 2);  // its one query (and at most one retry of a timed-out server)
}

TEST_CASE("a flood of names under one zone sends its server no more than max_queries_per_server a second",
          "[hierarchy][serve][infra]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  dnsarena::bench::DnsHierarchy h;
  // Two workers: the bound is the host's, whichever worker a client's query reaches.
  RecursiveServe serve(h, 2, "", "  max_queries_per_server: 10\n");
  REQUIRE(dnsarena::test::ask_resolver(serve.port, "www.example.com.", 1).rcode == 0);  // the cut is known
  // Both of example.com.'s servers (ns1.example.com, ns.hoster.org) are host .6.
  const std::uint64_t before = h.authoritative_queries(6);
  const auto t0 = std::chrono::system_clock::now();
  const std::vector<int> rcodes = ask_at_once(serve.port, numbered_names("f", 80, "example.com."));
  const auto t1 = std::chrono::system_clock::now();
  const std::uint64_t sent = h.authoritative_queries(6) - before;
  // The wall-clock seconds the flood touched: each is a window of at most 10 queries.
  const auto second = [](std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  };
  const auto windows = static_cast<std::uint64_t>(second(t1) - second(t0) + 1);
  std::size_t nxdomain = 0, servfail = 0;
  for (int rcode : rcodes) {
    nxdomain += rcode == 3;
    servfail += rcode == 2;
  }
  const nlohmann::json total = dnsarena::test::serve_stats(serve.segment)["total"];
  WARN("80 names of example.com. at once, max_queries_per_server 10: " << sent << " queries to its server over "
                                                                       << windows << " s, " << nxdomain
                                                                       << " NXDOMAIN, " << servfail << " SERVFAIL, "
                                                                       << total.value("authority_rate_limited", 0)
                                                                       << " held back");
  CHECK(sent <= 10 * windows);
  CHECK(nxdomain >= 1);
  CHECK(nxdomain + servfail == rcodes.size());  // past the bound: SERVFAIL at once, no hang
  CHECK(total.value("authority_rate_limited", 0) >= 1);
}

TEST_CASE("with recursion on a forward zone is still forwarded and the other names resolved", "[hierarchy][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  dnsarena::bench::DnsHierarchy h;
  dnsarena::test::TestUpstream upstream;  // serves names under test.
  RecursiveServe serve(h, 1,
                       "forward_zones: [{zone: test, upstreams: [127.0.0.1:" + std::to_string(upstream.port()) + "]}]\n");
  const std::uint64_t authoritative = h.authoritative_queries();
  const dnsarena::test::DnsReply forwarded =
      dnsarena::test::udp_exchange(serve.port, dnsarena::test::make_query(7, "a.test", 1));
  REQUIRE(forwarded.answered);
  CHECK(forwarded.rcode() == 0);
  CHECK(forwarded.count(0, 1) >= 1);
  CHECK(upstream.queries() >= 1);
  CHECK(h.authoritative_queries() == authoritative);  // nothing of test. went to the hierarchy
  const std::uint64_t forwarded_queries = upstream.queries();
  const AnswerSet resolved = dnsarena::test::ask_resolver(serve.port, "www.example.com.", 1);
  CHECK(resolved.rcode == 0);
  CHECK_FALSE(resolved.records.empty());
  CHECK(h.authoritative_queries() > authoritative);
  CHECK(upstream.queries() == forwarded_queries);  // and nothing of the rest to the forwarder
}

TEST_CASE("figures: authoritative queries and CPU per cold resolution against Unbound and Knot Resolver",
          "[hierarchy][unbound][kresd][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  REQUIRE(dnsarena::bench::unbound_installed());
  dnsarena::bench::DnsHierarchy h;
  // 1,000 names never asked before, under three zones of two TLDs: after the first of each
  // zone, one query each (the NXDOMAIN from the leaf's server), for both resolvers.
  const char* zones[] = {"example.com.", "example.org.", "hoster.org."};
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) names.push_back("cold" + std::to_string(i) + "." + zones[i % 3]);
  struct Run {
    std::uint64_t queries = 0;
    double cpu = 0;
  };
  auto run = [&](std::uint16_t port, pid_t pid) {
    Run r;
    const std::uint64_t before = h.authoritative_queries();
    const double cpu_before = cpu_ms(pid);
    for (const std::string& n : names) {
      INFO(n);
      CHECK(dnsarena::test::ask_resolver(port, n, 1).rcode == 3);
    }
    r.cpu = cpu_ms(pid) - cpu_before;
    r.queries = h.authoritative_queries() - before;
    return r;
  };
  Run ours, unbound, kresd;
  {
    RecursiveServe serve(h, 1);
    std::vector<pid_t> workers;
    for (int i = 0; i < 500 && (workers = serve.serve->children()).empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(workers.size() == 1);
    ours = run(serve.port, workers[0]);
  }
  {
    dnsarena::bench::UnboundProcess u({.dir = h.dir(), .tag = "figures", .threads = 1, .root_hints = h.root_hints(),
                                       .server_lines = {"qname-minimisation: yes"}});
    unbound = run(u.port(), u.pid());
  }
  {
    dnsarena::test::HintsKresd k(h);  // QNAME minimisation on by default, as in Knot Resolver 5
    kresd = run(k.port(), k.pid());
  }
  WARN("1,000 cold resolutions (NXDOMAIN under 3 zones): authoritative queries: serve " << ours.queries << ", Unbound "
       << unbound.queries << ", Knot Resolver " << kresd.queries << "; CPU ms (/proc, 10 ms ticks): serve worker "
       << ours.cpu << ", Unbound " << unbound.cpu << ", Knot Resolver " << kresd.cpu);
  CHECK(ours.queries <= unbound.queries);
}

TEST_CASE("with every authoritative silent a client gets the stale answer at its response timer", "[hierarchy][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  std::optional<dnsarena::bench::DnsHierarchy> h(std::in_place);
  const std::string config_extra = "ttl:\n  ceiling: 1\nstale:\n  client_timeout_ms: 300\nquery_timeout_ms: 5000\n";
  // Each silent server costs 2 s: the resolution cannot fail before the client's 300 ms.
  RecursiveServe serve(*h, 1, config_extra, "  attempt_timeout_ms: 2000\n");
  const auto fresh = dnsarena::test::udp_exchange(serve.port, dnsarena::test::make_query(1, "www.example.com", 1));
  REQUIRE(fresh.answered);
  REQUIRE(fresh.rcode() == 0);
  const std::uint32_t answered_at = dnsarena::cache::wall_clock_now();
  // The hierarchy goes away; its addresses stay bound by sockets nobody reads (silent,
  // not refusing: a refusal would end the resolution at once).
  std::vector<std::string> addresses;
  for (unsigned host = 2; host <= 8; ++host) addresses.push_back(h->address(host));
  h.reset();
  std::vector<int> silent;
  for (const std::string& a : addresses) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(53);
    ::inet_pton(AF_INET, a.c_str(), &sa.sin_addr);
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0);
    silent.push_back(fd);
  }
  // The answer (TTL capped at 1 s) and the cuts (the same) expire.
  while (dnsarena::cache::wall_clock_now() <= answered_at + 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto t0 = std::chrono::steady_clock::now();
  const auto stale = dnsarena::test::udp_exchange(serve.port, dnsarena::test::make_query(2, "www.example.com", 1),
                                                  std::chrono::seconds(8));
  const auto took = std::chrono::steady_clock::now() - t0;
  for (int fd : silent) ::close(fd);
  REQUIRE(stale.answered);
  CHECK(stale.rcode() == 0);
  CHECK(stale.ede == 3);  // Stale Answer
  CHECK(stale.count(0, 1) == fresh.count(0, 1));
  // At the response timer (300 ms), not at the end of the resolution (query_timeout_ms 5 s).
  CHECK(took < std::chrono::milliseconds(3000));
}

TEST_CASE("a silent server one worker timed out is not asked by the other worker, nor after a kill -9",
          "[hierarchy][serve][infra]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  dnsarena::bench::DnsHierarchy h;
  RecursiveServe serve(h, 2);
  std::vector<pid_t> workers;
  for (int i = 0; i < 500 && (workers = serve.serve->children()).size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(workers.size() == 2);
  // silent.com lists its silent server first: the first resolution asks it and times out.
  REQUIRE(dnsarena::test::ask_resolver(serve.port, "www.silent.com.", 1).rcode == 0);
  const std::uint64_t timed_out = h.silent_queries();
  REQUIRE(timed_out >= 1);
  // More names of the zone, each from a fresh client socket (SO_REUSEPORT spreads them over
  // both workers): none goes to the silent server.
  auto ask_names = [&](const std::string& prefix) {
    for (int i = 0; i < 12; ++i) {
      const std::string name = prefix + std::to_string(i) + ".silent.com.";
      INFO(name);
      CHECK(dnsarena::test::ask_resolver(serve.port, name, 1).rcode == 3);
    }
  };
  ask_names("n");
  CHECK(h.silent_queries() == timed_out);
  // A worker killed -9 and forked again finds what its predecessor learned.
  ::kill(workers[0], SIGKILL);
  std::vector<pid_t> now;
  for (int i = 0; i < 500; ++i) {
    now = serve.serve->children();
    if (now.size() == 2 && std::find(now.begin(), now.end(), workers[0]) == now.end()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(now.size() == 2);
  REQUIRE(std::find(now.begin(), now.end(), workers[0]) == now.end());
  ask_names("r");
  CHECK(h.silent_queries() == timed_out);
  // `dnsarena stats` shows the table: the silent server backs off (kBackoffInitialMs, 5 s,
  // from its timeout above), published within a second.
  std::string text;
  const std::string wanted = "backing off 1;";
  for (int i = 0; i < 150 && text.find(wanted) == std::string::npos; ++i) {
    text = dnsarena::test::run_command(dnsarena::test::dnsarena_binary() + " stats --segment " + serve.segment +
                                       " --interval 0 2>&1");
    if (text.find(wanted) == std::string::npos) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(text);
  CHECK(text.find("infra table:") != std::string::npos);
  CHECK(text.find(wanted) != std::string::npos);
}

TEST_CASE("a server that answers FORMERR to EDNS is asked without it, and later names go without EDNS at once",
          "[serve][infra]") {
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the server binds port 53: run as root");
  dnsarena::bench::EdnsIntolerantServer intolerant;
  char dir[] = "/tmp/dnsarena-intolerant-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string hints = intolerant.write_root_hints(dir);
  RecursiveServe serve(hints, 1);
  // Priming and the name: each first EDNS query is answered FORMERR and asked again without.
  const AnswerSet first = dnsarena::test::ask_resolver(serve.port, "www.example.", 1);
  INFO(first.text());
  CHECK(first.rcode == 0);
  REQUIRE(first.records.size() == 1);
  CHECK(first.records.begin()->ends_with("c000024d"));  // 192.0.2.77
  CHECK(intolerant.edns_queries() == 1);  // the first query of all; the table remembers
  const std::uint64_t plain = intolerant.plain_queries();
  // A second name of another zone: no EDNS query at all.
  CHECK(dnsarena::test::ask_resolver(serve.port, "www.other.", 1).rcode == 0);
  CHECK(intolerant.edns_queries() == 1);
  CHECK(intolerant.plain_queries() > plain);
  // An answer over 512 bytes without EDNS: TC, then the whole set over TCP.
  const AnswerSet big = dnsarena::test::ask_resolver(serve.port, "big.example.", 16);
  INFO(big.text());
  CHECK(big.rcode == 0);
  CHECK(big.records.size() == 4);
  CHECK(intolerant.tcp_queries() >= 1);
  CHECK(intolerant.edns_queries() == 1);
  // `dnsarena stats --json` shows the table (published once a second by the supervisor).
  nlohmann::json infra = nlohmann::json::object();
  for (int i = 0; i < 300 && infra.value("edns_broken", 0) == 0; ++i) {
    infra = dnsarena::test::serve_stats(serve.segment).value("infra", nlohmann::json::object());
    if (infra.value("edns_broken", 0) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(infra.dump());
  CHECK(infra.value("edns_broken", 0) == 1);
  CHECK(infra.value("hosts", 0) == 1);
  CHECK(infra.value("capacity", 0) == dnsarena::workers::InfraTable::kDefaultBuckets * dnsarena::workers::InfraTable::kWays);
  CHECK(infra.value("evictions", 1) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("with recursion.local_root every hierarchy name is answered as without it and no root server is asked",
          "[hierarchy][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  dnsarena::bench::DnsHierarchy h;
  auto root_queries = [&] { return h.authoritative_queries(2) + h.authoritative_queries(3); };
  const std::uint64_t roots_at_start = root_queries(), all_at_start = h.authoritative_queries();  // readiness checks
  std::vector<AnswerSet> reference;
  {
    RecursiveServe serve(h, 1);
    for (const auto& n : kHierarchyNames) reference.push_back(dnsarena::test::ask_resolver(serve.port, n.name, n.qtype));
  }
  REQUIRE(root_queries() > roots_at_start);  // without the local root, priming and referrals went to the roots
  // Each serve starts on a fresh segment: cold, nothing primed.
  const std::uint64_t roots_before = root_queries();
  const std::uint64_t all_before = h.authoritative_queries();
  {
    RecursiveServe serve(h, 1, "", "  local_root: " + h.root_zone() + "\n");
    for (std::size_t i = 0; i < kHierarchyNames.size(); ++i) {
      const auto& n = kHierarchyNames[i];
      const AnswerSet ours = dnsarena::test::ask_resolver(serve.port, n.name, n.qtype);
      INFO(n.name << " type " << n.qtype << "\nlocal root: " << ours.text() << "root servers: " << reference[i].text());
      CHECK(ours == reference[i]);
      CHECK(ours.rcode == n.rcode);
    }
  }
  CHECK(root_queries() == roots_before);
  CHECK(h.authoritative_queries() > all_before);  // the TLDs and leaves were asked
  WARN(kHierarchyNames.size() << " names, cold: root server queries " << roots_before - roots_at_start
       << " without the local root, " << root_queries() - roots_before << " with it; authoritative queries in all "
       << all_before - all_at_start << " without, " << h.authoritative_queries() - all_before << " with");

  // A copy past its SOA expire (the file's time + 86400 s here) is not used: back to the roots.
  const std::string old_copy = h.dir() + "/expired-root.zone";
  std::filesystem::copy_file(h.root_zone(), old_copy);
  const std::filesystem::file_time_type written = std::filesystem::last_write_time(old_copy);
  std::filesystem::last_write_time(old_copy, written - std::chrono::hours(48));
  {
    RecursiveServe serve(h, 1, "", "  local_root: " + old_copy + "\n");
    const AnswerSet ours = dnsarena::test::ask_resolver(serve.port, "www.example.com.", 1);
    CHECK(ours == reference[0]);
    CHECK(dnsarena::test::occurrences(serve.serve->log(), "expired at Unix time") == 1);
  }
  CHECK(root_queries() > roots_before);
}

TEST_CASE("a reload whose local root file is broken keeps the running copy and serve does not start with one",
          "[hierarchy][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  dnsarena::bench::DnsHierarchy h;
  const std::string copy = h.dir() + "/local-root.zone";
  std::filesystem::copy_file(h.root_zone(), copy);
  auto root_queries = [&] { return h.authoritative_queries(2) + h.authoritative_queries(3); };
  const std::uint64_t roots_before = root_queries();
  {
    RecursiveServe serve(h, 1, "", "  local_root: " + copy + "\n");
    CHECK(dnsarena::test::ask_resolver(serve.port, "www.example.com.", 1).rcode == 0);
    std::ofstream(copy, std::ios::trunc) << "com. 3600 IN SOA ns.invalid. hostmaster.invalid. 1 3600 600 86400 300\n";
    REQUIRE(::kill(serve.serve->pid(), SIGHUP) == 0);
    for (int i = 0; i < 500 && dnsarena::test::occurrences(serve.serve->log(), "keeping the running config") == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(dnsarena::test::occurrences(serve.serve->log(), "no SOA record at the root") == 1);
    CHECK(dnsarena::test::ask_resolver(serve.port, "www.example.org.", 1).rcode == 0);
  }
  CHECK(root_queries() == roots_before);
  // The same file at start: a configuration error naming the key and the file.
  const std::string config = dnsarena::test::write_config("recursion:\n  enabled: true\n  root_hints: " + h.root_hints() +
                                                          "\n  local_root: " + copy + "\n");
  const std::uint16_t port = dnsarena::test::free_port();
  dnsarena::test::ServeProcess bad({"-c", config, "--segment", dnsarena::test::unique_segment("local-root-bad"),
                                    "--listen", "127.0.0.1:" + std::to_string(port), "--no-metrics"},
                                   port);
  REQUIRE(bad.wait_exit(std::chrono::seconds(10)));
  CHECK(bad.stop() != 0);
  CHECK(dnsarena::test::occurrences(bad.log(), "recursion.local_root") >= 1);
  CHECK(dnsarena::test::occurrences(bad.log(), "no SOA record at the root") == 1);
}

// The answer's first A record's TTL (-1: none).
static long first_a_ttl(const dnsarena::test::DnsReply& r) {
  for (const auto& rec : r.records)
    if (rec.section == 0 && rec.type == 1) return static_cast<long>(rec.ttl);
  return -1;
}

TEST_CASE("with recursion a hit near the end of its TTL is refreshed in the background and so is a stale-first answer",
          "[hierarchy][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  dnsarena::bench::DnsHierarchy h;
  using dnsarena::cache::wall_clock_now;
  using dnsarena::test::make_query;
  using dnsarena::test::udp_exchange;
  {
    // Prefetch: entries live 4 s; a hit in their last half (2 s) refreshes them.
    RecursiveServe serve(h, 1, "ttl:\n  ceiling: 4\nprefetch:\n  percent: 50\n");
    REQUIRE(udp_exchange(serve.port, make_query(1, "www.example.com", 1)).rcode() == 0);
    const std::uint32_t answered_at = wall_clock_now();
    while (wall_clock_now() < answered_at + 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t before = h.authoritative_queries();
    const auto hit = udp_exchange(serve.port, make_query(2, "www.example.com", 1));
    REQUIRE(hit.answered);
    CHECK(hit.rcode() == 0);
    CHECK(first_a_ttl(hit) <= 2);  // the entry as cached, answered at once
    // The refresh reaches the example.com server, and its answer replaces the entry.
    CHECK(dnsarena::test::eventually([&] { return h.authoritative_queries() > before; }));
    CHECK(dnsarena::test::eventually([&] {
      return first_a_ttl(udp_exchange(serve.port, make_query(3, "www.example.com", 1))) >= 3;
    }));
    CHECK(wall_clock_now() < answered_at + 4);  // before the old entry expired: the refresh, not a miss
    CHECK(dnsarena::test::serve_stats(serve.segment)["total"]["prefetches"].get<std::uint64_t>() >= 1);
  }
  {
    // Stale first: an expired entry is answered stale at once and refreshed behind it.
    RecursiveServe serve(h, 1, "ttl:\n  ceiling: 1\nstale:\n  answer_first: true\n");
    REQUIRE(udp_exchange(serve.port, make_query(1, "www.example.org", 1)).rcode() == 0);
    const std::uint32_t answered_at = wall_clock_now();
    while (wall_clock_now() <= answered_at + 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t before = h.authoritative_queries();
    const auto stale = udp_exchange(serve.port, make_query(2, "www.example.org", 1));
    REQUIRE(stale.answered);
    CHECK(stale.rcode() == 0);
    CHECK(stale.ede == 3);  // Stale Answer
    CHECK(dnsarena::test::eventually([&] { return h.authoritative_queries() > before; }));
    // The refreshed entry (it lives 1 s: asked until one answer comes fresh).
    CHECK(dnsarena::test::eventually([&] {
      const auto r = udp_exchange(serve.port, make_query(3, "www.example.org", 1));
      return r.answered && r.rcode() == 0 && r.ede < 0;
    }));
  }
}

TEST_CASE("an authoritative slower than the first attempt's timeout is waited for longer and then by its measured RTT",
          "[hierarchy][serve][infra]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  // slow.com.'s only server answers every query 600 ms late; an attempt waits 400 ms for
  // a server not measured yet (recursion.attempt_timeout_ms, the default).
  dnsarena::bench::DnsHierarchy h({.slow_delay = std::chrono::milliseconds(600)});
  RecursiveServe serve(h, 1);
  const std::vector<std::pair<std::string, unsigned>> names = {
      {"www.slow.com", 0}, {"nx.slow.com", 3}, {"nx2.slow.com", 3}, {"nx3.slow.com", 3}, {"nx4.slow.com", 3}};
  for (const auto& [name, rcode] : names) {
    INFO(name);
    const auto r = dnsarena::test::udp_exchange(serve.port, dnsarena::test::make_query(1, name, 1),
                                                std::chrono::seconds(8));
    REQUIRE(r.answered);
    CHECK(r.rcode() == rcode);
  }
  // One attempt timed out (the first, before the server was measured); every later one
  // waited the server's RTT, measured by the second.
  const nlohmann::json total = dnsarena::test::serve_stats(serve.segment)["total"];
  INFO(total.dump());
  CHECK(total["upstream_timeouts"].get<std::uint64_t>() <= 1);
}
