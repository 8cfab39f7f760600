// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena serve` validating in front of knotd's signed zones (signed_zones.hpp) answers
// names inside a validated NSEC or NSEC3 range without an upstream query (RFC 8198;
// workers/aggressive_nsec.hpp): NXDOMAIN and NODATA with AD, from any worker, never for
// CD clients, with validation off, aggressive_nsec off, outside the range, after the
// range expired, under NSEC3 Opt-Out or above the NSEC3 iteration bound; and the answers
// agree with Unbound's (aggressive-nsec: yes).
//
// rsa.test.'s NSEC chain: rsa.test. -> b -> d -> ns -> *.wild -> www -> rsa.test. Names
// sorting before b ("a", "abc", "0") are in the apex's range, which also covers
// *.rsa.test. (no wildcard): one proof for all of them. "c" is in b's range.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "bench/lab/delaying_relay.hpp"
#include "cache/segment.hpp"
#include "dnssec/rrset.hpp"
#include "tests/dnssec/signed_zones.hpp"
#include "tests/dnssec/unbound_validator.hpp"
#include "tests/workers/prometheus_text.hpp"
#include "tests/workers/serve_harness.hpp"

using namespace dnsarena::dnssec::test;
namespace t = dnsarena::test;

namespace {

constexpr std::uint16_t kQA = 1, kQMx = 15, kQTxt = 16, kQNsec = 47, kQSoa = 6, kQRrsig = 46, kQNsec3 = 50;

// `count` random names (12 characters, fixed seed) below `zone`.
std::vector<std::string> random_names(const std::string& zone, unsigned count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  for (unsigned i = 0; i < count; ++i) {
    std::string label;
    for (int k = 0; k < 12; ++k) label += "abcdefghijklmnopqrstuvwxyz0123456789"[rng() % 36];
    out.push_back(label + "." + zone);
  }
  return out;
}

// serve forwarding to knotd with `dnssec_section` as its dnssec: keys (indented).
struct AggressiveServe {
  std::uint16_t port = t::free_port();
  std::uint16_t metrics_port = t::free_port();
  std::string segment = t::unique_segment("nsecaggr");
  std::unique_ptr<t::ServeProcess> serve;

  // `upstream_port`: where serve forwards (0: knotd's port).
  AggressiveServe(const SignedZones& zones, unsigned workers, const std::string& dnssec_section,
                  const std::string& more = "", std::uint16_t upstream_port = 0) {
    const std::string config = t::write_config("dnssec:\n" + dnssec_section + more);
    serve = std::make_unique<t::ServeProcess>(
        std::vector<std::string>{"--config", config, "--segment", segment, "--workers", std::to_string(workers),
                                 "--max-entries", "10000", "--arena-bytes", "8M", "--listen",
                                 "127.0.0.1:" + std::to_string(port), "--upstream",
                                 "127.0.0.1:" + std::to_string(upstream_port ? upstream_port : zones.port()),
                                 "--metrics",
                                 "127.0.0.1:" + std::to_string(metrics_port)},
        port);
    if (!serve->wait_ready()) throw std::runtime_error("serve did not start: " + serve->log());
    REQUIRE(t::eventually([&] { return serve->children().size() >= workers; }));
  }
  ~AggressiveServe() {
    serve.reset();
    dnsarena::cache::Segment::remove(segment);
  }
  t::DnsReply ask(const std::string& name, std::uint16_t type, bool do_bit = true, bool cd = false) const {
    static std::uint16_t id = 3000;
    std::vector<std::uint8_t> q = t::make_query(++id, name, type, 1232, do_bit);
    if (cd) q[3] |= 0x10;
    // Asked again once when no reply came, as a stub would: on a loaded sanitizer run one
    // datagram of hundreds has gone unanswered (docs/testing.md says what is known).
    t::DnsReply r = t::udp_exchange(port, q, std::chrono::milliseconds(5000));
    if (!r.answered) {
      const nlohmann::json total = t::serve_stats(segment)["total"];
      const std::string log = serve->log();
      std::cerr << "no reply in 5 s to " << name << " type " << type << "; upstream_queries "
                << total.value("upstream_queries", 0ull) << ", workers_killed_silent "
                << total.value("workers_killed_silent", 0ull) << "; serve log tail:\n"
                << log.substr(log.size() > 4000 ? log.size() - 4000 : 0) << "\n";
      // What each worker is doing now, read from /proc without stopping it: its state and
      // CPU ticks (stat), where it sleeps (wchan) and the system call it is in (syscall).
      for (const pid_t w : serve->children())
        std::cerr << "worker " << w << ": stat "
                  << t::run_command("cut -d' ' -f3,14,15 /proc/" + std::to_string(w) + "/stat 2>&1")
                  << " wchan " << t::run_command("cat /proc/" + std::to_string(w) + "/wchan 2>&1") << "\n syscall "
                  << t::run_command("cat /proc/" + std::to_string(w) + "/syscall 2>&1");
      r = t::udp_exchange(port, q, std::chrono::milliseconds(5000));
    }
    return r;
  }
  // Questions asked upstream: queries sent less attempts that timed out. On a loaded
  // machine a reply can take longer than the upstream's RTO (50 ms at least on loopback),
  // and the worker then asks again: two queries, one timeout, one question.
  std::uint64_t upstream() const {
    const nlohmann::json total = t::serve_stats(segment)["total"];
    return total["upstream_queries"].get<std::uint64_t>() - total.value("upstream_timeouts", 0ull);
  }
  // The synthesized answers so far, once the answer snapshot shows at least `at_least`.
  std::uint64_t synthesized(std::uint64_t at_least) const {
    std::uint64_t n = 0;
    t::eventually([&] {
      const nlohmann::json s = t::serve_stats(segment);
      if (!s.contains("answers")) return false;
      n = s["answers"]["dnssec"].value("aggressive_nsec_answers", 0ull);
      return n >= at_least;
    });
    return n;
  }
  // /metrics, parsed strictly (prometheus_text.hpp).
  t::PrometheusText metrics() const {
    const std::string raw = t::run_command("bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(metrics_port) +
                                           " && printf \"GET /metrics HTTP/1.0\\r\\n\\r\\n\" >&3 && timeout 5 cat <&3'");
    const std::size_t body = raw.find("\r\n\r\n");
    return t::parse_prometheus_text(body == std::string::npos ? std::string() : raw.substr(body + 4));
  }
};

// A query sent now whose reply is read later (its own connected socket).
class QueryInFlight {
public:
  QueryInFlight(std::uint16_t port, const std::vector<std::uint8_t>& query) : fd_(t::connected_udp_socket(port)) {
    if (fd_ < 0 || ::send(fd_, query.data(), query.size(), 0) != static_cast<ssize_t>(query.size()))
      throw std::runtime_error("cannot send a query to port " + std::to_string(port));
  }
  ~QueryInFlight() { ::close(fd_); }
  QueryInFlight(const QueryInFlight&) = delete;
  QueryInFlight& operator=(const QueryInFlight&) = delete;
  // Its reply, or one not answered after `timeout`.
  t::DnsReply reply(std::chrono::milliseconds timeout) const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return {};
    std::vector<std::uint8_t> buf(65535);
    const ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
    if (n <= 0) return {};
    buf.resize(static_cast<std::size_t>(n));
    return t::parse_reply(buf);
  }

private:
  int fd_;
};

std::string anchor_keys(const SignedZones& zones) { return "  trust_anchor_file: " + zones.anchor_ds_file() + "\n"; }

// Asks `n` of serve and of Unbound: whether both answered with the same rcode and AD bit
// (checked). Unbound is asked twice when its first answer does not come within the
// exchange's 3 s (a miss it resolves upstream, on a loaded machine).
bool agree(const AggressiveServe& serve, const UnboundValidator& unbound, const Name& n) {
  const t::DnsReply ours = serve.ask(n.name, n.type);
  t::DnsReply theirs = unbound.ask(n.name, n.type);
  if (!theirs.answered) theirs = unbound.ask(n.name, n.type);
  INFO(n.name << " type " << n.type);
  REQUIRE(ours.answered);
  REQUIRE(theirs.answered);
  CHECK(ours.rcode() == theirs.rcode());
  CHECK(ours.ad() == theirs.ad());
  return ours.rcode() == theirs.rcode() && ours.ad() == theirs.ad();
}

}  // namespace

TEST_CASE("serve answers names inside a validated NSEC range without asking upstream", "[dnssec][serve][nsec]") {
  SignedZones zones;
  AggressiveServe serve(zones, 2, anchor_keys(zones));

  const t::DnsReply first = serve.ask("a.rsa.test.", kQA);
  REQUIRE(first.answered);
  REQUIRE(first.rcode() == 3);
  REQUIRE(first.ad());
  const std::uint64_t upstream = serve.upstream();

  // Names in the same range, from fresh sockets (spread over both workers by the kernel):
  // NXDOMAIN with AD, the SOA and the proving NSEC with their RRSIGs, nothing sent upstream.
  const char* inside[] = {"abc.rsa.test.", "0.rsa.test.", "a-1.rsa.test.", "aa.rsa.test.", "ab.rsa.test.",
                          "ac.rsa.test.",  "ad.rsa.test.", "ae.rsa.test.", "af.rsa.test.", "x.a.rsa.test."};
  for (const char* name : inside) {
    const t::DnsReply r = serve.ask(name, kQA);
    INFO(name);
    REQUIRE(r.answered);
    CHECK(r.rcode() == 3);
    CHECK(r.ad());
    CHECK(r.count(1, kQSoa) == 1);           // SOA
    CHECK(r.count(1, kQNsec) >= 1);   // the proof
    CHECK(r.count(1, kQRrsig) >= 2);          // RRSIGs of both
  }
  CHECK(serve.upstream() == upstream);
  CHECK(serve.synthesized(std::size(inside)) == std::size(inside));
  const t::PrometheusText prom = serve.metrics();
  CHECK(prom.errors.empty());
  CHECK(prom.types.at("dnsarena_aggressive_nsec_answers_total") == "counter");
  CHECK(prom.value("dnsarena_aggressive_nsec_answers_total") == std::size(inside));
  // Both workers answered some (each row counts its own misses).
  unsigned rows_answering = 0;
  const nlohmann::json stats = t::serve_stats(serve.segment);
  for (const auto& row : stats["rows"])
    if (row.contains("worker") && row.value("misses", 0ull) > 0) ++rows_answering;
  INFO(stats.dump());
  CHECK(rows_answering == 2);

  // Without DO: the SOA alone; AD only for a client that set it (none here).
  const t::DnsReply plain = serve.ask("ag.rsa.test.", kQA, false);
  CHECK(plain.rcode() == 3);
  CHECK_FALSE(plain.ad());
  CHECK(plain.count(1, kQNsec) == 0);
  CHECK(plain.count(1, kQSoa) == 1);
  CHECK(serve.upstream() == upstream);

  // Outside the range (between b and d): upstream.
  CHECK(serve.ask("c.rsa.test.", kQA).rcode() == 3);
  CHECK(serve.upstream() == upstream + 1);

  // NODATA: www.rsa.test. has A only; after one NODATA, another type at www is proven too.
  REQUIRE(serve.ask("www.rsa.test.", kQTxt).rcode() == 0);
  const std::uint64_t before_mx = serve.upstream();
  const t::DnsReply mx = serve.ask("www.rsa.test.", kQMx);
  CHECK(mx.rcode() == 0);
  CHECK(mx.ad());
  CHECK(mx.answers.empty());
  CHECK(mx.count(1, kQNsec) == 1);
  CHECK(serve.upstream() == before_mx);
  // A type the range shows present (A) is never denied: asked upstream.
  CHECK(serve.ask("www.rsa.test.", kQA).count(0, kQA) == 1);

  // A CD client is never answered from ranges.
  const std::uint64_t before_cd = serve.upstream();
  const t::DnsReply cd = serve.ask("ah.rsa.test.", kQA, true, true);
  CHECK(cd.rcode() == 3);
  CHECK(serve.upstream() == before_cd + 1);
}

TEST_CASE("serve answers from NSEC ranges only when validating with aggressive_nsec on", "[dnssec][serve][nsec]") {
  SignedZones zones;
  for (const std::string& section :
       {anchor_keys(zones) + "  aggressive_nsec: false\n", anchor_keys(zones) + "  validate: false\n"}) {
    AggressiveServe serve(zones, 1, section);
    INFO(section);
    REQUIRE(serve.ask("a.rsa.test.", kQA).rcode() == 3);
    const std::uint64_t upstream = serve.upstream();
    CHECK(serve.ask("abc.rsa.test.", kQA).rcode() == 3);
    CHECK(serve.upstream() == upstream + 1);
    CHECK(serve.synthesized(0) == 0);
  }
}

TEST_CASE("serve stops using an NSEC range when its TTL ends", "[dnssec][serve][nsec]") {
  SignedZones zones;
  // Negative answers (and so the ranges) kept one second.
  AggressiveServe serve(zones, 1, anchor_keys(zones), "ttl: {negative_ceiling: 1}\n");
  REQUIRE(serve.ask("a.rsa.test.", kQA).rcode() == 3);
  const std::uint64_t upstream = serve.upstream();
  const t::DnsReply r = serve.ask("abc.rsa.test.", kQA);
  CHECK(r.rcode() == 3);
  for (const auto& rec : r.records) CHECK(rec.ttl <= 1);
  CHECK(serve.upstream() == upstream);
  // The time a one-second range takes to expire (the wall clock's whole seconds).
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  CHECK(serve.ask("abd.rsa.test.", kQA).rcode() == 3);
  CHECK(serve.upstream() == upstream + 1);
}

TEST_CASE("synthesized NSEC answers agree with Unbound's aggressive-nsec", "[dnssec][serve][nsec][unbound]") {
  SignedZones zones;
  UnboundValidator unbound(zones, zones.anchor_ds_file(), true);
  AggressiveServe serve(zones, 2, anchor_keys(zones));
  // The proofs first, on both sides; then names inside their ranges.
  for (const char* name : {"a.rsa.test.", "a.ed.test.", "a.test."}) {
    REQUIRE(serve.ask(name, kQA).rcode() == 3);
    REQUIRE(unbound.ask(name, kQA).rcode() == 3);
  }
  REQUIRE(serve.ask("www.ed.test.", kQTxt).rcode() == 0);
  REQUIRE(unbound.ask("www.ed.test.", kQTxt).rcode() == 0);
  const std::uint64_t upstream = serve.upstream();
  const Name names[] = {{"abc.rsa.test.", kQA}, {"0.rsa.test.", kQTxt}, {"abc.ed.test.", kQA},
                        {"www.ed.test.", kQMx}, {"aa.test.", kQA},      {"x.y.rsa.test.", kQA},
                        {"c.rsa.test.", kQA},   {"b.rsa.test.", kQMx}};
  for (const Name& n : names) agree(serve, unbound, n);
  // Of these, only c.rsa.test. (b's range, not proven yet) and b.rsa.test. MX (no NSEC at
  // b yet) went upstream.
  CHECK(serve.upstream() == upstream + 2);
}

// n3.test. has seven NSEC3 records (apex, ns, www, b, d, wild, *.wild): a random name's
// NXDOMAIN needs the apex's record (closest encloser), the range covering its hash (next
// closer) and the one covering *.n3.test.'s hash. Once the ranges its names hashed into
// were proven, names go upstream no more: sequential names, so no two wait on one proof.
TEST_CASE("serve answers names inside validated NSEC3 ranges as Unbound's aggressive-nsec does",
          "[dnssec][serve][nsec3][unbound]") {
  SignedZones zones;
  UnboundValidator unbound(zones, zones.anchor_ds_file(), true);
  auto unbound_sent = [&] { return unbound.stat("num.query.udpout") + unbound.stat("num.query.tcpout"); };
  const std::uint64_t unbound_before = unbound_sent();  // its start-up probe
  AggressiveServe serve(zones, 2, anchor_keys(zones));
  const std::uint64_t serve_before = serve.upstream();

  std::vector<Name> names;
  for (const std::string& n : random_names("n3.test.", 2000, 5155)) names.push_back({n, kQA});
  // NODATA: www has A only; after one NODATA at www, the others are proven by its record.
  for (std::uint16_t type : {kQTxt, kQMx, kQSoa}) names.push_back({"www.n3.test.", type});
  unsigned disagree = 0;
  for (const Name& n : names)
    if (!agree(serve, unbound, n)) ++disagree;
  CHECK(disagree == 0);
  const std::uint64_t ours = serve.upstream() - serve_before, theirs = unbound_sent() - unbound_before;
  std::cout << "NSEC3 names " << names.size() << ": upstream queries dnsarena " << ours << ", unbound " << theirs
            << "\n";
  CHECK(ours * 100 < names.size());  // under 1%
  CHECK(ours <= theirs);
  CHECK(serve.synthesized(names.size() - ours) >= names.size() - ours);

  // A synthesized NXDOMAIN for a DO client: the SOA, the NSEC3 records of the proof (the
  // closest encloser's, the next closer's cover, the wildcard's cover: one to three, as
  // knotd's random salt places the hashes) and RRSIGs.
  const std::uint64_t before = serve.upstream();
  const t::DnsReply r = serve.ask(random_names("n3.test.", 1, 50)[0], kQA);
  CHECK(r.rcode() == 3);
  CHECK(r.ad());
  CHECK(r.count(1, kQSoa) == 1);
  CHECK(r.count(1, kQNsec3) >= 1);
  CHECK(r.count(1, kQNsec3) <= 3);
  CHECK(r.count(1, kQRrsig) == r.count(1, kQNsec3) + 1);
  CHECK(serve.upstream() == before);
  const nlohmann::json dnssec = t::serve_stats(serve.segment)["answers"]["dnssec"];
  CHECK(dnssec.value("nsec3_hashes", 0ull) > 0);

  // The zone's own apex record says nothing of its DS (the parent holds it, RFC 4035
  // 2.4): the DS set comes from upstream, not a NODATA from n3.test.'s ranges.
  const t::DnsReply ds = serve.ask("n3.test.", dnsarena::dnssec::kTypeDs);
  CHECK(ds.rcode() == 0);
  CHECK(ds.count(0, dnsarena::dnssec::kTypeDs) >= 1);
}

TEST_CASE("serve never answers NXDOMAIN nor wildcard NODATA from Opt-Out NSEC3 ranges, nor above the iteration bound",
          "[dnssec][serve][nsec3]") {
  SignedZones zones;
  AggressiveServe serve(zones, 1, anchor_keys(zones));
  // optout.test.: every NSEC3 record has the Opt-Out flag (an insecure delegation may hide
  // at any covered name); hiter.test.: 200 iterations (insecure, RFC 9276).
  for (const std::string zone : {"optout.test.", "hiter.test."}) {
    INFO(zone);
    REQUIRE(serve.ask("a." + zone, kQA).rcode() == 3);
    // Secure NODATA at every name of optout.test. (each from its own NSEC3 record): the
    // ranges are learned, and still prove no NXDOMAIN.
    for (const char* name : {"", "www.", "b.", "d.", "ns.", "wild.", "*.wild."})
      REQUIRE(serve.ask(name + zone, kQMx).rcode() == 0);
    const std::uint64_t before = serve.upstream();
    const std::vector<std::string> names = random_names(zone, 20, 8198);
    for (const std::string& n : names) {
      const t::DnsReply r = serve.ask(n, kQA);
      INFO(n);
      CHECK(r.rcode() == 3);
      CHECK_FALSE(r.ad());
    }
    CHECK(serve.upstream() == before + names.size());
  }
  // A wildcard NODATA whose next closer name lies in an Opt-Out range: an insecure
  // delegation may be there instead (RFC 5155 6), so asked upstream.
  const std::uint64_t before_wild = serve.upstream();
  CHECK(serve.ask("x.wild.optout.test.", kQMx).rcode() == 0);
  CHECK(serve.upstream() == before_wild + 1);
  // The record of the name itself proves NODATA whatever its Opt-Out flag (RFC 5155 8.5).
  const std::uint64_t before = serve.upstream();
  const t::DnsReply r = serve.ask("www.optout.test.", kQTxt);
  CHECK(r.rcode() == 0);
  CHECK(r.ad());
  CHECK(serve.upstream() == before);
  CHECK(serve.synthesized(1) == 1);
}

TEST_CASE("serve holds misses under a zone back while its first denial is validated and answers them from its ranges",
          "[dnssec][serve][nsec]") {
  SignedZones zones;
  // Every query to knotd takes 250 ms: the first denial's chain (DNSKEY of test., DS and
  // DNSKEY of rsa.test.) takes 750 ms to fetch after the denial itself came.
  dnsarena::bench::DelayingRelay slow("127.0.0.1", "127.0.0.1", std::chrono::milliseconds(250), 0, zones.port());
  AggressiveServe serve(zones, 2, anchor_keys(zones), "", slow.port());
  const std::uint64_t upstream_before = serve.upstream();

  // The first name of the apex's range (rsa.test. -> b.rsa.test., which also covers
  // *.rsa.test.), asked without waiting for its answer.
  const QueryInFlight first(serve.port, t::make_query(4000, "a.rsa.test.", kQA, 1232, true));
  // Its denial came and its validation, fetching the chain, holds the zone's claim.
  REQUIRE(t::eventually([&] { return serve.metrics().value("dnsarena_aggressive_nsec_denial_claims_total") >= 1; }));
  // Ten more names of that range, and one of b.rsa.test.'s range, all at once.
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) names.push_back("a" + std::to_string(i) + ".rsa.test.");
  names.push_back("c.rsa.test.");
  std::vector<std::unique_ptr<QueryInFlight>> asked;
  for (std::size_t i = 0; i < names.size(); ++i)
    asked.push_back(std::make_unique<QueryInFlight>(
        serve.port, t::make_query(static_cast<std::uint16_t>(4001 + i), names[i], kQA, 1232, true)));
  const t::DnsReply first_reply = first.reply(std::chrono::seconds(10));
  REQUIRE(first_reply.answered);
  CHECK(first_reply.rcode() == 3);
  CHECK(first_reply.ad());
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    const t::DnsReply r = asked[i]->reply(std::chrono::seconds(10));
    REQUIRE(r.answered);
    CHECK(r.rcode() == 3);
    CHECK(r.ad());
  }
  // Asked upstream: the first name, its three sets, and c.rsa.test. (outside the first
  // proof's ranges: asked once the proof was in). Without the wait: the ten names too.
  CHECK(serve.upstream() - upstream_before == 5);
  CHECK(serve.synthesized(10) >= 10);
  const t::PrometheusText prom = serve.metrics();
  CHECK(prom.value("dnsarena_aggressive_nsec_denial_claims_total") == 1);
  // Those that came while the claim was held waited (all of them, unless the machine
  // stalled this test for the rest of the chain: then the later ones found the ranges).
  CHECK(prom.value("dnsarena_aggressive_nsec_denial_waits_total") >= 1);
  CHECK(prom.value("dnsarena_aggressive_nsec_denial_waits_total") <= names.size());
}

// The figures of docs/benchmarking.md (hidden: run them by their tags, [.nsec-flood] and
// [.nsec3-flood]): a random-subdomain flood on `zone` (rsa.test.: NSEC; n3.test.: NSEC3)
// (dnsperf, NSEC_FLOOD_NAMES random names at
// NSEC_FLOOD_QPS for NSEC_FLOOD_SECONDS, DO set, fixed seed) through serve (NSEC_FLOOD_WORKERS) with
// aggressive_nsec on, then off, then through Unbound with aggressive-nsec: yes, each
// with a cold cache. Reported: queries answered, queries sent upstream, DS and DNSKEY
// fetches included (serve: its upstream_queries; Unbound: num.query.udpout + tcpout from
// unbound-control, its extended statistics), and serve's worker user CPU per query
// (`stats` user_ns_per_query, getrusage), as a table and JSON.
static void flood(const std::string& zone) {
  auto env = [](const char* name, unsigned fallback) {
    const char* v = std::getenv(name);
    return v ? static_cast<unsigned>(std::stoul(v)) : fallback;
  };
  const unsigned names = env("NSEC_FLOOD_NAMES", 20000), qps = env("NSEC_FLOOD_QPS", 2000),
                 seconds = env("NSEC_FLOOD_SECONDS", 10), workers = env("NSEC_FLOOD_WORKERS", 2);
  SignedZones zones;
  const std::string file = zones.dir() + "/flood.txt";
  {
    std::ofstream out(file);
    for (const std::string& name : random_names(zone, names, 8198)) out << name << " A\n";
  }
  auto dnsperf = [&](std::uint16_t port) {
    const std::string out = t::run_command("dnsperf -s 127.0.0.1 -p " + std::to_string(port) + " -d " + file +
                                           " -D -c 4 -l " + std::to_string(seconds) + " -Q " + std::to_string(qps) +
                                           " 2>&1");
    const auto at = out.find("Queries completed:");
    REQUIRE(at != std::string::npos);
    return std::stoull(out.substr(at + 18));
  };
  struct Row {
    std::string who;
    std::uint64_t answered, upstream;
    double cpu_us_per_query = -1;  // serve's workers: user CPU per query (stats user_ns_per_query); -1: not known
    std::int64_t fetches = -1;     // serve: of upstream, the DS / DNSKEY fetches of validations; -1: not known
    std::int64_t waits = -1;       // serve: misses that waited for a denial being validated (denial_claims.hpp)
  };
  std::vector<Row> rows;
  for (const bool on : {true, false}) {
    AggressiveServe serve(zones, workers, anchor_keys(zones) + (on ? "" : "  aggressive_nsec: false\n"));
    // Unbound's start-up question (unbound_validator.hpp), asked of serve too: each has
    // test.'s DNSKEY set before the count starts.
    REQUIRE(serve.ask("www.test.", kQA).answered);
    std::uint64_t probe_fetches = 0;
    REQUIRE(t::eventually([&] {
      const nlohmann::json s = t::serve_stats(serve.segment);
      probe_fetches = s.contains("answers") ? s["answers"]["dnssec"].value("fetches", 0ull) : 0;
      return probe_fetches >= 1;
    }));
    const std::uint64_t before = serve.upstream();
    const std::uint64_t answered = dnsperf(serve.port);
    const nlohmann::json stats = t::serve_stats(serve.segment);
    const double cpu = stats["total"]["user_ns_per_query"].get<double>() / 1000;
    const auto fetches =
        static_cast<std::int64_t>(stats["answers"]["dnssec"].value("fetches", 0ull) - probe_fetches);
    const auto waits = static_cast<std::int64_t>(stats["answers"]["dnssec"].value("denial_waits", 0ull));
    rows.push_back({on ? "dnsarena aggressive_nsec on" : "dnsarena aggressive_nsec off", answered,
                    serve.upstream() - before, cpu, fetches, waits});
  }
  {
    UnboundValidator unbound(zones, zones.anchor_ds_file(), true);
    auto sent = [&] { return unbound.stat("num.query.udpout") + unbound.stat("num.query.tcpout"); };
    const std::uint64_t before = sent();  // its start-up probe
    const std::uint64_t answered = dnsperf(unbound.port());
    rows.push_back({"unbound aggressive-nsec yes", answered, sent() - before});
  }
  std::ostringstream table, json;
  table << zone << ": names " << names << ", " << qps << " q/s for " << seconds << " s, " << workers << " workers\n";
  json << "{\"zone\":\"" << zone << "\",\"names\":" << names << ",\"qps\":" << qps << ",\"seconds\":" << seconds
       << ",\"workers\":" << workers << ",\"rows\":[";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const double share = r.answered ? 100.0 * static_cast<double>(r.upstream) / static_cast<double>(r.answered) : 0;
    table << r.who << ": answered " << r.answered << ", upstream " << r.upstream << " (" << share << "%)";
    if (r.fetches >= 0) table << ", of which DS/DNSKEY fetches " << r.fetches;
    if (r.waits >= 0) table << ", misses held for a denial " << r.waits;
    if (r.cpu_us_per_query >= 0) table << ", worker user CPU " << r.cpu_us_per_query << " us/query";
    table << "\n";
    json << (i ? "," : "") << "{\"who\":\"" << r.who << "\",\"answered\":" << r.answered
         << ",\"upstream\":" << r.upstream << ",\"fetches\":" << r.fetches << ",\"denial_waits\":" << r.waits
         << ",\"cpu_us_per_query\":" << r.cpu_us_per_query
         << "}";
  }
  json << "]}";
  std::cout << table.str() << json.str() << "\n";
  std::cout << "target: no more upstream queries than Unbound's: "
            << (rows[0].upstream <= rows[2].upstream ? "met" : "MISSED") << " (" << rows[0].upstream << " against "
            << rows[2].upstream << ")\n";
  CHECK(rows[0].upstream * 100 < rows[0].answered);  // under 1% of the queries
  CHECK(rows[1].upstream >= rows[1].answered);        // off: every random name goes upstream
}

TEST_CASE("random-subdomain flood on a signed NSEC zone: upstream queries", "[.nsec-flood]") { flood("rsa.test."); }
TEST_CASE("random-subdomain flood on a signed NSEC3 zone: upstream queries", "[.nsec3-flood]") { flood("n3.test."); }
