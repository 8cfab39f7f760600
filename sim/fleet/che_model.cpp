// SPDX-License-Identifier: GPL-3.0-or-later
#include "che_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "sampled_trace.hpp"

namespace dnsarena::sim::fleet {

namespace {

struct RankBin {
  double names;  // names in the bin
  double p;      // request probability of one name of the bin
};

std::vector<RankBin> rank_bins(const TrafficProfile& t) {
  std::vector<RankBin> bins;
  const double H = zipf_normalizer(t.names, t.zipf);
  const std::uint64_t exact = std::min<std::uint64_t>(t.names, 2000);
  for (std::uint64_t r = 1; r <= exact; ++r) bins.push_back({1.0, std::pow(static_cast<double>(r), -t.zipf) / H});
  double lo = static_cast<double>(exact) + 1;
  const double n = static_cast<double>(t.names);
  while (lo <= n) {
    const double hi = std::min(n, std::floor(lo * 1.01) + 1);  // ranks [lo, hi]
    const double count = hi - lo + 1;
    const double a = lo - 0.5, b = hi + 0.5;
    const double sum = std::fabs(t.zipf - 1.0) < 1e-12 ? std::log(b / a)
                                                      : (std::pow(b, 1 - t.zipf) - std::pow(a, 1 - t.zipf)) / (1 - t.zipf);
    bins.push_back({count, sum / H / count});
    lo = hi + 1;
  }
  return bins;
}

struct KeyClass {
  double weight;  // keys per name of this class (subnets), times probability of the class
  double share;   // share of the name's rate going to one key of this class
  double ttl;
  bool ecs;
};

}  // namespace

CheEstimate che_estimate(const TrafficProfile& t, double rate_qps, std::uint64_t capacity,
                         std::optional<std::uint64_t> seed) {
  const std::vector<RankBin> bins = rank_bins(t);
  // Key classes of a name that is ECS-keyed with probability ecs_p.
  auto key_classes = [&](double ecs_p) {
    std::vector<KeyClass> classes;
    const double qshare[3] = {t.share_a, t.share_aaaa, t.share_other};
    for (int ecs = 0; ecs < 2; ++ecs) {
      const double name_p = ecs ? ecs_p : 1.0 - ecs_p;
      if (name_p <= 0) continue;
      const double subnets = ecs ? static_cast<double>(std::max(1u, t.ecs_subnets)) : 1.0;
      for (double qs : qshare) {
        if (qs <= 0) continue;
        // Requests draw their qtype: every name has a key per qtype at share qs of its rate.
        // One qtype per name: a share qs of names has one key with all of the rate.
        const double names_p = t.qtype_per_name ? name_p * qs : name_p;
        const double rate_share = (1.0 - t.stray_share()) * (t.qtype_per_name ? 1.0 : qs) / subnets;
        if (t.negative_share > 0)
          classes.push_back({names_p * subnets * t.negative_share, rate_share, double(t.negative_ttl), ecs == 1});
        for (const auto& b : t.ttl.buckets)
          classes.push_back({names_p * subnets * (1 - t.negative_share) * b.share, rate_share, double(b.seconds), ecs == 1});
      }
    }
    // Stray keys: every name has stray_keys of them, each at a share of its rate.
    if (t.stray_share() > 0)
      classes.push_back({double(t.stray_keys()), t.stray_share() / t.stray_keys(), double(t.negative_ttl), false});
    return classes;
  };
  const std::vector<KeyClass> classes = key_classes(t.ecs_keyed_share());
  // With a seed, the exactly binned top names use what the trace draws for them: an ECS
  // name gets the ECS classes; any other its own keys' qtype and TTL (negative or not).
  std::vector<std::vector<KeyClass>> realized(bins.size());
  if (seed) {
    const std::vector<KeyClass> ecs_classes = key_classes(1.0);
    for (std::size_t b = 0; b < bins.size() && bins[b].names == 1.0; ++b) {
      const std::uint64_t rank = b + 1;
      if (name_is_ecs(t, rank, *seed)) {
        realized[b] = ecs_classes;  // (one qtype per name: its weights already sum to one qtype)
        continue;
      }
      const std::uint16_t own = t.qtype_per_name ? request_qtype(t, rank, *seed, 0) : 0;
      for (const auto& [qtype, share] : qtype_shares(t)) {
        if (share <= 0 || (own && qtype != own)) continue;
        TraceKey k;
        k.name = rank;
        k.qtype = qtype;
        realized[b].push_back({1.0, (1.0 - t.stray_share()) * (own ? 1.0 : share), double(key_ttl(t, k, *seed, nullptr)), false});
      }
      if (t.stray_share() > 0)
        realized[b].push_back({double(t.stray_keys()), t.stray_share() / t.stray_keys(), double(t.negative_ttl), false});
    }
  }
  // Occupancy / hit of one key with rate l and TTL T at characteristic time tc.
  auto per_key = [](double l, double T, double tc) {
    if (T <= tc) return l * T / (1 + l * T);
    return -std::expm1(-l * tc);
  };
  auto totals = [&](double tc, double* hits, double* ecs_entries, double* names_present) {
    double occ = 0, h = 0, ecs_occ = 0, present = 0;
    for (std::size_t b = 0; b < bins.size(); ++b) {
      const RankBin& bin = bins[b];
      const double lname = rate_qps * bin.p;
      double name_absent = 1.0;  // approx P(no key of the name cached), keys independent
      for (const auto& c : realized[b].empty() ? classes : realized[b]) {
        const double l = lname * c.share;
        const double o = per_key(l, c.ttl, tc);
        occ += bin.names * c.weight * o;
        if (c.ecs) ecs_occ += bin.names * c.weight * o;
        h += bin.names * c.weight * l * o;  // requests hitting (PASTA: hit prob = occupancy)
        if (names_present) name_absent *= std::pow(1 - o, c.weight);
      }
      present += bin.names * (1 - name_absent);
    }
    if (hits) *hits = h / rate_qps;
    if (ecs_entries) *ecs_entries = ecs_occ;
    if (names_present) *names_present = present;
    return occ;
  };
  CheEstimate e;
  const double inf = std::numeric_limits<double>::infinity();
  const double cap = static_cast<double>(capacity);
  double tc = inf;
  if (totals(inf, nullptr, nullptr, nullptr) > cap) {
    e.fills = true;
    double lo = 0, hi = 1;
    while (totals(hi, nullptr, nullptr, nullptr) < cap && hi < 1e12) hi *= 2;
    for (int i = 0; i < 100 && hi - lo > 1e-6 * hi; ++i) {
      const double mid = 0.5 * (lo + hi);
      (totals(mid, nullptr, nullptr, nullptr) < cap ? lo : hi) = mid;
    }
    tc = 0.5 * (lo + hi);
  }
  double hits = 0, ecs_occ = 0, present = 0;
  e.entries = totals(tc, &hits, &ecs_occ, &present);
  e.hit_rate = hits;
  e.characteristic_s = tc;
  e.ecs_entry_share = e.entries > 0 ? ecs_occ / e.entries : 0;
  e.entries_per_name = present > 0 ? e.entries / present : 0;
  return e;
}

}  // namespace dnsarena::sim::fleet
