// SPDX-License-Identifier: GPL-3.0-or-later
// policy/zone_file_watch.hpp: a change is reported once it has settled (the same at two
// checks in a row), never before the interval, once per change, for in-place writes,
// a file renamed into place and a file removed.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "policy/zone_file_watch.hpp"

using dnsarena::policy::ZoneFileWatch;

namespace {

std::string scratch_dir() {
  const std::string dir = "/tmp/dnsarena-zone-watch-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("zone file watch: a change is reported once it settled, once, and only when due", "[policy][watch]") {
  const std::string dir = scratch_dir();
  const std::string a = dir + "/a.rpz", b = dir + "/b.rpz";
  std::ofstream(a) << "one\n";
  std::ofstream(b) << "one\n";
  ZoneFileWatch watch({a, b}, 100);
  CHECK(watch.poll(1000).empty());  // nothing changed
  CHECK(watch.ms_until_check(1000) == 100);
  CHECK(watch.ms_until_check(1050) == 50);

  std::ofstream(b) << "two, longer\n";  // a write: seen at the next check, reported at the one after
  CHECK(watch.poll(1050).empty());      // not due
  CHECK(watch.poll(1100).empty());      // seen changing
  CHECK(watch.poll(1200) == b);         // the same a check later: settled
  watch.mark_loaded();                  // the caller compiles it
  CHECK(watch.poll(1300).empty());
  CHECK(watch.poll(1400).empty());      // reported once

  std::ofstream(a) << "being written";  // still changing at the next check: not yet
  CHECK(watch.poll(1500).empty());
  std::ofstream(a, std::ios::app) << ", more\n";
  CHECK(watch.poll(1600).empty());
  CHECK(watch.poll(1700) == a);
  watch.mark_loaded();

  std::ofstream(dir + "/a.new") << "replaced\n";  // renamed into place: a new inode
  std::filesystem::rename(dir + "/a.new", a);
  CHECK(watch.poll(1800).empty());
  CHECK(watch.poll(1900) == a);
  watch.mark_loaded();

  std::filesystem::remove(b);  // removed: a change too (the compile then reports the missing file)
  CHECK(watch.poll(2000).empty());
  CHECK(watch.poll(2100) == b);
  std::filesystem::remove_all(dir);
}

TEST_CASE("zone file watch: no files, nothing to report", "[policy][watch]") {
  ZoneFileWatch watch({}, 100);
  CHECK(watch.poll(0).empty());
  CHECK(watch.poll(1000).empty());
}
