// SPDX-License-Identifier: GPL-3.0-or-later
// Races at creation: processes that open the same name at once must all end on one
// segment, whatever the policy; a creator killed mid-creation leaves nothing the next
// start cannot recover by itself.
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <dirent.h>
#include <fstream>
#include <sstream>

#include "cache/failpoint.hpp"
#include "child_process.hpp"
#include "test_segment.hpp"
#include "verifiable_value.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

// The inode of this process's mapping of /dev/shm/<name> (0 when not mapped). A creator
// mapped the object under its temporary name ("<name>.creating.<pid>.<n>", since
// unlinked), which is the same inode.
std::uint64_t mapped_inode(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const std::string path = "/dev/shm/" + name;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, file;
    std::uint64_t inode = 0;
    in >> range >> perms >> offset >> dev >> inode >> file;
    if (file == path || file.rfind(path + ".creating.", 0) == 0) return inode;
  }
  return 0;
}

// Files in /dev/shm whose name starts with `prefix`, other than `except`.
std::vector<std::string> shm_files_with_prefix(const std::string& prefix, const std::string& except) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.rfind(prefix, 0) == 0 && n != except) out.push_back(n);
    }
    ::closedir(d);
  }
  return out;
}

// An array of u64 shared across fork.
struct SharedWords {
  explicit SharedWords(std::size_t n) : n_(n) {
    void* p = ::mmap(nullptr, n * 8, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    w_ = static_cast<std::atomic<std::uint64_t>*>(p);
  }
  ~SharedWords() { ::munmap(w_, n_ * 8); }
  std::atomic<std::uint64_t>& operator[](std::size_t i) { return w_[i]; }
  std::size_t n_;
  std::atomic<std::uint64_t>* w_;
};

}  // namespace

TEST_CASE("processes opening one name at once all end on one segment (same inode)", "[multiprocess][segment]") {
  const OpenPolicy policy = GENERATE(OpenPolicy::refuse, OpenPolicy::reset);
  const unsigned rounds = env_unsigned("DNSARENA_RACE_ROUNDS", 40);
  constexpr unsigned kProcs = 4;
  const Geometry g = tiny_geometry(1000, 4096, 64);
  const std::uint32_t now = wall_clock_now();
  unsigned failed_rounds = 0;
  for (unsigned round = 0; round < rounds; ++round) {
    SegmentNameGuard guard(unique_segment_name("race"));
    const std::string name = guard.name();
    SharedWords inodes(kProcs);
    SharedStopFlag go;
    std::vector<dnsarena::common::ChildProcess> kids;
    for (unsigned i = 0; i < kProcs; ++i)
      kids.push_back(spawn_child([&, i] {
        while (!go.is_set()) {
        }
        Segment seg = Segment::open(name, g, policy);
        inodes[i] = mapped_inode(name);
        Cache c(seg, SlotRole::worker, i);
        c.insert_encoded(verifiable_key(i), encode_verifiable({i, 1, 1}, now), now);
        return kChildOk;
      }, 30));
    go.set();
    std::vector<int> codes;
    for (auto& k : kids) codes.push_back(wait_child(k, std::chrono::seconds(20)));
    Segment seg = Segment::attach(name);
    const std::uint64_t final_inode = mapped_inode(name);
    Cache c(seg, SlotRole::tool);
    EntryCopy copy;
    bool ok = true;
    for (unsigned i = 0; i < kProcs; ++i) {
      if (codes[i] != kChildOk || inodes[i].load() != final_inode ||
          c.lookup(verifiable_key(i), now, copy) != LookupStatus::hit) {
        ok = false;
        UNSCOPED_INFO("round " << round << " process " << i << ": exit " << codes[i] << ", inode "
                               << inodes[i].load() << " (segment's " << final_inode << "), canary "
                               << (c.lookup(verifiable_key(i), now, copy) == LookupStatus::hit ? "found" : "lost"));
      }
    }
    failed_rounds += !ok;
    CHECK(shm_files_with_prefix(name, name).empty());  // no temporary left behind
  }
  INFO(failed_rounds << " of " << rounds << " rounds split or failed");
  CHECK(failed_rounds == 0);
}

TEST_CASE("a creator killed before it finished: the next start recovers by itself", "[multiprocess][segment]") {
  const FailStep step = GENERATE(FailStep::create_sized, FailStep::create_header_written);
  INFO("creator killed at " << kFailStepNames[static_cast<std::size_t>(step)]);
  SegmentNameGuard guard(unique_segment_name("halfmade"));
  const std::string name = guard.name();
  const Geometry g = tiny_geometry(1000, 4096, 8);
  dnsarena::common::ChildProcess creator = spawn_child([&] {
    set_failpoint([step](FailStep s, std::uint64_t) {
      if (s == step) ::raise(SIGKILL);
    });
    Segment seg = Segment::open(name, g, OpenPolicy::refuse);
    return kChildNoProgress;
  }, 30);
  REQUIRE(wait_child(creator, std::chrono::seconds(10)) == 128 + SIGKILL);
  OpenOutcome outcome{};
  Segment seg = Segment::open(name, g, OpenPolicy::refuse, &outcome);  // a plain restart
  Cache c(seg);
  check_invariants(c);
  const std::uint32_t now = wall_clock_now();
  REQUIRE(c.insert_encoded(verifiable_key(1), encode_verifiable({1, 1, 1}, now), now) == InsertStatus::inserted);
  CHECK(shm_files_with_prefix(name, name).empty());
}

TEST_CASE("a segment whose creator never finished (older build) is recreated by a plain open", "[segment]") {
  SegmentNameGuard guard(unique_segment_name("notready"));
  const Geometry g = tiny_geometry(1000, 4096, 8);
  {
    Segment s = Segment::create(guard.name(), g);
    s.header().init_state.store(0);
  }
  OpenOutcome outcome{};
  Segment seg = Segment::open(guard.name(), g, OpenPolicy::refuse, &outcome);
  CHECK(outcome == OpenOutcome::recreated);
  Cache c(seg);
  check_invariants(c);
}
