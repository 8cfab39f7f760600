// SPDX-License-Identifier: GPL-3.0-or-later
// The response policy in `dnsarena serve` (policy/, workers/policy_gate.hpp), with real
// sockets: each RPZ action and local data answered before the cache with its EDE, the
// upstream never asked for a blocked name, a cached name blocked after a SIGHUP with a new
// zone, a broken zone on reload keeping the running policy, and no query lost while the
// policy is reloaded under load; QNAME triggers along the CNAME and DNAME chain of cached
// and fetched answers, beside Unbound serving the same RPZ; the zone's SOA in negative
// policy answers.
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "common/child_process.hpp"
#include "common/loopback.hpp"
#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {

const char* kSoa = "$TTL 60\n@ SOA ns.rpz.test. admin.rpz.test. 1 3600 600 86400 60\n@ NS ns.rpz.test.\n";

// A config file whose policy is the RPZ file `zone_path` (origin rpz.test.) and a local zone.
std::string policy_config(const std::string& zone_path) {
  return write_config("log_level: info\npolicy:\n"
                      "  local_zone: [\"local.test static\"]\n"
                      "  local_data: [\"www.local.test. 120 A 192.0.2.77\",\n"
                      "    \"local.test. 3600 SOA ns.local.test. admin.local.test. 1 3600 600 86400 30\"]\n"
                      "  rpz: [{file: " + zone_path + ", name: rpz.test.}]\n");
}

std::string write_zone(const std::string& body) {
  const std::string path = write_config(std::string(kSoa) + body);
  return path;
}

DnsReply ask(std::uint16_t port, std::uint16_t id, const std::string& name, std::uint16_t type = 1,
             std::uint16_t edns = 1232, std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) {
  return udp_exchange(port, make_query(id, name, type, edns), timeout);
}

// The SOA records of a reply's authority section: "owner ttl" each.
std::vector<std::string> soa_records(const DnsReply& r) {
  std::vector<std::string> out;
  for (const ReplyRecord& rec : r.records)
    if (rec.section == 1 && rec.type == 6) out.push_back(rec.owner + " " + std::to_string(rec.ttl));
  return out;
}

// Unbound 1.17 forwarding to `upstream_port` with the RPZ file `zone_path` (origin
// rpz.test.), the reference: respip applies the zone's triggers. test. is one of
// Unbound's default local zones (RFC 6761): nodefault lets it resolve.
class UnboundRpz {
public:
  UnboundRpz(const std::string& zone_path, std::uint16_t upstream_port) {
    dir_ = std::filesystem::temp_directory_path() / ("dnsarena-unbound-rpz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    port_ = dnsarena::common::free_loopback_port();
    std::ofstream conf(dir_ + "/unbound.conf");
    conf << "server:\n  do-daemonize: no\n  chroot: \"\"\n  username: \"\"\n  directory: \"" << dir_
         << "\"\n  pidfile: \"\"\n  use-syslog: no\n  logfile: \"\"\n  verbosity: 1\n  num-threads: 1\n"
         << "  do-ip6: no\n  interface: 127.0.0.1@" << port_ << "\n  module-config: \"respip iterator\"\n"
         << "  do-not-query-localhost: no\n  local-zone: \"test.\" nodefault\n"
         << "forward-zone:\n  name: \".\"\n  forward-addr: 127.0.0.1@" << upstream_port << "\n"
         << "rpz:\n  name: rpz.test.\n  zonefile: " << zone_path << "\n";
    conf.close();
    const std::string unbound = std::filesystem::exists("/usr/sbin/unbound") ? "/usr/sbin/unbound" : "unbound";
    child_ = dnsarena::common::ChildProcess({unbound, "-d", "-c", dir_ + "/unbound.conf"},
                                            {.log_path = dir_ + "/unbound.log", .truncate_log = true});
    // Until it listens a query is refused at once (ICMP): asked again for up to 10 s.
    if (!eventually([&] { return ask(port_, 1, "txt.test.", 16, 1232, std::chrono::milliseconds(500)).answered; }))
      throw std::runtime_error("unbound did not start");
  }
  ~UnboundRpz() {
    child_ = {};
    std::filesystem::remove_all(dir_);
  }
  std::uint16_t port() const { return port_; }

private:
  std::string dir_;
  std::uint16_t port_ = 0;
  dnsarena::common::ChildProcess child_;
};

}  // namespace

TEST_CASE("serve applies RPZ actions and local data before the cache with EDE", "[serve][policy]") {
  const std::string zone = write_zone("blocked.test CNAME .\n"
                                      "*.wild.test CNAME *.\n"
                                      "a.test CNAME rpz-passthru.\n"
                                      "drop.test CNAME rpz-drop.\n"
                                      "garden.test A 192.0.2.99\n"
                                      "walled.test CNAME garden.test.\n"
                                      "ns.rpz-nsdname CNAME .\n");
  Service s({"--config", policy_config(zone)});
  const std::uint64_t upstream_before = s.upstream.queries();

  DnsReply r = ask(s.port, 1, "blocked.test.");
  REQUIRE(r.answered);
  CHECK(r.rcode() == 3);
  CHECK(r.ede == 15);
  CHECK(r.answers.empty());
  CHECK(soa_records(r) == std::vector<std::string>{"rpz.test. 60"});  // the zone's SOA: cached negatively
  CHECK(r.records.size() == 1);
  r = ask(s.port, 2, "blocked.test.", 1, 0);  // no EDNS: the same answer without the option
  CHECK(r.rcode() == 3);
  CHECK_FALSE(r.has_opt);
  CHECK(r.ede == -1);
  r = ask(s.port, 3, "x.y.wild.test.", 28);
  CHECK(r.rcode() == 0);
  CHECK(r.answers.empty());
  CHECK(r.ede == 15);
  CHECK(soa_records(r) == std::vector<std::string>{"rpz.test. 60"});
  CHECK_FALSE(ask(s.port, 4, "drop.test.", 1, 1232, std::chrono::milliseconds(700)).answered);
  r = ask(s.port, 5, "garden.test.");
  CHECK(r.rcode() == 0);
  CHECK(r.ede == 17);
  REQUIRE(r.answers.size() == 1);
  CHECK(r.answers[0] == "1 c0000263");
  r = ask(s.port, 6, "www.local.test.");
  REQUIRE(r.answers.size() == 1);
  CHECK(r.answers[0] == "1 c000024d");
  r = ask(s.port, 7, "nothing.local.test.");
  CHECK(r.rcode() == 3);
  CHECK(soa_records(r) == std::vector<std::string>{"local.test. 30"});  // the local zone's apex SOA, MINIMUM 30
  CHECK(s.upstream.queries() == upstream_before);  // nothing above went upstream

  // kdig sees the local data and the CNAME to the walled garden.
  CHECK(kdig_records(s.port, "garden.test.", "A").find("192.0.2.99") != std::string::npos);
  CHECK(kdig_records(s.port, "walled.test.", "A").find("CNAME\tgarden.test.") != std::string::npos);
  const std::string ede = run_command(kdig_program() + " +edns @127.0.0.1 -p " + std::to_string(s.port) + " blocked.test. A");
  CHECK(ede.find("EDE: 15 (Blocked)") != std::string::npos);

  // PASSTHRU goes upstream; the cache then answers it as usual.
  r = ask(s.port, 8, "a.test.");
  CHECK(r.rcode() == 0);
  CHECK(r.answers.size() == 2);
  CHECK(r.ede == -1);
  CHECK(s.upstream.queries() == upstream_before + 1);
  // A name no rule matches resolves as without policy.
  CHECK(ask(s.port, 9, "txt.test.", 16).answers.size() == 1);

  CHECK(s.total("policy_hits") >= 10);
  CHECK(s.total("policy_blocked") >= 5);
  CHECK(s.total("policy_local_data") >= 3);
  CHECK(s.total("policy_passthru") == 1);
  CHECK(s.total("policy_dropped") == 1);
  CHECK(s.serve->log().find("1 unsupported skipped") != std::string::npos);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("SIGHUP with a new zone blocks a cached name and a broken zone keeps the running policy", "[serve][policy][reload]") {
  const std::string zone = write_zone("blocked.test CNAME .\n");
  const std::string config = policy_config(zone);
  Service s({"--config", config});
  REQUIRE(ask(s.port, 1, "a.test.").answers.size() == 2);  // cached now
  REQUIRE(ask(s.port, 2, "a.test.").answers.size() == 2);
  const std::uint64_t upstream_before = s.upstream.queries();

  std::ofstream(zone) << kSoa << "blocked.test CNAME .\na.test CNAME .\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return s.serve->log().find("reloaded:") != std::string::npos; }));
  CHECK(eventually([&] { return ask(s.port, 3, "a.test.").rcode() == 3; }));
  for (std::uint16_t id = 10; id < 20; ++id) {  // every worker has the new policy
    const DnsReply r = ask(s.port, id, "a.test.");
    CHECK(r.rcode() == 3);
    CHECK(r.ede == 15);
  }
  CHECK(s.upstream.queries() == upstream_before);

  // A broken zone: logged with file and line, the running policy stays.
  std::ofstream(zone) << kSoa << "a.test CNAME .\nbad.test A 300.1.1.1\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return s.serve->log().find("keeping the running config") != std::string::npos; }));
  CHECK(s.serve->log().find(zone + ":5: ") != std::string::npos);
  for (std::uint16_t id = 30; id < 40; ++id) CHECK(ask(s.port, id, "a.test.").rcode() == 3);
  // serve --check-config names the same line.
  int status = -1;
  const std::string out =
      run_command(dnsarena_binary() + " serve --check-config " + config + " --upstream 127.0.0.1:53 2>&1", &status);
  CHECK(status == 1);
  CHECK(out.find(zone + ":5: ") != std::string::npos);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("reloading the policy under load loses no query", "[serve][policy][reload]") {
  const std::string zone = write_zone("blocked.test CNAME .\n");
  Service s({"--config", policy_config(zone)});
  REQUIRE(ask(s.port, 1, "a.test.").answers.size() == 2);
  std::atomic<bool> stop{false};
  std::atomic<unsigned> sent{0}, lost{0}, wrong{0};
  std::thread client([&] {
    for (std::uint16_t id = 100; !stop; ++id) {
      // a.test (cached) and blocked.test (policy) alternately, each waited for.
      const bool blocked = id % 2;
      const DnsReply r = ask(s.port, id, blocked ? "blocked.test." : "a.test.", 1, 1232, std::chrono::milliseconds(3000));
      ++sent;
      if (!r.answered) ++lost;
      else if (r.rcode() != (blocked ? 3u : 0u)) ++wrong;
    }
  });
  JoinOnExit join_client{stop, client};  // a failed REQUIRE below must not leave the thread running
  // Each reload while the client asks: some answers before it, the reload done (its log
  // line), and some answers after it before the next; the last one's workers answer too.
  auto answers_go_on = [&] {
    const unsigned from = sent;
    return eventually([&] { return sent >= from + 5; });
  };
  for (int i = 0; i < 4; ++i) {
    REQUIRE(answers_go_on());
    std::ofstream(zone) << kSoa << "blocked.test CNAME .\nother" << i << ".test CNAME .\n";
    REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
    REQUIRE(eventually([&] {
      return occurrences(s.serve->log(), "reloaded: 2 workers replaced") >= static_cast<std::size_t>(i) + 1;
    }));
  }
  REQUIRE(answers_go_on());
  stop = true;
  client.join();
  INFO("sent " << sent << ", lost " << lost << ", wrong " << wrong);
  CHECK(sent > 20);
  CHECK(lost == 0);
  CHECK(wrong == 0);
  CHECK(ask(s.port, 2, "other3.test.").rcode() == 3);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("a changed RPZ file is swapped in without a SIGHUP, a broken one keeps the running policy (logged once)",
          "[serve][policy][reload]") {
  const std::string zone = write_zone("blocked.test CNAME .\n");
  const std::string config = write_config("log_level: info\npolicy:\n  watch_interval_ms: 100\n"
                                          "  rpz: [{file: " + zone + ", name: rpz.test.}]\n");
  Service s({"--config", config});
  REQUIRE(ask(s.port, 1, "a.test.").answers.size() == 2);  // cached now
  REQUIRE(ask(s.port, 2, "blocked.test.").rcode() == 3);

  // Renamed into place, as a feed updater writes it.
  std::ofstream(zone + ".new") << kSoa << "blocked.test CNAME .\na.test CNAME .\n";
  REQUIRE(::rename((zone + ".new").c_str(), zone.c_str()) == 0);
  CHECK(eventually([&] { return s.serve->log().find("reloaded: 2 workers replaced with the new policy") != std::string::npos; }));
  CHECK(s.serve->log().find(zone + " changed") != std::string::npos);
  CHECK(eventually([&] { return ask(s.port, 3, "a.test.").rcode() == 3; }));
  for (std::uint16_t id = 10; id < 20; ++id) CHECK(ask(s.port, id, "a.test.").rcode() == 3);  // every worker

  // Broken, written in place: the running policy stays, and the error is logged once, not
  // at every check.
  std::ofstream(zone) << kSoa << "a.test CNAME .\nbad.test A 300.1.1.1\n";
  CHECK(eventually([&] { return s.serve->log().find("keeping the running policy") != std::string::npos; }));
  CHECK(s.serve->log().find(zone + ":5: ") != std::string::npos);
  // Six more checks of the file (each one wakeup of the supervisor, 100 ms apart).
  const std::uint64_t wakeups = voluntary_switches(s.serve->pid());
  CHECK(eventually([&] { return voluntary_switches(s.serve->pid()) >= wakeups + 6; }));
  CHECK(occurrences(s.serve->log(), "keeping the running policy") == 1);
  for (std::uint16_t id = 30; id < 40; ++id) CHECK(ask(s.port, id, "a.test.").rcode() == 3);

  // Fixed: a.test no longer blocked answers from the cache again.
  std::ofstream(zone) << kSoa << "blocked.test CNAME .\n";
  CHECK(eventually([&] { return ask(s.port, 50, "a.test.").answers.size() == 2; }));
  CHECK(ask(s.port, 51, "blocked.test.").rcode() == 3);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("QNAME triggers apply along the CNAME and DNAME chain, on the miss and on later hits, as in Unbound",
          "[serve][policy]") {
  // cname.test. is CNAME target.test. (+ its A); x.dname.test. is DNAME dname.test. ->
  // target.test., CNAME x.target.test. (+ its A) (test_upstream.hpp).
  const std::string zone = write_zone("target.test CNAME .\nx.target.test CNAME *.\n");
  const std::string zone2 = write_zone("blocked2.test CNAME .\n");
  Service s({"--config", write_config("log_level: info\npolicy:\n  rpz: [{file: " + zone + ", name: rpz.test.}, {file: " +
                                      zone2 + ", name: rpz2.test.}]\n")});
  const std::uint64_t upstream_before = s.upstream.queries();
  for (std::uint16_t round = 0; round < 2; ++round) {  // the miss, then the hit
    INFO("round " << round);
    for (bool tcp : {false, true}) {
      INFO("tcp " << tcp);
      const auto query = make_query(static_cast<std::uint16_t>(10 + round), "cname.test.", 1);
      DnsReply r = tcp ? tcp_exchange(s.port, query) : udp_exchange(s.port, query);
      REQUIRE(r.answered);
      CHECK(r.rcode() == 3);
      CHECK(r.ede == 15);
      CHECK(r.count(0, 5) == 1);  // the CNAME to the blocked name stays,
      CHECK(r.count(0, 1) == 0);  // its address goes
      CHECK(soa_records(r) == std::vector<std::string>{"rpz.test. 60"});
      CHECK_FALSE(r.ad());
      const auto dq = make_query(static_cast<std::uint16_t>(20 + round), "x.dname.test.", 1);
      r = tcp ? tcp_exchange(s.port, dq) : udp_exchange(s.port, dq);
      REQUIRE(r.answered);
      CHECK(r.rcode() == 0);  // NODATA for x.target.test.
      CHECK(r.ede == 15);
      CHECK(r.count(0, 39) == 1);
      CHECK(r.count(0, 5) == 1);
      CHECK(r.count(0, 1) == 0);
      CHECK(soa_records(r) == std::vector<std::string>{"rpz.test. 60"});
    }
  }
  CHECK(s.upstream.queries() == upstream_before + 2);  // each name fetched once: the rest were hits
  CHECK(s.total("hits") >= 6);
  CHECK(s.total("policy_hits") == 8);
  CHECK(s.total("policy_blocked") == 8);
  // A name no rule covers along its chain resolves as without policy.
  CHECK(ask(s.port, 30, "a.test.").answers.size() == 2);
  CHECK(ask(s.port, 31, "blocked2.test.").rcode() == 3);
  // Matches per zone and trigger kind (policy_counters.hpp), as `dnsarena stats` reads them.
  nlohmann::json policy;
  CHECK(eventually([&] {
    const nlohmann::json stats = serve_stats(s.segment);
    if (!stats.contains("answers") || !stats["answers"].contains("policy")) return false;
    policy = stats["answers"]["policy"];
    return policy.contains("rpz2.test.") && policy["rpz2.test."]["qname"] == 1;
  }));
  INFO(policy.dump());
  CHECK(policy["rpz.test."]["cname_chain"] == 8);
  CHECK(policy["rpz.test."]["qname"] == 0);
  CHECK(policy["rpz2.test."]["cname_chain"] == 0);

  // Unbound with the same zone and upstream: NXDOMAIN with the CNAME, no address.
  UnboundRpz unbound(zone, s.upstream.port());
  const DnsReply u = ask(unbound.port(), 40, "cname.test.");
  REQUIRE(u.answered);
  CHECK(u.rcode() == 3);
  CHECK(u.count(0, 5) == 1);
  CHECK(u.count(0, 1) == 0);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("rpz-ip triggers rewrite answers by their addresses, cached or fetched, as in Unbound", "[serve][policy]") {
  // cname.test.'s chain ends at 192.0.2.9; aaaa.test. is 2001:db8::1; a.test. has
  // 192.0.2.1 and 192.0.2.2; txt.test. has no address (test_upstream.hpp).
  const std::string zone = write_zone("32.9.2.0.192.rpz-ip CNAME .\n"
                                      "128.1.zz.db8.2001.rpz-ip CNAME *.\n"
                                      "32.2.2.0.192.rpz-ip A 192.0.2.66\n");
  Service s({"--config", write_config("log_level: info\npolicy:\n  rpz: [{file: " + zone + ", name: rpz.test.}]\n")});
  for (std::uint16_t round = 0; round < 2; ++round) {  // the miss, then the hit
    INFO("round " << round);
    DnsReply r = ask(s.port, 10 + round, "cname.test.");
    CHECK(r.rcode() == 3);
    CHECK(r.answers.empty());  // the whole answer is the rule's
    CHECK(r.ede == 15);
    CHECK(soa_records(r) == std::vector<std::string>{"rpz.test. 60"});
    r = ask(s.port, 20 + round, "aaaa.test.", 28);
    CHECK(r.rcode() == 0);
    CHECK(r.answers.empty());
    CHECK(r.ede == 15);
    r = ask(s.port, 30 + round, "a.test.");
    CHECK(r.rcode() == 0);
    CHECK(r.ede == 17);
    CHECK(r.answers == std::vector<std::string>{"1 c0000242"});  // the rule's 192.0.2.66 for a.test.
    CHECK(ask(s.port, 40 + round, "txt.test.", 16).answers.size() == 1);
  }
  CHECK(s.total("policy_hits") == 6);
  CHECK(s.serve->log().find(", 0 unsupported skipped") != std::string::npos);  // every trigger read
  UnboundRpz unbound(zone, s.upstream.port());
  const DnsReply u = ask(unbound.port(), 50, "cname.test.");
  REQUIRE(u.answered);
  CHECK(u.rcode() == 3);
  CHECK(u.count(0, 1) == 0);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("rpz-client-ip triggers: a blocked client, a client let through, the others as usual", "[serve][policy]") {
  const std::string zone = write_zone("target.test CNAME .\n"
                                      "32.2.0.0.127.rpz-client-ip CNAME .\n"
                                      "32.3.0.0.127.rpz-client-ip CNAME rpz-passthru.\n");
  Service s({"--config", write_config("log_level: info\npolicy:\n  rpz: [{file: " + zone + ", name: rpz.test.}]\n")});
  const auto query = [](std::uint16_t id, const char* name) { return make_query(id, name, 1); };
  // 127.0.0.2: every name NXDOMAIN, the upstream not asked.
  const std::uint64_t upstream_before = s.upstream.queries();
  DnsReply r = udp_exchange(s.port, query(1, "a.test."), std::chrono::milliseconds(2000), "127.0.0.2");
  REQUIRE(r.answered);
  CHECK(r.rcode() == 3);
  CHECK(r.ede == 15);
  CHECK(s.upstream.queries() == upstream_before);
  // 127.0.0.1: a.test. as usual (cached now), cname.test. blocked along its chain.
  CHECK(udp_exchange(s.port, query(2, "a.test.")).answers.size() == 2);
  CHECK(udp_exchange(s.port, query(3, "cname.test.")).rcode() == 3);
  // 127.0.0.2 again: the cached a.test. is not handed out.
  CHECK(udp_exchange(s.port, query(4, "a.test."), std::chrono::milliseconds(2000), "127.0.0.2").rcode() == 3);
  // 127.0.0.3, PASSTHRU: the chain rule does not apply to its answers (cached by now).
  for (std::uint16_t id = 5; id < 7; ++id) {
    r = udp_exchange(s.port, query(id, "cname.test."), std::chrono::milliseconds(2000), "127.0.0.3");
    CHECK(r.rcode() == 0);
    CHECK(r.answers.size() == 2);
  }
  CHECK(s.serve->stop() == 0);
}
