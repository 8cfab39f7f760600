// SPDX-License-Identifier: GPL-3.0-or-later
#include "concurrent_roles.hpp"

#include <cstdio>
#include <memory>

#include "child_process.hpp"
#include "sim/workload/entry_generator.hpp"
#include "verifiable_value.hpp"

namespace dnsarena::test {

namespace {
constexpr std::uint16_t kCanaryWriter = 0xFFFF;
}

int run_writer(cache::Cache& c, const RoleConfig& cfg, RoleStats* stats) {
  sim::SplitMix64 rng(cfg.seed);
  std::uint32_t version = 0;
  RoleStats local;
  for (std::uint64_t n = 0;; ++n) {
    if ((n & 15) == 0 && cfg.should_stop && cfg.should_stop()) break;
    const std::uint32_t k = static_cast<std::uint32_t>(rng.next() % cfg.keys);
    if (rng.next() % 1000 < cfg.erase_per_mille) {
      c.erase(verifiable_key(k));
    } else {
      const std::uint32_t now = cache::wall_clock_now();
      const auto bytes = encode_verifiable({k, ++version, cfg.writer_id}, now);
      if (c.insert_encoded(verifiable_key(k), bytes, now) == cache::InsertStatus::rejected) {
        std::fprintf(stderr, "writer %u: insert of key %u rejected\n", cfg.writer_id, k);
        return kChildRejected;
      }
    }
    ++local.operations;
    if (stats) *stats = local;
  }
  return local.operations > 0 ? kChildOk : kChildNoProgress;
}

int run_reader(cache::Cache& c, const RoleConfig& cfg, RoleStats* stats) {
  sim::SplitMix64 rng(cfg.seed);
  auto copy = std::make_unique<cache::EntryCopy>();
  RoleStats local;
  int failure = kChildOk;
  std::vector<cache::CacheKey> batch_keys;
  std::vector<std::uint32_t> batch_ids;
  std::vector<const cache::CacheKey*> batch_ptrs;
  for (std::uint64_t n = 0; failure == kChildOk; ++n) {
    if ((n & 15) == 0 && cfg.should_stop && cfg.should_stop()) break;
    const std::uint32_t now = cache::wall_clock_now();
    if (cfg.has_canary && (n & 7) == 0) {
      failure = verify_canary(c, cfg.canary_key);
      if (failure != kChildOk) break;
    }
    if (n % 4 == 3) {  // a batch of 16
      batch_keys.clear();
      batch_ids.clear();
      batch_ptrs.clear();
      for (int i = 0; i < 16; ++i) {
        batch_ids.push_back(static_cast<std::uint32_t>(rng.next() % cfg.keys));
        batch_keys.push_back(verifiable_key(batch_ids.back()));
      }
      for (auto& k : batch_keys) batch_ptrs.push_back(&k);
      c.lookup_batch(batch_ptrs.data(), batch_ptrs.size(), now,
                     [&](std::size_t i, cache::LookupStatus st, const cache::EntryCopy& e) {
                       ++local.operations;
                       if (st != cache::LookupStatus::hit) return;
                       ++local.hits;
                       const std::string why = verify_entry(e.span(), batch_ids[i]);
                       if (!why.empty()) {
                         std::fprintf(stderr, "reader (batch): %s\n", why.c_str());
                         failure = kChildMismatch;
                       }
                     });
    } else if (cfg.with_probes && n % 8 == 5) {  // the simulator's path: prefetch hints, then a probe (no copy to verify)
      const cache::CacheKey key = verifiable_key(static_cast<std::uint32_t>(rng.next() % cfg.keys));
      c.prefetch_buckets_of(key);
      c.prefetch_entries_of(key);
      ++local.operations;
      local.hits += c.probe(key, now) == cache::LookupStatus::hit;
    } else {
      const std::uint32_t k = static_cast<std::uint32_t>(rng.next() % cfg.keys);
      ++local.operations;
      if (c.lookup(verifiable_key(k), now, *copy) == cache::LookupStatus::hit) {
        ++local.hits;
        const std::string why = verify_entry(copy->span(), k);
        if (!why.empty()) {
          std::fprintf(stderr, "reader: %s\n", why.c_str());
          failure = kChildMismatch;
        }
      }
    }
    if (stats) *stats = local;
  }
  if (failure != kChildOk) return failure;
  return local.hits > 0 ? kChildOk : kChildNoProgress;
}

void insert_canary(cache::Cache& c, std::uint32_t key) {
  const std::uint32_t now = cache::wall_clock_now();
  const auto bytes = encode_verifiable({key, 0, kCanaryWriter}, now);
  if (c.insert_encoded(verifiable_key(key), bytes, now) == cache::InsertStatus::rejected)
    throw std::runtime_error("canary insert rejected");
}

int verify_canary(cache::Cache& c, std::uint32_t key) {
  auto copy = std::make_unique<cache::EntryCopy>();
  if (c.lookup(verifiable_key(key), cache::wall_clock_now(), *copy) != cache::LookupStatus::hit) {
    std::fprintf(stderr, "canary %u not found\n", key);
    return kChildCanaryLost;
  }
  ValueId id;
  const std::string why = verify_entry(copy->span(), key, &id);
  if (!why.empty() || id.version != 0 || id.writer != kCanaryWriter) {
    std::fprintf(stderr, "canary %u wrong: %s (v%u w%u)\n", key, why.c_str(), id.version, id.writer);
    return kChildMismatch;
  }
  return kChildOk;
}

}  // namespace dnsarena::test
