// SPDX-License-Identifier: GPL-3.0-or-later
#include "validate_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

namespace dnsarena::sim::fleet {

TrafficProfile served_traffic(const TrafficProfile& p, std::vector<std::string>* notes) {
  TrafficProfile t = p;
  const double shares = p.share_a + p.share_aaaa + p.share_other;
  t.share_a = p.share_a / shares;
  t.share_aaaa = p.share_aaaa / shares;
  t.share_other = 1.0 - t.share_a - t.share_aaaa;
  t.qtype_per_name = true;
  t.negative_share = 0;
  // Answered per subnet (scope > 0, sim/traffic/upstream_zone.cpp): ECS names' positive
  // answers and their NODATA; the zone's negative names and the "nx<rank>" names answer
  // with scope 0 whatever the name's trait, so they are cached once, like non-ECS names.
  t.ecs_share = p.ecs_keyed_share() * (1.0 - p.negative_share);
  if (!notes) return t;
  std::ostringstream ttl;
  if (p.ttl.uniform)
    ttl << "TTL uniform " << p.ttl.uniform_min << ".." << p.ttl.uniform_max << " s as " << t.ttl.buckets.size()
        << " equal-share buckets at slice midpoints";
  else
    ttl << "TTL buckets as given, but the zone draws TTLs uniformly in " << p.ttl.lowest() << ".." << p.ttl.highest()
        << " s";
  notes->push_back(ttl.str());
  std::ostringstream neg;
  neg << "NODATA + NXDOMAIN queries (" << p.stray_nodata_share * 100 << "% + " << p.stray_nxdomain_share * 100
      << "%) as " << t.stray_keys() << " stray negative keys per name (TTL " << p.negative_ttl << " s) sharing "
      << t.stray_share() * 100 << "% of its rate equally (really NODATA keys get " << p.stray_nodata_share * 50
      << "% each, NXDOMAIN keys the type mix of " << p.stray_nxdomain_share * 100 << "%)";
  notes->push_back(neg.str());
  if (p.negative_share > 0)
    notes->push_back("zone's negative names (" + std::to_string(p.negative_share * 100).substr(0, 4) +
                     "%) keep their drawn TTL: ordinary keys in the model, their size in the calibration");
  if (p.cname_share > 0)
    notes->push_back("CNAME answers (" + std::to_string(p.cname_share * 100).substr(0, 4) +
                     "% of names) are one entry under the query name: only their size differs (calibration)");
  notes->push_back(p.ecs_subnets > 0 ? "ECS: " + std::to_string(t.ecs_share).substr(0, 5) +
                                           " of queries answered per subnet (ECS names' positive answers), one key per "
                                           "client /" + std::to_string(t.ecs_prefix) + " of " +
                                           std::to_string(t.ecs_subnets)
                                     : std::string("ECS: the load sends none, every answer is cached under the plain key"));
  return t;
}

TrafficProfile calibration_mix(const TrafficProfile& p) {
  TrafficProfile m = p;
  m.ecs_subnets = std::max<std::uint32_t>(1, p.ecs_subnets);
  if (p.ecs_subnets == 0) m.ecs_share = 0;
  return m;
}

std::uint64_t model_arena_bytes(double capacity, double bytes_per_entry, std::uint32_t region_bytes) {
  // The same terms as cache_resident_bytes() in memory_model.hpp.
  const double per_entry = std::max(8.0, bytes_per_entry - kIndexBytesPerEntry);
  const double bytes = capacity * per_entry * kArenaSlack;
  const std::uint64_t regions = static_cast<std::uint64_t>(std::ceil(bytes / region_bytes));
  return std::max<std::uint64_t>(3, regions) * region_bytes;
}

Prediction predict(const PredictRequest& r) {
  Prediction p;
  CurveRequest req;
  req.traffic = r.traffic;
  req.capacity = r.capacity;
  req.rate_qps = r.rate_qps;
  req.sample_entries = r.sample_entries;
  req.max_sample_rate = 1.0;
  req.max_days = 1;
  req.seed = r.seed;
  req.outage_minutes = r.outage_minutes;
  req.outage_start_minute = r.outage_start_minute;
  req.stale_max_age_s = r.stale_max_age_s;
  req.prefetch_percent = r.prefetch_percent;
  const auto t0 = std::chrono::steady_clock::now();
  p.curve = compute_curve(req);
  p.curve_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.che = che_estimate(*r.traffic, r.rate_qps, r.capacity);
  p.memory = layout_memory("arena", r.arena_bytes_per_entry, r.arena_bytes_per_entry);
  const double cap = static_cast<double>(r.capacity);
  for (std::size_t m = 0; m < p.curve.entries.size(); ++m) {
    const double c = cache_resident_bytes(p.memory, cap, p.curve.entries_at(m), p.curve.inserted_at(m));
    p.cache_resident_bytes.push_back(c);
    p.rss_bytes.push_back(r.process_bytes + c);
  }
  return p;
}

}  // namespace dnsarena::sim::fleet
