// SPDX-License-Identifier: GPL-3.0-or-later
// The RPZ transfer process's copy of a zone (workers/rpz_zone_copy.hpp): IXFR deltas
// applied in order, a delta that does not fit undone whole, and the file written as a
// binary copy (policy/rpz_copy_file.hpp) and read back; a zone file read as well; the
// delta of random IXFRs read with the file as the policy compiler reads it gives the
// rules of the changed copy written whole (policy/rpz_copy_delta.hpp).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include <catch2/catch.hpp>

#include "policy/rpz_copy_delta.hpp"
#include "policy/rpz_copy_file.hpp"
#include "policy/rpz_reader.hpp"
#include "tests/policy/rule_set_normal.hpp"
#include "tests/workers/serve_harness.hpp"
#include "wire/dns_name.hpp"
#include "workers/rpz_zone_copy.hpp"

using dnsarena::workers::IxfrDelta;
using dnsarena::workers::RpzZoneCopy;
using dnsarena::workers::TransferError;
using dnsarena::workers::TransferResult;
using dnsarena::workers::XfrBytes;
using dnsarena::workers::ZoneRecord;

namespace {

XfrBytes name(const std::string& text) { return dnsarena::wire::name_to_wire(text); }

ZoneRecord soa(std::uint32_t serial) {
  XfrBytes rd = name("ns.example.") + name("admin.example.");
  for (std::uint32_t v : {serial, 3600u, 600u, 86400u, 60u})
    for (int shift = 24; shift >= 0; shift -= 8) rd.push_back(static_cast<std::uint8_t>(v >> shift));
  return {name("rpz.test."), 6, 60, rd};
}

ZoneRecord block(const std::string& owner) { return {name(owner), 5, 60, name(".")}; }

}  // namespace

TEST_CASE("an RPZ copy applies IXFR deltas, undoes one that removes a record it lacks, and round-trips its file",
          "[policy][rpz-xfr]") {
  RpzZoneCopy copy(name("rpz.test."));
  TransferResult axfr;
  axfr.soa = soa(1);
  axfr.records = {soa(1), block("a.test.rpz.test."), block("b.test.rpz.test.")};
  copy.replace(axfr);
  REQUIRE(copy.has());
  CHECK(copy.serial() == 1);
  CHECK(copy.size() == 3);

  // 1 -> 2 -> 3: b removed, c added, then d added.
  IxfrDelta d1{1, 2, {block("b.test.rpz.test.")}, {block("c.test.rpz.test.")}};
  IxfrDelta d2{2, 3, {}, {block("d.test.rpz.test.")}};
  copy.apply({d1, d2}, soa(3));
  CHECK(copy.serial() == 3);
  CHECK(copy.size() == 4);

  // A delta that removes what the copy lacks: nothing of it stays, the serial neither.
  IxfrDelta bad1{3, 4, {block("a.test.rpz.test.")}, {block("e.test.rpz.test.")}};
  IxfrDelta bad2{4, 5, {block("zzz.test.rpz.test.")}, {}};
  CHECK_THROWS_AS(copy.apply({bad1, bad2}, soa(5)), TransferError);
  CHECK(copy.serial() == 3);
  CHECK(copy.size() == 4);
  // Not starting at the copy's serial.
  CHECK_THROWS_AS(copy.apply({IxfrDelta{7, 8, {}, {}}}, soa(8)), TransferError);

  const std::string file = dnsarena::test::write_config("") + ".zone";
  copy.write(file);
  RpzZoneCopy back(name("rpz.test."));
  std::string error;
  REQUIRE(back.load(file, error));
  CHECK(error.empty());
  CHECK(back.serial() == 3);
  CHECK(back.size() == 4);
  // The file is a binary copy (policy/rpz_copy_file.hpp) holding the same records.
  REQUIRE(dnsarena::policy::RpzCopyReader::is_copy(file));
  dnsarena::policy::RpzCopyReader read(file);
  CHECK(read.records() == 4);
  std::vector<std::string> owners;
  dnsarena::policy::ScannedRecord r;
  while (read.next(r)) owners.push_back(dnsarena::wire::wire_to_text(r.owner));
  CHECK(owners.front() == "rpz.test.");  // the SOA first
  std::sort(owners.begin() + 1, owners.end());
  CHECK(owners == std::vector<std::string>{"rpz.test.", "a.test.rpz.test.", "c.test.rpz.test.", "d.test.rpz.test."});
  // The copy of another zone is not taken for this one's.
  RpzZoneCopy other(name("other.test."));
  CHECK_FALSE(other.load(file, error));
  CHECK_THAT(error, Catch::Contains("a copy of the zone rpz.test., not of other.test."));
  // A zone file (what older builds wrote, or an operator put there) still loads.
  std::ofstream(file + ".2") << "$ORIGIN rpz.test.\n@ 60 SOA ns.example. admin.example. 9 3600 600 86400 60\n"
                                "x.test 60 CNAME .\n";
  REQUIRE(back.load(file + ".2", error));
  CHECK(back.serial() == 9);
  CHECK(back.size() == 2);

  // A broken file is no copy, and says why.
  std::ofstream(file) << "this is not a zone\n";
  CHECK_FALSE(back.load(file, error));
  CHECK_FALSE(error.empty());
  CHECK_FALSE(back.has());
  std::filesystem::remove(file);
  std::filesystem::remove(file + ".2");
  CHECK_FALSE(back.load(file, error));  // missing: no copy, no error
  CHECK(error.empty());
}

namespace {

// The rules the policy compiler reads from `file` (with its delta, if one applies).
std::vector<dnsarena::policy::NormalRule> rules_of(const std::string& file) {
  dnsarena::policy::RuleSet rules;
  dnsarena::policy::read_rpz_file({file, "rpz.test.", true}, rules);
  return dnsarena::policy::normal_rules(rules);
}

// Owner `i`'s record: each owner keeps one kind (NXDOMAIN, DROP or A data), so that no
// owner holds an action and data at once (whose outcome depends on the records' order);
// `variant` tells an owner's A records apart (0 for the others: one record each).
ZoneRecord record_at(unsigned i, unsigned variant, std::uint32_t ttl) {
  const std::string owner = "n" + std::to_string(i) + ".test.rpz.test.";
  if (i % 3 == 0) return {name(owner), 5, ttl, name(".")};
  if (i % 3 == 1) return {name(owner), 5, ttl, name("rpz-drop.")};
  return {name(owner), 1, ttl, {192, 0, 2, static_cast<std::uint8_t>(variant)}};
}

}  // namespace

TEST_CASE("an RPZ copy's delta read with its file gives the rules of the changed copy written whole, on random IXFRs",
          "[policy][rpz-xfr][rpz-delta]") {
  const std::string file = dnsarena::test::write_config("") + ".zone", whole = file + ".whole";
  RpzZoneCopy copy(name("rpz.test."));
  TransferResult axfr;
  axfr.soa = soa(1);
  std::mt19937 rng(43);
  std::map<std::pair<unsigned, unsigned>, std::uint32_t> zone;  // (owner, variant) -> TTL: the model
  auto pick = [&] {
    const unsigned owner = rng() % 200;
    return std::pair<unsigned, unsigned>{owner, owner % 3 == 2 ? rng() % 3 : 0};
  };
  for (unsigned k = 0; k < 300; ++k) zone[pick()] = 60;
  axfr.records.push_back(soa(1));
  for (const auto& [at, ttl] : zone) axfr.records.push_back(record_at(at.first, at.second, ttl));
  copy.replace(axfr);
  CHECK_FALSE(copy.has_delta());  // an AXFR is written whole
  copy.write(file);
  std::uint32_t serial = 1;
  for (int round = 0; round < 40; ++round) {
    // One to three IXFR steps: removals of held records, additions (new ones, or a held
    // one again with another TTL: RFC 1995 has it removed and added), a record removed
    // in one step and added back in the next.
    std::vector<IxfrDelta> steps;
    const unsigned n = 1 + rng() % 3;
    for (unsigned s = 0; s < n; ++s, ++serial) {
      IxfrDelta d{serial, serial + 1, {}, {}};
      std::set<std::pair<unsigned, unsigned>> touched;  // a record is removed once a step
      for (unsigned k = rng() % 6; k > 0 && !zone.empty(); --k) {
        auto it = std::next(zone.begin(), static_cast<std::ptrdiff_t>(rng() % zone.size()));
        if (!touched.insert(it->first).second) continue;
        d.removed.push_back(record_at(it->first.first, it->first.second, it->second));
        if (rng() % 3 == 0) {
          it->second += 1;  // a TTL change
          d.added.push_back(record_at(it->first.first, it->first.second, it->second));
        } else {
          zone.erase(it);
        }
      }
      for (unsigned k = rng() % 6; k > 0; --k) {
        const std::pair<unsigned, unsigned> at = pick();
        if (zone.count(at)) continue;
        zone[at] = 60;
        d.added.push_back(record_at(at.first, at.second, 60));
      }
      steps.push_back(std::move(d));
    }
    copy.apply(steps, soa(serial));
    REQUIRE(copy.has_delta());
    copy.write_delta(file);  // the file still the last round's: the delta brings it up to date
    RpzZoneCopy written = copy;
    written.write(whole);
    const auto want = rules_of(whole);
    INFO("round " << round << ", serial " << serial);
    CHECK(rules_of(file) == want);
    copy.write(file);  // rewritten: the delta is stale, the file alone is the zone
    CHECK(rules_of(file) == want);
    RpzZoneCopy back(name("rpz.test."));
    std::string error;
    REQUIRE(back.load(file, error));
    CHECK(back.serial() == serial);
    CHECK(back.size() == zone.size() + 1);
  }
  // Loaded from a zone file (no checksum names it): an IXFR is written whole.
  std::ofstream(file + ".text") << "$ORIGIN rpz.test.\n@ 60 SOA ns.example. admin.example. 9 3600 600 86400 60\n"
                                   "x.test 60 CNAME .\n";
  RpzZoneCopy text(name("rpz.test."));
  std::string error;
  REQUIRE(text.load(file + ".text", error));
  text.apply({IxfrDelta{9, 10, {}, {block("y.test.rpz.test.")}}}, soa(10));
  CHECK_FALSE(text.has_delta());
  for (const std::string& f : {file, whole, file + ".text", dnsarena::policy::rpz_delta_path(file)})
    std::filesystem::remove(f);
}
