// SPDX-License-Identifier: GPL-3.0-or-later
// Test helpers: a private, uniquely named segment removed on scope exit, and the
// invariant check every test runs after changing a cache.
#pragma once
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <string>

#include "cache/cache.hpp"
#include "cache/segment_check.hpp"

namespace dnsarena::test {

// "dnsarena-test-<pid>-<n>": unique per process and per call, so tests run in parallel
// (ctest -j) and forked children never collide with their parent.
inline std::string unique_segment_name(const char* what = "seg") {
  static std::atomic<unsigned> counter{0};
  return "dnsarena-test-" + std::string(what) + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
}

// Removes a segment name when it goes out of scope, whatever happened to the object.
class SegmentNameGuard {
public:
  explicit SegmentNameGuard(std::string name) : name_(std::move(name)) { cache::Segment::remove(name_); }
  ~SegmentNameGuard() {
    if (::getpid() == owner_pid_) cache::Segment::remove(name_);  // never from a forked child
  }
  SegmentNameGuard(const SegmentNameGuard&) = delete;
  SegmentNameGuard& operator=(const SegmentNameGuard&) = delete;
  const std::string& name() const { return name_; }

private:
  std::string name_;
  pid_t owner_pid_ = ::getpid();
};

// A freshly created segment with a unique name, removed on scope exit.
struct TestSegment {
  explicit TestSegment(const cache::Geometry& g, const char* what = "seg")
      : guard(unique_segment_name(what)), seg(cache::Segment::create(guard.name(), g)) {}
  const std::string& name() const { return guard.name(); }

  SegmentNameGuard guard;  // declared first: destroyed after the mapping
  cache::Segment seg;
};

// A small geometry for tests: `max_entries` live entries, `regions` regions of
// `region_bytes`.
inline cache::Geometry tiny_geometry(std::uint64_t max_entries, std::uint32_t region_bytes, std::uint32_t regions) {
  cache::Geometry g;
  g.max_entries = max_entries;
  g.region_bytes = region_bytes;
  g.arena_bytes = std::uint64_t{region_bytes} * regions;
  g.stat_slots = 16;
  return g;
}

// REQUIREs that the invariant walker finds nothing wrong; lists what it found otherwise.
inline void check_invariants(cache::Cache& c) {
  const cache::CheckReport r = cache::check_segment(c);
  std::string problems;
  for (const auto& p : r.problems) problems += "  " + p + "\n";
  INFO("check_segment found " << r.problem_count << " problem(s):\n" << problems);
  REQUIRE(r.ok());
}

}  // namespace dnsarena::test
