// SPDX-License-Identifier: GPL-3.0-or-later
// One refresh of the local root copy (workers/local_root_refresh.hpp) against knotd as
// the primary of ".": the first copy of a missing file, a copy not yet due, a serial
// unchanged (the file's time moves: RFC 8806 expiry counts from the last refresh), a new
// serial (the changed record in the new file), the next primary after an unreachable one,
// and what changes nothing: no primary answering, a zone that is not a root zone (no NS
// at "."), a transfer past the record bound.
// "[perf]" (hidden): the CPU time of one refresh of a root-sized zone (1,500 TLDs, about
// 21,000 records), transferred and unchanged, and of the supervisor's load of the copy
// (getrusage of this process, which runs both).
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/interop/knot_server.hpp"
#include "tests/workers/serve_harness.hpp"
#include "workers/local_root.hpp"
#include "workers/local_root_refresh.hpp"

namespace {

using dnsarena::interop::KnotOptions;
using dnsarena::interop::KnotServer;
using dnsarena::workers::LocalRoot;
using dnsarena::workers::LocalRootOutcome;
using dnsarena::workers::LocalRootRefreshSettings;
using dnsarena::workers::refresh_local_root;
using dnsarena::workers::XfrAddress;

// A small root zone: serial `serial`, SOA refresh 3600, retry 600; `ns`: with the NS set.
dnsarena::interop::ZoneFile root_zone(std::uint32_t serial, bool ns = true) {
  std::string text = "$ORIGIN .\n. 86400 SOA ns.invalid. hostmaster.invalid. " + std::to_string(serial) +
                     " 3600 600 604800 300\n"
                     "com. 86400 NS a.gtld-servers.net.\na.gtld-servers.net. 86400 A 192.0.2.4\n"
                     "a.root-servers.net. 86400 A 192.0.2.2\n";
  if (ns) text += ". 86400 NS a.root-servers.net.\n";
  return {".", text};
}

// knotd serving "." (its file named as KnotServer writes it) to transfers from 127.0.0.1.
KnotOptions root_primary() {
  KnotOptions o;
  o.sections = "acl:\n  - id: xfr\n    address: 127.0.0.1\n    action: transfer\n";
  o.zone_lines = "    acl: xfr\n    file: \".zone\"\n";
  return o;
}

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::int64_t mtime_of(const std::string& path) {
  struct stat st{};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mtim.tv_sec;
}

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

TEST_CASE("a local root refresh transfers the root zone, keeps it while the serial holds, and refuses a bad copy",
          "[local_root][knot]") {
  KnotServer knot({root_zone(10)}, root_primary());
  INFO(knot.log());
  REQUIRE(knot.wait_ready());
  const std::string file = knot.dir() + "/copy/root.zone";
  std::filesystem::create_directories(knot.dir() + "/copy");
  LocalRootRefreshSettings s;
  s.file = file;
  s.primaries = {XfrAddress::parse("127.0.0.1@" + std::to_string(knot.port()), 53)};

  // No file: transferred at once, checked, installed.
  auto r = refresh_local_root(s, now_s());
  INFO(r.error << "\n" << knot.log());
  REQUIRE(r.outcome == LocalRootOutcome::installed);
  CHECK(r.serial == 10);
  CHECK(r.records == 5);
  CHECK(r.expire_s == 604800);
  CHECK(r.next_unix_s >= now_s() + 3599);
  CHECK(LocalRoot::load(file)->serial() == 10);
  CHECK_FALSE(std::filesystem::exists(file + ".axfr"));

  // Within the SOA refresh since the file was written: nothing to do.
  r = refresh_local_root(s, now_s());
  CHECK(r.outcome == LocalRootOutcome::not_due);
  CHECK(r.next_unix_s == mtime_of(file) + 3600);

  // Due, the primary's serial unchanged: the file's time moves to now, its content stays.
  const std::string text = read_all(file);
  std::filesystem::last_write_time(file, std::filesystem::last_write_time(file) - std::chrono::hours(2));
  REQUIRE(mtime_of(file) < now_s() - 3600);
  r = refresh_local_root(s, now_s());
  CHECK(r.outcome == LocalRootOutcome::unchanged);
  CHECK(mtime_of(file) >= now_s() - 5);
  CHECK(read_all(file) == text);

  // A new serial with a changed record: the new copy (forced: not yet due).
  std::string error;
  REQUIRE(knot.replace_records(".", {{"a.gtld-servers.net.", 86400, "A", "192.0.2.44"}}, error));
  r = refresh_local_root(s, now_s(), true);
  INFO(r.error);
  REQUIRE(r.outcome == LocalRootOutcome::installed);
  CHECK(r.serial > 10);
  CHECK(read_all(file).find("192.0.2.44") != std::string::npos);
  CHECK(LocalRoot::load(file)->serial() == r.serial);
  const std::uint32_t serial = r.serial;

  // An unreachable primary first: the next one answers.
  const std::string nobody = "127.0.0.1@" + std::to_string(dnsarena::test::free_port());
  s.primaries.insert(s.primaries.begin(), XfrAddress::parse(nobody, 53));
  r = refresh_local_root(s, now_s(), true);
  CHECK(r.outcome == LocalRootOutcome::unchanged);
  CHECK(r.primary == s.primaries[1].text);

  // Nobody answers: failed, the copy as it was, the next attempt after the SOA's retry.
  s.primaries.resize(1);
  const std::string copy = read_all(file);
  const std::int64_t started = now_s();
  r = refresh_local_root(s, started, true);
  CHECK(r.outcome == LocalRootOutcome::failed);
  CHECK(r.error.find(nobody) != std::string::npos);
  CHECK(r.next_unix_s == started + 600);
  CHECK(read_all(file) == copy);

  // A primary whose "." has a newer serial and no NS set: refused by the load, nothing changes.
  KnotServer liar({root_zone(serial + 100, false)}, root_primary());
  REQUIRE(liar.wait_ready());
  s.primaries = {XfrAddress::parse("127.0.0.1@" + std::to_string(liar.port()), 53)};
  r = refresh_local_root(s, now_s(), true);
  CHECK(r.outcome == LocalRootOutcome::failed);
  CHECK(r.error.find("no NS record") != std::string::npos);
  CHECK(read_all(file) == copy);
  CHECK_FALSE(std::filesystem::exists(file + ".axfr"));

  // A primary serving a root whose ZONEMD does not match it (knotd does not check it
  // unless zonemd-verify): refused by the load, nothing changes.
  dnsarena::interop::ZoneFile stale_digest = root_zone(serial + 150);
  stale_digest.text += ". 86400 ZONEMD " + std::to_string(serial + 150) + " 1 1 " + std::string(96, '0') + "\n";
  KnotServer forger({stale_digest}, root_primary());
  REQUIRE(forger.wait_ready());
  s.primaries = {XfrAddress::parse("127.0.0.1@" + std::to_string(forger.port()), 53)};
  r = refresh_local_root(s, now_s(), true);
  CHECK(r.outcome == LocalRootOutcome::failed);
  CHECK(r.error.find("ZONEMD does not verify") != std::string::npos);
  CHECK(read_all(file) == copy);
  // local_root_zonemd: require reaches the refresh: a newer copy without ZONEMD is refused.
  KnotServer plain({root_zone(serial + 160)}, root_primary());
  REQUIRE(plain.wait_ready());
  s.primaries = {XfrAddress::parse("127.0.0.1@" + std::to_string(plain.port()), 53)};
  s.zonemd = dnsarena::workers::ZonemdCheck::require;
  r = refresh_local_root(s, now_s(), true);
  CHECK(r.outcome == LocalRootOutcome::failed);
  CHECK(r.error.find("no ZONEMD record at the root") != std::string::npos);
  CHECK(read_all(file) == copy);
  s.zonemd = dnsarena::workers::ZonemdCheck::verify;

  // A transfer past the record bound is cut: nothing changes.
  KnotServer bigger({root_zone(serial + 200)}, root_primary());
  REQUIRE(bigger.wait_ready());
  s.primaries = {XfrAddress::parse("127.0.0.1@" + std::to_string(bigger.port()), 53)};
  s.limits.max_records = 3;
  r = refresh_local_root(s, now_s(), true);
  CHECK(r.outcome == LocalRootOutcome::failed);
  CHECK(r.error.find("record") != std::string::npos);
  CHECK(read_all(file) == copy);
}

namespace {
double cpu_ms_self() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec)) / 1000.0;
}
}  // namespace

TEST_CASE("local root refresh: CPU of one refresh of a root-sized zone, transferred and unchanged", "[.perf][local_root]") {
  dnsarena::interop::ZoneFile zone = root_zone(2026120700);
  for (int t = 0; t < 1500; ++t) {  // as a TLD of the root zone: 4 NS, their A and AAAA, a DS, an NSEC
    const std::string tld = "tld" + std::to_string(t) + ".";
    for (int n = 0; n < 4; ++n) {
      const std::string ns = "ns" + std::to_string(n) + ".nic." + tld;
      zone.text += tld + " 172800 NS " + ns + "\n" + ns + " 172800 A 192.0." + std::to_string(t % 250) + "." +
                   std::to_string(n + 1) + "\n" + ns + " 172800 AAAA 2001:db8::" + std::to_string(t) + ":" +
                   std::to_string(n + 1) + "\n";
    }
    zone.text += tld + " 86400 DS 12345 8 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";
    zone.text += tld + " 86400 NSEC tld" + std::to_string(t + 1) + ". NS DS RRSIG NSEC\n";
  }
  KnotServer knot({zone}, root_primary());
  REQUIRE(knot.wait_ready());
  const std::string file = knot.dir() + "/root.zone";
  LocalRootRefreshSettings s;
  s.file = file;
  s.primaries = {XfrAddress::parse("127.0.0.1@" + std::to_string(knot.port()), 53)};
  double before = cpu_ms_self();
  auto r = refresh_local_root(s, now_s());
  const double transferred = cpu_ms_self() - before;
  REQUIRE(r.outcome == LocalRootOutcome::installed);
  before = cpu_ms_self();
  r = refresh_local_root(s, now_s(), true);
  const double unchanged = cpu_ms_self() - before;
  REQUIRE(r.outcome == LocalRootOutcome::unchanged);
  before = cpu_ms_self();
  r = refresh_local_root(s, now_s());
  const double not_due = cpu_ms_self() - before;
  REQUIRE(r.outcome == LocalRootOutcome::not_due);
  before = cpu_ms_self();
  const std::size_t records = LocalRoot::load(file)->records();
  const double load = cpu_ms_self() - before;  // what the supervisor spends installing it
  WARN("root-sized copy: " << records << " records, " << std::filesystem::file_size(file)
                           << " bytes of text; CPU per refresh: transferred " << transferred << " ms, unchanged "
                           << unchanged << " ms, not due " << not_due << " ms; the supervisor's load of it " << load << " ms");
}
