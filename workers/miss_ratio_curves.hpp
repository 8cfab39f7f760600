// SPDX-License-Identifier: GPL-3.0-or-later
// Miss-ratio curves of the running cache, host-wide: miniature simulation (Waldspurger et
// al., USENIX ATC 2017) with dnsarena's own cache as the model.
//
// Purpose: what hit rate the host's cache would have at 1/8x .. 8x its configured size,
// measured on the live traffic, so that capacity can be bought by its effect on the
// upstream queries (`dnsarena stats --mrc`, /metrics). The hit rates are cumulative since
// the service started, like the cache's own counters: a young curve is a cold-start one.
//
// Model: K = 7 miniature caches, at capacity factors f = 1/8, 1/4, 1/2, 1, 2, 4, 8. Each
// is a real cache::Cache on a segment of its own (cache/segment.hpp, the same code as
// the serving cache: log arena reclaimed in ring order with second chances, index with
// its live-entry limit, TTL expiry, negative entries, ECS keys in the key blob, entries
// as the codec encodes them), at capacity f x C scaled by its sampling rate R_f:
//   max_entries = f C R_f,   live arena bytes = f A R_f (A: the real arena).
// Key k is fed to model f when mix(hash(k)) < R_f 2^64 (spatial sampling: a key is in
// or out for every request, so each model sees the whole request stream of the keys it
// holds). R_f = R min(1, 1/f): models above 1x sample fewer keys, so that each holds at
// most R C entries and the curve costs ~4.9 R of the segment, not ~15.9 R (the larger
// models' keys are a subset of the smaller ones': R_f only falls as f grows).
// R itself is the configured sample_rate (0.001) brought into [min_sampled_entries,
// max_sampled_entries] / C (at most 1): a small cache is sampled densely enough to have
// a curve at all (the default floor, 1,000 entries, keeps R = 0.001 from the default
// 1,000,000-entry cache up), a very large one keeps a bounded number of sampled keys.
//
// Regions: the real ring has N = A / region_bytes regions and holds on average about
// N - 1.5 of them (the head fills while at least one stays free). A model's regions must
// still hold one large entry, so they are at least 8 KiB and a small model has fewer
// regions than the real cache; its arena is sized so that it too holds (N - 1.5)/N of
// f A R_f on average: n = 1.5 + (N - 1.5)/N x f A R_f / region_bytes regions, at least 3.
// An entry longer than a model's region is refused by that model (counted as a miss on
// every request): rare (answers above 8 KiB), and said here rather than hidden.
//
// What a model is fed (the three hooks of the query path, mrc_feed_*):
//   - a fresh hit of the real cache (the batched UDP path, CacheAnswers::fresh): one
//     request of the key; a model that misses gets the real entry's bytes (Cache::peek);
//   - an upstream answer inserted into the real cache: one request per client that
//     waited on it (the real cache missed each of them), with the encoded entry; a
//     background refresh (prefetch, stale-first: no client waited) replaces the entry in
//     the models that sample the key and counts no request.
// A miss that ends without an insert (upstream failure, an answer not cached, a policy
// answer) is not fed: it would be a miss at every size and says nothing of capacity. A
// real lookup under ECS tries several keys in order; a model sees only the key that
// answered (or was inserted).
//
// Memory: one small anonymous shared mapping (the header and descriptors below, read-only
// after the supervisor wrote them, and the seen rows) and one anonymous shared segment per model (create_private with
// shared_across_fork), all made by the supervisor before it forks the workers: kept
// across worker restarts and reloads, gone with the service. The cache geometry cannot
// change without a restart (a reload keeps the running one), and a restart makes new
// models: a geometry change resets the curves, as does anything that changes R.
//
//   MrcHeader (64 B), then MrcModelDesc[models] (64 B each), then MrcSeenRow[256] (64 B each):
//   offset  size  field            meaning
//   0       8     real_entries     the real cache's max_entries
//   8       8     real_arena       the real cache's arena bytes (A)
//   16      4     real_regions     N
//   20      4     models           K
//   24      8     base_rate        R (double)
//   32      8     seed             mixes key hashes before the sampling test
//   40      8     created_unix     when the supervisor made the models
//   48      16    (zero)
//
//   MrcModelDesc
//   0       8     factor           f (double)
//   8       8     rate             R_f (double)
//   16      8     threshold        a key is fed when mix(hash) < threshold (R_f 2^64)
//   24      8     max_entries      the model's live-entry limit
//   32      8     arena_bytes      the model's arena (region_count x region_bytes)
//   40      4     region_bytes
//   44      4     region_count
//   48      8     segment_bytes    the model segment's size
//   56      8     (zero)
//
//   MrcSeenRow: the requests every process saw at the hooks, sampled or not
//   0       4     owner_pid        atomic; the process counting here (0: free; a dead pid's
//                                  row is taken over with its count, as a stat slot)
//   8       8     seen             atomic; requests seen, added in batches (below)
//   16      48    (zero)           a row per cache line: no false sharing between workers
//
// Estimator (SHARDS-adj, Waldspurger et al., FAST 2015, section 4.3): with few sampled
// keys, whether a handful of very popular keys fall under the threshold moves the
// sampled hit rate by points (a Zipf 0.9 stream over 100,000 names at R = 0.125: 7
// points low over every size in one bench run). Those keys are almost always hits, so
// the gap between the requests a model should have seen, R_f x seen, and those it did
// is counted as hits (or, above it, taken from them): hit rate = (hits + R_f seen -
// requests) / (R_f seen), within [0, 1]. `seen` costs the hooks one increment of a
// process-local count per query; it is added to the process's row when the process
// next feeds a sampled key (about every 1/R requests), so the rows lag by at most that.
//
// Concurrency: the header and descriptors are written once, before the first fork, and
// only read after. A seen row is claimed by CAS on owner_pid and then written by its
// owner alone (relaxed load and store); when every row is taken, a process adds to row
// 255 with an atomic add. A process killed between flushes loses its unflushed count
// (less than 1/R requests). Each model segment is a cache segment with the cache's own rules
// (docs/cache-design.md, Concurrency): probes take no lock (seqlock); inserts take the
// model's robust writer lock with a 1 ms bounded wait (a stopped holder costs a skipped
// model insert, counted as writer_lock_unavailable in the model, never a blocked query);
// a worker killed while holding it leaves EOWNERDEAD and the next writer repairs the
// model (repair()), exactly as for the serving cache. The hit and lookup counts are the
// model's stat slots: one per worker process (plain relaxed stores by its owner),
// summed at read; a killed worker's slot keeps its last counts and is taken over by its
// successor. No lock order: a hook never holds the real cache's lock while it feeds a
// model (the upstream hook feeds after the real insert returned).
//
// Costs per query: the key's hash and one comparison (a hash-sampled key is 1 in 1/R);
// a sampled key costs one probe per model it falls in (7 at most) and an insert per
// model miss. A flood of random names costs no more: its keys are sampled at the same
// rate R, each model is bounded by its own capacity (it evicts as the real cache does),
// and no model insert waits more than 1 ms. Shared memory: ~4.9 x R x the real segment, plus 64 B x (K + 1) and each
// model's index and stat slots (`dnsarena stats --mrc` prints the sum).
#pragma once
#include <sys/types.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/cache.hpp"
#include "common/anonymous_mapping.hpp"
#include "workers/mrc_settings.hpp"

namespace dnsarena::workers {

inline constexpr std::array<double, 7> kMrcFactors = {0.125, 0.25, 0.5, 1, 2, 4, 8};
inline constexpr std::uint32_t kMrcMinRegionBytes = 8192;
inline constexpr std::uint32_t kMrcSeenRows = 256;

struct MrcHeader {
  std::uint64_t real_entries;
  std::uint64_t real_arena;
  std::uint32_t real_regions;
  std::uint32_t models;
  double base_rate;
  std::uint64_t seed;
  std::uint64_t created_unix;
  std::uint8_t zero[16];
};
struct MrcModelDesc {
  double factor;
  double rate;
  std::uint64_t threshold;
  std::uint64_t max_entries;
  std::uint64_t arena_bytes;
  std::uint32_t region_bytes;
  std::uint32_t region_count;
  std::uint64_t segment_bytes;
  std::uint8_t zero[8];
};
struct MrcSeenRow {
  std::atomic<std::uint32_t> owner_pid;
  std::uint32_t pad;
  std::atomic<std::uint64_t> seen;
  std::uint8_t zero[48];
};
static_assert(sizeof(MrcSeenRow) == 64 && offsetof(MrcSeenRow, seen) == 8, "one row per cache line, as documented");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free,
              "rows are shared between processes: only lock-free atomics are address-free");
static_assert(sizeof(MrcHeader) == 64 && sizeof(MrcModelDesc) == 64, "one cache line each, as documented");
static_assert(offsetof(MrcHeader, base_rate) == 24 && offsetof(MrcHeader, created_unix) == 40,
              "the documented header layout");
static_assert(offsetof(MrcModelDesc, threshold) == 16 && offsetof(MrcModelDesc, region_bytes) == 40 &&
                  offsetof(MrcModelDesc, segment_bytes) == 48,
              "the documented descriptor layout");

// R for a real cache of `real_entries` (the bounds above applied).
double mrc_base_rate(std::uint64_t real_entries, const MrcSettings& s);
// The geometry of model f (REQUIRES: rate in (0, 1]).
cache::Geometry mrc_model_geometry(const cache::Geometry& real, double factor, double rate, std::uint32_t stat_slots);

// One model as read by stats, /metrics and top.
struct MrcModelStats {
  double factor = 0, rate = 0;
  std::uint64_t lookups = 0, hits = 0;   // requests fed, and those the model hit
  std::uint64_t live_entries = 0, max_entries = 0, bytes_in_use = 0, arena_bytes = 0, segment_bytes = 0;
  std::uint64_t evictions = 0, expirations = 0, refused = 0, lock_skips = 0;
  double expected = 0;  // R_f x the requests seen at the hooks (0: none counted yet)
  // The sampled hit rate as measured, and as corrected (the estimator above).
  double raw_hit_rate() const { return lookups ? static_cast<double>(hits) / static_cast<double>(lookups) : 0.0; }
  double hit_rate() const {
    if (expected < 1) return raw_hit_rate();
    const double h = static_cast<double>(hits) + expected - static_cast<double>(lookups);
    return std::min(1.0, std::max(0.0, h / expected));
  }
  double scaled_entries() const { return rate > 0 ? static_cast<double>(live_entries) / rate : 0.0; }
};

class MissRatioCurves {
public:
  // The supervisor, before it forks the workers: models of a cache of geometry `real`.
  // `stat_slots`: per model (the workers count + a few; beyond, they share the last).
  // Throws cache::SegmentError / std::system_error when the memory cannot be mapped.
  MissRatioCurves(const cache::Geometry& real, const MrcSettings& s, std::uint32_t stat_slots);
  ~MissRatioCurves();
  MissRatioCurves(const MissRatioCurves&) = delete;
  MissRatioCurves& operator=(const MissRatioCurves&) = delete;

  const MrcHeader& header() const { return *header_; }
  std::size_t models() const { return models_.size(); }
  std::uint64_t shared_bytes() const;  // header + every model segment
  // Every model's counters and fill (no stat slot taken: any process).
  std::vector<MrcModelStats> read() const;
  // Model i's segment (`dnsarena check`'s walker in the tests).
  cache::Segment& model_segment(std::size_t i) { return models_[i]; }

  // Whether a key of this hash is fed to any model (the hooks' fast test).
  bool sampled(std::uint64_t key_hash) const { return mix(key_hash) < max_threshold_; }
  // `n` requests reached a hook (sampled or not): counted here, added to this process's
  // row on its next sampled feed.
  void saw(std::uint64_t n) { unflushed_ += n; }
  // The requests seen by every process (flushed so far).
  std::uint64_t seen() const;
  // A fresh hit of `key` in `real` (REQUIRES: sampled(key.hash())).
  void feed_hit(cache::Cache& real, const cache::CacheKey& key, std::uint32_t now);
  // `requests` clients missed `key` and got the upstream answer, entry `padded_entry`;
  // 0: a background refresh (the entry replaced, nothing counted). REQUIRES: sampled(key.hash()).
  void feed_answer(const cache::CacheKey& key, std::span<const std::uint8_t> padded_entry, std::uint32_t now,
                   std::uint32_t requests);

private:
  std::uint64_t mix(std::uint64_t h) const {
    h ^= header_->seed;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb34fe1a85ec9ULL;
    return h ^ (h >> 33);
  }
  // This process's Cache over each model (built on first use in each process: a forked
  // worker never uses its parent's, whose stat slots are the parent's).
  void ensure_caches();
  // One request of `key` fed to every model that samples it; `entry` gives the bytes to
  // insert on a model miss (called at most once), empty: nothing to insert.
  template <class Entry>
  void feed(const cache::CacheKey& key, std::uint32_t now, std::uint32_t requests, Entry&& entry);

  common::AnonymousMapping map_;
  MrcHeader* header_ = nullptr;
  MrcModelDesc* descs_ = nullptr;
  std::vector<cache::Segment> models_;
  std::uint64_t max_threshold_ = 0;
  pid_t caches_pid_ = 0;
  std::vector<std::unique_ptr<cache::Cache>> caches_;
  std::unique_ptr<cache::EntryCopy> copy_;  // feed_hit's copy of the real entry
  MrcSeenRow* rows_ = nullptr;
  MrcSeenRow* my_row_ = nullptr;  // this process's (claimed by ensure_caches)
  bool row_owned_ = false;
  std::uint64_t unflushed_ = 0;
};

// The host's curves in this process: set by the supervisor before it forks the workers
// (nullptr: curves off), inherited by each worker. The query path's hooks read it.
void set_host_curves(MissRatioCurves* curves);
extern MissRatioCurves* g_host_curves;  // set_host_curves's; read through host_curves()
inline MissRatioCurves* host_curves() { return g_host_curves; }

// The hooks (a few instructions when the key is not sampled or the curves are off).
inline void mrc_feed_hit(cache::Cache& real, const cache::CacheKey& key, std::uint32_t now) {
  MissRatioCurves* c = host_curves();
  if (!c) return;
  c->saw(1);
  if (c->sampled(key.hash())) c->feed_hit(real, key, now);
}
inline void mrc_feed_answer(const cache::CacheKey& key, std::span<const std::uint8_t> padded_entry, std::uint32_t now,
                            std::size_t requests) {
  MissRatioCurves* c = host_curves();
  if (!c) return;
  c->saw(requests);
  if (c->sampled(key.hash())) c->feed_answer(key, padded_entry, now, static_cast<std::uint32_t>(requests));
}

}  // namespace dnsarena::workers
