// SPDX-License-Identifier: GPL-3.0-or-later
// Forked writers and readers on one segment for a few seconds (DNSARENA_MP_SECONDS,
// default 3): every reader hit is byte-exact with what some writer wrote for that key.
#include <catch2/catch.hpp>
#include <chrono>
#include <vector>

#include "child_process.hpp"
#include "role_children.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

struct Scenario {
  const char* name;
  Geometry geometry;
  std::uint32_t keys;
};

void run_scenario(const Scenario& s, unsigned writers, unsigned readers) {
  const unsigned seconds = env_unsigned("DNSARENA_MP_SECONDS", 3);
  INFO(s.name << ": " << writers << " writers, " << readers << " readers, " << seconds << " s");
  TestSegment ts(s.geometry, "mp");
  SharedStopFlag stop;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  auto should_stop = [&stop, deadline] { return stop.is_set() || std::chrono::steady_clock::now() >= deadline; };
  const std::string name = ts.name();
  std::vector<std::pair<dnsarena::common::ChildProcess, std::string>> children;
  for (unsigned w = 0; w < writers; ++w) {
    RoleConfig cfg;
    cfg.keys = s.keys;
    cfg.writer_id = static_cast<std::uint16_t>(w + 1);
    cfg.seed = 1000 + w;
    cfg.should_stop = should_stop;
    children.emplace_back(spawn_role(Role::writer, name, w, cfg, seconds + 30), "writer " + std::to_string(w));
  }
  for (unsigned r = 0; r < readers; ++r) {
    RoleConfig cfg;
    cfg.keys = s.keys;
    cfg.seed = 2000 + r;
    cfg.with_probes = true;
    cfg.should_stop = should_stop;
    children.emplace_back(spawn_role(Role::reader, name, 100 + r, cfg, seconds + 30), "reader " + std::to_string(r));
  }
  std::vector<int> codes;
  for (auto& [pid, role] : children) codes.push_back(wait_child(pid, std::chrono::seconds(seconds + 40)));
  stop.set();
  for (std::size_t i = 0; i < children.size(); ++i) {
    INFO(children[i].second << " exit code " << codes[i]);
    CHECK(codes[i] == kChildOk);
  }
  Cache c(ts.seg, SlotRole::tool);
  const CacheStats st = c.stats();
  INFO("lookups " << st.counter(Counter::lookups) << " hits " << st.counter(Counter::hits) << " inserts "
                  << st.counter(Counter::inserts) << " evictions " << st.counter(Counter::evictions)
                  << " conflict evictions " << st.counter(Counter::conflict_evictions) << " retries "
                  << st.counter(Counter::lookup_retries));
  REQUIRE(st.counter(Counter::hits) > 0);
  REQUIRE(st.counter(Counter::inserts) > 0);
  check_invariants(c);
  std::printf("multiprocess %s: %llu lookups, %llu hits, %llu inserts, %llu evictions, %llu retries\n", s.name,
              static_cast<unsigned long long>(st.counter(Counter::lookups)),
              static_cast<unsigned long long>(st.counter(Counter::hits)),
              static_cast<unsigned long long>(st.counter(Counter::inserts)),
              static_cast<unsigned long long>(st.counter(Counter::evictions)),
              static_cast<unsigned long long>(st.counter(Counter::lookup_retries)));
}

}  // namespace

TEST_CASE("forked writers and readers: every hit is byte-exact (regions recycled under readers)",
          "[multiprocess]") {
  // A small arena (256 KiB) for many keys: regions are reclaimed and rewritten constantly
  // while readers copy from them.
  run_scenario({"recycling", tiny_geometry(3000, 16 * 1024, 16), 6000}, 2, 2);
}

TEST_CASE("forked writers and readers: every hit is byte-exact (hot keys replaced in place)",
          "[multiprocess]") {
  // Few keys, plenty of room: the same keys are replaced over and over while being read.
  run_scenario({"hot keys", tiny_geometry(10000, 256 * 1024, 16), 64}, 2, 2);
}
