// SPDX-License-Identifier: GPL-3.0-or-later
// DNS64 (workers/dns64.hpp) through `dnsarena serve` in front of knotd, beside Unbound's
// dns64 module (module-config "dns64 iterator", dns64-prefix 64:ff9b::/96) forwarding to
// the same knotd: for names with only A records, A and AAAA, AAAA inside the exclude
// range, NXDOMAIN, a CNAME to an A-only name, two A records, and a PTR under the prefix,
// the two answer with the same rcode and answer set. A DNS64 client (127.0.0.1) and one
// without (127.0.0.2) asking the same AAAA get different answers and neither poisons the
// other's cache entry; a DO+CD client gets the real answer (RFC 6147 5.5).
//
// "[perf]" (hidden): the worker's CPU per synthesized hit against per plain AAAA hit in
// the same run (its /proc schedstat on-CPU time over blocks of queries sent 32 at a time, alternated), and
// the arena bytes of one synthesized entry (the cache's bytes in use before and after
// the one insert). Printed; docs/operator-guide.md#dns64 has the figures.
#include <catch2/catch.hpp>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "bench/lab/unbound_process.hpp"
#include "tests/interop/knot_server.hpp"
#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;
using dnsarena::interop::KnotServer;
using dnsarena::interop::ZoneFile;

namespace {

const ZoneFile kZone{"d64.example.",
                     "$ORIGIN d64.example.\n$TTL 300\n"
                     "@ SOA ns hostmaster 1 3600 600 86400 120\n@ NS ns\nns A 11.22.33.53\n"
                     "only-a A 11.22.33.1\nboth A 11.22.33.2\nboth AAAA 2001:db8::2\n"
                     "mapped A 11.22.33.3\nmapped AAAA ::ffff:11.22.33.3\n"
                     "two-a A 11.22.33.4\ntwo-a A 11.22.33.5\nalias CNAME only-a\n"};
const ZoneFile kReverse{"33.22.11.in-addr.arpa.",
                        "$ORIGIN 33.22.11.in-addr.arpa.\n$TTL 300\n"
                        "@ SOA ns.d64.example. hostmaster.d64.example. 1 3600 600 86400 120\n"
                        "@ NS ns.d64.example.\n1 PTR only-a.d64.example.\n"};
// 64:ff9b::b16:2101 (11.22.33.1 under the well-known prefix) as its ip6.arpa name.
constexpr const char* kPtrName = "1.0.1.2.6.1.b.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.b.9.f.f.4.6.0.0.ip6.arpa";

constexpr std::uint16_t kA = 1, kAaaa = 28, kPtr = 12;

// "rcode; owner type rdata-hex;..." of the answer section, sorted: what must agree.
std::string answer_set(const DnsReply& r) {
  if (!r.answered) return "no answer";
  std::vector<std::string> rows;
  std::size_t k = 0;
  for (const ReplyRecord& rec : r.records)
    if (rec.section == 0) rows.push_back(rec.owner + " " + (k < r.answers.size() ? r.answers[k++] : "?"));
  std::sort(rows.begin(), rows.end());
  std::string s = "rcode " + std::to_string(r.rcode()) + ";";
  for (const std::string& row : rows) s += " " + row + ";";
  return s;
}

// The rdata hex of the AAAA record for 64:ff9b::<ipv4>.
std::string synthesized(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  char hex[64];
  std::snprintf(hex, sizeof hex, "28 0064ff9b0000000000000000%02x%02x%02x%02x", a, b, c, d);
  return hex;
}

std::uint32_t min_answer_ttl(const DnsReply& r) {
  std::uint32_t ttl = UINT32_MAX;
  for (const ReplyRecord& rec : r.records)
    if (rec.section == 0) ttl = std::min(ttl, rec.ttl);
  return ttl;
}

}  // namespace

TEST_CASE("dns64: the same answer sets as Unbound's dns64 module on the same knotd zone", "[dns64]") {
  KnotServer knot({kZone, kReverse});
  REQUIRE(knot.wait_ready());
  Service s({"-c", write_config("dns64: {}\n"), "--upstream", "127.0.0.1:" + std::to_string(knot.port())}, 1);
  dnsarena::bench::UnboundSpec spec;
  spec.dir = knot.dir();
  spec.tag = "dns64";
  spec.threads = 1;
  spec.forward_addrs = {"127.0.0.1@" + std::to_string(knot.port())};
  spec.server_lines = {"module-config: \"dns64 iterator\"", "dns64-prefix: 64:ff9b::/96"};
  dnsarena::bench::UnboundProcess unbound(spec);
  std::uint16_t id = 1;
  auto both = [&](const std::string& name, std::uint16_t qtype) {
    INFO(name << " type " << qtype);
    const DnsReply ours = udp_exchange(s.port, make_query(id++, name, qtype));
    const DnsReply theirs = udp_exchange(unbound.port(), make_query(id++, name, qtype));
    REQUIRE(ours.answered);
    CHECK(answer_set(ours) == answer_set(theirs));
    return ours;
  };
  // Twice each: the miss (the steps through the upstream), then the hit.
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    const DnsReply only_a = both("only-a.d64.example", kAaaa);
    CHECK(only_a.answers == std::vector<std::string>{synthesized(11, 22, 33, 1)});
    CHECK(min_answer_ttl(only_a) <= 120);  // min(A TTL 300, the NODATA's SOA MINIMUM 120)
    CHECK(both("both.d64.example", kAaaa).answers == std::vector<std::string>{"28 20010db8000000000000000000000002"});
    CHECK(both("nothing.d64.example", kAaaa).rcode() == 3);
    const DnsReply alias = both("alias.d64.example", kAaaa);
    CHECK(alias.count(0, 5) == 1);
    CHECK(alias.count(0, kAaaa) == 1);
    CHECK(both("two-a.d64.example", kAaaa).count(0, kAaaa) == 2);
    CHECK(both("only-a.d64.example", kA).count(0, kA) == 1);  // A queries as they are
    const DnsReply ptr = both(kPtrName, kPtr);
    CHECK(ptr.count(0, kPtr) == 1);
    // AAAA only inside the exclude range (::ffff:0:0/96, RFC 6147 5.1.4): synthesized from
    // the A record. (Unbound 1.17 has no address exclusion; Knot Resolver's dns64 module
    // excludes ::ffff/96 by default, as serve does.)
    const DnsReply mapped = udp_exchange(s.port, make_query(id++, "mapped.d64.example", kAaaa));
    CHECK(mapped.answers == std::vector<std::string>{synthesized(11, 22, 33, 3)});
    const DnsReply mapped_unbound = udp_exchange(unbound.port(), make_query(id++, "mapped.d64.example", kAaaa));
    CHECK(mapped_unbound.answers == std::vector<std::string>{"28 00000000000000000000ffff0b162103"});
  }
}

TEST_CASE("dns64: a DNS64 client and another never share an answer, DO+CD gets the real one", "[dns64]") {
  KnotServer knot({kZone, kReverse});
  REQUIRE(knot.wait_ready());
  Service s({"-c", write_config("dns64:\n  clients: [127.0.0.1/32]\n"), "--upstream",
             "127.0.0.1:" + std::to_string(knot.port())},
            1);
  std::uint16_t id = 1;
  auto ask = [&](const char* from, const std::string& name, std::uint16_t qtype) {
    const DnsReply r = udp_exchange(s.port, make_query(id++, name, qtype), std::chrono::milliseconds(2000), from);
    REQUIRE(r.answered);
    return r;
  };
  const std::vector<std::string> want{synthesized(11, 22, 33, 1)};
  // The other client first (its NODATA cached), then the DNS64 client, then each again.
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    const DnsReply plain = ask("127.0.0.2", "only-a.d64.example", kAaaa);
    CHECK(plain.rcode() == 0);
    CHECK(plain.answers.empty());
    CHECK(plain.count(1, 6) == 1);  // the NODATA's SOA
    CHECK(ask("127.0.0.1", "only-a.d64.example", kAaaa).answers == want);
  }
  // The DNS64 client first on another name, then the other.
  CHECK(ask("127.0.0.1", "alias.d64.example", kAaaa).count(0, kAaaa) == 1);
  CHECK(ask("127.0.0.2", "alias.d64.example", kAaaa).count(0, kAaaa) == 0);
  CHECK(ask("127.0.0.1", "alias.d64.example", kAaaa).count(0, kAaaa) == 1);
  // PTR under the prefix: the other client gets what the upstream has for the ip6.arpa
  // name (knotd: REFUSED, not its zone).
  CHECK(ask("127.0.0.1", kPtrName, kPtr).count(0, kPtr) == 1);
  CHECK(ask("127.0.0.2", kPtrName, kPtr).count(0, kPtr) == 0);
  // DO+CD (RFC 6147 5.5): the real answer, NODATA; DO alone is synthesized.
  std::vector<std::uint8_t> do_cd = make_query(id++, "only-a.d64.example", kAaaa, 1232, true);
  do_cd[3] |= 0x10;  // CD
  const DnsReply validating = udp_exchange(s.port, do_cd);
  REQUIRE(validating.answered);
  CHECK(validating.answers.empty());
  CHECK(ask("127.0.0.1", "only-a.d64.example", kAaaa).answers == want);
  const DnsReply do_only = udp_exchange(s.port, make_query(id++, "only-a.d64.example", kAaaa, 1232, true));
  CHECK(do_only.answers == want);
  CHECK_FALSE(do_only.ad());
  // Over TCP the same.
  CHECK(tcp_exchange(s.port, make_query(id++, "two-a.d64.example", kAaaa)).count(0, kAaaa) == 2);
  // A name with AAAA: the real answer, also kept under the DNS64 client's key.
  CHECK(ask("127.0.0.1", "both.d64.example", kAaaa).answers ==
        std::vector<std::string>{"28 20010db8000000000000000000000002"});
  // The entries by key, as `dnsarena dump` lists them: one of each kind per name.
  int status = 0;
  const std::string dump = run_command(dnsarena_binary() + " dump " + s.segment + " 2>&1", &status);
  REQUIRE(status == 0);
  INFO(dump);
  CHECK(occurrences(dump, "$ENTRY only-a.d64.example. AAAA flags=dns64 ") == 1);  // synthesized
  CHECK(occurrences(dump, "$ENTRY only-a.d64.example. AAAA flags=- ") == 1);      // the real NODATA
  CHECK(occurrences(dump, "$ENTRY only-a.d64.example. AAAA flags=do,dns64 ") == 1);  // DO alone: synthesized
  CHECK(occurrences(dump, "$ENTRY only-a.d64.example. AAAA flags=do ") == 1);  // ... from its real NODATA
  CHECK(occurrences(dump, "$ENTRY only-a.d64.example. AAAA flags=do,cd ") == 1);  // DO+CD: the real NODATA only
  CHECK(occurrences(dump, "$ENTRY both.d64.example. AAAA flags=dns64 ") == 1);    // the real answer's copy
  CHECK(occurrences(dump, "$ENTRY both.d64.example. AAAA flags=- ") == 1);
}

TEST_CASE("dns64: the upstream gone, a DNS64 client still gets synthesized records, stale", "[dns64]") {
  const ZoneFile brief{"d64.example.",
                       "$ORIGIN d64.example.\n$TTL 1\n@ SOA ns hostmaster 1 3600 600 86400 60\n@ NS ns\n"
                       "ns A 11.22.33.53\nonly-a A 11.22.33.1\n"};
  auto knot = std::make_unique<KnotServer>(std::vector<ZoneFile>{brief});
  REQUIRE(knot->wait_ready());
  Service s({"-c", write_config("dns64: {}\n"), "--upstream", "127.0.0.1:" + std::to_string(knot->port())}, 1);
  const std::vector<std::string> want{synthesized(11, 22, 33, 1)};
  const DnsReply fresh = udp_exchange(s.port, make_query(1, "only-a.d64.example", kAaaa));
  REQUIRE(fresh.answers == want);
  CHECK(min_answer_ttl(fresh) <= 1);
  knot.reset();  // nobody answers any more
  // The entries' one-second TTL is what passes here.
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  const DnsReply stale = udp_exchange(s.port, make_query(2, "only-a.d64.example", kAaaa), std::chrono::seconds(12));
  REQUIRE(stale.answered);
  CHECK(stale.rcode() == 0);
  CHECK(stale.answers == want);
  CHECK(min_answer_ttl(stale) == 30);  // stale.ttl_s
  // Not for a client without DNS64: its real answer, stale too, has no AAAA.
  CHECK(udp_exchange(s.port, make_query(3, "only-a.d64.example", kA), std::chrono::seconds(12)).count(0, kA) == 1);
}

TEST_CASE("dns64: many clients at once on two workers, and an answer too large for UDP", "[dns64]") {
  std::string text = kZone.text;
  for (int i = 1; i <= 100; ++i) text += "many A 11.22.34." + std::to_string(i) + "\n";
  KnotServer knot({{kZone.origin, text}, kReverse});
  REQUIRE(knot.wait_ready());
  Service s({"-c", write_config("dns64: {}\n"), "--upstream", "127.0.0.1:" + std::to_string(knot.port())}, 1);
  // 24 sockets (spread over both workers by their ports) ask each fresh name at once: the
  // first of each worker goes upstream, the others wait on it (or on the other worker's
  // query), every one gets the synthesized answer.
  std::vector<int> fds;
  for (int i = 0; i < 24; ++i) {
    fds.push_back(connected_udp_socket(s.port));
    ::fcntl(fds.back(), F_SETFL, ::fcntl(fds.back(), F_GETFL) & ~O_NONBLOCK);  // recv waits (SO_RCVTIMEO)
  }
  std::uint16_t id = 1;
  for (const char* name : {"only-a.d64.example", "alias.d64.example", "two-a.d64.example"}) {
    INFO(name);
    for (int fd : fds) {
      const std::vector<std::uint8_t> q = make_query(id++, name, kAaaa);
      REQUIRE(::send(fd, q.data(), q.size(), 0) == static_cast<ssize_t>(q.size()));
    }
    unsigned synthesized_answers = 0;
    for (int fd : fds) {
      std::vector<std::uint8_t> buf(4096);
      timeval tv{5, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) continue;
      buf.resize(static_cast<std::size_t>(n));
      const DnsReply r = parse_reply(buf);
      if (r.rcode() == 0 && r.count(0, kAaaa) >= 1) ++synthesized_answers;
      else WARN("rcode " << r.rcode() << " answers " << r.answers.size() << " tc " << r.tc() << " ede " << r.ede);
    }
    CHECK(synthesized_answers == fds.size());
  }
  for (int fd : fds) ::close(fd);
  // 100 A records: the A answer does not fit 1232 bytes, nor would the AAAA one: TC over
  // UDP, the whole synthesized answer over TCP.
  const DnsReply udp = udp_exchange(s.port, make_query(id++, "many.d64.example", kAaaa));
  REQUIRE(udp.answered);
  CHECK(udp.tc());
  CHECK(udp.answers.empty());
  const DnsReply tcp = tcp_exchange(s.port, make_query(id++, "many.d64.example", kAaaa));
  REQUIRE(tcp.answered);
  CHECK_FALSE(tcp.tc());
  CHECK(tcp.count(0, kAaaa) == 100);
  CHECK(std::find(tcp.answers.begin(), tcp.answers.end(), synthesized(11, 22, 34, 100)) != tcp.answers.end());
  // Now cached: UDP still TC (the synthesized answer is over the limit), TCP a hit.
  CHECK(udp_exchange(s.port, make_query(id++, "many.d64.example", kAaaa)).tc());
  CHECK(tcp_exchange(s.port, make_query(id++, "many.d64.example", kAaaa)).count(0, kAaaa) == 100);
}

namespace {

// Nanoseconds process `pid` has run on a CPU (/proc/PID/schedstat, first field).
std::uint64_t on_cpu_ns(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/schedstat");
  std::uint64_t ns = 0;
  f >> ns;
  return ns;
}

// `n` queries for `packet` from `source` to 127.0.0.1:port, 32 sent before their replies
// are read (so the worker takes them in batches, as under load); the replies read.
unsigned ask_n(std::uint16_t port, const char* source, std::vector<std::uint8_t> packet, unsigned n) {
  constexpr unsigned kBurst = 32;
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return 0;
  }
  unsigned answered = 0;
  std::uint8_t buf[4096];
  for (unsigned sent = 0; sent < n;) {
    const unsigned burst = std::min(kBurst, n - sent);
    for (unsigned i = 0; i < burst; ++i, ++sent) {
      packet[0] = static_cast<std::uint8_t>(sent >> 8);
      packet[1] = static_cast<std::uint8_t>(sent);
      ::send(fd, packet.data(), packet.size(), 0);
    }
    for (unsigned i = 0; i < burst && ::recv(fd, buf, sizeof buf, 0) > 0; ++i) ++answered;
  }
  ::close(fd);
  return answered;
}

}  // namespace

TEST_CASE("dns64: CPU per synthesized hit against a plain AAAA hit, bytes per synthesized entry", "[.perf][dns64]") {
  KnotServer knot({kZone, kReverse});
  REQUIRE(knot.wait_ready());
  Service s({"-c", write_config("dns64:\n  clients: [127.0.0.1/32]\n"), "--upstream",
             "127.0.0.1:" + std::to_string(knot.port()), "--log-level", "warn"},
            1);
  const auto arena = [&] { return serve_stats(s.segment)["arena_bytes_in_use"].get<std::uint64_t>(); };
  std::uint16_t id = 1;
  auto insert_bytes = [&](const char* from, const char* name, std::uint16_t qtype) {
    const std::uint64_t before = arena();
    REQUIRE(udp_exchange(s.port, make_query(id++, name, qtype), std::chrono::milliseconds(2000), from).answered);
    return arena() - before;
  };
  // One entry per step: the real AAAA NODATA, the A, then the synthesized entry alone
  // (its steps hit the entries just made).
  const std::uint64_t nodata = insert_bytes("127.0.0.2", "only-a.d64.example", kAaaa);
  const std::uint64_t a = insert_bytes("127.0.0.2", "only-a.d64.example", kA);
  const std::uint64_t synth = insert_bytes("127.0.0.1", "only-a.d64.example", kAaaa);
  const std::uint64_t real = insert_bytes("127.0.0.2", "both.d64.example", kAaaa);
  CHECK(synth > 0);
  REQUIRE(udp_exchange(s.port, make_query(id++, "both.d64.example", kAaaa), std::chrono::milliseconds(2000),
                       "127.0.0.1").answered);
  const pid_t worker = s.serve->children().at(0);
  struct Kind {
    const char* what;
    const char* from;
    const char* name;
    std::uint64_t ns = 0;
    unsigned queries = 0;
  } kinds[] = {{"plain AAAA hit (client without DNS64)", "127.0.0.2", "both.d64.example"},
               {"synthesized AAAA hit (DNS64 client)", "127.0.0.1", "only-a.d64.example"},
               {"real AAAA hit for a DNS64 client", "127.0.0.1", "both.d64.example"}};
  constexpr unsigned kBlock = 2000;
  for (int round = 0; round < 5; ++round)
    for (Kind& k : kinds) {
      const std::uint64_t before = on_cpu_ns(worker);
      k.queries += ask_n(s.port, k.from, make_query(0, k.name, kAaaa), kBlock);
      k.ns += on_cpu_ns(worker) - before;
    }
  std::printf("bytes per entry (arena, padded): synthesized AAAA %llu, real AAAA %llu, A %llu, AAAA NODATA %llu\n",
              static_cast<unsigned long long>(synth), static_cast<unsigned long long>(real),
              static_cast<unsigned long long>(a), static_cast<unsigned long long>(nodata));
  for (const Kind& k : kinds)
    std::printf("%-40s %7.0f ns worker CPU per query (%u queries)\n", k.what,
                static_cast<double>(k.ns) / std::max(1u, k.queries), k.queries);
  std::printf("synthesized / plain: %.2f, real-for-DNS64 / plain: %.2f\n",
              (static_cast<double>(kinds[1].ns) / kinds[1].queries) / (static_cast<double>(kinds[0].ns) / kinds[0].queries),
              (static_cast<double>(kinds[2].ns) / kinds[2].queries) / (static_cast<double>(kinds[0].ns) / kinds[0].queries));
  CHECK(kinds[1].queries == 5 * kBlock);
}
