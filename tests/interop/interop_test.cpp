// SPDX-License-Identifier: GPL-3.0-or-later
// Differential test: every answer through dnsarena against Knot DNS's.
//
// knotd serves zones generated from a seed (zone_generator.hpp), unsigned, NSEC-signed
// and NSEC3-signed by knotd itself; `dnsarena serve` forwards to it. Each question is
// asked of knotd and twice of dnsarena in seven UDP shapes (no EDNS; EDNS 512/1232/4096,
// DO off and on), the qname in random case, and over TCP after a TC. The mismatches are
// counted by category (dns_compare.hpp, interop_rig.hpp), printed as a table, and every
// category must be empty.
//
// Sizes: DNSARENA_INTEROP_NAMES (default 300 names over the three content zones) and
// DNSARENA_INTEROP_SEED (default 1); tests/interop/run-large.sh runs a large instance.
// DNSARENA_INTEROP_JSON=FILE appends each table as one JSON line to FILE.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>

#include "tests/interop/interop_rig.hpp"
#include "wire/constants.hpp"

using namespace dnsarena::interop;
using namespace dnsarena::wire;

namespace {

void check_empty(const MismatchTable& t, const std::string& title) {
  std::cout << t.render(title) << std::flush;
  if (const char* path = std::getenv("DNSARENA_INTEROP_JSON"))
    std::ofstream(path, std::ios::app) << t.json(title) << "\n";
  CHECK(t.comparisons() > 0);
  for (const auto& [category, row] : t.rows()) {
    INFO(category << ": " << row.count << " mismatches, e.g. " << row.example);
    CHECK(row.count == 0);
  }
}

std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::uint64_t seed() { return env_unsigned("DNSARENA_INTEROP_SEED", 1); }

}  // namespace

TEST_CASE("interop: the comparison finds planted differences (knotd against itself)", "[interop]") {
  Rig rig(seed(), 0);
  const QueryShape shape{true, 1232, true};
  auto ask = [&](const std::string& name, std::uint16_t type) {
    const auto q = build_query(7, name, type, shape);
    return std::pair{q, rig.query_knot(q, shape)};
  };
  const auto [q, same] = ask("a-0.sig.test.", kTypeA);
  REQUIRE(same.parsed);
  CHECK(compare_replies(q, shape, same, same, same).empty());
  // Another name's NODATA reply: its question, records and signatures all differ.
  const auto [q2, nodata] = ask("aaaa-0.sig.test.", kTypeA);
  MismatchTable t;
  for (const Mismatch& m : compare_replies(q, shape, same, same, nodata)) t.add(m.category, m.detail);
  CHECK(t.rows().count("question not echoed byte-exact") == 1);
  CHECK(t.rows().count("answer records missing") == 1);
  CHECK(t.rows().count("answer RRSIG(A) missing") == 1);
  CHECK(t.rows().count("authority (positive) NSEC extra") == 1);
  CHECK(t.rows().count("authority (positive) RRSIG(NSEC) extra") == 1);
  // An NXDOMAIN reply: the rcode pair names the category.
  const auto [q3, nx] = ask("nx-none.sig.test.", kTypeA);
  const auto rc = compare_replies(q, shape, same, same, nx);
  CHECK(std::any_of(rc.begin(), rc.end(),
                    [](const Mismatch& m) { return m.category == "rcode: knot NOERROR, dnsarena NXDOMAIN"; }));
  // A TTL raised by one second.
  Reply later = same;
  later.answer.at(0).ttl += 1;
  const auto ttl = compare_replies(q, shape, same, same, later);
  REQUIRE(ttl.size() == 1);
  CHECK(ttl[0].category == "TTL above knot's");
  // An additional record knotd never sent.
  Reply poisoned = same;
  poisoned.additional.push_back(Record{"evil.example.", kTypeA, 0, 300, "192.0.2.66"});
  const auto extra = compare_replies(q, shape, same, same, poisoned);
  REQUIRE(extra.size() == 1);
  CHECK(extra[0].category == "additional records extra");
}

TEST_CASE("interop: dnsarena answers like knotd for every kind of name and query shape", "[interop]") {
  Rig rig(seed(), env_unsigned("DNSARENA_INTEROP_NAMES", 300));
  MismatchTable table;
  const auto start = std::chrono::steady_clock::now();
  for (const Question& q : rig.zones().questions)
    for (const QueryShape& s : udp_shapes()) rig.ask(q, s, table);
  // Protocol corners: EDNS version 1 (BADVERS), qtype 0, ANY (also at a CNAME owner, a
  // wildcard, a name that does not exist, an empty non-terminal), an unknown type, DS at a
  // delegation (answered by the parent), CD set.
  const QueryShape plain{true, 1232, false}, v1{true, 1232, false, 1};
  rig.ask({"a-0.diff.test.", kTypeA, "edns-version-1"}, v1, table);
  rig.ask({"a-0.sig.test.", kTypeA, "edns-version-1"}, v1, table);
  for (const QueryShape& s : {QueryShape{}, plain}) rig.ask({"a-0.diff.test.", 0, "qtype-0"}, s, table);
  for (const QueryShape& s : udp_shapes()) {
    rig.ask({"multi-0.diff.test.", kTypeAny, "any"}, s, table);
    rig.ask({"multi-0.sig.test.", kTypeAny, "any"}, s, table);
    rig.ask({"a-0.nsec3.test.", 65280, "unknown-type"}, s, table);
    for (const char* zone : {"diff.test.", "sig.test.", "nsec3.test."}) {
      const std::string z = zone;
      rig.ask({"cn-0." + z, kTypeAny, "any-cname"}, s, table);
      rig.ask({"cnx-0." + z, kTypeAny, "any-cname-out"}, s, table);
      rig.ask({"x.wild-0." + z, kTypeAny, "any-wildcard"}, s, table);
      rig.ask({"nx-any." + z, kTypeAny, "any-nxdomain"}, s, table);
      rig.ask({"mid.ent-0." + z, kTypeAny, "any-ent"}, s, table);
      rig.ask({"sub-0." + z, kTypeDs, "ds-at-delegation"}, s, table);
      QueryShape cd = s;
      cd.cd = true;
      rig.ask({"a-0." + z, kTypeA, "cd"}, cd, table);
      rig.ask({"nx-cd." + z, kTypeA, "cd-nxdomain"}, cd, table);
    }
  }
  // Payloads outside the usual: under 512 (means 512, RFC 6891 6.2.5) and the maximum.
  for (const Question& q : rig.zones().questions)
    if (q.kind.rfind("big", 0) == 0 || q.kind == "compression" || q.kind == "cname-nxdomain-long")
      for (std::uint16_t payload : {200, 65535})
        for (bool d : {false, true}) rig.ask(q, QueryShape{true, payload, d}, table);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check_empty(table, "main pass (" + std::to_string(rig.zones().questions.size()) + " questions, " +
                         std::to_string(secs).substr(0, 5) + " s)");
}

TEST_CASE("interop: no record outlives its TTL through the cache and TTL 0 is never served from it", "[interop]") {
  Rig rig(seed(), 0);
  MismatchTable table;
  const QueryShape shape{true, 1232, false};
  const auto& records = rig.zones().short_ttl;
  REQUIRE(records.size() >= 3);
  auto ask_all = [&](const char* when) {
    for (const ShortTtlRecord& r : records) rig.ask({r.qname, r.qtype, std::string("short-ttl ") + when}, shape, table);
  };
  ask_all("before");  // cached now (except TTL 0)
  const auto cached_at = std::chrono::steady_clock::now();
  std::vector<RecordChange> changes;
  for (const ShortTtlRecord& r : records) changes.push_back({r.owner, r.ttl, r.type, r.changed});
  std::string error;
  REQUIRE(rig.knot().replace_records("diff.test.", changes, error));
  // Wait until knotd answers with the new data (commit is applied by a background worker).
  const auto q0 = build_query(1, records.back().qname, kTypeA, shape);
  bool knot_changed = false;
  for (int i = 0; i < 100 && !knot_changed; ++i) {
    const Reply r = rig.query_knot(q0, shape);
    knot_changed = !r.answer.empty() && r.answer.back().rdata == records.back().changed;
    if (!knot_changed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(knot_changed);
  // TTL 0 at once: knotd's new data, never the cached old one.
  for (const ShortTtlRecord& r : records)
    if (r.ttl == 0) rig.ask({r.qname, r.qtype, "ttl-0 after change"}, shape, table);
  // Past every expiry (TTL <= 2 s; one more second for the wall clock's whole seconds).
  std::this_thread::sleep_until(cached_at + std::chrono::milliseconds(3200));
  // The old record must be gone: first a plain look for it, then the full comparison.
  for (const ShortTtlRecord& r : records) {
    const auto q = build_query(rig.next_id(), random_case(r.qname, rig.rng()), r.qtype, shape);
    const Reply got = rig.query_dnsarena(q, shape);
    table.compared();
    for (const Record& rec : got.answer)
      if (rec.owner == lower_case(r.owner) && type_name(rec.type) == r.type && rec.rdata == r.rdata)
        table.add("record served after its TTL ran out",
                  r.qname + " " + type_name(r.qtype) + " " + shape.describe() + ": " + rec.text() +
                      " (zone TTL " + std::to_string(r.ttl) + ", cached 3.2 s ago, knotd now has " + r.changed + ")");
  }
  ask_all("after expiry");
  check_empty(table, "expiry pass");
}
