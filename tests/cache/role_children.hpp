// SPDX-License-Identifier: GPL-3.0-or-later
// Forked children that attach a test segment by name and run one of the concurrent roles
// (concurrent_roles.hpp) in it: the readers, writers and kill -9 victims of the
// multi-process tests.
#pragma once
#include <chrono>
#include <string>
#include <thread>

#include "cache/cache.hpp"
#include "child_process.hpp"
#include "concurrent_roles.hpp"

namespace dnsarena::test {

enum class Role { reader, writer };

// Forks a child that attaches `segment_name` itself, takes worker stat slot `slot` and
// runs `role` with `cfg` until cfg.should_stop() (or the alarm) ends it.
inline common::ChildProcess spawn_role(Role role, const std::string& segment_name, std::uint32_t slot,
                                       const RoleConfig& cfg, unsigned alarm_seconds) {
  return spawn_child([&] {
    cache::Segment seg = cache::Segment::attach(segment_name);
    cache::Cache c(seg, cache::SlotRole::worker, slot);
    return role == Role::reader ? run_reader(c, cfg) : run_writer(c, cfg);
  }, alarm_seconds);
}

// A writer meant to be killed: it sets `writing` once attached, then writes until it is
// killed (or its 30 s alarm rings). Worker stat slot 10 is the victims' own.
inline common::ChildProcess spawn_victim_writer(const std::string& segment_name, const RoleConfig& cfg,
                                                SharedStopFlag& writing) {
  writing.clear();
  return spawn_child([&] {
    cache::Segment seg = cache::Segment::attach(segment_name);
    cache::Cache c(seg, cache::SlotRole::worker, 10);
    writing.set();
    return run_writer(c, cfg);
  }, 30);
}

// Waits (up to 5 s) for a victim to start writing, so a kill that follows lands while it
// writes, even in slow builds (ASan) where attaching takes long.
inline void wait_until_writing(const SharedStopFlag& writing) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!writing.is_set() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::microseconds(20));
}

}  // namespace dnsarena::test
