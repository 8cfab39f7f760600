// SPDX-License-Identifier: GPL-3.0-or-later
// The default local zones (policy/default_local_zones.hpp) and the rebinding filter
// (private_address.hpp) through `dnsarena serve`, beside Unbound 1.17 forwarding to the
// same test responder in the same test: the same names asked of both get the same rcode
// and answer section; the default zones' names never reach the upstream; a local_zone
// replaces one, nodefault and unblock_lan_zones drop them; private addresses of public
// names are removed before caching. Config errors name the key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/loopback.hpp"
#include "policy/policy_config.hpp"
#include "tests/workers/hostile_clients.hpp"
#include "tests/workers/service_fixture.hpp"
#include "workers/serve_config.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;

namespace {

// Unbound forwarding everything to `upstream` (plain DNS, no validator), with `extra`
// lines in its server: clause; from a private directory removed at the end.
class UnboundForwarder {
public:
  UnboundForwarder(std::uint16_t upstream, const std::string& extra) {
    static int n = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("dnsarena-unbound-fwd-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::create_directories(dir_);
    port_ = dnsarena::common::free_loopback_port();
    std::ofstream conf(dir_ + "/unbound.conf");
    conf << "server:\n  do-daemonize: no\n  chroot: \"\"\n  username: \"\"\n  directory: \"" << dir_
         << "\"\n  pidfile: \"\"\n  use-syslog: no\n  logfile: \"\"\n  verbosity: 1\n  num-threads: 1\n"
         << "  do-ip6: no\n  interface: 127.0.0.1@" << port_ << "\n  access-control: 127.0.0.0/8 allow\n"
         << "  module-config: \"iterator\"\n  do-not-query-localhost: no\n"
         << "  local-zone: \"test.\" nodefault\n"  // the responder's zone, forwarded (as serve_harness does)
         << extra << "forward-zone:\n  name: \".\"\n  forward-addr: 127.0.0.1@" << upstream << "\n"
         << "remote-control:\n  control-enable: no\n";
    conf.close();
    const std::string unbound = std::filesystem::exists("/usr/sbin/unbound") ? "/usr/sbin/unbound" : "unbound";
    child_ = dnsarena::common::ChildProcess({unbound, "-d", "-c", dir_ + "/unbound.conf"},
                                            {.log_path = dir_ + "/unbound.log", .truncate_log = true});
    // Until it listens a query is refused at once (ICMP): asked again for up to 10 s.
    if (!eventually([&] { return udp_exchange(port_, make_query(1, "localhost", 1), 500ms).answered; }))
      throw std::runtime_error("unbound did not start: " + log());
  }
  ~UnboundForwarder() {
    child_ = {};
    std::filesystem::remove_all(dir_);
  }
  std::uint16_t port() const { return port_; }
  std::string log() const {
    std::ifstream f(dir_ + "/unbound.log");
    return {std::istreambuf_iterator<char>(f), {}};
  }

private:
  std::string dir_;
  std::uint16_t port_ = 0;
  dnsarena::common::ChildProcess child_;
};

struct Q {
  const char* name;
  std::uint16_t qtype;
};

// "rcode; owner type [ttl] rdata" of each answer record, sorted: what the two servers
// must agree on. TTLs are compared for local answers (fixed), not for forwarded ones.
std::string answer_text(const DnsReply& r, bool with_ttl) {
  if (!r.answered) return "no answer";
  std::vector<std::string> rows;
  std::size_t k = 0;
  for (const ReplyRecord& rec : r.records) {
    if (rec.section != 0) continue;
    rows.push_back(rec.owner + " " + std::to_string(rec.type) + (with_ttl ? " " + std::to_string(rec.ttl) : "") +
                   " " + (k < r.answers.size() ? r.answers[k] : "?"));
    ++k;
  }
  std::sort(rows.begin(), rows.end());
  std::string s = "rcode " + std::to_string(r.rcode()) + ";";
  for (const std::string& row : rows) s += " " + row + ";";
  return s;
}

std::string dotted(const char* name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  return n.back() == '.' ? n : n + ".";
}

bool upstream_was_asked(const TestUpstream& up, const char* name) {
  const std::string want = dotted(name);
  for (std::string got : up.names_received()) {
    std::transform(got.begin(), got.end(), got.begin(), [](unsigned char c) { return std::tolower(c); });
    if (got == want) return true;
  }
  return false;
}

// One question to serve (at `ours`) and to Unbound (at `theirs`), with the next two IDs:
// serve must answer, and the two must agree on rcode and answer section (TTLs too with
// `with_ttl`). Returns serve's reply.
DnsReply ask_both(std::uint16_t ours, std::uint16_t theirs, std::uint16_t& id, const Q& q, bool with_ttl = false) {
  INFO(q.name << " type " << q.qtype);
  const DnsReply mine = udp_exchange(ours, make_query(id++, q.name, q.qtype));
  const DnsReply other = udp_exchange(theirs, make_query(id++, q.name, q.qtype));
  REQUIRE(mine.answered);
  CHECK(answer_text(mine, with_ttl) == answer_text(other, with_ttl));
  return mine;
}

constexpr const char* kIp6Loopback = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa";

}  // namespace

TEST_CASE("default local zones: answered by serve as Unbound answers them, never asked upstream",
          "[serve][policy][local-zone]") {
  Service s;
  UnboundForwarder unbound(s.upstream.port(), "");
  const std::vector<Q> local = {
      {"localhost", 1},
      {"localhost", 28},
      {"localhost", 15},  // NODATA
      {"www.LocalHost", 1},
      {"1.0.0.127.in-addr.arpa", 12},
      {"2.0.0.127.in-addr.arpa", 12},
      {kIp6Loopback, 12},
      {"printer.home.arpa", 1},
      {"home.arpa", 6},
      {"home.arpa", 2},
      {"home.arpa", 1},
      {"hidden.onion", 1},
      {"www.invalid", 28},
      {"invalid", 6},
      {"1.1.168.192.in-addr.arpa", 12},
      {"4.3.2.10.in-addr.arpa", 12},
      {"10.in-addr.arpa", 6},
      {"10.in-addr.arpa", 1},
      {"9.9.31.172.in-addr.arpa", 12},
      {"1.1.64.100.in-addr.arpa", 12},
      {"1.1.254.169.in-addr.arpa", 12},
      {"5.2.0.192.in-addr.arpa", 12},
      {"255.255.255.255.in-addr.arpa", 12},
      {"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa", 12},
      {"0.8.e.f.ip6.arpa", 12},
      {"1.0.8.b.d.0.1.0.0.2.ip6.arpa", 12},
  };
  std::uint16_t id = 100;
  for (const Q& q : local) {
    INFO(q.name << " type " << q.qtype);
    ask_both(s.port, unbound.port(), id, q, true);
    CHECK_FALSE(upstream_was_asked(s.upstream, q.name));
  }
  // Names next to them are forwarded by both (the responder's NXDOMAIN, or its data).
  for (const Q& q : std::vector<Q>{{"a.test", 1}, {"onion.example", 1}, {"1.1.1.1.in-addr.arpa", 12},
                                   {"1.15.172.in-addr.arpa", 12}}) {
    INFO(q.name);
    ask_both(s.port, unbound.port(), id, q);
    CHECK(upstream_was_asked(s.upstream, q.name));
  }
  CHECK(s.total("policy_hits") >= local.size());
  CHECK(s.serve->log().find("policy zone default (built in)") != std::string::npos);
}

TEST_CASE("default local zones: a local_zone replaces one, nodefault and unblock_lan_zones drop them, as in Unbound",
          "[serve][policy][local-zone]") {
  const std::string cfg = write_config(
      "policy:\n  local_zone: [\"10.in-addr.arpa. transparent\", \"onion. nodefault\", \"home.arpa. static\"]\n"
      "  local_data: [\"printer.home.arpa. 300 A 192.168.1.9\"]\n");
  Service s({"--config", cfg});
  UnboundForwarder unbound(s.upstream.port(), "  local-zone: \"10.in-addr.arpa.\" transparent\n"
                                              "  local-zone: \"onion.\" nodefault\n"
                                              "  local-zone: \"home.arpa.\" static\n"
                                              "  local-data: \"printer.home.arpa. 300 A 192.168.1.9\"\n");
  std::uint16_t id = 1;
  auto same = [&](const char* name, std::uint16_t qtype) { return ask_both(s.port, unbound.port(), id, {name, qtype}); };
  same("4.3.2.10.in-addr.arpa", 12);
  CHECK(upstream_was_asked(s.upstream, "4.3.2.10.in-addr.arpa"));  // transparent: forwarded
  same("hidden.onion", 1);
  CHECK(upstream_was_asked(s.upstream, "hidden.onion"));  // dropped: forwarded
  CHECK(same("printer.home.arpa", 1).answers == std::vector<std::string>{"1 c0a80109"});
  CHECK(same("other.home.arpa", 1).rcode() == 3);
  CHECK(same("1.1.168.192.in-addr.arpa", 12).rcode() == 3);  // the other defaults stay
  CHECK_FALSE(upstream_was_asked(s.upstream, "other.home.arpa"));
  CHECK_FALSE(upstream_was_asked(s.upstream, "1.1.168.192.in-addr.arpa"));

  Service lan({"--config", write_config("policy: {unblock_lan_zones: true}\n")});
  UnboundForwarder unbound_lan(lan.upstream.port(), "  unblock-lan-zones: yes\n");
  for (const Q& q : std::vector<Q>{{"1.1.168.192.in-addr.arpa", 12}, {"localhost", 1}, {"x.onion", 1}}) {
    ask_both(lan.port, unbound_lan.port(), id, q);
  }
  CHECK(upstream_was_asked(lan.upstream, "1.1.168.192.in-addr.arpa"));
  CHECK_FALSE(upstream_was_asked(lan.upstream, "x.onion"));
}

TEST_CASE("private_address: private addresses of public names removed before caching, as Unbound's scrubber does",
          "[serve][private-address]") {
  // The responder's a.test has 192.0.2.1 and .2, aaaa.test 2001:db8::1, cname.test a
  // CNAME to target.test (192.0.2.9), x.deleg.test a referral with glue 192.0.2.53.
  const std::string lists = "[192.0.2.1/32, 192.0.2.9, 192.0.2.53/32, \"2001:db8::/32\"]";
  Service s({"--config", write_config("private_address: " + lists + "\n")});
  UnboundForwarder unbound(s.upstream.port(), "  private-address: 192.0.2.1/32\n  private-address: 192.0.2.9/32\n"
                                              "  private-address: 192.0.2.53/32\n  private-address: 2001:db8::/32\n");
  std::uint16_t id = 1;
  auto both = [&](const char* name, std::uint16_t qtype) { return ask_both(s.port, unbound.port(), id, {name, qtype}); };
  // One of two records removed, the other kept; cached so: the second ask is a hit.
  CHECK(both("a.test", 1).answers == std::vector<std::string>{"1 c0000202"});
  const std::uint64_t asked = s.upstream.queries();
  CHECK(udp_exchange(s.port, make_query(id++, "a.test", 1)).answers == std::vector<std::string>{"1 c0000202"});
  CHECK(s.upstream.queries() == asked);
  // Every record of the RRset removed: NOERROR without it; a CNAME chain up to it.
  const DnsReply aaaa = both("aaaa.test", 28);
  CHECK(aaaa.rcode() == 0);
  CHECK(aaaa.answers.empty());
  // (Unbound then asks for the CNAME's target on its own, which this responder answers
  // NXDOMAIN: its rcode differs for that reason, the records are the same.)
  const DnsReply cname = udp_exchange(s.port, make_query(id++, "cname.test", 1));
  const DnsReply unbound_cname = udp_exchange(unbound.port(), make_query(id++, "cname.test", 1));
  CHECK(cname.rcode() == 0);
  CHECK(cname.count(0, 5) == 1);
  CHECK(cname.count(0, 1) == 0);
  CHECK(cname.answers == unbound_cname.answers);
  both("txt.test", 16);  // other types untouched
  // The referral's glue is an address too.
  const DnsReply deleg = udp_exchange(s.port, make_query(id++, "x.deleg.test", 1));
  CHECK(deleg.count(1, 2) == 1);
  CHECK(deleg.count(2, 1) == 0);

  // A private domain may have them; the rest are still filtered.
  Service exempt({"--config", write_config("private_address: " + lists + "\nprivate_domain: [a.test]\n")});
  CHECK(udp_exchange(exempt.port, make_query(1, "a.test", 1)).answers.size() == 2);
  CHECK(udp_exchange(exempt.port, make_query(2, "aaaa.test", 28)).answers.empty());
  // Off by default: everything as the responder gave it.
  Service plain;
  CHECK(udp_exchange(plain.port, make_query(1, "a.test", 1)).answers.size() == 2);
  CHECK(udp_exchange(plain.port, make_query(2, "aaaa.test", 28)).answers.size() == 1);
}

// Unbound follows a local-data CNAME in a redirect zone alone, and resolves its target by
// the iterator, never in its local data; serve follows it in every local zone type and
// looks the target up in the policy first (a local name is answered locally, a loop ends).
TEST_CASE("local_data CNAME: its target resolved through the cache or the upstream, as Unbound follows it",
          "[serve][policy][local-zone]") {
  const char* data[] = {"alias.example. 300 IN CNAME a.test.", "gone.example. 300 IN CNAME missing.test.",
                        "hop.example. 300 IN CNAME inner.example.", "inner.example. 300 IN A 192.0.2.55",
                        "loop1.example. 300 IN CNAME loop2.example.", "loop2.example. 300 IN CNAME loop1.example."};
  std::string ours_cfg = "policy:\n  local_data: [";
  std::string theirs_cfg;
  for (const char* rr : data) {
    ours_cfg += std::string(ours_cfg.back() == '[' ? "" : ", ") + "\"" + rr + "\"";
    const std::string owner(rr, std::strchr(rr, ' '));
    if (std::strstr(rr, "CNAME")) theirs_cfg += "  local-zone: \"" + owner + "\" redirect\n";
    theirs_cfg += std::string("  local-data: \"") + rr + "\"\n";
  }
  Service s({"--config", write_config(ours_cfg + "]\n")});
  UnboundForwarder unbound(s.upstream.port(), theirs_cfg);
  std::uint16_t id = 1;
  DnsReply theirs;
  std::uint64_t ours_asked = 0;  // the upstream queries serve sent for the last question
  auto ask = [&](const char* name, std::uint16_t qtype) {
    INFO(name << " type " << qtype);
    const std::uint64_t queries = s.upstream.queries();
    const DnsReply ours = udp_exchange(s.port, make_query(id++, name, qtype));
    ours_asked = s.upstream.queries() - queries;
    theirs = udp_exchange(unbound.port(), make_query(id++, name, qtype));
    REQUIRE(ours.answered);
    REQUIRE(theirs.answered);
    CHECK(ours.id == id - 2);
    CHECK(ours.has_opt);
    return ours;
  };
  // Through the upstream, then from the cache: the local CNAME first, then the target's A.
  const std::vector<std::string> want{"1 c0000201", "1 c0000202", "5 0161047465737400"};  // sorted
  const std::uint64_t before = s.upstream.queries();
  const DnsReply first = ask("alias.example", 1);
  CHECK(answer_text(first, false) == answer_text(theirs, false));
  CHECK(first.rcode() == 0);
  CHECK(first.answers == want);
  CHECK(upstream_was_asked(s.upstream, "a.test"));
  const std::uint64_t after_first = s.upstream.queries();
  CHECK(after_first > before);
  const DnsReply second = udp_exchange(s.port, make_query(id++, "Alias.Example", 1));
  REQUIRE(second.answered);
  CHECK(second.answers == want);
  CHECK(std::string(second.wire.begin() + 12, second.wire.begin() + 18) == "\x05" "Alias");  // the client's case
  CHECK(s.upstream.queries() == after_first);  // a.test. came from the cache
  // A target the upstream does not know: its NXDOMAIN, with its SOA, after the CNAME.
  const DnsReply gone = ask("gone.example", 1);
  CHECK(answer_text(gone, false) == answer_text(theirs, false));
  CHECK(gone.rcode() == 3);
  CHECK(gone.answers == std::vector<std::string>{"5 076d697373696e67047465737400"});
  CHECK(gone.count(1, 6) == 1);
  CHECK(gone.count(1, 6) == theirs.count(1, 6));
  // The same name asked for its CNAME: the record alone, nothing followed.
  const DnsReply cname = ask("alias.example", 5);
  CHECK(answer_text(cname, true) == answer_text(theirs, true));
  CHECK(cname.answers == std::vector<std::string>{"5 0161047465737400"});
  // A CNAME to another local name: followed inside the local data, never asked upstream
  // (Unbound asks its upstream, which has no inner.example.: NXDOMAIN after the CNAME).
  const DnsReply hop = ask("hop.example", 1);
  CHECK(hop.rcode() == 0);
  CHECK(hop.answers == std::vector<std::string>{"1 c0000237", "5 05696e6e6572076578616d706c6500"});
  CHECK(ours_asked == 0);
  CHECK(theirs.answers == std::vector<std::string>{"5 05696e6e6572076578616d706c6500"});
  CHECK(theirs.rcode() == 3);
  // A loop of two local CNAMEs ends at the bound: SERVFAIL, never asked upstream (Unbound,
  // which does not look loop2.example. up in its local data, answers the upstream's
  // NXDOMAIN for it after the first CNAME).
  const DnsReply loop = ask("loop1.example", 1);
  CHECK(loop.rcode() == 2);
  CHECK(loop.answers.empty());
  CHECK(ours_asked == 0);
  CHECK(theirs.rcode() == 3);
  CHECK(theirs.answers == std::vector<std::string>{"5 056c6f6f7032076578616d706c6500"});
}

TEST_CASE("local_data CNAME: the policy on the target's chain, over TCP, and clients waiting on both workers",
          "[serve][policy][local-zone]") {
  const std::string zone = write_config("$TTL 60\n@ SOA ns.rpz.test. admin.rpz.test. 1 3600 600 86400 60\n"
                                        "@ NS ns.rpz.test.\ntarget.test CNAME .\n");
  Service s({"--config", write_config("policy:\n  local_data: [\"walk.example. 300 IN CNAME cname.test.\",\n"
                                      "    \"slowalias.example. 300 IN CNAME slow400c.host.test.\",\n"
                                      "    \"bigalias.example. 300 IN CNAME big.test.\"]\n"
                                      "  rpz: [{file: " + zone + ", name: rpz.test.}]\n")});
  std::uint16_t id = 1;
  // The upstream's chain for cname.test. leads to target.test., which the RPZ blocks: the
  // local CNAME and the chain up to the blocked name stay, NXDOMAIN, no address. Fetched,
  // then from the cache, then over TCP.
  const std::string walk_target = "5 05636e616d65047465737400";  // walk.example. CNAME cname.test.
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const auto query = make_query(id++, "walk.example", 1);
    const DnsReply r = round < 2 ? udp_exchange(s.port, query) : tcp_exchange(s.port, query);
    REQUIRE(r.answered);
    CHECK(r.rcode() == 3);
    CHECK(r.count(0, 1) == 0);
    CHECK(r.count(0, 5) == 2);
    CHECK(std::find(r.answers.begin(), r.answers.end(), walk_target) != r.answers.end());
    CHECK(r.ede == 15);
  }
  CHECK(s.total("policy_hits") >= 3 + 3);  // the local data, then the chain's rule, each time

  // Over the client's size (512 bytes without EDNS): TC and no records; over TCP all of it.
  const DnsReply small = udp_exchange(s.port, make_query(id++, "bigalias.example", 16, 0));
  REQUIRE(small.answered);
  CHECK(small.tc());
  CHECK(small.records.empty());
  const DnsReply whole = tcp_exchange(s.port, make_query(id++, "bigalias.example", 16, 0));
  REQUIRE(whole.answered);
  CHECK_FALSE(whole.tc());
  CHECK(whole.count(0, 5) == 1);
  CHECK(whole.count(0, 16) >= 1);
  CHECK(whole.wire.size() > 512);

  // Clients on both workers (UDP, and one over TCP) ask the alias of a name the upstream
  // answers after 400 ms: one waits on the upstream query of its worker, others join it
  // or the other worker's; every one gets the local CNAME and the target's address.
  const std::string slow_cname = "5 08736c6f773430306304686f7374047465737400";
  std::vector<std::thread> clients;
  std::vector<DnsReply> replies(12);
  for (unsigned i = 0; i < replies.size(); ++i)
    clients.emplace_back([&, i] {
      const auto query = make_query(static_cast<std::uint16_t>(1000 + i), "slowalias.example", 1);
      replies[i] = i == 0 ? tcp_exchange(s.port, query, 5000ms) : udp_exchange(s.port, query, 5000ms);
    });
  for (std::thread& t : clients) t.join();
  for (unsigned i = 0; i < replies.size(); ++i) {
    INFO("client " << i);
    REQUIRE(replies[i].answered);
    CHECK(replies[i].id == 1000 + i);
    CHECK(replies[i].rcode() == 0);
    CHECK(replies[i].answers == std::vector<std::string>{"1 c0000264", slow_cname});
  }
  std::size_t asked = 0;
  for (std::string n : s.upstream.names_received()) {  // as sent: 0x20 case
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
    asked += n == "slow400c.host.test.";
  }
  CHECK(asked >= 1);
  CHECK(asked < replies.size());
  CHECK(s.total("upstream_joined") >= 1);
}

TEST_CASE("local_data CNAME: a target expired in the cache is answered stale behind the CNAME, at the client "
          "response timer and with answer_first",
          "[serve][policy][local-zone][stale][timing]") {
  const std::string local = "policy:\n  local_data: [\"alias.example. 300 IN CNAME a.test.\"]\nttl:\n  ceiling: 1\n";
  for (const char* stale : {"stale:\n  client_timeout_ms: 600\n", "stale:\n  answer_first: true\n"}) {
    INFO(stale);
    Service s({"-c", write_config(local + stale), "--upstream-attempts", "1"});
    std::uint16_t id = 1;
    const DnsReply fresh = udp_exchange(s.port, make_query(id++, "alias.example", 1));
    REQUIRE(fresh.answered);
    REQUIRE(fresh.count(0, 1) == 2);
    REQUIRE(eventually([&] { return live_cache_entries(s.segment) == 0; }));  // a.test. expired (TTL capped at 1 s)
    s.upstream.set_mode(UpstreamMode::silent);
    const DnsReply r = udp_exchange(s.port, make_query(id++, "alias.example", 1), 3000ms);
    REQUIRE(r.answered);
    CHECK(r.rcode() == 0);
    CHECK(r.answers == std::vector<std::string>{"1 c0000201", "1 c0000202", "5 0161047465737400"});
    CHECK(r.ede == 3);  // Stale Answer
    for (const ReplyRecord& rec : r.records) CHECK(rec.ttl == (rec.type == 5 ? 300u : 30u));
    CHECK(s.total("stale_answers") >= 1);
  }
}

TEST_CASE("private_address, private_domain, unblock_lan_zones and nodefault: a bad value is an error naming the key",
          "[serve][config][private-address][local-zone]") {
  using dnsarena::workers::load_serve_config;
  const auto good = load_serve_config(
      write_config("private_address: [10.0.0.0/8, \"fd00::/8\", 127.0.0.1]\nprivate_domain: [corp.example]\n"
                   "policy: {unblock_lan_zones: true}\n"));
  CHECK(good.private_addresses.enabled());
  CHECK(good.private_addresses.subnet_texts().size() == 3);
  CHECK(good.policy.unblock_lan_zones);
  CHECK_FALSE(load_serve_config(write_config("log_level: info\n")).private_addresses.enabled());
  CHECK_FALSE(load_serve_config(write_config("log_level: info\n")).policy.unblock_lan_zones);
  auto error_of = [](const std::string& yaml) {
    try {
      load_serve_config(write_config(yaml));
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(error_of("private_address: [10.0.0.0/33]\n"),
             Catch::Contains("private_address") && Catch::Contains("prefix '33' is not 0..32"));
  CHECK_THAT(error_of("private_address: [10.0.0.0/8, intranet]\n"),
             Catch::Contains("private_address") && Catch::Contains("'intranet' is not an IPv4 or IPv6 address"));
  CHECK_THAT(error_of("private_address: 10.0.0.0/8\n"),
             Catch::Contains("private_address") && Catch::Contains("expected a list of subnets"));
  CHECK_THAT(error_of("private_domain: [corp.example]\n"),
             Catch::Contains("private_domain") && Catch::Contains("lists no subnet"));
  CHECK_THAT(error_of("private_address: [10.0.0.0/8]\nprivate_domain: [\"a..b\"]\n"), Catch::Contains("private_domain"));
  CHECK_THAT(error_of("private_adress: [10.0.0.0/8]\n"), Catch::Contains("private_adress"));
  CHECK_THAT(error_of("policy: {unblock_lan_zones: maybe}\n"), Catch::Contains("unblock_lan_zones"));
  // A nodefault for a name that is not a default zone: serve does not start, and says so.
  int status = -1;
  const std::string out = run_command(dnsarena_binary() + " serve --check-config " +
                                          write_config("policy:\n  local_zone: [\"example. nodefault\"]\n") +
                                          " --upstream 127.0.0.1:53 2>&1",
                                      &status);
  CHECK(status == 1);
  CHECK_THAT(out, Catch::Contains("'example. nodefault': not a default local zone"));
  // --local-zone adds to the config's list.
  const std::string flagged = run_command(dnsarena_binary() + " serve --check-config " +
                                              write_config("log_level: info\n") +
                                              " --upstream 127.0.0.1:53 --local-zone 'example. nodefault' 2>&1",
                                          &status);
  CHECK(status == 1);
  CHECK_THAT(flagged, Catch::Contains("not a default local zone"));
}
