#include "validate_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

namespace dnsarena::sim::fleet {

std::vector<TtlBucket> uniform_ttl_buckets(std::uint32_t lo, std::uint32_t hi, unsigned buckets) {
  if (hi < lo) std::swap(lo, hi);
  const std::uint32_t span = hi - lo + 1;  // integer TTLs lo..hi
  buckets = std::max(1u, std::min(buckets, span));
  std::vector<TtlBucket> out;
  for (unsigned i = 0; i < buckets; ++i) {
    const double mid = lo + (static_cast<double>(i) + 0.5) * span / buckets - 0.5;
    out.push_back({std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(mid))), 1.0 / buckets});
  }
  return out;
}

TrafficProfile to_fleet_traffic(const sim::TrafficProfile& p, std::vector<std::string>* notes) {
  const MixProfile& m = p.mix;
  TrafficProfile t;
  t.names = p.names;
  t.zipf = p.zipf_s;
  const double shares = m.share_a + m.share_aaaa + m.share_txt;
  t.share_a = m.share_a / shares;
  t.share_aaaa = m.share_aaaa / shares;
  t.share_other = 1.0 - t.share_a - t.share_aaaa;
  t.qtype_per_name = true;
  t.records_min = m.min_records;
  t.records_max = m.max_records;
  t.other_rdata_min = m.txt_min_bytes;
  t.other_rdata_max = m.txt_max_bytes;
  t.ttl = uniform_ttl_buckets(m.ttl_min, m.ttl_max, kTtlBuckets);
  // NODATA queries ask one of the name's 2 other types; NXDOMAIN queries "nx<rank>" with
  // one of 3 types: 5 extra negative keys per name, at (on average) equal shares.
  t.negative_share = 0;
  t.stray_share = std::min(0.5, p.query_nodata_share + p.query_nxdomain_share);
  t.stray_keys = (p.query_nodata_share > 0 ? 2 : 0) + (p.query_nxdomain_share > 0 ? 3 : 0);
  if (t.stray_keys == 0) t.stray_keys = 1;
  t.negative_ttl = p.negative_ttl;
  const bool ecs_sent = p.ecs_client_subnets > 0;
  // Answered per subnet (scope > 0, sim/traffic/upstream_zone.cpp): ECS names' positive
  // answers and their NODATA; the zone's negative names and the "nx<rank>" names answer
  // with scope 0 whatever the name's trait, so they are cached once, like non-ECS names.
  t.ecs_share = ecs_sent ? p.ecs_share * (1.0 - m.negative_share) : 0.0;
  t.ecs_subnets = ecs_sent ? p.ecs_client_subnets : 1;
  t.ecs_prefix = p.ecs_scope_prefix;
  if (notes) {
    std::ostringstream ttl;
    ttl << "TTL uniform " << m.ttl_min << ".." << m.ttl_max << " s as " << t.ttl.size()
        << " equal-share buckets at slice midpoints";
    notes->push_back(ttl.str());
    std::ostringstream neg;
    neg << "NODATA + NXDOMAIN queries (" << p.query_nodata_share * 100 << "% + " << p.query_nxdomain_share * 100
        << "%) as " << t.stray_keys << " stray negative keys per name (TTL " << p.negative_ttl
        << " s) sharing " << t.stray_share * 100 << "% of its rate equally (really NODATA keys get "
        << p.query_nodata_share * 50 << "% each, NXDOMAIN keys the type mix of " << p.query_nxdomain_share * 100 << "%)";
    notes->push_back(neg.str());
    if (m.negative_share > 0)
      notes->push_back("zone's negative names (" + std::to_string(m.negative_share * 100).substr(0, 4) +
                       "%) keep their drawn TTL: ordinary keys in the model, their size in the calibration");
    if (m.cname_share > 0)
      notes->push_back("CNAME answers (" + std::to_string(m.cname_share * 100).substr(0, 4) +
                       "% of names) are one entry under the query name: only their size differs (calibration)");
    notes->push_back(ecs_sent ? "ECS: " + std::to_string(t.ecs_share).substr(0, 5) +
                                    " of queries answered per subnet (ECS names' positive answers), one key per client /" +
                                    std::to_string(t.ecs_prefix) + " of " + std::to_string(t.ecs_subnets)
                              : std::string("ECS: the load sends none, every answer is cached under the plain key"));
  }
  return t;
}

MixProfile calibration_mix(const sim::TrafficProfile& p) {
  MixProfile m = p.generator_mix();
  if (p.ecs_client_subnets == 0) m.ecs_share = 0;
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
