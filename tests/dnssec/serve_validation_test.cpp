// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena serve` validating (dnssec.trust_anchor_file) in front of knotd's signed zones
// (signed_zones.hpp; knotd itself is the upstream), with Unbound's validator on the same
// zones and anchor as the reference in the same test: rcode, AD and EDE per name over
// the names of unbound_validator.hpp. Then what the verdicts do to the cache: a
// validated name's second query is a hit with AD and sends nothing upstream; a CD client
// gets a bogus name's data; a client without DO gets neither AD nor RRSIGs; a worker
// killed with validated misses in flight leaves a cache its successor answers from
// correctly. Run-time negative trust anchors (`dnsarena dnssec nta`): a bogus zone made
// insecure on every worker and back, expiring by itself, against Unbound's insecure_add.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "cache/segment.hpp"
#include "common/nta_table.hpp"
#include "tests/dnssec/signed_zones.hpp"
#include "tests/dnssec/unbound_validator.hpp"
#include "tests/workers/serve_harness.hpp"

using namespace dnsarena::dnssec;
using namespace dnsarena::dnssec::test;
namespace t = dnsarena::test;

namespace {

constexpr std::uint16_t kTypeA = 1;

// serve forwarding every name to knotd, validating with the zones' anchor.
struct ValidatingServe {
  std::uint16_t port = t::free_port();
  std::string segment = t::unique_segment("dnssec");
  std::unique_ptr<t::ServeProcess> serve;

  // `dnssec_extra`: more keys of the dnssec section, indented.
  ValidatingServe(const SignedZones& zones, unsigned workers, const std::string& dnssec_extra = "") {
    // A failure cache window long enough that a loaded machine's second query falls in it.
    const std::string config = t::write_config("dnssec:\n  trust_anchor_file: " + zones.anchor_ds_file() + "\n" +
                                               dnssec_extra + "failure_cache: {min_s: 60}\n");
    serve = std::make_unique<t::ServeProcess>(
        std::vector<std::string>{"--config", config, "--segment", segment, "--workers", std::to_string(workers),
                                 "--max-entries", "10000", "--arena-bytes", "8M", "--listen",
                                 "127.0.0.1:" + std::to_string(port), "--upstream",
                                 "127.0.0.1:" + std::to_string(zones.port()), "--no-metrics"},
        port);
    if (!serve->wait_ready()) throw std::runtime_error("serve did not start: " + serve->log());
    for (int i = 0; i < 500 && serve->children().size() < workers; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ~ValidatingServe() {
    serve.reset();
    dnsarena::cache::Segment::remove(segment);
    std::remove(dnsarena::common::NtaTable::path_for(segment).c_str());
  }
  t::DnsReply ask(const std::string& name, std::uint16_t type, bool do_bit = true, bool cd = false) const {
    static std::uint16_t id = 1000;
    std::vector<std::uint8_t> q = t::make_query(++id, name, type, 1232, do_bit);
    if (cd) q[3] |= 0x10;
    return t::udp_exchange(port, q, std::chrono::milliseconds(5000));
  }
  std::uint64_t total(const char* counter) const {
    return t::serve_stats(segment)["total"][counter].get<std::uint64_t>();
  }
};

}  // namespace

TEST_CASE("serve validates forwarded answers as Unbound's validator does", "[dnssec][serve][unbound]") {
  SignedZones zones;
  UnboundValidator unbound(zones, zones.anchor_ds_file());
  ValidatingServe serve(zones, 2);

  const std::vector<Name> names = differential_names();
  std::size_t agree = 0, ede_compared = 0, secure = 0;
  std::set<std::string> bogus_zones;
  std::ostringstream table;
  for (const Name& n : names) {
    const t::DnsReply ours = serve.ask(n.name, n.type);
    const t::DnsReply theirs = unbound.ask(n.name, n.type);
    REQUIRE(ours.answered);
    REQUIRE(theirs.answered);
    table << n.name << " " << n.type << ": ours rcode " << ours.rcode() << " ad " << ours.ad() << " ede " << ours.ede
          << "; unbound rcode " << theirs.rcode() << " ad " << theirs.ad() << " ede " << theirs.ede << "\n";
    INFO(n.name << " type " << n.type);
    CHECK(ours.rcode() == theirs.rcode());
    CHECK(ours.ad() == theirs.ad());
    // EDE on a zone's first bogus name only (unbound_diff_test.cpp says why).
    const std::string zone = n.name.substr(n.name.find('.') + 1);
    if (theirs.ede >= 0 && theirs.rcode() == 2 && bogus_zones.insert(zone).second) {
      ++ede_compared;
      CHECK(ours.ede == theirs.ede);
    }
    agree += ours.rcode() == theirs.rcode() && ours.ad() == theirs.ad();
    secure += ours.ad();
  }
  INFO("every name:\n" << table.str());
  CHECK(agree == names.size());
  CHECK(ede_compared >= 1);  // badds.test.: DNSKEY Missing (9) on both sides
  CHECK(secure >= names.size() / 2);
  // The counters (dnssec_counters.hpp), in the supervisor's answer snapshot once it is written.
  nlohmann::json dnssec;
  CHECK(t::eventually([&] {
    const nlohmann::json stats = t::serve_stats(serve.segment);
    if (!stats.contains("answers")) return false;
    dnssec = stats["answers"]["dnssec"];
    // A name a validated NSEC range proves absent is answered without a validation (RFC 8198).
    return dnssec.value("secure", 0ull) + dnssec.value("insecure", 0ull) + dnssec.value("bogus", 0ull) +
               dnssec.value("indeterminate", 0ull) + dnssec.value("aggressive_nsec_answers", 0ull) >= names.size();
  }));
  INFO(dnssec.dump());
  CHECK(dnssec["secure"].get<std::uint64_t>() + dnssec["aggressive_nsec_answers"].get<std::uint64_t>() == secure);
  CHECK(dnssec["bogus"].get<std::uint64_t>() >= 2);
  CHECK(dnssec["insecure"].get<std::uint64_t>() >= 3);
  CHECK(dnssec["fetches"].get<std::uint64_t>() >= 10);  // DS and DNSKEY of every zone, once per worker at most
  CHECK(dnssec["signature_validations"].get<std::uint64_t>() >= secure);
  CHECK(dnssec["nsec3_iteration_limit"].get<std::uint64_t>() >= 1);  // hiter.test.: 200 iterations
  CHECK(dnssec["timeouts"].get<std::uint64_t>() == 0);

  // The verdicts are in the entries (cache::EntryVerdict), as `dnsarena dump` shows them.
  const std::string dump = t::run_command(t::dnsarena_binary() + " dump " + serve.segment);
  CHECK(dump.find("$ENTRY www.rsa.test. A flags=do,validated ecs=- rcode=0 ad=1 ttl=") != std::string::npos);
  CHECK(dump.find(" dnssec=secure\n") != std::string::npos);
  CHECK(dump.find(" dnssec=insecure\n") != std::string::npos);
  CHECK(dump.find("$ENTRY www.badds.test. A flags=do") == std::string::npos);  // bogus: never cached

  // A validated name again: a hit with AD, nothing sent upstream.
  REQUIRE(serve.ask("www.rsa.test.", kTypeA).ad());
  const std::uint64_t upstream = serve.total("upstream_queries");
  const std::uint64_t hits = serve.total("hits");
  for (int i = 0; i < 4; ++i) {  // both workers
    const t::DnsReply again = serve.ask("www.rsa.test.", kTypeA);
    CHECK(again.rcode() == 0);
    CHECK(again.ad());
  }
  CHECK(serve.total("upstream_queries") == upstream);
  CHECK(serve.total("hits") >= hits + 4);

  // A bogus name again: from the failure cache, SERVFAIL with EDE 6, nothing sent upstream.
  const std::uint64_t failure_cached = serve.total("failure_cached");
  for (int i = 0; i < 4; ++i) {
    const t::DnsReply bogus = serve.ask("www.badds.test.", kTypeA);
    CHECK(bogus.rcode() == 2);
    CHECK(bogus.ede == 6);
  }
  CHECK(serve.total("upstream_queries") == upstream);
  CHECK(serve.total("failure_cached") == failure_cached + 4);

  // CD: the bogus name's data, unvalidated (RFC 4035 3.2.2), without AD.
  const t::DnsReply cd = serve.ask("www.badds.test.", kTypeA, true, true);
  CHECK(cd.rcode() == 0);
  CHECK(cd.count(0, kTypeA) == 1);
  CHECK_FALSE(cd.ad());

  // No DO: no AD (RFC 6840 5.8) and no RRSIGs, though the query upstream carried DO.
  const t::DnsReply plain = serve.ask("www.ed.test.", kTypeA, false);
  CHECK(plain.rcode() == 0);
  CHECK(plain.count(0, kTypeA) == 1);
  CHECK(plain.count(0, kTypeRrsig) == 0);
  CHECK_FALSE(plain.ad());
  const t::DnsReply with_do = serve.ask("www.ed.test.", kTypeA);
  CHECK(with_do.ad());
  CHECK(with_do.count(0, kTypeRrsig) >= 1);
}

TEST_CASE("a worker killed with validated misses in flight: its successor answers from a consistent cache",
          "[dnssec][serve][kill]") {
  SignedZones zones;
  ValidatingServe serve(zones, 1);
  REQUIRE(serve.ask("www.test.", kTypeA).ad());  // the test. zone's keys: cached, and in the worker's key cache
  const auto before = serve.serve->children();
  REQUIRE(before.size() == 1);
  // Misses whose validation needs fetches (DS and DNSKEY of three zones), then the kill
  // while they are in flight: nothing waits for their answers.
  const int fd = t::connected_udp_socket(serve.port);
  REQUIRE(fd >= 0);
  std::uint16_t id = 1;
  for (const char* name : {"www.rsa.test.", "www.ed.test.", "www.n3.test.", "nope.rsa.test.", "www.badds.test."}) {
    const auto q = t::make_query(id++, name, kTypeA, 1232, true);
    REQUIRE(::send(fd, q.data(), q.size(), 0) == static_cast<ssize_t>(q.size()));
  }
  REQUIRE(::kill(before[0], SIGKILL) == 0);
  ::close(fd);
  REQUIRE(t::eventually([&] {
    const auto now = serve.serve->children();
    return now.size() == 1 && now[0] != before[0];
  }));
  // The successor: every answer as a validator gives it, AD only on secure ones.
  REQUIRE(t::udp_answered_within(serve.port, t::make_query(90, "www.test.", kTypeA, 1232, true)));
  for (int round = 0; round < 2; ++round) {  // the miss, then the hit
    CHECK(serve.ask("www.test.", kTypeA).ad());
    CHECK(serve.ask("www.rsa.test.", kTypeA).ad());
    CHECK(serve.ask("www.ed.test.", kTypeA).ad());
    CHECK(serve.ask("www.n3.test.", kTypeA).ad());
    const t::DnsReply nx = serve.ask("nope.rsa.test.", kTypeA);
    CHECK(nx.rcode() == 3);
    CHECK(nx.ad());
    CHECK(serve.ask("www.badds.test.", kTypeA).rcode() == 2);
    CHECK_FALSE(serve.ask("www.unsigned.test.", kTypeA).ad());
  }
}

TEST_CASE("a reload that turns validation on or off never serves what the other mode cached",
          "[dnssec][serve][reload]") {
  SignedZones zones;
  const std::uint16_t port = t::free_port();
  const std::string segment = t::unique_segment("dnssec-reload");
  const std::string plain = "failure_cache: {min_s: 60}\n";
  const std::string validating = "dnssec:\n  trust_anchor_file: " + zones.anchor_ds_file() + "\n" + plain;
  const std::string config = t::write_config(plain);
  t::ServeProcess serve({"--config", config, "--segment", segment, "--workers", "1", "--max-entries", "10000",
                         "--arena-bytes", "8M", "--listen", "127.0.0.1:" + std::to_string(port), "--upstream",
                         "127.0.0.1:" + std::to_string(zones.port()), "--no-metrics"},
                        port);
  REQUIRE(serve.wait_ready());
  std::uint16_t id = 2000;
  auto ask = [&](const char* name) {
    return t::udp_exchange(port, t::make_query(++id, name, kTypeA, 1232, true), std::chrono::milliseconds(5000));
  };
  std::size_t reloads = 0;
  auto reload_with = [&](const std::string& text) {
    std::ofstream(config) << text;
    REQUIRE(::kill(serve.pid(), SIGHUP) == 0);
    ++reloads;
    REQUIRE(t::eventually([&] { return t::occurrences(serve.log(), "reloaded: 1 workers replaced") == reloads; }));
  };
  // Not validating: a zone whose DS matches no key answers as its upstream says, and is cached.
  REQUIRE(ask("www.badds.test.").rcode() == 0);
  REQUIRE(ask("www.badds.test.").rcode() == 0);
  REQUIRE_FALSE(ask("www.rsa.test.").ad());
  reload_with(validating);
  // Validating: neither cached answer is served; both are validated.
  CHECK(ask("www.badds.test.").rcode() == 2);
  CHECK(ask("www.rsa.test.").ad());
  CHECK(ask("www.rsa.test.").ad());  // a hit of the validated entry
  reload_with(plain);
  // Not validating again: the entries kept without validation come back; nothing has AD.
  CHECK(ask("www.badds.test.").rcode() == 0);
  CHECK_FALSE(ask("www.rsa.test.").ad());
  dnsarena::cache::Segment::remove(segment);
}

TEST_CASE("dnssec.limits: a validation past max_signature_validations is bogus (EDE 6) and counted",
          "[dnssec][serve][limits]") {
  SignedZones zones;
  // A chain from the anchor to www.rsa.test. takes four verifications (test.'s DNSKEY,
  // rsa.test.'s DS and DNSKEY, the answer): one is allowed.
  ValidatingServe serve(zones, 1, "  limits: {max_signature_validations: 1}\n");
  const t::DnsReply r = serve.ask("www.rsa.test.", kTypeA);
  CHECK(r.rcode() == 2);
  CHECK(r.ede == 6);
  CHECK_FALSE(r.ad());
  nlohmann::json dnssec;
  CHECK(t::eventually([&] {
    const nlohmann::json stats = t::serve_stats(serve.segment);
    if (!stats.contains("answers")) return false;
    dnssec = stats["answers"]["dnssec"];
    return dnssec.value("signature_limit", 0ull) >= 1;
  }));
  CHECK(dnssec["bogus"].get<std::uint64_t>() >= 1);
  CHECK(dnssec["secure"].get<std::uint64_t>() == 0);
  // The CD client still gets the data (nothing to verify).
  CHECK(serve.ask("www.rsa.test.", kTypeA, true, true).rcode() == 0);
}

namespace {

// User + system CPU seconds of `pids` so far (/proc/PID/stat utime and stime).
double cpu_seconds(const std::vector<pid_t>& pids) {
  double ticks = 0;
  for (const pid_t pid : pids) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string f;
    for (int i = 3; i <= 15 && fields >> f; ++i)
      if (i == 14 || i == 15) ticks += std::stod(f);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// dnsperf through `file` once against `port`: the queries that got an answer.
std::string run_dnsperf(std::uint16_t port, const std::string& file) {
  return t::run_command("dnsperf -s 127.0.0.1 -p " + std::to_string(port) + " -d " + file +
                        " -n 1 -c 1 -q 20 -t 5 2>&1 | grep -E 'Queries (completed|lost)'");
}

}  // namespace

// The figure of docs/dnssec.md ("Cost in the workers"): CPU per validated miss and per
// validated hit, serve (one worker) against Unbound's validator (one thread) on the same
// names, in one run, with serve not validating as the baseline; CPU time from /proc (user +
// system), so a loaded machine's waiting does not count. Hidden: run it by name
// (`dnssec_tests "[.dnssec_bench]"`).
TEST_CASE("bench: CPU per validated miss and hit, serve against Unbound's validator", "[.dnssec_bench]") {
  constexpr int kNames = 4000, kHitRounds = 5;
  const char* signed_zones[] = {"rsa.test.", "ed.test.", "n3.test."};
  SignedZones zones(kNames / 3 + 1);
  UnboundValidator unbound(zones, zones.anchor_ds_file());
  ValidatingServe serve(zones, 1);
  ValidatingServe plain(zones, 1, "  validate: false\n");
  auto pids_of = [](const ValidatingServe& s) {
    std::vector<pid_t> pids = s.serve->children();
    pids.push_back(s.serve->pid());
    return pids;
  };
  struct Server {
    const char* name;
    std::uint16_t port;
    std::vector<pid_t> pids;
  };
  const Server servers[] = {{"serve, validating", serve.port, pids_of(serve)},
                            {"unbound, validating", unbound.port(), {unbound.pid()}},
                            {"serve, not validating", plain.port, pids_of(plain)}};
  // Warm: every zone's keys established (a warm miss: the key cache's case).
  for (const char* z : signed_zones) {
    REQUIRE(serve.ask(std::string("www.") + z, kTypeA).ad());
    REQUIRE(unbound.ask(std::string("www.") + z, kTypeA).ad());
    REQUIRE(plain.ask(std::string("www.") + z, kTypeA).answered);
  }
  // Two sets of names: wildcard expansions (every name's answer is the wildcard's one
  // signed RRset, its denial one of few NSEC / NSEC3 records: what a validator that
  // remembers verified signatures verifies once) and names signed one by one (each
  // answer its own RRSIG: one verification per miss at least, for every validator).
  struct NameSet {
    const char* what;
    std::string names;
  } sets[2] = {{"wildcard TXT names", {}}, {"names signed one by one (A)", {}}};
  for (int i = 0; i < kNames; ++i) {
    sets[0].names += "q" + std::to_string(i) + ".wild." + signed_zones[i % 3] + " TXT\n";
    sets[1].names += "d" + std::to_string(i / 3) + "." + signed_zones[i % 3] + " A\n";
  }
  for (const NameSet& set : sets) {
    const std::string misses = t::write_config(set.names);
    std::string repeated;
    for (int r = 0; r < kHitRounds; ++r) repeated += set.names;
    const std::string hits = t::write_config(repeated);
    std::printf("CPU per query (us; /proc utime+stime, 10 ms ticks), %d %s over RSA, Ed25519, NSEC3\n", kNames,
                set.what);
    std::printf("%-24s %10s %10s\n", "", "miss", "hit");
    double per[3][2] = {};
    for (int s = 0; s < 3; ++s) {
      double before = cpu_seconds(servers[s].pids);
      const std::string miss_out = run_dnsperf(servers[s].port, misses);
      per[s][0] = (cpu_seconds(servers[s].pids) - before) * 1e6 / kNames;
      before = cpu_seconds(servers[s].pids);
      const std::string hit_out = run_dnsperf(servers[s].port, hits);
      per[s][1] = (cpu_seconds(servers[s].pids) - before) * 1e6 / (kNames * kHitRounds);
      std::printf("%-24s %10.1f %10.1f\n  misses: %s  hits: %s", servers[s].name, per[s][0], per[s][1],
                  miss_out.c_str(), hit_out.c_str());
    }
    std::printf("serve / unbound: miss %.2f, hit %.2f; validating / not: miss %.2f, hit %.2f\n\n",
                per[0][0] / per[1][0], per[0][1] / per[1][1], per[0][0] / per[2][0], per[0][1] / per[2][1]);
  }
  CHECK(serve.ask("q1.wild.ed.test.", 16).ad());
  CHECK(serve.ask("d1.ed.test.", kTypeA).ad());
}

namespace {

// `dnsarena dnssec nta ARGS --segment SEG`: its output (stdout and stderr), its exit status in `status`.
std::string nta(const ValidatingServe& serve, const std::string& args, int& status) {
  return t::run_command(t::dnsarena_binary() + " dnssec nta " + args + " --segment " + serve.segment + " 2>&1",
                        &status);
}

// The misses each worker row counted (stats "rows" with a "worker").
std::vector<std::uint64_t> worker_misses(const ValidatingServe& serve) {
  std::vector<std::uint64_t> out;
  const nlohmann::json stats = t::serve_stats(serve.segment);  // kept: rows are references into it
  for (const auto& row : stats["rows"])
    if (row.contains("worker")) out.push_back(row.value("misses", 0ull));
  return out;
}

}  // namespace

TEST_CASE("dnssec nta: a run-time negative trust anchor makes a bogus zone insecure on every worker, until removed",
          "[dnssec][serve][nta][unbound]") {
  SignedZones zones;
  UnboundValidator unbound(zones, zones.anchor_ds_file());
  ValidatingServe serve(zones, 2);
  int status = -1;

  // Bogus: SERVFAIL with an EDE, then from the failure cache (a 60 s window).
  const t::DnsReply bogus = serve.ask("www.badds.test.", kTypeA);
  REQUIRE(bogus.rcode() == 2);
  CHECK(bogus.ede >= 0);
  CHECK(serve.ask("www.badds.test.", kTypeA).rcode() == 2);
  CHECK(unbound.ask("www.badds.test.", kTypeA).rcode() == 2);
  std::string out = nta(serve, "list --json", status);
  REQUIRE(status == 0);
  CHECK(nlohmann::json::parse(out)["negative_trust_anchors"].empty());
  CHECK(nta(serve, "list", status).find("no run-time negative trust anchors in force") != std::string::npos);
  CHECK(status == 0);

  out = nta(serve, "add badds.test", status);
  INFO(out);
  REQUIRE(status == 0);
  CHECK(out.find("badds.test. insecure until ") != std::string::npos);
  CHECK(out.find("(3600 s)") != std::string::npos);  // the default lifetime
  // Unbound's counterpart, with its cache of the zone flushed as `nta add` flushes ours.
  unbound.control("insecure_add badds.test");
  unbound.control("flush_zone badds.test");
  unbound.control("flush_bogus");

  // The next query: validated again (the failure cache's bogus window no longer applies),
  // insecure: NOERROR, the data, no AD; as Unbound answers.
  const t::DnsReply insecure = serve.ask("www.badds.test.", kTypeA);
  CHECK(insecure.rcode() == 0);
  CHECK(insecure.count(0, kTypeA) == 1);
  CHECK_FALSE(insecure.ad());
  CHECK(insecure.ede == -1);
  const t::DnsReply theirs = unbound.ask("www.badds.test.", kTypeA);
  CHECK(theirs.rcode() == insecure.rcode());
  CHECK(theirs.ad() == insecure.ad());
  // On every worker: misses under the zone from fresh sockets (spread by the kernel over
  // both) until both workers validated some, each insecure, as Unbound says.
  const std::vector<std::uint64_t> misses_before = worker_misses(serve);
  REQUIRE(misses_before.size() == 2);
  bool both = false;
  for (int i = 0; i < 40 && !both; ++i) {
    const std::string name = "n" + std::to_string(i) + ".badds.test.";
    const t::DnsReply r = serve.ask(name, kTypeA);
    INFO(name);
    CHECK(r.rcode() == 3);
    CHECK_FALSE(r.ad());
    if (i < 2) {
      const t::DnsReply u = unbound.ask(name, kTypeA);
      CHECK(u.rcode() == r.rcode());
      CHECK(u.ad() == r.ad());
    }
    const std::vector<std::uint64_t> now = worker_misses(serve);
    both = now.size() == 2 && now[0] > misses_before[0] && now[1] > misses_before[1];
  }
  CHECK(both);
  // Secure zones stay secure.
  CHECK(serve.ask("www.rsa.test.", kTypeA).ad());

  out = nta(serve, "list --json", status);
  REQUIRE(status == 0);
  const nlohmann::json list = nlohmann::json::parse(out)["negative_trust_anchors"];
  REQUIRE(list.size() == 1);
  CHECK(list[0]["name"] == "badds.test.");
  CHECK(list[0]["remaining_s"].get<std::uint64_t>() > 3500);
  CHECK(list[0]["remaining_s"].get<std::uint64_t>() <= 3600);
  CHECK(list[0]["expires"].get<std::string>().size() == 20);  // 2026-12-07T13:00:00Z
  out = nta(serve, "list", status);
  CHECK(out.find("badds.test. until ") != std::string::npos);

  // remove: the zone's insecure entries go with it; bogus again at once.
  out = nta(serve, "remove badds.test.", status);
  REQUIRE(status == 0);
  CHECK(out.find("badds.test. removed") != std::string::npos);
  CHECK(serve.ask("www.badds.test.", kTypeA).rcode() == 2);
  CHECK(serve.ask("n0.badds.test.", kTypeA).rcode() == 2);
  CHECK(nlohmann::json::parse(nta(serve, "list --json", status))["negative_trust_anchors"].empty());
  nta(serve, "remove badds.test.", status);
  CHECK(status == 1);  // no longer one
}

TEST_CASE("dnssec nta: a short-lived negative trust anchor expires by itself, bad input and a full table are errors",
          "[dnssec][serve][nta]") {
  SignedZones zones;
  ValidatingServe serve(zones, 2);
  int status = -1;
  REQUIRE(serve.ask("www.badds.test.", kTypeA).rcode() == 2);

  std::string out = nta(serve, "add badds.test --lifetime 2s", status);
  INFO(out);
  REQUIRE(status == 0);
  const t::DnsReply insecure = serve.ask("www.badds.test.", kTypeA);
  REQUIRE(insecure.rcode() == 0);
  CHECK_FALSE(insecure.ad());
  // Cached no longer than the NTA lasts, so that it ends on time with nothing left behind.
  for (const t::ReplyRecord& r : insecure.records) CHECK(r.ttl <= 2);
  CHECK(t::eventually([&] { return serve.ask("www.badds.test.", kTypeA).rcode() == 2; }));
  CHECK(nlohmann::json::parse(nta(serve, "list --json", status))["negative_trust_anchors"].empty());

  // Bad names and lifetimes: clear errors, nothing added.
  for (const char* args : {"add 'bad..name'", "add .", "add badds.test --lifetime 8d", "add badds.test --lifetime 0",
                           "add badds.test --lifetime 3x", "add badds.test --lifetime=-5", "add badds.test --lifetime 604801"}) {
    out = nta(serve, args, status);
    INFO(args << ": " << out);
    CHECK(status == 2);
    CHECK(out.find("dnsarena dnssec nta add: ") != std::string::npos);
  }
  CHECK(nta(serve, "add badds.test --lifetime 7d", status).find("604800 s") != std::string::npos);
  CHECK(status == 0);
  out = t::run_command(t::dnsarena_binary() + " dnssec nta add badds.test --segment no-such-segment-nta 2>&1", &status);
  CHECK(out.find("does not exist") != std::string::npos);
  CHECK(status == 2);
  out = t::run_command(t::dnsarena_binary() + " dnssec nta list --segment no-such-segment-nta 2>&1", &status);
  CHECK(out.find("does not exist") != std::string::npos);
  CHECK(status == 2);

  // A full table: the command says so and adds nothing; a renewal still works.
  {
    dnsarena::common::NtaTable table = dnsarena::common::NtaTable::open(serve.segment, false);
    const auto now = static_cast<std::uint64_t>(std::time(nullptr));
    for (unsigned i = 0; table.read(now)->entries.size() < dnsarena::common::NtaTable::kCapacity; ++i) {
      const std::string label = "f" + std::to_string(i);
      const std::string wire = static_cast<char>(label.size()) + label + std::string(1, '\0');
      const std::vector<std::uint8_t> name(wire.begin(), wire.end());
      REQUIRE(table.add(name, now + 600, now) != dnsarena::common::NtaTable::AddResult::full);
    }
  }
  out = nta(serve, "add one-more.test", status);
  CHECK(status == 1);
  CHECK(out.find("the table is full (256 negative trust anchors)") != std::string::npos);
  CHECK(nta(serve, "list", status).find("one-more") == std::string::npos);
  nta(serve, "add badds.test --lifetime 1h", status);
  CHECK(status == 0);
}

TEST_CASE("dnssec nta: a secure zone made insecure is not answered from its validated NSEC ranges, and a restarted worker keeps the NTA",
          "[dnssec][serve][nta][nsec]") {
  SignedZones zones;
  ValidatingServe serve(zones, 1);
  int status = -1;
  // A secure NXDOMAIN proves the range between rsa.test. and b.rsa.test. (aggressive NSEC).
  const t::DnsReply proven = serve.ask("a.rsa.test.", kTypeA);
  REQUIRE(proven.rcode() == 3);
  REQUIRE(proven.ad());
  REQUIRE(serve.ask("aa.rsa.test.", kTypeA).ad());  // from the range
  const std::string out = nta(serve, "add rsa.test", status);
  INFO(out);
  REQUIRE(status == 0);
  // Under the NTA: insecure, so no AD, though the range is still in the host's table.
  const t::DnsReply under = serve.ask("ab.rsa.test.", kTypeA);
  CHECK(under.rcode() == 3);
  CHECK_FALSE(under.ad());
  CHECK_FALSE(serve.ask("www.rsa.test.", kTypeA).ad());
  CHECK(serve.ask("www.ed.test.", kTypeA).ad());  // other zones stay secure

  // A worker killed -9: its successor (forked with the table's mapping) keeps the NTA.
  const auto before = serve.serve->children();
  REQUIRE(before.size() == 1);
  REQUIRE(::kill(before[0], SIGKILL) == 0);
  REQUIRE(t::eventually([&] {
    const auto now = serve.serve->children();
    return now.size() == 1 && now[0] != before[0];
  }));
  REQUIRE(t::udp_answered_within(serve.port, t::make_query(91, "www.ed.test.", kTypeA, 1232, true)));
  const t::DnsReply after = serve.ask("zz.rsa.test.", kTypeA);  // a miss the successor validates
  CHECK(after.rcode() == 3);
  CHECK_FALSE(after.ad());
  CHECK(serve.ask("www.n3.test.", kTypeA).ad());
}
