#include "che_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

CheEstimate che_estimate(const TrafficProfile& t, double rate_qps, std::uint64_t capacity) {
  const std::vector<RankBin> bins = rank_bins(t);
  std::vector<KeyClass> classes;
  const double qshare[3] = {t.share_a, t.share_aaaa, t.share_other};
  for (int ecs = 0; ecs < 2; ++ecs) {
    const double name_p = ecs ? t.ecs_share : 1.0 - t.ecs_share;
    if (name_p <= 0) continue;
    const double subnets = ecs ? static_cast<double>(t.ecs_subnets) : 1.0;
    for (double qs : qshare) {
      if (qs <= 0) continue;
      if (t.negative_share > 0)
        classes.push_back({name_p * subnets * t.negative_share, qs / subnets, double(t.negative_ttl), ecs == 1});
      for (const auto& b : t.ttl)
        classes.push_back({name_p * subnets * (1 - t.negative_share) * b.share, qs / subnets, double(b.seconds), ecs == 1});
    }
  }
  // Occupancy / hit of one key with rate l and TTL T at characteristic time tc.
  auto per_key = [](double l, double T, double tc) {
    if (T <= tc) return l * T / (1 + l * T);
    return -std::expm1(-l * tc);
  };
  auto totals = [&](double tc, double* hits, double* ecs_entries, double* names_present) {
    double occ = 0, h = 0, ecs_occ = 0, present = 0;
    for (const auto& bin : bins) {
      const double lname = rate_qps * bin.p;
      double name_absent = 1.0;  // approx P(no key of the name cached), keys independent
      for (const auto& c : classes) {
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
