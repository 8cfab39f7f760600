// SPDX-License-Identifier: GPL-3.0-or-later
// The delta beside a transferred RPZ's copy (policy/rpz_copy_delta.hpp): a copy read with
// its delta gives the rules of the changed zone read whole; a delta named for another
// copy (stale) is ignored, and so is one of a zone read from a file the operator keeps;
// a cut or damaged delta is refused at every length and byte (and the copy read alone);
// a delta that removes what its copy lacks is an error, never a partial zone.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "policy/rpz_copy_delta.hpp"
#include "policy/rpz_copy_file.hpp"
#include "policy/rpz_reader.hpp"
#include "policy/zone_scanner.hpp"
#include "tests/policy/rule_set_normal.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {
namespace {

const char* kBase =
    "$TTL 300\n"
    "@ SOA ns.rpz. admin.rpz. 7 3600 600 86400 300\n"
    "@ NS ns.rpz.\n"
    "nx.example CNAME .\n"
    "gone.example CNAME .\n"
    "*.wild.example CNAME .\n"
    "data.example 60 A 192.0.2.1\n"
    "data.example 60 A 192.0.2.2\n"
    "ttl.example 60 TXT \"old ttl\"\n"
    "32.1.2.0.192.rpz-ip CNAME rpz-drop.\n";

// kBase at serial 8: gone.example and one A of data.example removed, a TTL changed, a
// trigger of each kind added.
const char* kChanged =
    "$TTL 300\n"
    "@ SOA ns.rpz. admin.rpz. 8 3600 600 86400 300\n"
    "@ NS ns.rpz.\n"
    "nx.example CNAME .\n"
    "*.wild.example CNAME .\n"
    "data.example 60 A 192.0.2.1\n"
    "ttl.example 120 TXT \"old ttl\"\n"
    "32.1.2.0.192.rpz-ip CNAME rpz-drop.\n"
    "new.example CNAME *.\n"
    "*.newwild.example CNAME rpz-passthru.\n"
    "data.example 60 A 192.0.2.3\n"
    "24.0.2.0.192.rpz-client-ip CNAME .\n";

struct Dir {
  std::string path = "/tmp/dnsarena-rpz-delta-" + std::to_string(::getpid());
  Dir() { std::filesystem::create_directories(path); }
  ~Dir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return path + "/" + name; }
};

std::vector<ScannedRecord> records_of(const std::string& text) {
  ZoneScanner scanner("text", "rpz.test.");
  scanner.open_text(text);
  std::vector<ScannedRecord> out;
  ScannedRecord r;
  while (scanner.next(r)) out.push_back(r);
  return out;
}

std::vector<std::uint8_t> copy_of(const std::vector<ScannedRecord>& records) {
  RpzCopyWriter w(wire::name_to_wire("rpz.test."), records.size());
  for (const ScannedRecord& r : records) w.add(r.owner.data(), r.owner.size(), r.type, r.ttl, r.rdata.data(), r.rdata.size());
  return w.finish();
}

using Key = std::tuple<WireName, std::uint16_t, WireName>;
Key key(const ScannedRecord& r) { return {r.owner, r.type, r.rdata}; }

// The delta from `before` to `after` (records by owner, type, rdata; a TTL change is a
// removal and an addition), against the copy whose checksum is `base`.
std::vector<std::uint8_t> delta_of(const std::vector<ScannedRecord>& before, const std::vector<ScannedRecord>& after,
                                   std::uint64_t base) {
  const ScannedRecord& soa = after.front();
  RpzDeltaWriter w(wire::name_to_wire("rpz.test."), base, soa.ttl, soa.rdata);
  auto find = [](const std::vector<ScannedRecord>& in, const ScannedRecord& r) {
    return std::find_if(in.begin() + 1, in.end(), [&](const ScannedRecord& x) { return key(x) == key(r); });
  };
  for (auto it = before.begin() + 1; it != before.end(); ++it) {
    const auto now = find(after, *it);
    if (now == after.end() || now->ttl != it->ttl)
      w.remove(it->owner.data(), it->owner.size(), it->type, it->rdata.data(), it->rdata.size());
  }
  for (auto it = after.begin() + 1; it != after.end(); ++it) {
    const auto was = find(before, *it);
    if (was == before.end() || was->ttl != it->ttl)
      w.add(it->owner.data(), it->owner.size(), it->type, it->ttl, it->rdata.data(), it->rdata.size());
  }
  return w.finish();
}

void save_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

RuleSet read_zone(const std::string& file, bool transferred = true) {
  RuleSet rules;
  read_rpz_file({file, "rpz.test.", transferred}, rules);
  return rules;
}

std::string delta_error(const std::vector<std::uint8_t>& bytes) {
  try {
    RpzCopyDelta d(bytes, "delta");
    return "";
  } catch (const PolicyError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("a copy read with its delta gives the changed zone's rules, a stale delta is ignored",
          "[policy][rpz-copy][rpz-delta]") {
  Dir dir;
  const auto before = records_of(kBase), after = records_of(kChanged);
  const std::vector<std::uint8_t> base = copy_of(before);
  save_bytes(dir.file("copy"), base);
  save_bytes(dir.file("changed"), copy_of(after));
  const RuleSet want_before = read_zone(dir.file("copy")), want_after = read_zone(dir.file("changed"));
  REQUIRE(normal_rules(want_before) != normal_rules(want_after));

  RpzCopyReader base_reader(base, "copy");
  save_bytes(rpz_delta_path(dir.file("copy")), delta_of(before, after, base_reader.checksum()));
  const RuleSet patched = read_zone(dir.file("copy"));
  CHECK(normal_rules(patched) == normal_rules(want_after));
  CHECK(patched.zones().front().soa.rdata == want_after.zones().front().soa.rdata);  // serial 8
  CHECK(patched.zones().front().rules == want_after.zones().front().rules);
  // The zone an operator keeps in a file of its own (not transferred) is read alone.
  CHECK(normal_rules(read_zone(dir.file("copy"), false)) == normal_rules(want_before));

  // The copy rewritten with the change: the delta, named for the old copy, is stale.
  save_bytes(dir.file("copy"), copy_of(after));
  CHECK(normal_rules(read_zone(dir.file("copy"))) == normal_rules(want_after));
  // A delta of another copy (checksum) on the old copy: ignored, the old zone read.
  save_bytes(dir.file("copy"), base);
  save_bytes(rpz_delta_path(dir.file("copy")), delta_of(before, after, base_reader.checksum() ^ 1));
  CHECK(normal_rules(read_zone(dir.file("copy"))) == normal_rules(want_before));
}

TEST_CASE("a cut or damaged delta is refused at every length and byte, and the copy read alone",
          "[policy][rpz-copy][rpz-delta]") {
  Dir dir;
  const auto before = records_of(kBase), after = records_of(kChanged);
  const std::vector<std::uint8_t> base = copy_of(before);
  const std::vector<std::uint8_t> good = delta_of(before, after, RpzCopyReader(base, "copy").checksum());
  REQUIRE(delta_error(good).empty());
  for (std::size_t n = 0; n < good.size(); ++n) {
    INFO("cut to " << n << " bytes");
    CHECK_FALSE(delta_error({good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)}).empty());
  }
  std::vector<std::uint8_t> grown = good;
  grown.push_back(0);
  CHECK_FALSE(delta_error(grown).empty());
  for (std::size_t i = 0; i < good.size(); ++i) {
    INFO("byte " << i << " flipped");
    std::vector<std::uint8_t> bad = good;
    bad[i] ^= 0x20;
    CHECK_FALSE(delta_error(bad).empty());
  }
  std::vector<std::uint8_t> v2 = good;
  v2[8] = 2;
  CHECK_THAT(delta_error(v2), Catch::Contains("damaged"));  // the header's checksum covers the version

  save_bytes(dir.file("copy"), base);
  std::vector<std::uint8_t> bad = good;
  bad.back() ^= 1;
  save_bytes(rpz_delta_path(dir.file("copy")), bad);
  CHECK(normal_rules(read_zone(dir.file("copy"))) == normal_rules(read_zone(dir.file("copy"), false)));
}

TEST_CASE("a delta that removes a record its copy lacks is an error", "[policy][rpz-copy][rpz-delta]") {
  Dir dir;
  const auto before = records_of(kBase);
  auto other = before;
  other.push_back(records_of("$TTL 60\n@ SOA ns.rpz. admin.rpz. 7 3600 600 86400 300\nabsent.example CNAME .\n")[1]);
  const std::vector<std::uint8_t> base = copy_of(before);
  save_bytes(dir.file("copy"), base);
  // Made against a zone with absent.example, named for this copy: it removes absent.example.
  save_bytes(rpz_delta_path(dir.file("copy")), delta_of(other, before, RpzCopyReader(base, "copy").checksum()));
  RuleSet rules;
  CHECK_THROWS_WITH(read_rpz_file({dir.file("copy"), "rpz.test.", true}, rules),
                    Catch::Contains("its delta removes 1 records the copy does not hold"));
}

}  // namespace dnsarena::policy
