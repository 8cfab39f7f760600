// SPDX-License-Identifier: GPL-3.0-or-later
#include "cache_curve.hpp"

#include <time.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <cmath>
#include <string>
#include <stdexcept>
#include <utility>

#include "cache/cache.hpp"
#include "cache/cache_lab_hooks.hpp"
#include "cache/entry_codec.hpp"
#include "cache/uniform_entry_writer.hpp"
#include "che_model.hpp"
#include "sampled_trace.hpp"

namespace dnsarena::sim::fleet {

using cache::CacheLabHooks;  // the trace run: prefetch_position, probe_at, held inserts

namespace {

// CPU time of the calling thread: a curve runs on one thread, and on a shared machine
// its wall time also counts whatever else ran on that core.
double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Byte pools the answers' rdata is copied from: letters (TXT) and mixed bytes.
struct RdataPools {
  static constexpr std::size_t kSpan = 4096;   // start offsets
  static constexpr std::size_t kMaxLen = 4000; // longest rdata (fleet_config: other_rdata_bytes)
  std::uint8_t letters[kSpan + kMaxLen];
  std::uint8_t bytes[kSpan + kMaxLen];
  RdataPools() {
    SplitMix64 rng(0x5EED);
    for (std::size_t i = 0; i < kSpan + kMaxLen; ++i) {
      letters[i] = static_cast<std::uint8_t>('a' + i * 7 % 26);
      bytes[i] = static_cast<std::uint8_t>(rng.next());
    }
  }
};
const RdataPools kPools;

// Builds the key and answer of a trace key into reused buffers.
class AnswerBuilder {
public:
  AnswerBuilder(const TrafficProfile& t, std::uint64_t seed) : t_(t), seed_(seed) {}

  cache::CacheKey key(const TraceKey& k) {
    cache::CacheKey out;
    key_into(k, out);
    return out;
  }
  // The same key built in place (no 300-byte temporary copied into a batch slot).
  void key_into(const TraceKey& k, cache::CacheKey& out) {
    // "n<rank base36>.example." written straight into a fixed buffer (callgrind: ~120
    // instructions per request through a growing byte string before).
    char digits[14];
    int d = 0;
    std::uint64_t r = k.name;
    do {
      const unsigned v = static_cast<unsigned>(r % 36);
      digits[d++] = static_cast<char>(v < 10 ? '0' + v : 'a' + v - 10);
      r /= 36;
    } while (r);
    std::size_t n = 0;
    qname_[n++] = static_cast<std::uint8_t>(d + 1);
    qname_[n++] = 'n';
    while (d) qname_[n++] = static_cast<std::uint8_t>(digits[--d]);
    static constexpr std::uint8_t kSuffix[] = {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0};
    std::memcpy(qname_.data() + n, kSuffix, sizeof kSuffix);
    n += sizeof kSuffix;
    const std::span<const std::uint8_t> qname(qname_.data(), n);
    cache::EcsTag ecs;
    if (k.ecs) {
      ecs.family = cache::EcsFamily::ipv4;
      ecs.prefix = t_.ecs_prefix;
      const std::uint32_t net = (10u << 24) | (k.subnet << (32 - std::min<unsigned>(t_.ecs_prefix, 24)));
      ecs.address = {static_cast<std::uint8_t>(net >> 24), static_cast<std::uint8_t>(net >> 16),
                     static_cast<std::uint8_t>(net >> 8), static_cast<std::uint8_t>(net)};
    }
    // The name and prefix are valid by construction; the constructor's check, kept.
    if (!out.assign(qname, k.qtype, 0, ecs)) out = cache::CacheKey(qname, k.qtype, 0, ecs);
  }

  // Encodes the key's answer into `out` (resized to the padded entry); returns false if
  // it cannot be encoded.
  bool encode(const cache::CacheKey& ckey, const TraceKey& k, std::uint32_t now, std::vector<std::uint8_t>& out) {
    std::size_t padded = 0;
    const bool ok = encode_into(ckey, k, now, out, &padded, nullptr);
    out.resize(padded);
    return ok;
  }
  // The same bytes into out[0, *padded) (cache::encode_entry_into: `out` only grows, no
  // zero-filling); *ttl_out, when given, is the answer's TTL (key_ttl).
  bool encode_into(const cache::CacheKey& ckey, const TraceKey& k, std::uint32_t now, std::vector<std::uint8_t>& out,
                   std::size_t* padded, std::uint32_t* ttl_out) {
    bool negative = false;
    const std::uint32_t ttl = key_ttl(t_, k, seed_, &negative);
    if (ttl_out) *ttl_out = ttl;
    SplitMix64 rng(mix64(k.id() ^ seed_ ^ 0xABCD));
    if (negative) {
      records_.clear();
      cache::Answer a;
      a.ttl = ttl;
      static const std::uint8_t kApex[] = {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0};
      static const std::uint8_t kSoa[] = {2, 'n', 's', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0,
                                          4, 'h', 'o', 's', 't', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0,
                                          0, 0, 0, 1, 0, 0, 0x1c, 0x20, 0, 0, 3, 0x84, 0, 0x12, 0x75, 0, 0, 0, 1, 0x2c};
      records_.push_back(soa_record(kApex, ttl, kSoa));
      a.rcode = 3;
      a.sections[cache::kAuthority] = records_;
      return cache::encode_entry_into(ckey, a, now, out, padded) != 0;
    }
    const unsigned n = static_cast<unsigned>(rng.range(t_.records_min, t_.records_max));
    // Content does not matter to the cache, only the size: taken from fixed pools and
    // written straight into the entry (cache::UniformEntryWriter: every record at the
    // qname, of the qtype, at the entry's TTL), a TXT's length byte first.
    // NOTE: before branch simprobe the records were gathered as RecordData spans (TXT
    // copied into a buffer first) and encoded by encode_entry_into, which sizes the
    // buffer in one pass over the records and tests each record's owner, type, class and
    // TTL in the next: ENCODE_FIGURES.
    const std::uint8_t* source[64];
    std::size_t lengths[64];
    std::size_t rdata_bytes = 0;
    for (unsigned i = 0; i < n; ++i) {
      const unsigned len = k.qtype == 1 ? 4 : k.qtype == 28 ? 16
                                                            : static_cast<unsigned>(rng.range(t_.other_rdata_min, t_.other_rdata_max));
      const std::size_t offset = rng.next() % kPools.kSpan;
      source[i] = (k.qtype == 16 ? kPools.letters : kPools.bytes) + offset;
      lengths[i] = len;
      rdata_bytes += len;
    }
    cache::UniformEntryWriter writer(ckey, ttl, now, n, rdata_bytes, out);
    for (unsigned i = 0; i < n; ++i) {
      std::uint8_t* at = writer.add_record(lengths[i]);
      if (k.qtype == 16) {
        at[0] = static_cast<std::uint8_t>(std::min<std::size_t>(255, lengths[i] - 1));
        std::memcpy(at + 1, source[i], lengths[i] - 1);
      } else {
        std::memcpy(at, source[i], lengths[i]);
      }
    }
    return writer.finish(padded) != 0;
  }

private:
  const TrafficProfile& t_;
  std::uint64_t seed_;
  std::array<std::uint8_t, 32> qname_;  // 1 + 1 + 13 base36 digits + 9 ("example.")
  std::vector<cache::RecordData> records_;  // a negative answer's SOA
};

}  // namespace

namespace {

// Head: the top-K names, kept in full. K is sized so the head's expected resident
// entries (TTL-only, expected_resident_keys) take at most 1/kHeadShareDiv of the sampled
// cache (<= kMaxHead names): the tail still drives eviction.
// NOTE: sizing K by possible keys (qtypes x subnets) was tried and rejected: an ECS name
// of ecs-heavy-fra counts 1,200 possible keys but holds far fewer (most of its subnets
// ask seldom), so the head stopped at 11 names where its resident budget allows more.
std::uint64_t head_names_for(const CurveRequest& req, double tail_rate) {
  constexpr double kHeadShareDiv = 8.0;
  constexpr std::uint64_t kMaxHead = 1024;
  if (tail_rate >= 1.0) return 0;
  const TrafficProfile& t = *req.traffic;
  const double budget = static_cast<double>(req.capacity) * tail_rate / kHeadShareDiv;
  const double norm = zipf_normalizer(t.names, t.zipf);
  const std::uint64_t most = std::min<std::uint64_t>(kMaxHead, t.names);
  double resident = 0;
  std::uint64_t k = 0;
  for (; k < most; ++k) {
    const double name_qps = req.rate_qps * std::pow(static_cast<double>(k + 1), -t.zipf) / norm;
    resident += expected_resident_keys(t, k + 1, name_qps, req.seed);
    if (resident > budget) break;
  }
  return k;
}

// Expected head entries held at the plateau: a key requested at l (Poisson) with TTL T
// is present a share l*T / (1 + l*T) of the time (TTL-only, no eviction).
double expected_head_entries(const std::vector<HeadKey>& head_keys, std::uint64_t capacity) {
  double expected = 0;
  for (const HeadKey& h : head_keys) {
    const double requests_per_ttl = h.rate_qps * static_cast<double>(h.ttl);
    expected += requests_per_ttl / (1.0 + requests_per_ttl);
  }
  return std::min(expected, static_cast<double>(capacity));
}

// Mean padded entry size on this profile (sizes the private arena), over distinct keys
// (uniform over kept names), as the cache's long tail holds them.
double probe_mean_entry_bytes(const TrafficProfile& t, const SampledTrace& trace, std::uint64_t head,
                              std::uint64_t seed, AnswerBuilder& builder, std::vector<std::uint8_t>& scratch) {
  constexpr int kProbes = 1024;
  SplitMix64 pick(seed ^ 0x99);
  double sum = 0;
  int probes = 0;
  const std::uint64_t blocks = trace.tail_blocks();
  for (int i = 0; i < kProbes && blocks + head > 0; ++i, ++probes) {
    TraceKey key;
    const std::uint64_t slot = pick.next() % (blocks + head);
    key.name = slot < head ? slot + 1 : trace.tail_rank(slot - head);
    key.qtype = request_qtype(t, key.name, seed, pick.unit());
    key.ecs = name_is_ecs(t, key.name, seed);
    if (key.ecs) key.subnet = static_cast<std::uint32_t>(pick.next() % std::max(1u, t.ecs_subnets));
    const cache::CacheKey cache_key = builder.key(key);
    builder.encode(cache_key, key, 1, scratch);
    sum += static_cast<double>(cache::padded_entry_size(scratch.size()));
  }
  return probes ? sum / probes : 0;
}

// Dead copies the head leaves in the log over `horizon_s`: a head key is simulated at a
// thinned rate of at least kCyclesPerTtl per TTL (sampled_trace.cpp), so it misses and
// is re-inserted about once per TTL, and each re-insert leaves the old copy dead in the
// log until its region is reclaimed. A head key is one slot at full scale, so these
// copies are not scaled down with the tail: against an arena sized for R * capacity
// entries they are many times the tail's own churn.
double head_dead_copies(const std::vector<HeadKey>& head_keys, double horizon_s) {
  double copies = 0;
  for (const HeadKey& h : head_keys) copies += horizon_s / static_cast<double>(std::max(1u, h.ttl));
  return copies;
}

// The private segment's geometry: twice the live bytes at capacity, plus the head's dead
// copies over the plateau horizon, plus regions for reclaim, so that max_entries binds,
// not bytes.
// NOTE: sized at 2 x live bytes alone, the arena turned byte-bound whenever the head held
// ECS names (hundreds of keys each, 20 s TTLs among them):
// ecs-heavy-fra at 6 M entries plateaued at 2.79 M / 5.94 M / 3.09 M / 5.93 M / 3.34 M
// for seeds 1..5 (live sampled entries 57% of max_entries), 5.83..5.94 M at 16 x.
cache::Geometry private_geometry(std::uint64_t sampled_capacity, double mean_entry_bytes, double head_dead_copies) {
  cache::Geometry g;
  g.max_entries = sampled_capacity;
  g.region_bytes = 64u << 10;
  const std::uint64_t want =
      static_cast<std::uint64_t>(mean_entry_bytes * (2.0 * static_cast<double>(sampled_capacity) + head_dead_copies));
  g.arena_bytes = std::max<std::uint64_t>(16ull * g.region_bytes, (want / g.region_bytes + 8) * g.region_bytes);
  g.stat_slots = 2;
  return g;
}

// When the run may stop (cache_curve.hpp, "Plateau"): the check starts after twice the
// longest time an entry can matter (its TTL, or, when the cache fills, two characteristic
// times: an entry not hit within t_C is evicted), and after at least 3 hours; it compares
// now with a window of that horizon in whole hours, 1 to 6 hours, back.
struct PlateauRule {
  double horizon_s = 0;
  std::size_t window_minutes = 60;
  std::size_t first_check_minute = 180;

  PlateauRule(const TrafficProfile& t, const CheEstimate& che) {
    horizon_s = std::min(static_cast<double>(t.max_ttl()), che.fills ? 2.0 * che.characteristic_s : HUGE_VAL);
    const std::size_t horizon_minutes = static_cast<std::size_t>(horizon_s) / 60 + 1;
    window_minutes = std::clamp<std::size_t>((horizon_minutes + 59) / 60, 1, 6) * 60;
    first_check_minute = std::max<std::size_t>({180, window_minutes + 60, 2 * horizon_minutes});
  }

  // Checked once an hour: entries moved < 1% and the hourly hit rate < 0.5 points.
  bool reached(const OccupancyCurve& c, const std::vector<double>& hits_per_min, const std::vector<double>& lookups_per_min,
               std::size_t minute) const {
    if (minute % 60 != 0 || minute < first_check_minute) return false;
    auto hourly_hit_rate = [&](std::size_t end) {
      double hits = 0, lookups = 0;
      for (std::size_t m = end - 59; m <= end; ++m) hits += hits_per_min[m], lookups += lookups_per_min[m];
      return lookups > 0 ? hits / lookups : 0.0;
    };
    const double entries_now = c.entries[minute], entries_then = c.entries[minute - window_minutes];
    const double entries_moved = std::fabs(entries_now - entries_then) / std::max(1.0, entries_now);
    const double hit_rate_moved = std::fabs(hourly_hit_rate(minute) - hourly_hit_rate(minute - window_minutes));
    return entries_moved < 0.01 && hit_rate_moved < 0.005;
  }
};

// Inserts by the minute their TTL ends: entries linked but expired stay in the index
// until reclaim, so "unexpired" = min(linked, inserted and not yet expired). Tail
// inserts and head keys (each head key counted once, at its latest insert) separately.
// Head entries are hot, so they are counted as linked once inserted (a hot key's expired
// entry is replaced on its next miss; evictions of head keys are not seen here, they are
// rare).
class ExpiryLedger {
public:
  ExpiryLedger(std::size_t max_minutes, std::uint32_t max_ttl, std::uint32_t clock_start, std::size_t head_keys)
      : clock_start_(clock_start),
        expiry_minutes_(max_minutes + max_ttl / 60 + 3),
        tail_expiring_(expiry_minutes_, 0),
        head_expiring_(expiry_minutes_, 0),
        head_expiry_(head_keys, 0) {}

  void tail_inserted(std::uint32_t end) {
    ++tail_inserts_;
    ++tail_expiring_[expiry_minute(end)];
  }
  void head_inserted(std::size_t head_index, std::uint32_t end, std::size_t minute_now) {
    const std::uint32_t old = head_expiry_[head_index];
    if (old == 0) ++head_linked_keys_;
    else if (expiry_minute(old) + 1 < minute_now) --head_expired_;  // bucket already counted (end of minute m + 1)
    else --head_expiring_[expiry_minute(old)];
    head_expiry_[head_index] = end;
    ++head_expiring_[expiry_minute(end)];
    ++head_inserts_;
  }
  // Expiry counted at the end of the minute in which the TTL ends.
  void end_minute(std::size_t minute) {
    tail_expired_ += tail_expiring_[minute - 1];
    head_expired_ += head_expiring_[minute - 1];
  }
  std::uint64_t tail_inserts() const { return tail_inserts_; }
  std::uint64_t head_inserts() const { return head_inserts_; }
  std::uint64_t head_linked_keys() const { return head_linked_keys_; }
  std::uint64_t tail_unexpired(std::uint64_t tail_linked) const {
    return std::min(tail_linked, tail_inserts_ - std::min(tail_inserts_, tail_expired_));
  }
  std::uint64_t head_unexpired() const { return head_linked_keys_ - std::min(head_linked_keys_, head_expired_); }

private:
  std::size_t expiry_minute(std::uint32_t end) const {
    return std::min<std::size_t>(expiry_minutes_ - 1, (end - clock_start_) / 60);
  }
  std::uint32_t clock_start_;
  std::size_t expiry_minutes_;
  std::vector<std::uint32_t> tail_expiring_, head_expiring_;
  std::vector<std::uint32_t> head_expiry_;  // latest TTL end per head key; 0: never inserted
  std::uint64_t tail_expired_ = 0;
  std::uint64_t head_linked_keys_ = 0, head_expired_ = 0;  // head_expired_: keys whose latest TTL ended
  std::uint64_t tail_inserts_ = 0, head_inserts_ = 0;
};

// Lookups and hits of one simulated minute: head requests at their thinning weight,
// tail requests as sampled (scaled by 1/R by the caller).
// During an outage hits are the fresh answers and `stale` the stale ones; `prefetches`
// are background refreshes (head: 1 each, as inserts; tail: scaled by 1/R).
struct MinuteCounts {
  double head_hits = 0, head_lookups = 0, head_stale = 0, head_prefetches = 0;
  std::uint64_t tail_hits = 0, tail_lookups = 0, tail_stale = 0, tail_prefetches = 0;
};

// How a minute's requests are served: as before (probe, insert on a miss); with prefetch
// (lookup reads the entry's expiry, a hit near its end refreshes it); or in an upstream
// outage (lookup, nothing inserted, expired entries within the stale window answered).
enum class ServeMode { plain, prefetch, outage };

// One curve's run of the real cache: the trace, its keys and answers, the private
// segment, and the per-minute records.
class CurveRun {
public:
  CurveRun(const CurveRequest& req, double tail_rate, std::uint64_t head, const CheEstimate& che, OccupancyCurve& curve)
      : req_(req),
        profile_(*req.traffic),
        curve_(curve),
        trace_(profile_, tail_rate, req.seed, head, req.rate_qps, che.fills ? che.characteristic_s : HUGE_VAL),
        builder_(profile_, req.seed) {
    if (req.prefetch_percent > 0 || req.outage_minutes > 0) copy_ = std::make_unique<cache::EntryCopy>();
    // Head keys without ECS are built once (their hash too); an ECS head name has a key
    // per subnet, most of them requested seldom, so those are built per request, as
    // tail keys are.
    head_key_slot_.reserve(trace_.head_keys().size());
    for (const HeadKey& h : trace_.head_keys()) {
      head_key_slot_.push_back(h.key.ecs ? -1 : static_cast<std::int32_t>(head_cache_keys_.size()));
      if (!h.key.ecs) head_cache_keys_.push_back(builder_.key(h.key));
    }
  }

  const SampledTrace& trace() const { return trace_; }
  AnswerBuilder& builder() { return builder_; }
  std::vector<std::uint8_t>& scratch() { return scratch_; }

  // Runs minutes 1.. until the plateau rule holds or max_days pass.
  void run(cache::Cache& cache, const PlateauRule& plateau) {
    const double scale = 1.0 / curve_.sample_rate;  // weight of a tail request, entry or insert
    const std::size_t max_minutes = std::size_t{req_.max_days} * 1440;
    ExpiryLedger ledger(max_minutes, profile_.max_ttl(), kClockStart, trace_.head_keys().size());
    hits_per_min_.assign(1, 0);
    lookups_per_min_.assign(1, 0);
    prefetches_per_min_.assign(1, 0);
    curve_.entries.push_back(0);
    curve_.inserted.push_back(0);
    curve_.unexpired.push_back(0);
    double carry = 0;
    std::uint64_t requests = 0;
    auto minute_requests = [&] {
      carry += trace_.sampled_qps() * 60.0;
      const std::uint64_t n = static_cast<std::uint64_t>(carry);
      carry -= static_cast<double>(n);
      requests += n;
      return n;
    };
    const ServeMode normal = req_.prefetch_percent > 0 ? ServeMode::prefetch : ServeMode::plain;
    // An outage inside the curve: minutes [outage_first, outage_end).
    const std::size_t outage_first = req_.outage_minutes > 0 ? req_.outage_start_minute : 0;
    const std::size_t outage_end = outage_first ? outage_first + req_.outage_minutes : 0;
    if (outage_first) curve_.outage_start = static_cast<std::uint32_t>(outage_first);
    std::size_t minute = 1;
    for (; minute <= max_minutes; ++minute) {
      const bool in_outage = minute >= outage_first && minute < outage_end;
      const MinuteCounts counts =
          run_minute(cache, ledger, minute, minute_requests(), in_outage ? ServeMode::outage : normal);
      record_minute(cache, ledger, minute, counts, scale);
      if (in_outage) record_outage(counts, scale);
      if (minute >= outage_end && plateau.reached(curve_, hits_per_min_, lookups_per_min_, minute)) {
        curve_.reached_plateau = true;
        ++minute;
        break;
      }
    }
    // An outage after the curve's end: its minutes run on, outside the curve's vectors.
    if (req_.outage_minutes > 0 && !outage_first) {
      curve_.outage_start = static_cast<std::uint32_t>(curve_.entries.size());
      for (std::uint32_t k = 0; k < req_.outage_minutes; ++k, ++minute)
        record_outage(run_minute(cache, ledger, minute, minute_requests(), ServeMode::outage), scale);
    }
    curve_.sampled_requests = requests;
  }

  double memory_accesses() const { return memory_accesses_; }
  const std::vector<double>& prefetches_per_min() const { return prefetches_per_min_; }
  const std::vector<double>& hits_per_min() const { return hits_per_min_; }
  const std::vector<double>& lookups_per_min() const { return lookups_per_min_; }

private:
  static constexpr std::uint32_t kClockStart = 1'000'000;  // simulated seconds at the restart
  // Requests in batches, software-pipelined: while batch k is looked up (and inserted)
  // one request after another, in trace order (so a later request of a key sees an
  // earlier request's insert), batch k+2 is drawn, its keys built and its index buckets
  // prefetched (their positions kept for CacheLabHooks::probe_at: the hash is mapped once). The
  // entries are not prefetched: a probe reads its entry when a tag matches (a dependent
  // miss on a hit).
  // NOTE: prefetching batch k+1's entries too was tried (Cache::prefetch_entries_of
  // after batch k): that scan of 16 slots cost ~196 instructions per request (callgrind)
  // and stalled on the bucket lines, more than the entry miss it hid: 3.16 against
  // 2.75 M requests/s per core without it (mean of 5 alternating pairs, load 8-10).
  static constexpr std::size_t kBatch = 16;
  static constexpr std::size_t kDepth = 3;  // batches in flight
  struct Batch {
    SampledTrace::Draw draws[kBatch];
    cache::CacheKey built_keys[kBatch];  // keys built for this batch (tail, ECS head)
    const cache::CacheKey* keys[kBatch];
    cache::IndexPosition positions[kBatch];  // each key's buckets and tag, for probe_at
    std::size_t size = 0;
  };

  void prepare_batch(cache::Cache& cache, Batch& batch, std::uint64_t remaining) {
    batch.size = static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, remaining));
    trace_.next_batch(batch.draws, batch.size);
    for (std::size_t j = 0; j < batch.size; ++j) {
      const std::int64_t head_index = batch.draws[j].head_index;
      if (head_index >= 0 && head_key_slot_[static_cast<std::size_t>(head_index)] >= 0) {
        batch.keys[j] = &head_cache_keys_[static_cast<std::size_t>(head_key_slot_[static_cast<std::size_t>(head_index)])];
      } else {
        builder_.key_into(batch.draws[j].key, batch.built_keys[j]);
        batch.keys[j] = &batch.built_keys[j];
      }
      batch.positions[j] = CacheLabHooks::prefetch_position(cache, *batch.keys[j]);
    }
  }


  MinuteCounts run_minute(cache::Cache& cache, ExpiryLedger& ledger, std::size_t minute, std::uint64_t requests,
                          ServeMode mode) {
    MinuteCounts counts;
    const std::uint32_t minute_start = kClockStart + static_cast<std::uint32_t>((minute - 1) * 60);
    // Batch k is served (in order) while k + 2's buckets are on their way.
    Batch batches[kDepth];
    const std::uint64_t count = (requests + kBatch - 1) / kBatch;
    auto prepare = [&](std::uint64_t k) { prepare_batch(cache, batches[k % kDepth], requests - k * kBatch); };
    for (std::uint64_t k = 0; k < std::min<std::uint64_t>(count, kDepth - 1); ++k) prepare(k);
    // The writer lock taken once for the minute's inserts (the segment is this curve's
    // alone; probes take no lock). NOTE: taken per miss (insert_encoded) before branch
    // simprobe: ~94 instructions a request (lock, unlock, the guard's std::function and
    // std::string; callgrind, golden test).
    CacheLabHooks::WriterHold hold(cache);
    for (std::uint64_t k = 0; k < count; ++k) {
      if (k + kDepth - 1 < count) prepare(k + kDepth - 1);
      const Batch& current = batches[k % kDepth];
      for (std::size_t j = 0; j < current.size; ++j) {
        const std::uint64_t request = k * kBatch + j;
        const std::uint32_t now = minute_start + static_cast<std::uint32_t>((request * 60) / requests);
        switch (mode) {
          case ServeMode::plain:
            serve_request(cache, hold, ledger, current.draws[j], *current.keys[j], current.positions[j], now, minute,
                          counts);
            break;
          case ServeMode::prefetch:
            serve_prefetching(cache, hold, ledger, current.draws[j], *current.keys[j], now, minute, counts);
            break;
          case ServeMode::outage:
            serve_in_outage(cache, current.draws[j], *current.keys[j], now, counts);
            break;
        }
      }
    }
    return counts;
  }

  // One lookup; on a miss the key's answer is inserted, as a resolver would after its
  // upstream answered.
  void serve_request(cache::Cache& cache, CacheLabHooks::WriterHold& hold, ExpiryLedger& ledger,
                     const SampledTrace::Draw& draw, const cache::CacheKey& key, const cache::IndexPosition& pos,
                     std::uint32_t now, std::size_t minute, MinuteCounts& counts) {
    const bool in_head = draw.head_index >= 0;
    counts.tail_lookups += !in_head;
    const cache::LookupStatus status = CacheLabHooks::probe_at(cache, key, pos, now);
    const bool hit = status == cache::LookupStatus::hit;
    // Random lines touched (access_limit.hpp): a tail draw's alias cell, two buckets, the
    // entry when one matched.
    memory_accesses_ += (in_head ? 2.0 : 3.0) + (status != cache::LookupStatus::miss ? 1.0 : 0.0);
    if (in_head) {
      // A thinned hit stands for w hits; a thinned miss for 1 miss and w - 1 hits.
      const double weight = draw.weight;
      counts.head_lookups += weight;
      counts.head_hits += hit ? weight : weight - 1.0;
    } else {
      counts.tail_hits += hit;
    }
    if (!hit) insert_answer(cache, hold, ledger, draw, key, now, minute);
  }

  // The key's answer inserted, as after the upstream answered (a miss, or a refresh).
  void insert_answer(cache::Cache& cache, CacheLabHooks::WriterHold& hold, ExpiryLedger& ledger,
                     const SampledTrace::Draw& draw, const cache::CacheKey& key, std::uint32_t now, std::size_t minute) {
    std::size_t padded = 0;
    std::uint32_t ttl = 0;
    if (!builder_.encode_into(key, draw.key, now, scratch_, &padded, &ttl)) return;
    // Both encoders pad to 8 bytes (cache::padded_entry_size) with zeros.
    if (CacheLabHooks::insert_encoded_held(cache, hold, key, std::span<const std::uint8_t>(scratch_.data(), padded), now) ==
        cache::InsertStatus::rejected)
      return;
    memory_accesses_ += 2.0;  // the buckets of the entry the insert's reclaim evicts or moves
    if (draw.head_index >= 0) {
      const std::size_t head_index = static_cast<std::size_t>(draw.head_index);
      ledger.head_inserted(head_index, now + draw.ttl, minute);
    } else {
      ledger.tail_inserted(now + ttl);
    }
  }

  // serve_request with prefetch: the lookup reads the entry, and a hit with less than
  // prefetch_percent of its TTL left is refreshed at once (one upstream query).
  void serve_prefetching(cache::Cache& cache, CacheLabHooks::WriterHold& hold, ExpiryLedger& ledger,
                         const SampledTrace::Draw& draw, const cache::CacheKey& key, std::uint32_t now,
                         std::size_t minute, MinuteCounts& counts) {
    const bool in_head = draw.head_index >= 0;
    counts.tail_lookups += !in_head;
    const cache::LookupStatus status = cache.lookup(key, now, *copy_);
    const bool hit = status == cache::LookupStatus::hit;
    memory_accesses_ += (in_head ? 2.0 : 3.0) + (status != cache::LookupStatus::miss ? 1.0 : 0.0);
    if (in_head) {
      const double weight = draw.weight;
      counts.head_lookups += weight;
      counts.head_hits += hit ? weight : weight - 1.0;
      if (status == cache::LookupStatus::expired && weight > 1.0) {
        // A thinned head key: its full stream (rate l) had a request in the last p% of the
        // entry's TTL with probability q = 1 - exp(-l p T), which refreshed it before it
        // expired: that share of this miss is a hit and a refresh.
        const HeadKey& h = trace_.head_keys()[static_cast<std::size_t>(draw.head_index)];
        const double q = -std::expm1(-h.rate_qps * req_.prefetch_percent / 100.0 * static_cast<double>(h.ttl));
        counts.head_hits += q;
        counts.head_prefetches += q;
      }
    } else {
      counts.tail_hits += hit;
    }
    if (hit) {
      const cache::EntryReader entry(copy_->span(), key.blob().size());
      const double left = static_cast<double>(entry.expire() - now);
      if (!entry.valid() || left * 100.0 >= req_.prefetch_percent * static_cast<double>(entry.ttl())) return;
      if (in_head) counts.head_prefetches += 1;
      else ++counts.tail_prefetches;
    }
    insert_answer(cache, hold, ledger, draw, key, now, minute);
  }

  // A request while the upstream is down: answered fresh (hit), stale (an expired entry
  // still held, expired less than stale_max_age_s ago) or not at all; nothing inserted.
  // A head request counts its whole weight: no insert makes the next w - 1 hit.
  void serve_in_outage(cache::Cache& cache, const SampledTrace::Draw& draw, const cache::CacheKey& key,
                       std::uint32_t now, MinuteCounts& counts) {
    const cache::LookupStatus status = cache.lookup(key, now, *copy_);
    bool stale = false;
    if (status == cache::LookupStatus::expired && req_.stale_max_age_s > 0) {
      const cache::EntryReader entry(copy_->span(), key.blob().size());
      stale = entry.valid() && now - entry.expire() < req_.stale_max_age_s;
    }
    const bool hit = status == cache::LookupStatus::hit;
    if (draw.head_index >= 0) {
      counts.head_lookups += draw.weight;
      counts.head_hits += hit ? draw.weight : 0.0;
      counts.head_stale += stale ? draw.weight : 0.0;
    } else {
      ++counts.tail_lookups;
      counts.tail_hits += hit;
      counts.tail_stale += stale;
    }
  }

  // The outage minute's shares of fresh and stale answers.
  void record_outage(const MinuteCounts& counts, double scale) {
    const double lookups = counts.head_lookups + static_cast<double>(counts.tail_lookups) * scale;
    const double fresh = counts.head_hits + static_cast<double>(counts.tail_hits) * scale;
    const double stale = counts.head_stale + static_cast<double>(counts.tail_stale) * scale;
    curve_.outage_fresh.push_back(lookups > 0 ? static_cast<float>(fresh / lookups) : 0.0f);
    curve_.outage_stale.push_back(lookups > 0 ? static_cast<float>(stale / lookups) : 0.0f);
  }

  // Full-scale counts at the end of the minute: head requests at their weight, tail at 1/R.
  void record_minute(cache::Cache& cache, ExpiryLedger& ledger, std::size_t minute, const MinuteCounts& counts,
                     double scale) {
    hits_per_min_.push_back(counts.head_hits + static_cast<double>(counts.tail_hits) * scale);
    prefetches_per_min_.push_back(counts.head_prefetches + static_cast<double>(counts.tail_prefetches) * scale);
    lookups_per_min_.push_back(counts.head_lookups + static_cast<double>(counts.tail_lookups) * scale);
    const std::uint64_t live = cache.stats().live_entries;
    const std::uint64_t head_linked = std::min<std::uint64_t>(live, ledger.head_linked_keys());
    const std::uint64_t tail_linked = live - head_linked;
    curve_.entries.push_back(static_cast<float>(static_cast<double>(head_linked) + static_cast<double>(tail_linked) * scale));
    curve_.inserted.push_back(static_cast<float>(static_cast<double>(ledger.head_inserts()) +
                                                 static_cast<double>(ledger.tail_inserts()) * scale));
    ledger.end_minute(minute);
    curve_.unexpired.push_back(static_cast<float>(static_cast<double>(std::min(head_linked, ledger.head_unexpired())) +
                                                  static_cast<double>(ledger.tail_unexpired(tail_linked)) * scale));
  }

  const CurveRequest& req_;
  const TrafficProfile& profile_;
  OccupancyCurve& curve_;
  SampledTrace trace_;
  AnswerBuilder builder_;
  std::vector<std::uint8_t> scratch_;
  std::vector<cache::CacheKey> head_cache_keys_;  // the head's keys without ECS, built once
  std::vector<std::int32_t> head_key_slot_;         // per head key: its index there, -1 for ECS keys
  std::vector<double> hits_per_min_, lookups_per_min_, prefetches_per_min_;
  double memory_accesses_ = 0;
  std::unique_ptr<cache::EntryCopy> copy_;  // lookups that read the entry (prefetch, outage)
};

// Prefix sums of a per-minute series: sums[m] is the total of minutes [0, m).
std::vector<double> prefix_sums(const std::vector<double>& per_min, std::size_t len) {
  std::vector<double> sums(len + 1, 0);
  for (std::size_t m = 0; m < len; ++m) sums[m + 1] = sums[m] + per_min[m];
  return sums;
}

// numerator / denominator per minute over a centred window of up to 31 minutes (sampled
// traces at low rates have few requests per minute), from their prefix sums; minute 0 is
// exactly 0.
std::vector<float> centred_ratio(const std::vector<double>& num_sums, const std::vector<double>& den_sums,
                                 std::size_t len) {
  std::vector<float> out(len, 0);
  for (std::size_t m = 1; m < len; ++m) {
    const std::size_t half = std::min<std::size_t>(15, (m - 1) / 2);
    const std::size_t lo = m - half, hi = std::min(len - 1, m + half);
    const double den = den_sums[hi + 1] - den_sums[lo];
    out[m] = den > 0 ? static_cast<float>((num_sums[hi + 1] - num_sums[lo]) / den) : 0.0f;
  }
  return out;
}

// Hit rate per minute, smoothed (centred_ratio), and unsmoothed.
void smooth_hit_rates(OccupancyCurve& c, const std::vector<double>& hits_per_min, const std::vector<double>& lookups_per_min) {
  const std::size_t len = c.entries.size();
  c.hit_rate_raw.assign(len, 0);
  for (std::size_t m = 1; m < len; ++m)
    c.hit_rate_raw[m] = lookups_per_min[m] > 0 ? static_cast<float>(hits_per_min[m] / lookups_per_min[m]) : 0.0f;
  c.hit_rate = centred_ratio(prefix_sums(hits_per_min, len), prefix_sums(lookups_per_min, len), len);
}

// Prefetches per request, smoothed as the hit rate, and their plateau mean (the last hour).
void summarize_prefetch(OccupancyCurve& c, const std::vector<double>& prefetches_per_min,
                        const std::vector<double>& lookups_per_min) {
  const std::size_t len = c.entries.size();
  const std::vector<double> prefetches = prefix_sums(prefetches_per_min, len), lookups_sum = prefix_sums(lookups_per_min, len);
  c.prefetch_rate = centred_ratio(prefetches, lookups_sum, len);
  const std::size_t last = std::min<std::size_t>(60, len - 1);
  const double lookups = lookups_sum[len] - lookups_sum[len - last];
  c.plateau_prefetch_rate = lookups > 0 ? (prefetches[len] - prefetches[len - last]) / lookups : 0;
}

// The plateau figures: means over the last hour of the run.
void summarize_plateau(OccupancyCurve& c, const std::vector<double>& hits_per_min, const std::vector<double>& lookups_per_min) {
  const std::size_t len = c.entries.size();
  const std::size_t last = std::min<std::size_t>(60, len - 1);
  double entries = 0, hits = 0, lookups = 0;
  for (std::size_t m = len - last; m < len; ++m) entries += c.entries[m], hits += hits_per_min[m], lookups += lookups_per_min[m];
  c.plateau_entries = last ? entries / static_cast<double>(last) : 0;
  double unexpired = 0;
  for (std::size_t m = len - last; m < len; ++m) unexpired += c.unexpired[m];
  c.plateau_unexpired = last ? unexpired / static_cast<double>(last) : 0;
  c.plateau_hit_rate = lookups > 0 ? hits / lookups : 0;
  c.plateau_inserts_per_min = last ? (c.inserted[len - 1] - c.inserted[len - 1 - last]) / static_cast<double>(last) : 0;
}

}  // namespace

OccupancyCurve compute_curve(const CurveRequest& req) {
  const TrafficProfile& profile = *req.traffic;
  if (req.outage_minutes > 0 && req.outage_start_minute > 0 &&
      std::uint64_t{req.outage_start_minute} + req.outage_minutes > std::uint64_t{req.max_days} * 1440)
    throw std::invalid_argument("curve: the outage ends after the curve's last minute (max_days)");
  OccupancyCurve c;
  c.sample_rate = std::min(req.max_sample_rate, static_cast<double>(req.sample_entries) / static_cast<double>(req.capacity));
  c.sample_rate = std::clamp(c.sample_rate, 1e-9, 1.0);
  const std::uint64_t head = head_names_for(req, c.sample_rate);
  // Che's characteristic time bounds the head's thinning (sampled_trace.hpp).
  const CheEstimate che = che_estimate(profile, req.rate_qps, req.capacity, req.seed);
  CurveRun run(req, c.sample_rate, head, che, c);
  const double head_expected = expected_head_entries(run.trace().head_keys(), req.capacity);
  // One cache for head and tail: head entries count 1 slot, tail entries 1/R slots.
  c.sampled_capacity = std::max<std::uint64_t>(
      16, static_cast<std::uint64_t>(std::llround(head_expected + c.sample_rate * (static_cast<double>(req.capacity) - head_expected))));
  c.head_names = head;
  c.head_expected_entries = head_expected;
  c.mean_entry_bytes = probe_mean_entry_bytes(profile, run.trace(), head, req.seed, run.builder(), run.scratch());

  const PlateauRule plateau(profile, che);
  const cache::Geometry geometry =
      private_geometry(c.sampled_capacity, c.mean_entry_bytes, head_dead_copies(run.trace().head_keys(), plateau.horizon_s));
  // A private anonymous mapping with transparent huge pages (no /dev/shm name): the
  // curve's cache is this thread's alone.
  // NOTE: against the named /dev/shm segment used before (4 KiB pages: shmem_enabled is
  // never here), 2.30 vs 1.98 M sampled requests/s per core, mean of 4 back-to-back
  // pairs at load average 12-13 (README, simulator figures).
  cache::Segment segment = cache::Segment::create_private(geometry);
  cache::Cache cache(segment, cache::SlotRole::tool);

  const double cpu_start = thread_cpu_seconds();
  run.run(cache, plateau);
  c.run_seconds = thread_cpu_seconds() - cpu_start;
  c.memory_accesses = run.memory_accesses();
  c.segment_bytes = cache.stats().segment_bytes;
  smooth_hit_rates(c, run.hits_per_min(), run.lookups_per_min());
  summarize_plateau(c, run.hits_per_min(), run.lookups_per_min());
  if (req.prefetch_percent > 0) summarize_prefetch(c, run.prefetches_per_min(), run.lookups_per_min());
  return c;
}

}  // namespace dnsarena::sim::fleet
