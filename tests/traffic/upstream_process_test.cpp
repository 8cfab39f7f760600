// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim upstream` as a real child process, queried with kdig and our own client.
#include <arpa/inet.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <regex>

#include "dns/query_builder.hpp"
#include "sim/traffic/upstream_zone.hpp"
#include "upstream_process.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

using namespace dnsarena;
using namespace dnsarena::sim;
using namespace dnsarena::sim::traffic;
using dnsarena::cache::EcsFamily;

namespace {

constexpr std::uint64_t kUpstreamSeed = 5;

// The same zone the child serves (small profile), for the expected answers.
// The embedded default (configs/profiles/seed.yaml) with a small name universe.
const char* const kProfileYaml =
    "names: 2000\nnegative: {share: 0.04}\ncname: {share: 0.05}\n"
    "stray: {nodata_share: 0.02, nxdomain_share: 0.01}\necs: {share: 0.1, subnets: 0}\n";

struct Child {
  std::string profile_path;
  TrafficProfile profile;
  std::unique_ptr<UpstreamZone> zone;
  std::unique_ptr<test::UpstreamProcess> proc;

  Child() {
    char tmpl[] = "/tmp/traffic_test_profile_XXXXXX";
    const int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, kProfileYaml, std::strlen(kProfileYaml)) == static_cast<ssize_t>(std::strlen(kProfileYaml)));
    ::close(fd);
    profile_path = tmpl;
    profile = load_traffic_profile(profile_path);
    zone = std::make_unique<UpstreamZone>(profile, kUpstreamSeed, "zone.");
    proc = std::make_unique<test::UpstreamProcess>(
        std::vector<std::string>{"--profile", profile_path, "--seed", std::to_string(kUpstreamSeed)});
  }
  ~Child() {
    proc.reset();
    ::unlink(profile_path.c_str());
  }
  std::uint64_t find(const std::function<bool(const GeneratedEntry&)>& pred) const {
    for (std::uint64_t i = 0; i < zone->size(); ++i)
      if (pred(zone->entry(i))) return i;
    FAIL("no such entry");
    return 0;
  }
  static bool plain(const GeneratedEntry& e) {
    return !e.negative && e.cname_target.empty() && e.ecs.family == EcsFamily::none;
  }
  std::uint64_t answered() const {
    const std::string out = test::kdig(proc->port(), {"count.stats.zone.", "TXT", "+short"});
    std::smatch m;
    const std::regex re("\"answered=([0-9]+)\"");
    REQUIRE(std::regex_search(out, m, re));
    return std::stoull(m[1]);
  }
};

std::string rdata_text(std::uint16_t type, const Bytes& rd) {
  char buf[INET6_ADDRSTRLEN];
  if (type == wire::kTypeA) return ::inet_ntop(AF_INET, rd.data(), buf, sizeof buf);
  return ::inet_ntop(AF_INET6, rd.data(), buf, sizeof buf);
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const auto nl = s.find('\n', pos);
    const std::string line = s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.empty()) out.push_back(line);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("sim upstream answers kdig: A, AAAA, TXT, CNAME, NXDOMAIN, NODATA", "[traffic][upstream][process]") {
  Child c;
  const std::uint16_t port = c.proc->port();
  for (std::uint16_t type : {wire::kTypeA, wire::kTypeAaaa}) {
    const std::uint64_t i = c.find([&](const GeneratedEntry& e) { return Child::plain(e) && e.qtype == type; });
    std::vector<std::string> want;
    for (const auto& rd : c.zone->entry(i).rdatas) want.push_back(rdata_text(type, rd));
    CHECK(lines(test::kdig(port, {c.zone->name_text(i), dns::type_name(type), "+short"})) == want);
  }
  {  // TXT: count the strings (kdig escapes their bytes); exact bytes are checked below.
    const std::uint64_t i = c.find([](const GeneratedEntry& e) { return Child::plain(e) && e.qtype == wire::kTypeTxt; });
    CHECK(lines(test::kdig(port, {c.zone->name_text(i), "TXT", "+short", "+tcp"})).size() ==
          c.zone->entry(i).rdatas.size());
  }
  {  // CNAME chain
    const std::uint64_t i = c.find([](const GeneratedEntry& e) {
      return !e.negative && !e.cname_target.empty() && e.ecs.family == EcsFamily::none && e.qtype == wire::kTypeA;
    });
    const auto out = lines(test::kdig(port, {c.zone->name_text(i), "A", "+short"}));
    REQUIRE(out.size() == 1 + c.zone->entry(i).rdatas.size());
    CHECK(out[0] == "cdn." + c.zone->name_text(i));
    CHECK(out[1] == rdata_text(wire::kTypeA, c.zone->entry(i).rdatas[0]));
  }
  {  // NXDOMAIN (unknown name and a negative name) and NODATA
    CHECK_THAT(test::kdig(port, {"nx42.zone.", "A"}), Catch::Contains("status: NXDOMAIN"));
    const std::uint64_t nx = c.find([](const GeneratedEntry& e) { return e.negative && e.rcode == 3; });
    CHECK_THAT(test::kdig(port, {c.zone->name_text(nx), "AAAA"}), Catch::Contains("status: NXDOMAIN"));
    const std::uint64_t a = c.find([](const GeneratedEntry& e) { return Child::plain(e) && e.qtype == wire::kTypeA; });
    const std::string nodata = test::kdig(port, {c.zone->name_text(a), "TXT"});
    CHECK_THAT(nodata, Catch::Contains("status: NOERROR"));
    CHECK_THAT(nodata, Catch::Contains("ANSWER: 0"));
    CHECK_THAT(nodata, Catch::Contains("SOA"));
  }
}

TEST_CASE("sim upstream over our own UDP and TCP client, stats and malformed input",
          "[traffic][upstream][process]") {
  Child c;
  const std::uint16_t port = c.proc->port();
  const std::uint64_t t = c.find([](const GeneratedEntry& e) { return Child::plain(e) && e.qtype == wire::kTypeTxt; });
  const std::uint64_t before = c.answered();
  for (bool tcp : {false, true}) {
    const Bytes q = dns::build_query({.id = 77, .qname = c.zone->name_wire(t), .qtype = wire::kTypeTxt});
    const Bytes wire = tcp ? test::exchange_tcp(port, q) : test::exchange_udp(port, q);
    dns::Message r;
    REQUIRE(dns::parse_message(wire, r, true) == dns::ParseStatus::ok);
    CHECK(r.id == 77);
    std::vector<Bytes> got;
    for (const auto& rec : r.answer) got.push_back(rec.rdata);
    CHECK(got == c.zone->entry(t).rdatas);
  }
  // Garbage with a readable header: FORMERR with the client's ID; too short: dropped.
  const Bytes garbage = {0xAB, 0xCD, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC0, 0x0C, 0, 1, 0, 1};
  const Bytes formerr = test::exchange_udp(port, garbage);
  REQUIRE(formerr.size() >= 12);
  CHECK(formerr[0] == 0xAB);
  CHECK(formerr[1] == 0xCD);
  CHECK((formerr[3] & 0x0F) == wire::kRcodeFormErr);
  CHECK(test::exchange_udp(port, Bytes{1, 2, 3}, 300).empty());
  // The server still serves, and counted exactly what it answered (2 + FORMERR).
  CHECK(c.answered() == before + 3);
  // SIGTERM: exits 0 promptly and prints its counters.
  std::string out;
  const int status = c.proc->stop(out);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(out, Catch::Contains("\"answered\":" + std::to_string(before + 3)));
  CHECK_THAT(out, Catch::Contains("\"formerr\":1"));
  CHECK_THAT(out, Catch::Contains("\"dropped\":1"));
}

TEST_CASE("sim upstream ECS: different /24 differ with scope 24, same /24 agree", "[traffic][upstream][process][ecs]") {
  Child c;
  const std::uint16_t port = c.proc->port();
  const std::uint64_t i = c.find([](const GeneratedEntry& e) {
    return !e.negative && e.cname_target.empty() && e.ecs.family != EcsFamily::none && e.qtype == wire::kTypeA;
  });
  const std::string name = c.zone->name_text(i);
  const std::string a = test::kdig(port, {name, "A", "+subnet=198.51.100.0/24"});
  const std::string a2 = test::kdig(port, {name, "A", "+subnet=198.51.100.200/32"});
  const std::string b = test::kdig(port, {name, "A", "+subnet=198.51.101.0/24"});
  CHECK_THAT(a, Catch::Contains("CLIENT-SUBNET: 198.51.100.0/24/24"));
  CHECK_THAT(b, Catch::Contains("CLIENT-SUBNET: 198.51.101.0/24/24"));
  auto answers = [](const std::string& out) {
    std::vector<std::string> v;
    for (const auto& l : lines(out))
      if (l.find("\tA\t") != std::string::npos) v.push_back(l.substr(l.rfind('\t') + 1));
    return v;
  };
  REQUIRE(answers(a).size() == c.zone->entry(i).rdatas.size());
  CHECK(answers(a) == answers(a2));
  CHECK(answers(a) != answers(b));
  // Our client: the same, and a subnet-independent name answers scope 0.
  dns::EcsOption e1;
  e1.present = true;
  e1.family = 1;
  e1.source_prefix = 24;
  e1.address = {198, 51, 100, 0};
  dns::Message r;
  const Bytes name_i = c.zone->name_wire(i);
  REQUIRE(dns::parse_message(test::exchange_udp(port, dns::build_query({.id = 9, .qname = name_i, .qtype = wire::kTypeA,
                                                                        .ecs = e1})),
                             r, true) == dns::ParseStatus::ok);
  CHECK(r.ecs.scope_prefix == 24);
  std::vector<std::string> ours;
  for (const auto& rec : r.answer) ours.push_back(rdata_text(wire::kTypeA, rec.rdata));
  CHECK(ours == answers(a));
  const std::uint64_t p = c.find([](const GeneratedEntry& e) { return Child::plain(e) && e.qtype == wire::kTypeA; });
  const Bytes name_p = c.zone->name_wire(p);
  REQUIRE(dns::parse_message(test::exchange_udp(port, dns::build_query({.id = 10, .qname = name_p, .qtype = wire::kTypeA,
                                                                        .ecs = e1})),
                             r, true) == dns::ParseStatus::ok);
  CHECK(r.ecs.present);
  CHECK(r.ecs.scope_prefix == 0);
}

TEST_CASE("sim upstream --write-names lists every name with its type", "[traffic][upstream][process]") {
  const std::string path = "/tmp/traffic_test_names_" + std::to_string(::getpid()) + ".txt";
  int status = 0;
  test::run_command({DNSARENA_LAB_BIN, "sim", "upstream", "--seed", "9", "--write-names", path}, status);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  std::ifstream in(path);
  std::string name, type;
  std::uint64_t i = 0;
  const TrafficProfile p = default_traffic_profile();
  while (in >> name >> type) {
    if (i < 50) {
      CHECK(name == upstream_name(p, 9, i));
      CHECK(type == dns::type_name(upstream_type(p, 9, i)));
    }
    ++i;
  }
  CHECK(i == p.names);
  ::unlink(path.c_str());
}

TEST_CASE("sim upstream rejects a broken profile with file:line:column", "[traffic][upstream][process]") {
  const std::string path = "/tmp/traffic_test_bad_" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream f(path);
    f << "names: 100\nqtypes:\n  a: 2\n";
  }
  int status = 0;
  // stderr is not captured; the exit status and the library message (profile_test) are.
  test::run_command({DNSARENA_LAB_BIN, "sim", "upstream", "--profile", path, "--write-names", "/dev/null"}, status);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) != 0);
  try {
    load_traffic_profile(path);
    FAIL("no error");
  } catch (const dnsarena::common::ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains(path + ":3:6: key 'qtypes.a'"));
  }
  ::unlink(path.c_str());
}
