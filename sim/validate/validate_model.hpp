// SPDX-License-Identifier: GPL-3.0-or-later
// The predicted half of `dnsarena-lab sim validate`: the fleet model on the load's profile.
//
// The model reads the same traffic profile as `sim upstream` / `sim load`
// (sim/workload/traffic_profile.hpp). served_traffic() states what the real upstream and
// load client do that the profile's fields alone do not say, as the same type:
//   qtype_per_name = true  (each zone name has exactly one type, EntryGenerator's draw);
//   TTLs                   = EntryGenerator draws a TTL uniformly in [min, max]; the
//                            model reads the profile's equal-share buckets at slice
//                            midpoints (TtlDistribution). A key's hit probability
//                            (lambda*T/(1+lambda*T) while the cache is TTL-bound) is concave
//                            in T, so midpoints overstate it slightly; with 32 buckets over
//                            60..3600 s a bucket is 111 s wide;
//   stray keys             = NODATA queries (another of the name's types: 2 keys) and
//                            NXDOMAIN queries ("nx<rank>" with one of 3 types: 3 keys):
//                            TrafficProfile::stray_share() over stray_keys() = 5 negative
//                            keys per name with negative_ttl (their SOA), at equal shares
//                            of the name's rate (really NODATA keys get 1% each and NXDOMAIN
//                            keys 1% split by the type mix);
//   negative_share = 0     (the zone's own negative names keep their drawn TTL, SOA
//                            minimum = TTL, so they are ordinary keys here);
//   ECS                    = when the load sends ECS (ecs_subnets > 0): the share of names
//                            answered per subnet is the ECS-dependent names that are not
//                            negative (stray keys answer with scope 0), one key per client
//                            subnet; without ECS in the queries every answer is cached
//                            under the plain key (ecs_keyed_share() = 0).
// What the model cannot express (reported in the notes): NODATA queries of ECS names are
// answered per subnet by the zone, one stray key in the model; a CNAME answer is one cache
// entry under the query name, so CNAMEs change only entry sizes (the calibration's mix has
// them), not keys. Which names are ECS-dependent is drawn per name by the zone
// (EntryGenerator) and by the model (a hash of the rank) independently; under Zipf the
// top names carry percents of the traffic each (rank 1: 4.5% at 0.9 over 100,000 names),
// so with an ECS share near 0.5 the two draws differ by a few hit-rate points by chance
// alone (the published profile's hit rate does not depend on per-name traits this way).
//
// Prediction (predict): compute_curve (real cache, SHARDS) at capacity = serve's
// max_entries and the load's achieved rate, che_estimate beside it, and predicted RSS
// per minute = process_bytes (the service's measured Pss anon + shmem before any load: the model's
// `process_gb` input, not a prediction) + cache_resident_bytes(arena layout memory,
// capacity, entries, inserted) with the arena's bytes per entry from a Calibration on
// the profile's own generator mix. With an outage (outage_minutes > 0) the curve runs it
// at the same minutes as the real run (cache_curve.hpp: nothing inserted, expired
// entries still held answered stale within stale_max_age_s, serve's default).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/fleet/cache_curve.hpp"
#include "sim/fleet/che_model.hpp"
#include "sim/fleet/fleet_config.hpp"
#include "sim/fleet/memory_model.hpp"
#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::sim::fleet {

// See the header comment. `notes` (optional) receives what the model approximates.
TrafficProfile served_traffic(const TrafficProfile& p, std::vector<std::string>* notes = nullptr);

// The profile whose entries the calibration measures: the generator's, without ECS keys
// when the load sends no ECS (then the real cache holds none).
TrafficProfile calibration_mix(const TrafficProfile& p);

// Arena bytes the memory model assumes for `capacity` entries of `bytes_per_entry`
// segment bytes (memory_model.hpp: capacity x arena bytes per entry x kArenaSlack),
// rounded up to whole regions; serve is started with this --arena-bytes.
std::uint64_t model_arena_bytes(double capacity, double bytes_per_entry, std::uint32_t region_bytes);

struct PredictRequest {
  const TrafficProfile* traffic = nullptr;
  std::uint64_t capacity = 0;
  double rate_qps = 0;
  double arena_bytes_per_entry = 0;  // calibration, layout "arena", net bytes
  double process_bytes = 0;          // measured before load (input)
  std::uint32_t sample_entries = FleetConfig{}.sample_entries;  // the fleet model's default
  std::uint64_t seed = 1;
  std::uint32_t outage_start_minute = 0, outage_minutes = 0;  // curve minutes (1-based); 0 minutes = none
  std::uint32_t stale_max_age_s = Datacenter{}.stale_max_age_s;
  double prefetch_percent = 0;
};

struct Prediction {
  OccupancyCurve curve;
  CheEstimate che;
  LayoutMemory memory;
  std::vector<double> cache_resident_bytes;  // per minute (index as the curve)
  std::vector<double> rss_bytes;             // process_bytes + cache_resident_bytes
  double curve_wall_s = 0;
};

Prediction predict(const PredictRequest& r);

}  // namespace dnsarena::sim::fleet
