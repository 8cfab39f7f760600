// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench torture`: random kill -9 torture of one shared segment.
//
// N reader and M writer processes (forked) share one small segment (a few hundred
// entries' worth of arena, so writers reclaim constantly). Each round waits a random
// 0.1-2 ms and SIGKILLs one child at random (a writer three times in four), then starts a
// new one in its place. Readers verify every hit byte for byte (torture_value.hpp);
// writers insert new versions and erase now and then. Every `check_every` rounds the
// parent runs the invariant walker behind `dnsarena check` (taking the writer lock, so
// repairing what a killed writer left), then requires every child to make progress
// within a few seconds. Figures: torn or wrong reads, check failures, stalls (a child or
// the writer lock that stopped moving: a deadlock), repairs done, and the rates.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

namespace dnsarena::bench {

struct TortureOptions {
  std::uint64_t rounds = 200;
  unsigned readers = 2;
  unsigned writers = 2;
  std::uint32_t keys = 2000;
  std::uint32_t regions = 32;       // 4 KiB each
  std::uint64_t check_every = 50;
  std::uint64_t seed = 1;
};

struct TortureResult {
  std::uint64_t rounds = 0;
  std::uint64_t writers_killed = 0, readers_killed = 0;
  std::uint64_t children_failed = 0;  // a child that exited by itself (exception, alarm)
  std::uint64_t repairs = 0;          // writers that found the lock's owner dead
  std::uint64_t reads = 0, hits = 0, wrong_reads = 0;
  std::uint64_t writes = 0, erases = 0, skipped_writes = 0;
  std::uint64_t checks = 0, check_failures = 0;
  std::uint64_t stalls = 0;           // a check interval in which a child or every writer stopped
  double seconds = 0;
  std::string first_wrong_read;       // empty when none
  std::string first_check_problem;    // empty when none
  std::string first_stall;            // empty when none
  bool ok() const { return wrong_reads == 0 && check_failures == 0 && stalls == 0 && children_failed == 0; }
};

// Runs the torture on a private segment (removed at the end). Progress goes to `log`.
TortureResult run_torture(const TortureOptions& o, std::ostream& log);

}  // namespace dnsarena::bench
