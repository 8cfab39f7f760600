// SPDX-License-Identifier: GPL-3.0-or-later
// The loops run by concurrent writers and readers, shared by the multi-process (forked)
// and the multi-thread tests. Each returns an exit code of child_process.hpp; every
// reader hit is verified byte-exact (verifiable_value.hpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "cache/cache.hpp"

namespace dnsarena::test {

struct RoleStats {
  std::uint64_t operations = 0;
  std::uint64_t hits = 0;
};

struct RoleConfig {
  std::uint32_t keys = 1000;        // keys 0..keys-1 (verifiable_key)
  std::uint16_t writer_id = 0;
  std::uint64_t seed = 1;
  std::uint32_t erase_per_mille = 5;  // writers: share of operations that erase
  bool has_canary = false;          // readers: the canary must hit every time
  bool with_probes = false;         // readers: every 8th operation is a probe (the simulator's
                                    // path); off where the reader's hit rate must stay low
                                    // (probes are cheap and set hit bits fast)
  std::uint32_t canary_key = 0;
  std::function<bool()> should_stop;  // polled every few operations
};

// Inserts verifiable values (version counting up per writer) until should_stop().
int run_writer(cache::Cache& c, const RoleConfig& cfg, RoleStats* stats = nullptr);

// Looks up random keys (single and batched) until should_stop(); verifies every hit.
int run_reader(cache::Cache& c, const RoleConfig& cfg, RoleStats* stats = nullptr);

// Inserts the canary value for `key` (version 0, writer 0xFFFF).
void insert_canary(cache::Cache& c, std::uint32_t key);
// 0 when the canary is there and exact, else an exit code.
int verify_canary(cache::Cache& c, std::uint32_t key);

}  // namespace dnsarena::test
