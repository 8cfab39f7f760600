// SPDX-License-Identifier: GPL-3.0-or-later
// One refresh of the local root copy (workers/local_root_refresh.hpp) against knotd as
// the primary of ".": the first copy of a missing file, a copy not yet due, a serial
// unchanged (the file's time moves: RFC 8806 expiry counts from the last refresh), a new
// serial (the changed record in the new file), the next primary after an unreachable one,
// and what changes nothing: no primary answering, a zone that is not a root zone (no NS
// at "."), a transfer past the record bound.
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
