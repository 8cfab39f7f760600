#include "cache_curve.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <cmath>
#include <string>
#include <utility>

#include "cache/cache.hpp"
#include "che_model.hpp"
#include "sampled_trace.hpp"

namespace dnsarena::sim::fleet {

namespace {

std::atomic<std::uint64_t> g_segment_counter{0};

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
    qname_.clear();
    // "n<rank base36>.example."
    char label[16];
    int n = 0;
    label[n++] = 'n';
    std::uint64_t r = k.name;
    char digits[14];
    int d = 0;
    do {
      const unsigned v = static_cast<unsigned>(r % 36);
      digits[d++] = static_cast<char>(v < 10 ? '0' + v : 'a' + v - 10);
      r /= 36;
    } while (r);
    while (d) label[n++] = digits[--d];
    qname_.push_back(static_cast<std::uint8_t>(n));
    qname_.append(reinterpret_cast<const std::uint8_t*>(label), n);
    static const std::uint8_t kSuffix[] = {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0};
    qname_.append(kSuffix, sizeof kSuffix);
    cache::EcsTag ecs;
    if (k.ecs) {
      ecs.family = cache::EcsFamily::ipv4;
      ecs.prefix = t_.ecs_prefix;
      const std::uint32_t net = (10u << 24) | (k.subnet << (32 - std::min<unsigned>(t_.ecs_prefix, 24)));
      ecs.address = {static_cast<std::uint8_t>(net >> 24), static_cast<std::uint8_t>(net >> 16),
                     static_cast<std::uint8_t>(net >> 8), static_cast<std::uint8_t>(net)};
    }
    return cache::CacheKey(qname_, k.qtype, 0, ecs);
  }

  // Encodes the key's answer into `out`; returns false if it cannot be encoded.
  bool encode(const cache::CacheKey& ckey, const TraceKey& k, std::uint32_t now, std::vector<std::uint8_t>& out) {
    bool negative = false;
    const std::uint32_t ttl = key_ttl(t_, k, seed_, &negative);
    SplitMix64 rng(mix64(k.id() ^ seed_ ^ 0xABCD));
    records_.clear();
    rdata_.clear();
    cache::Answer a;
    a.ttl = ttl;
    if (negative) {
      static const std::uint8_t kApex[] = {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0};
      static const std::uint8_t kSoa[] = {2, 'n', 's', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0,
                                          4, 'h', 'o', 's', 't', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0,
                                          0, 0, 0, 1, 0, 0, 0x1c, 0x20, 0, 0, 3, 0x84, 0, 0x12, 0x75, 0, 0, 0, 1, 0x2c};
      cache::RecordData soa;
      soa.owner = kApex;
      soa.type = 6;
      soa.ttl = ttl;
      soa.rdata = kSoa;
      records_.push_back(soa);
      a.rcode = 3;
      a.sections[cache::kAuthority] = records_;
      return cache::encode_entry(ckey, a, now, out) != 0;
    }
    const unsigned n = static_cast<unsigned>(rng.range(t_.records_min, t_.records_max));
    rdata_.reserve(n * 256);
    std::size_t offsets[65];
    for (unsigned i = 0; i < n; ++i) {
      offsets[i] = rdata_.size();
      const unsigned len = k.qtype == 1 ? 4 : k.qtype == 28 ? 16
                                                            : static_cast<unsigned>(rng.range(t_.other_rdata_min, t_.other_rdata_max));
      // Content does not matter to the cache, only the size: copied from fixed pools.
      const std::uint8_t* pool = kPools.bytes + rng.next() % kPools.kSpan;
      if (k.qtype == 16) {
        rdata_.push_back(static_cast<std::uint8_t>(std::min(255u, len - 1)));
        pool = kPools.letters + (pool - kPools.bytes);
        rdata_.insert(rdata_.end(), pool, pool + (len - 1));
      } else {
        rdata_.insert(rdata_.end(), pool, pool + len);
      }
    }
    offsets[n] = rdata_.size();
    for (unsigned i = 0; i < n; ++i) {
      cache::RecordData rd;
      rd.type = k.qtype;
      rd.ttl = ttl;
      rd.rdata = std::span<const std::uint8_t>(rdata_.data() + offsets[i], offsets[i + 1] - offsets[i]);
      records_.push_back(rd);
    }
    a.sections[cache::kAnswer] = records_;
    return cache::encode_entry(ckey, a, now, out) != 0;
  }

private:
  const TrafficProfile& t_;
  std::uint64_t seed_;
  Bytes qname_;
  std::vector<std::uint8_t> rdata_;
  std::vector<cache::RecordData> records_;
};

}  // namespace

namespace {

// Expected distinct keys per name of the profile (qtypes with a share, times subnets for
// ECS names).
double keys_per_name(const TrafficProfile& t) {
  const double q = t.qtype_per_name ? 1.0 : (t.share_a > 0) + (t.share_aaaa > 0) + (1.0 - t.share_a - t.share_aaaa > 1e-12);
  return std::max(1.0, q) * (1.0 + t.ecs_share * (static_cast<double>(std::max(1u, t.ecs_subnets)) - 1.0)) +
         (t.stray_share > 0 ? t.stray_keys : 0);
}

}  // namespace

OccupancyCurve compute_curve(const CurveRequest& req) {
  const TrafficProfile& t = *req.traffic;
  OccupancyCurve c;
  c.sample_rate = std::min(req.max_sample_rate, static_cast<double>(req.sample_entries) / static_cast<double>(req.capacity));
  c.sample_rate = std::clamp(c.sample_rate, 1e-9, 1.0);
  const double tail_rate = c.sample_rate;
  // Head: the top-K names, kept in full. K is sized so the head's keys take at most
  // 1/kHeadShareDiv of the sampled cache (<= kMaxHead names): the tail still drives
  // eviction.
  constexpr double kHeadShareDiv = 8.0;
  constexpr std::uint64_t kMaxHead = 1024;
  std::uint64_t head = 0;
  if (tail_rate < 1.0) {
    const double budget = static_cast<double>(req.capacity) * tail_rate / kHeadShareDiv;
    head = std::min<std::uint64_t>({kMaxHead, t.names, static_cast<std::uint64_t>(budget / keys_per_name(t))});
  }
  // Che's characteristic time bounds the head's thinning (sampled_trace.hpp).
  const CheEstimate che = che_estimate(t, req.rate_qps, req.capacity, req.seed);
  SampledTrace trace(t, tail_rate, req.seed, head, req.rate_qps, che.fills ? che.characteristic_s : HUGE_VAL);
  const std::vector<HeadKey>& head_keys = trace.head_keys();
  // Expected head entries held at the plateau: a key requested at l (Poisson) with TTL
  // T is present a share l*T / (1 + l*T) of the time (TTL-only, no eviction).
  double head_expected = 0;
  for (const HeadKey& h : head_keys) {
    const double lt = h.rate_qps * static_cast<double>(h.ttl);
    head_expected += lt / (1.0 + lt);
  }
  head_expected = std::min(head_expected, static_cast<double>(req.capacity));
  // One cache for head and tail: head entries count 1 slot, tail entries 1/R slots.
  c.sampled_capacity = std::max<std::uint64_t>(
      16, static_cast<std::uint64_t>(std::llround(head_expected + tail_rate * (static_cast<double>(req.capacity) - head_expected))));
  c.head_names = head;
  c.head_expected_entries = head_expected;

  AnswerBuilder builder(t, req.seed);
  std::vector<std::uint8_t> scratch;
  // Head keys are built once (their hash too); tail keys per request.
  std::vector<cache::CacheKey> head_cache_keys;
  head_cache_keys.reserve(head_keys.size());
  for (const HeadKey& h : head_keys) head_cache_keys.push_back(builder.key(h.key));

  // Mean padded entry size on this profile (sizes the private arena), over distinct keys
  // (uniform over kept names), as the cache's long tail holds them.
  {
    SplitMix64 pick(req.seed ^ 0x99);
    double sum = 0;
    int probes = 0;
    const std::uint64_t blocks = trace.tail_blocks();
    for (int i = 0; i < 1024 && blocks + head > 0; ++i, ++probes) {
      TraceKey k;
      const std::uint64_t j = pick.next() % (blocks + head);
      k.name = j < head ? j + 1 : trace.tail_rank(j - head);
      k.qtype = request_qtype(t, k.name, req.seed, pick.unit());
      k.ecs = name_is_ecs(t, k.name, req.seed);
      if (k.ecs) k.subnet = static_cast<std::uint32_t>(pick.next() % std::max(1u, t.ecs_subnets));
      const cache::CacheKey ck = builder.key(k);
      builder.encode(ck, k, 1, scratch);
      sum += static_cast<double>(cache::padded_entry_size(scratch.size()));
    }
    c.mean_entry_bytes = probes ? sum / probes : 0;
  }

  cache::Geometry g;
  g.max_entries = c.sampled_capacity;
  g.region_bytes = 64u << 10;
  // Twice the live bytes at capacity plus regions for reclaim: max_entries binds, not bytes.
  const std::uint64_t want = static_cast<std::uint64_t>(c.mean_entry_bytes * 2.0 * static_cast<double>(c.sampled_capacity));
  g.arena_bytes = std::max<std::uint64_t>(16ull * g.region_bytes, (want / g.region_bytes + 8) * g.region_bytes);
  g.stat_slots = 2;
  const std::string name = "dnsarena-fleet-" + std::to_string(::getpid()) + "-" + std::to_string(g_segment_counter++);
  cache::Segment::remove(name);
  cache::Segment seg = cache::Segment::create(name, g);
  seg.set_remove_on_destroy(true);
  cache::Cache cache(seg, cache::SlotRole::tool);

  const double sampled_qps = trace.sampled_qps();
  const double scale = 1.0 / tail_rate;  // weight of a tail request, entry or insert
  const std::uint32_t t0 = 1'000'000;
  const std::size_t max_minutes = std::size_t{req.max_days} * 1440;
  // The plateau check starts after twice the longest time an entry can matter: its TTL,
  // or, when the cache fills, two characteristic times (an entry not hit within t_C is
  // evicted), whichever is shorter; and after at least 3 hours.
  const double horizon_s = std::min(static_cast<double>(t.max_ttl()), che.fills ? 2.0 * che.characteristic_s : HUGE_VAL);
  const std::size_t horizon_min = static_cast<std::size_t>(horizon_s) / 60 + 1;
  // The plateau is judged over a window of that horizon in whole hours, 1 to 6 hours.
  const std::size_t window = std::clamp<std::size_t>((horizon_min + 59) / 60, 1, 6) * 60;
  const std::size_t min_minutes = std::max<std::size_t>({180, window + 60, 2 * horizon_min});

  std::vector<double> hits_per_min{0}, lookups_per_min{0};
  c.entries.push_back(0);
  c.inserted.push_back(0);
  c.unexpired.push_back(0);
  // Inserts by the minute their TTL ends: entries linked but expired stay in the index
  // until reclaim, so "unexpired" = min(linked, inserted and not yet expired). Tail
  // inserts and head keys (each head key counted once, at its latest insert) separately.
  const std::size_t expiry_minutes = max_minutes + t.max_ttl() / 60 + 3;
  std::vector<std::uint32_t> tail_expiring(expiry_minutes, 0), head_expiring(expiry_minutes, 0);
  auto expiry_minute = [&](std::uint32_t end) { return std::min<std::size_t>(expiry_minutes - 1, (end - t0) / 60); };
  std::uint64_t tail_expired = 0;
  // Head entries are hot, so they are counted as linked once inserted (a hot key's
  // expired entry is replaced on its next miss; evictions of head keys are not seen
  // here, they are rare).
  std::vector<std::uint32_t> head_expiry(head_keys.size(), 0);  // 0: never inserted
  std::uint64_t head_linked_keys = 0, head_expired = 0;  // head_expired: keys whose latest TTL ended
  std::size_t minute_now = 0;
  double carry = 0;
  std::uint64_t inserts = 0, head_inserts = 0, requests = 0;  // tail inserts; head inserts; all lookups
  const double cpu0 = thread_cpu_seconds();
  for (std::size_t minute = 1; minute <= max_minutes; ++minute) {
    minute_now = minute;
    carry += sampled_qps * 60.0;
    const std::uint64_t n = static_cast<std::uint64_t>(carry);
    carry -= static_cast<double>(n);
    double hits_head = 0, lookups_head = 0;
    std::uint64_t hits_tail = 0, lookups_tail = 0;
    const std::uint32_t minute_start = t0 + static_cast<std::uint32_t>((minute - 1) * 60);
    // Requests in batches, software-pipelined: while batch k is looked up (and inserted)
    // one request after another, in order, batch k+1 has been drawn, its keys built and
    // its index buckets prefetched; its entries are prefetched right after.
    constexpr std::size_t kBatch = 16;
    struct Batch {
      SampledTrace::Draw draws[kBatch];
      cache::CacheKey tail_keys[kBatch];
      const cache::CacheKey* keys[kBatch];
      std::size_t size = 0;
    };
    Batch batches[2];
    auto prepare = [&](Batch& bt, std::uint64_t first) {
      bt.size = static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, n - first));
      trace.next_batch(bt.draws, bt.size);
      for (std::size_t j = 0; j < bt.size; ++j) {
        if (bt.draws[j].head_index >= 0) {
          bt.keys[j] = &head_cache_keys[static_cast<std::size_t>(bt.draws[j].head_index)];
        } else {
          bt.tail_keys[j] = builder.key(bt.draws[j].key);
          bt.keys[j] = &bt.tail_keys[j];
        }
        cache.prefetch_buckets_of(*bt.keys[j]);
      }
    };
    if (n > 0) {
      prepare(batches[0], 0);
      for (std::size_t j = 0; j < batches[0].size; ++j) cache.prefetch_entries_of(*batches[0].keys[j]);
    }
    for (std::uint64_t i0 = 0, k = 0; i0 < n; i0 += kBatch, ++k) {
      Batch& cur = batches[k & 1];
      Batch& nxt = batches[(k + 1) & 1];
      const bool more = i0 + kBatch < n;
      if (more) prepare(nxt, i0 + kBatch);
      const std::size_t m = cur.size;
      const SampledTrace::Draw* draws = cur.draws;
      const cache::CacheKey* const* keys = cur.keys;
      for (std::size_t j = 0; j < m; ++j) {
        const std::uint64_t i = i0 + j;
        const std::uint32_t now = minute_start + static_cast<std::uint32_t>((i * 60) / n);
        const SampledTrace::Draw& d = draws[j];
        const bool in_head = d.head_index >= 0;
        const cache::CacheKey* ck = keys[j];
        lookups_tail += !in_head;
        const bool hit = cache.probe(*ck, now) == cache::LookupStatus::hit;
        if (in_head) {
          // A thinned hit stands for w hits; a thinned miss for 1 miss and w - 1 hits.
          const double w = head_keys[static_cast<std::size_t>(d.head_index)].weight;
          lookups_head += w;
          hits_head += hit ? w : w - 1.0;
        } else {
          hits_tail += hit;
        }
        if (hit || !builder.encode(*ck, d.key, now, scratch)) continue;
        scratch.resize(cache::padded_entry_size(scratch.size()), 0);
        if (cache.insert_encoded(*ck, scratch, now) == cache::InsertStatus::rejected) continue;
        if (in_head) {
          const std::size_t h = static_cast<std::size_t>(d.head_index);
          const std::uint32_t end = now + head_keys[h].ttl;
          const std::uint32_t old = head_expiry[h];
          if (old == 0) ++head_linked_keys;
          else if (expiry_minute(old) + 1 < minute_now) --head_expired;  // bucket already counted (end of minute m + 1)
          else --head_expiring[expiry_minute(old)];
          head_expiry[h] = end;
          ++head_expiring[expiry_minute(end)];
          ++head_inserts;
        } else {
          bool negative = false;
          const std::uint32_t ttl = key_ttl(t, d.key, req.seed, &negative);
          ++inserts;
          ++tail_expiring[expiry_minute(now + ttl)];
        }
      }
      if (more)
        for (std::size_t j = 0; j < nxt.size; ++j) cache.prefetch_entries_of(*nxt.keys[j]);
    }
    requests += n;
    // Full-scale counts: head requests at their weight, tail at weight 1/R.
    hits_per_min.push_back(hits_head + static_cast<double>(hits_tail) * scale);
    lookups_per_min.push_back(lookups_head + static_cast<double>(lookups_tail) * scale);
    const std::uint64_t live = cache.stats().live_entries;
    const std::uint64_t head_linked = std::min<std::uint64_t>(live, head_linked_keys);
    const std::uint64_t tail_linked = live - head_linked;
    c.entries.push_back(static_cast<float>(static_cast<double>(head_linked) + static_cast<double>(tail_linked) * scale));
    c.inserted.push_back(static_cast<float>(static_cast<double>(head_inserts) + static_cast<double>(inserts) * scale));
    // Expiry counted at the end of the minute in which the TTL ends.
    tail_expired += tail_expiring[minute - 1];
    head_expired += head_expiring[minute - 1];
    const std::uint64_t tail_unexpired = std::min(tail_linked, inserts - std::min(inserts, tail_expired));
    const std::uint64_t head_unexpired = head_linked_keys - std::min(head_linked_keys, head_expired);
    c.unexpired.push_back(static_cast<float>(static_cast<double>(std::min(head_linked, head_unexpired)) +
                                             static_cast<double>(tail_unexpired) * scale));
    // Plateau check once an hour.
    if (minute % 60 == 0 && minute >= min_minutes) {
      auto mean_hit = [&](std::size_t end) {
        double h = 0, l = 0;
        for (std::size_t m = end - 59; m <= end; ++m) h += hits_per_min[m], l += lookups_per_min[m];
        return l > 0 ? h / l : 0.0;
      };
      const double e_now = c.entries[minute], e_then = c.entries[minute - window];
      const double de = std::fabs(e_now - e_then) / std::max(1.0, e_now);
      const double dh = std::fabs(mean_hit(minute) - mean_hit(minute - window));
      if (de < 0.01 && dh < 0.005) {
        c.reached_plateau = true;
        break;
      }
    }
  }
  c.run_seconds = thread_cpu_seconds() - cpu0;
  c.sampled_requests = requests;
  // Hit rate per minute, smoothed over a centred window of up to 31 minutes (sampled
  // traces at low rates have few requests per minute); minute 0 is exactly 0.
  const std::size_t len = c.entries.size();
  std::vector<double> ch(len + 1, 0), cl(len + 1, 0);
  for (std::size_t m = 0; m < len; ++m) ch[m + 1] = ch[m] + hits_per_min[m], cl[m + 1] = cl[m] + lookups_per_min[m];
  c.hit_rate.assign(len, 0);
  c.hit_rate_raw.assign(len, 0);
  for (std::size_t m = 1; m < len; ++m)
    c.hit_rate_raw[m] = lookups_per_min[m] > 0 ? static_cast<float>(hits_per_min[m] / lookups_per_min[m]) : 0.0f;
  for (std::size_t m = 1; m < len; ++m) {
    const std::size_t w = std::min<std::size_t>(15, (m - 1) / 2);
    const std::size_t lo = m - w, hi = std::min(len - 1, m + w);
    const double l = cl[hi + 1] - cl[lo];
    c.hit_rate[m] = l > 0 ? static_cast<float>((ch[hi + 1] - ch[lo]) / l) : 0.0f;
  }
  const std::size_t tail = std::min<std::size_t>(60, len - 1);
  double e = 0, h = 0, l = 0;
  for (std::size_t m = len - tail; m < len; ++m) e += c.entries[m], h += hits_per_min[m], l += lookups_per_min[m];
  c.plateau_entries = tail ? e / static_cast<double>(tail) : 0;
  double u = 0;
  for (std::size_t m = len - tail; m < len; ++m) u += c.unexpired[m];
  c.plateau_unexpired = tail ? u / static_cast<double>(tail) : 0;
  c.plateau_hit_rate = l > 0 ? h / l : 0;
  c.plateau_inserts_per_min = tail ? (c.inserted[len - 1] - c.inserted[len - 1 - tail]) / static_cast<double>(tail) : 0;
  return c;
}

}  // namespace dnsarena::sim::fleet
