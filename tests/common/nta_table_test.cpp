// SPDX-License-Identifier: GPL-3.0-or-later
// The run-time negative trust anchor table (common/nta_table.hpp): its documented
// offsets checked in the file's bytes, a reference model under random adds and removes,
// expiry, a full table, torn entries and a writer killed -9 mid-write.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/nta_table.hpp"

using dnsarena::common::NtaTable;
using dnsarena::common::NtaTableError;

namespace {

// A wire name of one label and "example".
std::vector<std::uint8_t> name(const std::string& label) {
  const std::string wire = static_cast<char>(label.size()) + label + "\7example" + std::string(1, '\0');
  return {wire.begin(), wire.end()};
}

struct TempSegment {
  std::string segment = "dnsarena-test-nta-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
  ~TempSegment() { std::remove(NtaTable::path_for(segment).c_str()); }
};

std::uint64_t file_word(const std::string& path, long offset) {
  std::uint64_t w = 0;
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(::pread(fd, &w, sizeof w, offset) == static_cast<ssize_t>(sizeof w));
  ::close(fd);
  return w;
}

void file_write(const std::string& path, long offset, const void* data, std::size_t n) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  REQUIRE(::pwrite(fd, data, n, offset) == static_cast<ssize_t>(n));
  ::close(fd);
}

}  // namespace

TEST_CASE("nta table: the documented layout, in the file's bytes", "[nta]") {
  TempSegment s;
  REQUIRE_THROWS_AS(NtaTable::open(s.segment, false), NtaTableError);  // absent, not created
  NtaTable t = NtaTable::open(s.segment, true);
  const std::string path = NtaTable::path_for(s.segment);
  CHECK(path == "/dev/shm/." + s.segment + ".nta");
  const std::uint64_t magic = file_word(path, 0);
  CHECK(std::memcmp(&magic, "DNSA-NTA", 8) == 0);
  CHECK(file_word(path, 8) == (std::uint64_t{NtaTable::kCapacity} << 32 | NtaTable::kVersion));
  CHECK(file_word(path, 16) == 0);  // seq: generation 0, not writing
  REQUIRE(t.add(name("a"), 5000, 100) == NtaTable::AddResult::added);
  CHECK(file_word(path, 16) == 2);                    // one write: odd, then even again
  CHECK((file_word(path, 24) & 0xFFFFFFFF) == 1);    // count
  const long e0 = 64;
  CHECK(file_word(path, e0) == 5000);                 // expires
  CHECK(file_word(path, e0 + 8) == name("a").size()); // length
  const std::uint64_t first = file_word(path, e0 + 24);
  CHECK(std::memcmp(&first, name("a").data(), 8) == 0);  // the name's first word
  REQUIRE(t.add(name("b"), 6000, 100) == NtaTable::AddResult::added);
  CHECK(file_word(path, e0 + static_cast<long>(NtaTable::kEntryBytes)) == 6000);  // entry 1

  // A table of another version is refused, naming both.
  const std::uint32_t other = NtaTable::kVersion + 1;
  file_write(path, 8, &other, sizeof other);
  try {
    NtaTable::open(s.segment, false);
    FAIL("opened a table of another version");
  } catch (const NtaTableError& e) {
    CHECK(std::string(e.what()).find("expected version 1 of 256 entries, found version 2 of 256") != std::string::npos);
  }
}

TEST_CASE("nta table: random adds and removes match a reference map, expired entries dropped", "[nta]") {
  TempSegment s;
  NtaTable t = NtaTable::open(s.segment, true);
  NtaTable other = NtaTable::open(s.segment, false);  // a second mapping, as a worker's
  std::map<std::vector<std::uint8_t>, std::uint64_t> model;
  std::mt19937 rng(7);
  std::uint64_t now = 1000;
  for (int i = 0; i < 2000; ++i) {
    const auto n = name("n" + std::to_string(rng() % 40));
    now += rng() % 3;
    std::erase_if(model, [&](const auto& e) { return e.second <= now; });
    if (rng() % 3) {
      const std::uint64_t expires = now + 1 + rng() % 20;
      const auto r = t.add(n, expires, now);
      CHECK(r == (model.contains(n) ? NtaTable::AddResult::updated : NtaTable::AddResult::added));
      model[n] = expires;
    } else {
      CHECK(t.remove(n, now) == (model.erase(n) > 0));
    }
    const auto snap = other.read(now);
    REQUIRE(snap);
    CHECK(snap->generation == other.generation());
    std::map<std::vector<std::uint8_t>, std::uint64_t> seen;
    for (const auto& e : snap->entries) seen[e.name] = e.expires;
    REQUIRE(seen == model);
  }
}

TEST_CASE("nta table: a full table refuses a new name and keeps every entry", "[nta]") {
  TempSegment s;
  NtaTable t = NtaTable::open(s.segment, true);
  for (unsigned i = 0; i < NtaTable::kCapacity; ++i)
    REQUIRE(t.add(name("f" + std::to_string(i)), 5000, 100) == NtaTable::AddResult::added);
  const std::uint64_t generation = t.generation();
  CHECK(t.add(name("one-more"), 5000, 100) == NtaTable::AddResult::full);
  CHECK(t.generation() == generation);
  CHECK(t.add(name("f7"), 6000, 100) == NtaTable::AddResult::updated);  // a renewal still fits
  CHECK(t.read(100)->entries.size() == NtaTable::kCapacity);
  // Once some expire, a new name fits again.
  CHECK(t.add(name("one-more"), 7000, 5000) == NtaTable::AddResult::added);
  CHECK(t.read(5000)->entries.size() == 2);
}

TEST_CASE("nta table: a torn entry is never trusted, a half-done write is repaired by the next writer", "[nta]") {
  TempSegment s;
  NtaTable t = NtaTable::open(s.segment, true);
  const std::string path = NtaTable::path_for(s.segment);
  REQUIRE(t.add(name("a"), 5000, 100) == NtaTable::AddResult::added);
  REQUIRE(t.add(name("b"), 5000, 100) == NtaTable::AddResult::added);
  // A name byte changed behind the writer's back (a stopped writer scribbling): the entry
  // fails its checksum and is left out.
  const char z = 'z';
  file_write(path, 64 + 24 + 1, &z, 1);
  auto snap = t.read(100);
  REQUIRE(snap);
  REQUIRE(snap->entries.size() == 1);
  CHECK(snap->entries[0].name == name("b"));
  // An expiry torn the same way: left out too (the checksum covers it).
  const std::uint64_t later = 9999;
  file_write(path, 64 + static_cast<long>(NtaTable::kEntryBytes), &later, sizeof later);
  CHECK(t.read(100)->entries.empty());
  // seq left odd (a writer killed mid-write): readers take nothing; the next writer repairs.
  const std::uint64_t odd = t.generation() + 1;
  file_write(path, 16, &odd, sizeof odd);
  CHECK_FALSE(t.read(100));
  REQUIRE(t.add(name("c"), 5000, 100) == NtaTable::AddResult::added);
  CHECK(t.generation() % 2 == 0);
  snap = t.read(100);
  REQUIRE(snap);
  REQUIRE(snap->entries.size() == 1);
  CHECK(snap->entries[0].name == name("c"));
}

TEST_CASE("nta table: a writer killed -9 in the middle of writes leaves nothing torn", "[nta][kill]") {
  TempSegment s;
  NtaTable t = NtaTable::open(s.segment, true);
  for (int round = 0; round < 5; ++round) {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(ready[0]);
      NtaTable mine = NtaTable::open(s.segment, false);
      for (std::uint64_t i = 0;; ++i) {
        mine.add(name("k" + std::to_string(i % 200)), 5000 + i % 7, 100);
        if (i % 3 == 0) mine.remove(name("k" + std::to_string((i * 7) % 200)), 100);
        if (i == 50) (void)!::write(ready[1], "x", 1);
      }
    }
    ::close(ready[1]);
    char c;
    REQUIRE(::read(ready[0], &c, 1) == 1);  // it is writing
    ::close(ready[0]);
    ::kill(child, SIGKILL);
    int st = 0;
    ::waitpid(child, &st, 0);
    // Whatever it left: either no copy (seq odd), or entries that are each one it wrote whole.
    if (const auto snap = t.read(100))
      for (const auto& e : snap->entries) {
        if (e.name == name("after")) continue;  // an earlier round's
        CHECK(e.name.size() >= 5);
        CHECK(e.name[1] == 'k');
        CHECK(e.expires >= 5000);
        CHECK(e.expires < 5007);
      }
    // The next writer takes the lock the dead one held (flock ends with the process) and repairs.
    REQUIRE(t.add(name("after"), 6000, 100) != NtaTable::AddResult::full);
    const auto snap = t.read(100);
    REQUIRE(snap);
    CHECK(snap->generation % 2 == 0);
    bool found = false;
    for (const auto& e : snap->entries) found |= e.name == name("after");
    CHECK(found);
  }
}
