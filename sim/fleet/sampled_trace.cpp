#include "sampled_trace.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace dnsarena::sim::fleet {

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

namespace {
double unit_of(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }
}  // namespace

double zipf_normalizer(std::uint64_t n, double alpha) {
  const std::uint64_t exact = std::min<std::uint64_t>(n, 1'000'000);
  double s = 0;
  for (std::uint64_t r = exact; r >= 1; --r) s += std::pow(static_cast<double>(r), -alpha);
  if (n > exact) {
    // Integral of x^-a from exact+0.5 to n+0.5 (midpoint rule; error far below 1e-9 here).
    const double a = exact + 0.5, b = n + 0.5;
    if (std::fabs(alpha - 1.0) < 1e-12) s += std::log(b / a);
    else s += (std::pow(b, 1 - alpha) - std::pow(a, 1 - alpha)) / (1 - alpha);
  }
  return s;
}

bool name_is_ecs(const TrafficProfile& t, std::uint64_t name, std::uint64_t seed) {
  return t.ecs_keyed_share() > 0 && unit_of(mix64(name * 0x9E3779B97F4A7C15ULL ^ seed ^ 0xEC5)) < t.ecs_keyed_share();
}

std::uint16_t request_qtype(const TrafficProfile& t, std::uint64_t name, std::uint64_t seed, double u) {
  if (t.qtype_per_name) u = unit_of(mix64(name * 0xA24BAED4963EE407ULL ^ seed ^ 0x7E));
  return u < t.share_a ? 1 : u < t.share_a + t.share_aaaa ? 28 : 16;
}

std::array<std::pair<std::uint16_t, double>, 3> qtype_shares(const TrafficProfile& t) {
  return {{{1, t.share_a}, {28, t.share_aaaa}, {16, std::max(0.0, 1.0 - t.share_a - t.share_aaaa)}}};
}

std::uint32_t key_ttl(const TrafficProfile& t, const TraceKey& k, std::uint64_t seed, bool* negative) {
  const std::uint64_t h = mix64(k.id() * 0xD1B54A32D192ED03ULL ^ seed);
  const bool neg = is_stray(k) || (t.negative_share > 0 && unit_of(h) < t.negative_share);
  if (negative) *negative = neg;
  if (neg) return t.negative_ttl;
  double u = unit_of(mix64(h ^ 0x77));
  for (const auto& b : t.ttl.buckets) {
    if (u < b.share) return b.seconds;
    u -= b.share;
  }
  return t.ttl.buckets.back().seconds;
}

double expected_resident_keys(const TrafficProfile& t, std::uint64_t rank, double name_qps, std::uint64_t seed) {
  double expected = 0;
  for_each_name_key(t, rank, name_qps, seed, [&](const TraceKey&, std::uint32_t ttl, double key_qps) {
    const double requests_per_ttl = key_qps * static_cast<double>(ttl);
    expected += requests_per_ttl / (1.0 + requests_per_ttl);
  });
  return expected;
}

namespace {

// Thinning bounds (see the header): cycles of a head key per TTL, hits per t_C.
constexpr double kCyclesPerTtl = 20.0;
constexpr double kHitsPerCharacteristic = 5.0;

}  // namespace

SampledTrace::SampledTrace(const TrafficProfile& t, double rate, std::uint64_t seed, std::uint64_t head,
                           double rate_qps, double characteristic_s)
    : t_(t), rate_(rate), seed_(seed), head_(std::min<std::uint64_t>(head, t.names)) {
  const double norm = zipf_normalizer(t.names, t.zipf);
  // Head keys: names 1..K x their qtypes x (ECS names) subnets (for_each_name_key).
  const double min_rate_tc = std::isfinite(characteristic_s) && characteristic_s > 0
                                 ? kHitsPerCharacteristic / characteristic_s
                                 : 0.0;
  std::vector<double> head_rates;
  // Lists a head key with its TTL and full rate, thinned (see the header).
  auto add_head_key = [&](HeadKey h, std::uint32_t ttl, double rate) {
    h.ttl = ttl;
    h.rate_qps = rate;
    h.sampled_qps = std::min(rate, std::max(kCyclesPerTtl / std::max(1u, ttl), min_rate_tc));
    h.weight = h.sampled_qps > 0 ? rate / h.sampled_qps : 1.0;
    head_qps_ += h.sampled_qps;
    head_rates.push_back(h.sampled_qps);
    head_keys_.push_back(h);
  };
  for (std::uint64_t r = 1; r <= head_; ++r)
    for_each_name_key(t, r, rate_qps * std::pow(static_cast<double>(r), -t.zipf) / norm, seed,
                      [&](const TraceKey& k, std::uint32_t ttl, double key_qps) {
                        HeadKey h;
                        h.key = k;
                        add_head_key(h, ttl, key_qps);
                      });
  if (head_qps_ > 0) {
    Stream s;
    s.head = true;
    s.alias = AliasTable(head_rates);
    s.mean_gap_s = 1.0 / head_qps_;
    s.rng = SplitMix64(mix64(seed ^ 0x4EAD5EED));
    streams_.push_back(std::move(s));
  }
  // Tail names: u(m) < R, one residue class of m = rank - 1 modulo 2^j per 1-bit j of R
  // (see the header); u(m) = radical inverse of (m XOR mask), so the class of bit j is
  // m mod 2^j = reverse_j(R's bits 1..j-1, then 0) XOR (mask mod 2^j).
  constexpr int kMaxBits = 40;
  const std::uint64_t mask = mix64(seed ^ 0xD16175F7);
  auto add_class = [&](std::uint64_t residue, std::uint64_t step, int bits) {
    Stream s;
    // First m >= head_ (rank > K) with m = residue (mod step).
    const std::uint64_t lo = head_;
    s.first = lo + ((residue + step - lo % step) % step) + 1;  // a rank (1-based)
    if (s.first > t.names) return;
    s.step = step;
    s.count = (t.names - s.first) / step + 1;
    std::vector<double> w(s.count);
    double sum = 0;
    for (std::uint64_t i = 0; i < s.count; ++i) sum += w[i] = std::pow(static_cast<double>(s.first + i * step), -t.zipf);
    const double qps = rate_qps * sum / norm;
    if (qps <= 0) return;
    s.alias = AliasTable(w);
    s.mean_gap_s = 1.0 / qps;
    s.rng = SplitMix64(mix64(seed ^ mix64((std::uint64_t(bits) << 48) ^ residue ^ 0x7A11C1A55)));
    tail_weight_ += sum / norm;
    tail_qps_ += qps;
    tail_names_ += s.count;
    streams_.push_back(std::move(s));
  };
  if (rate >= 1.0) {
    add_class(0, 1, 0);
  } else {
    // R = sum of b_j 2^-j; the interval of bit j starts at R's bits 1..j-1.
    double rest = rate;
    std::uint64_t prefix = 0;  // u's digits 1..j-1 as m's bits 0..j-2
    for (int j = 1; j <= kMaxBits && rest > 0; ++j) {
      const double half = std::ldexp(1.0, -j);
      const std::uint64_t step = std::uint64_t{1} << j;
      if (rest >= half) {
        rest -= half;
        add_class((prefix ^ mask) & (step - 1), step, j);  // digit j = 0 in this interval
        prefix |= std::uint64_t{1} << (j - 1);             // then R's digit j is 1
      }
      if (step > 4 * t.names) break;  // finer classes hold at most one name each
    }
  }
  for (Stream& s : streams_) schedule(s);
}

// The stream's next arrival (exponential gap) and its next alias draw, prefetched.
void SampledTrace::schedule(Stream& s) {
  s.next_s += -std::log1p(-s.rng.unit()) * s.mean_gap_s;
  s.pick = s.rng.next();
  s.alias.prefetch(s.pick);
}

std::uint64_t SampledTrace::tail_rank(std::uint64_t i) const {
  for (const Stream& s : streams_) {
    if (s.head) continue;
    if (i < s.count) return s.first + i * s.step;
    i -= s.count;
  }
  return t_.names + 1;
}

void SampledTrace::resolve(Stream& s, Draw& d) {
  d = Draw{};
  d.time_s = s.next_s;
  const std::uint32_t idx = s.alias.draw(s.pick);
  if (s.head) {
    d.head_index = idx;
    d.key = head_keys_[idx].key;
    return;
  }
  d.key.name = s.first + idx * s.step;
  if (t_.stray_share() > 0 && s.rng.unit() < t_.stray_share()) {
    d.key.qtype = static_cast<std::uint16_t>(kStrayQtype + s.rng.next() % t_.stray_keys());
    return;  // stray keys are never ECS-keyed (negative answers have scope 0)
  }
  d.key.qtype = request_qtype(t_, d.key.name, seed_, t_.qtype_per_name ? 0.0 : s.rng.unit());
  d.key.ecs = name_is_ecs(t_, d.key.name, seed_);
  if (d.key.ecs) d.key.subnet = static_cast<std::uint32_t>(s.rng.next() % std::max(1u, t_.ecs_subnets));
}

void SampledTrace::next_batch(Draw* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (streams_.empty()) {
      out[i] = Draw{};
      out[i].time_s = HUGE_VAL;
      continue;
    }
    Stream* first = &streams_[0];
    for (Stream& s : streams_)
      if (s.next_s < first->next_s) first = &s;
    resolve(*first, out[i]);
    schedule(*first);
  }
}

}  // namespace dnsarena::sim::fleet
