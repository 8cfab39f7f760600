#include "cache_curve.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <cmath>
#include <string>
#include <unordered_map>
#include <utility>

#include "cache/cache.hpp"
#include "sampled_trace.hpp"

namespace dnsarena::sim::fleet {

namespace {

std::atomic<std::uint64_t> g_segment_counter{0};

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
      if (k.qtype == 16) {
        rdata_.push_back(static_cast<std::uint8_t>(std::min(255u, len - 1)));
        for (unsigned c = 1; c < len; ++c) rdata_.push_back(static_cast<std::uint8_t>('a' + (c * 7 + i) % 26));
      } else {
        const std::uint64_t v = rng.next();
        for (unsigned c = 0; c < len; ++c) rdata_.push_back(static_cast<std::uint8_t>(v >> (8 * (c % 8))));
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
  const double q = (t.share_a > 0) + (t.share_aaaa > 0) + (1.0 - t.share_a - t.share_aaaa > 1e-12);
  return std::max(1.0, q) * (1.0 + t.ecs_share * (static_cast<double>(std::max(1u, t.ecs_subnets)) - 1.0));
}

// Calls f(key, request rate of the key in qps) for every key of names 1..head.
template <class F>
void for_each_head_key(const TrafficProfile& t, std::uint64_t head, double rate_qps, std::uint64_t seed, F&& f) {
  const double norm = zipf_normalizer(t.names, t.zipf);
  const double share_other = std::max(0.0, 1.0 - t.share_a - t.share_aaaa);
  const std::pair<std::uint16_t, double> qt[3] = {{1, t.share_a}, {28, t.share_aaaa}, {16, share_other}};
  for (std::uint64_t r = 1; r <= head; ++r) {
    const double name_qps = rate_qps * std::pow(static_cast<double>(r), -t.zipf) / norm;
    const bool ecs = name_is_ecs(t, r, seed);
    const std::uint32_t subnets = ecs ? std::max(1u, t.ecs_subnets) : 1u;
    for (const auto& [qtype, share] : qt) {
      if (share <= 0) continue;
      for (std::uint32_t s = 0; s < subnets; ++s) {
        TraceKey k;
        k.name = r;
        k.qtype = qtype;
        k.ecs = ecs;
        k.subnet = ecs ? s : 0;
        f(k, name_qps * share / subnets);
      }
    }
  }
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
  // eviction, and the head's full-rate requests stay a bounded cost.
  constexpr double kHeadShareDiv = 8.0;
  constexpr std::uint64_t kMaxHead = 1024;
  std::uint64_t head = 0;
  if (tail_rate < 1.0) {
    const double budget = static_cast<double>(req.capacity) * tail_rate / kHeadShareDiv;
    head = std::min<std::uint64_t>({kMaxHead, t.names, static_cast<std::uint64_t>(budget / keys_per_name(t))});
  }
  // Expected head entries held at the plateau: a key requested at lambda (Poisson) with
  // TTL T is present a share lambda*T / (1 + lambda*T) of the time (TTL-only, no eviction).
  double head_expected = 0;
  for_each_head_key(t, head, req.rate_qps, req.seed, [&](const TraceKey& k, double qps) {
    const double lt = qps * static_cast<double>(key_ttl(t, k, req.seed, nullptr));
    head_expected += lt / (1.0 + lt);
  });
  head_expected = std::min(head_expected, static_cast<double>(req.capacity));
  // One cache for head and tail: head entries count 1 slot, tail entries 1/R slots.
  c.sampled_capacity = std::max<std::uint64_t>(
      16, static_cast<std::uint64_t>(std::llround(head_expected + tail_rate * (static_cast<double>(req.capacity) - head_expected))));
  c.head_names = head;
  c.head_expected_entries = head_expected;

  SampledTrace trace(t, tail_rate, req.seed, head);
  AnswerBuilder builder(t, req.seed);
  std::vector<std::uint8_t> scratch;

  // Mean padded entry size on this profile (sizes the private arena).
  {
    // Over distinct keys (uniform over kept names), as the cache's long tail holds them.
    SplitMix64 pick(req.seed ^ 0x99);
    double sum = 0;
    const int kProbe = 1024;
    for (int i = 0; i < kProbe; ++i) {
      TraceKey k;
      if (trace.ranks().empty()) break;
      k.name = trace.ranks()[pick.next() % trace.ranks().size()];
      const double q = pick.unit();
      k.qtype = q < t.share_a ? 1 : q < t.share_a + t.share_aaaa ? 28 : 16;
      k.ecs = name_is_ecs(t, k.name, req.seed);
      if (k.ecs) k.subnet = static_cast<std::uint32_t>(pick.next() % t.ecs_subnets);
      const cache::CacheKey ck = builder.key(k);
      builder.encode(ck, k, 1, scratch);
      sum += static_cast<double>(cache::padded_entry_size(scratch.size()));
    }
    c.mean_entry_bytes = sum / kProbe;
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
  auto copy = std::make_unique<cache::EntryCopy>();

  const double sampled_qps = req.rate_qps * trace.weight();
  const double scale = 1.0 / tail_rate;  // weight of a tail request, entry or insert
  const std::uint32_t t0 = 1'000'000;
  const std::size_t max_minutes = std::size_t{req.max_days} * 1440;
  const std::size_t min_minutes = std::max<std::size_t>(360 + 60, 2 * (t.max_ttl() / 60 + 1));

  std::vector<double> hits_per_min{0}, lookups_per_min{0};
  c.entries.push_back(0);
  c.inserted.push_back(0);
  c.unexpired.push_back(0);
  // Inserts by the minute their TTL ends: entries linked but expired stay in the index
  // until reclaim, so "unexpired" = min(linked, inserted and not yet expired).
  std::vector<std::uint32_t> expiring(max_minutes + t.max_ttl() / 60 + 3, 0);
  std::uint64_t expired_so_far = 0;
  double carry = 0;
  std::uint64_t inserts = 0, requests = 0;  // tail inserts; all lookups
  // Head keys inserted so far, with the end of their TTL (head entries are hot, so they
  // are assumed linked once inserted: a hot key's expired entry is replaced on its next
  // miss; evictions of head keys are not seen here, they are rare).
  std::unordered_map<std::uint64_t, std::uint32_t> head_expiry;
  std::uint64_t head_inserts = 0;
  const auto wall0 = std::chrono::steady_clock::now();
  for (std::size_t minute = 1; minute <= max_minutes; ++minute) {
    carry += sampled_qps * 60.0;
    const std::uint64_t n = static_cast<std::uint64_t>(carry);
    carry -= static_cast<double>(n);
    std::uint64_t hits_head = 0, hits_tail = 0, lookups_head = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint32_t now = t0 + static_cast<std::uint32_t>((minute - 1) * 60 + (i * 60) / n);
      const TraceKey k = trace.next();
      const bool in_head = trace.is_head(k);
      lookups_head += in_head;
      const cache::CacheKey ck = builder.key(k);
      if (cache.lookup(ck, now, *copy) == cache::LookupStatus::hit) {
        ++(in_head ? hits_head : hits_tail);
      } else if (builder.encode(ck, k, now, scratch)) {
        scratch.resize(cache::padded_entry_size(scratch.size()), 0);
        if (cache.insert_encoded(ck, scratch, now) != cache::InsertStatus::rejected) {
          bool negative = false;
          const std::uint32_t ttl = key_ttl(t, k, req.seed, &negative);
          if (in_head) {
            ++head_inserts;
            head_expiry[k.id()] = now + ttl;
          } else {
            ++inserts;
            ++expiring[std::min<std::size_t>(expiring.size() - 1, (now + ttl - t0) / 60)];
          }
        }
      }
    }
    requests += n;
    // Full-scale counts: head at weight 1, tail at weight 1/R.
    hits_per_min.push_back(static_cast<double>(hits_head) + static_cast<double>(hits_tail) * scale);
    lookups_per_min.push_back(static_cast<double>(lookups_head) + static_cast<double>(n - lookups_head) * scale);
    const std::uint64_t live = cache.stats().live_entries;
    const std::uint32_t minute_end = t0 + static_cast<std::uint32_t>(minute * 60);
    std::uint64_t head_unexpired = 0;
    for (const auto& [id, end] : head_expiry) head_unexpired += end > minute_end;
    const std::uint64_t head_linked = std::min<std::uint64_t>(live, head_expiry.size());
    const std::uint64_t tail_linked = live - head_linked;
    c.entries.push_back(static_cast<float>(static_cast<double>(head_linked) + static_cast<double>(tail_linked) * scale));
    c.inserted.push_back(static_cast<float>(static_cast<double>(head_inserts) + static_cast<double>(inserts) * scale));
    expired_so_far += expiring[minute - 1];
    const std::uint64_t tail_unexpired = std::min(tail_linked, inserts - std::min(inserts, expired_so_far));
    c.unexpired.push_back(static_cast<float>(static_cast<double>(std::min(head_linked, head_unexpired)) +
                                             static_cast<double>(tail_unexpired) * scale));
    // Plateau check once an hour.
    if (minute % 60 == 0 && minute >= min_minutes) {
      auto mean_hit = [&](std::size_t end) {
        double h = 0, l = 0;
        for (std::size_t m = end - 59; m <= end; ++m) h += hits_per_min[m], l += lookups_per_min[m];
        return l > 0 ? h / l : 0.0;
      };
      const double e_now = c.entries[minute], e_then = c.entries[minute - 360];
      const double de = std::fabs(e_now - e_then) / std::max(1.0, e_now);
      const double dh = std::fabs(mean_hit(minute) - mean_hit(minute - 360));
      if (de < 0.01 && dh < 0.005) {
        c.reached_plateau = true;
        break;
      }
    }
  }
  c.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  c.sampled_requests = requests;
  // Hit rate per minute, smoothed over a centred window of up to 31 minutes (sampled
  // traces at low rates have few requests per minute); minute 0 is exactly 0.
  const std::size_t len = c.entries.size();
  std::vector<double> ch(len + 1, 0), cl(len + 1, 0);
  for (std::size_t m = 0; m < len; ++m) ch[m + 1] = ch[m] + hits_per_min[m], cl[m + 1] = cl[m] + lookups_per_min[m];
  c.hit_rate.assign(len, 0);
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
