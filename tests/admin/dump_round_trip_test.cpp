// SPDX-License-Identifier: GPL-3.0-or-later
// dump -> restore into a fresh segment of a live serve under load -> dump again: the
// same entries with TTLs lower by exactly the time between the dumps, and the restored
// cache answers byte for byte as the original. Malformed dumps: FILE:LINE errors.
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include "cache/segment.hpp"
#include "tests/admin/live_load.hpp"
#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {

struct DumpedEntry {
  std::uint32_t ttl = 0;
  std::vector<std::string> records;     // section, owner, class, type, rdata (TTL left out)
  std::vector<std::uint32_t> record_ttls;
};

struct Dump {
  std::uint32_t dumped = 0;
  std::map<std::string, DumpedEntry> entries;  // by the $ENTRY line without ttl=
};

Dump read_dump_file(const std::string& path) {
  Dump d;
  std::ifstream in(path);
  REQUIRE(in);
  std::string line, key;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::string first;
    w >> first;
    if (first == "$DUMPED") {
      w >> d.dumped;
    } else if (first == "$ENTRY") {
      const std::size_t at = line.rfind(" ttl=");
      REQUIRE(at != std::string::npos);
      key = line.substr(0, at);
      d.entries[key].ttl = static_cast<std::uint32_t>(std::stoul(line.substr(at + 5)));
    } else if (first == "answer" || first == "authority" || first == "additional") {
      std::string owner, ttl, rest;
      w >> owner >> ttl;
      std::getline(w, rest);
      d.entries[key].records.push_back(first + " " + owner + rest);
      d.entries[key].record_ttls.push_back(static_cast<std::uint32_t>(std::stoul(ttl)));
    }
  }
  return d;
}

std::string temp_path(const std::string& tag) {
  return "/tmp/dnsarena-admin-" + tag + "-" + std::to_string(::getpid()) + ".txt";
}

}  // namespace

TEST_CASE("dump, restore into a fresh serving segment, dump again: same entries, byte-identical answers",
          "[admin][dump]") {
  Service a({"--ecs", "forward"});
  struct Question {
    std::vector<std::uint8_t> wire;
    bool tcp = false;
  };
  const std::vector<Question> questions = {
      {make_query(11, "a.test.", 1)},          {make_query(12, "aaaa.test.", 28)},
      {make_query(13, "txt.test.", 16)},       {make_query(14, "cname.test.", 1)},
      {make_query(15, "nodata.test.", 28)},    {make_query(16, "missing.test.", 1)},
      {make_query(17, "signed.test.", 1, 1232, true)},  // NXDOMAIN with NSEC and RRSIGs
      {make_query(18, "x.dname.test.", 1, 1232, true)},  // DNAME, CNAME, A, RRSIG
      {make_query(19, "x.deleg.test.", 1)},    // a referral with glue
      {make_query(20, "multi.test.", 255)},    // ANY
      {make_ecs_query(21, "ecs.test.", 1, 24, {10, 7, 7, 0})},
      {make_query(22, "huge.test.", 16, 4096), true}};
  auto ask = [](std::uint16_t port, const Question& q) {
    return q.tcp ? tcp_exchange(port, q.wire) : udp_exchange(port, q.wire);
  };
  for (const Question& q : questions) REQUIRE(ask(a.port, q).answered);
  LiveLoad load_a(a.port, load_names(100));
  REQUIRE(load_a.wait_answers(150));

  const std::string first = temp_path("first"), second = temp_path("second");
  int status = -1;
  std::string out = run_dnsarena("dump " + a.segment + " --out " + first, &status);
  INFO(out);
  REQUIRE(status == 0);
  const Dump d1 = read_dump_file(first);
  CHECK(d1.entries.size() >= questions.size() + 100);

  // B: a fresh segment, an upstream that never answers (every answer B gives with data
  // comes from the restored entries), and load on the restored names while it restores.
  Service b({"--ecs", "forward", "--upstream", "127.0.0.1:" + std::to_string(free_port())});
  LiveLoad load_b(b.port, load_names(100));
  out = run_dnsarena("restore " + first + " --segment " + b.segment, &status);
  INFO(out);
  REQUIRE(status == 0);
  CHECK(out.find("restored " + std::to_string(d1.entries.size()) + " entries") != std::string::npos);
  REQUIRE(load_b.wait_answers(100));
  out = run_dnsarena("dump " + b.segment + " --out " + second, &status);
  REQUIRE(status == 0);
  const Dump d2 = read_dump_file(second);

  // The same entries, records and all; every TTL lower by the time between the dumps.
  const std::uint32_t between = d2.dumped - d1.dumped;
  REQUIRE(d2.entries.size() == d1.entries.size());
  for (const auto& [key, e1] : d1.entries) {
    INFO(key);
    const auto it = d2.entries.find(key);
    REQUIRE(it != d2.entries.end());
    const DumpedEntry& e2 = it->second;
    CHECK(e2.records == e1.records);
    CHECK(e2.ttl == e1.ttl - between);
    REQUIRE(e2.record_ttls.size() == e1.record_ttls.size());
    for (std::size_t i = 0; i < e1.record_ttls.size(); ++i)
      CHECK(e2.record_ttls[i] == (e1.record_ttls[i] > between ? e1.record_ttls[i] - between : 0));
  }

  // Byte-identical answers from A (its own entries) and B (restored), asked in one second.
  for (const Question& q : questions) {
    bool compared = false;
    for (int attempt = 0; attempt < 5 && !compared; ++attempt) {
      const std::time_t t0 = std::time(nullptr);
      const DnsReply ra = ask(a.port, q);
      const DnsReply rb = ask(b.port, q);
      if (std::time(nullptr) != t0) continue;
      REQUIRE(ra.answered);
      REQUIRE(rb.answered);
      CHECK(rb.rcode() != 2);  // not SERVFAIL: B's upstream never answers
      CHECK(ra.wire == rb.wire);
      compared = true;
    }
    CHECK(compared);
  }
  int check_status = -1;
  out = run_dnsarena("check " + b.segment, &check_status);
  CHECK(check_status == 0);
  out = run_dnsarena("check " + a.segment, &check_status);
  CHECK(check_status == 0);
  std::remove(first.c_str());
  std::remove(second.c_str());
}

TEST_CASE("restore: a malformed dump is refused with FILE:LINE, and a missing segment is created", "[admin][dump]") {
  const std::string segment = unique_segment("restore");
  const std::string path = temp_path("bad");
  int status = -1;
  auto restore_text = [&](const std::string& text) {
    std::ofstream(path) << text;
    return run_dnsarena("restore " + path + " --segment " + segment + " --max-entries 1000 --arena-bytes 4M", &status);
  };
  const std::uint32_t now = static_cast<std::uint32_t>(std::time(nullptr));
  const std::string header = "$DUMPED " + std::to_string(now) + "\n";
  const std::string good = "$ENTRY a.test. A flags=do ecs=10.1.0.0/16 rcode=0 ad=1 ttl=300\n"
                           "answer a.test.\t300\tIN\tA\t192.0.2.1\n$END\n";
  std::string out = restore_text(header + good);
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("restored 1 entries") != std::string::npos);
  CHECK(dnsarena::cache::Segment::exists(segment));

  out = restore_text(header + "$ENTRY a.test. A flags=do ecs=- rcode=0 ad=0 ttl=300\nanswer a.test. 300 IN A not-an-address\n$END\n");
  CHECK(status == 2);
  CHECK(out.find(path + ":3: libzscanner") != std::string::npos);
  out = restore_text(header + "$ENTRY a.test. A flags=xx ecs=- rcode=0 ad=0 ttl=300\n$END\n");
  CHECK(status == 2);
  CHECK(out.find(path + ":2: unknown key flag 'xx'") != std::string::npos);
  out = restore_text(header + good.substr(0, good.size() - 5));  // cut before $END
  CHECK(status == 2);
  CHECK(out.find("no $END") != std::string::npos);
  out = restore_text("$DUMPED " + std::to_string(now - 400) + "\n" + good);  // expired since
  CHECK(status == 0);
  CHECK(out.find("restored 0 entries into " + segment + " (1 expired") != std::string::npos);

  // What the segment holds is still the one good entry, round-tripped.
  out = run_dnsarena("dump " + segment, &status);
  CHECK(status == 0);
  CHECK(out.find("$ENTRY a.test. A flags=do ecs=10.1.0.0/16 rcode=0 ad=1 ttl=") != std::string::npos);
  CHECK(out.find("answer a.test.") != std::string::npos);
  CHECK(out.find("dnssec=") == std::string::npos);  // not validated: no verdict written

  // A validated entry's DNSSEC verdict (cache::EntryVerdict) is dumped and restored.
  // Its key carries the validated flag ("ad" is that flag's older spelling).
  out = restore_text(header + "$ENTRY b.test. A flags=do,validated ecs=- rcode=0 ad=1 ttl=300 dnssec=secure\n"
                              "answer b.test.\t300\tIN\tA\t192.0.2.2\n$END\n"
                              "$ENTRY c.test. A flags=do,ad ecs=- rcode=0 ad=0 ttl=300 dnssec=insecure\n"
                              "answer c.test.\t300\tIN\tA\t192.0.2.3\n$END\n");
  CHECK(status == 0);
  out = run_dnsarena("dump " + segment, &status);
  CHECK(out.find("$ENTRY b.test. A flags=do,validated ecs=- rcode=0 ad=1 ttl=") != std::string::npos);
  CHECK(out.find("$ENTRY c.test. A flags=do,validated ecs=- rcode=0 ad=0 ttl=") != std::string::npos);
  CHECK(out.find(" dnssec=secure\n") != std::string::npos);
  CHECK(out.find(" dnssec=insecure\n") != std::string::npos);
  out = restore_text(header + "$ENTRY b.test. A flags=do ecs=- rcode=0 ad=1 ttl=300 dnssec=bogus\n$END\n");
  CHECK(status == 2);
  CHECK(out.find(path + ":2: dnssec=bogus: expected secure, insecure or indeterminate") != std::string::npos);
  CHECK(run_dnsarena("check " + segment, &status).find("sound") != std::string::npos);
  dnsarena::cache::Segment::remove(segment);
  std::remove(path.c_str());
}
