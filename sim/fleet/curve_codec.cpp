// SPDX-License-Identifier: GPL-3.0-or-later
#include "curve_codec.hpp"

#include <cstdint>

#include "byte_codec.hpp"

namespace dnsarena::sim::fleet {

// A field added to either struct must be added to the codec below too (else a curve
// from another rank silently lacks it): the sizes make the compiler say so.
static_assert(sizeof(OccupancyCurve) == 8 * sizeof(std::vector<float>) + 16 * 8,
              "OccupancyCurve changed: encode/decode the new field in curve_codec.cpp, then update this size");
static_assert(sizeof(CurveJob) == 2 * sizeof(std::string) + 8 * 8,
              "CurveJob changed: encode/decode the new field in curve_codec.cpp, then update this size");

std::string encode_job(const CurveJob& j) {
  Writer w;
  w.str(j.fleet);
  w.str(j.datacenter);
  w.pod(j.capacity);
  w.pod(j.rate_qps);
  w.pod(j.seed);
  w.pod(j.sample_entries);
  w.pod(j.max_sample_rate);
  w.pod(j.max_days);
  w.pod(j.stale_max_age_s);
  w.pod(j.prefetch_percent);
  w.pod(j.outage_minutes);
  w.pod(j.outage_start_minute);
  return w.take();
}

CurveJob decode_job(const std::string& bytes) {
  Reader r(bytes, "curve job");
  CurveJob j;
  j.fleet = r.str();
  j.datacenter = r.str();
  j.capacity = r.pod<std::uint64_t>();
  j.rate_qps = r.pod<double>();
  j.seed = r.pod<std::uint64_t>();
  j.sample_entries = r.pod<std::uint32_t>();
  j.max_sample_rate = r.pod<double>();
  j.max_days = r.pod<std::uint32_t>();
  j.stale_max_age_s = r.pod<std::uint32_t>();
  j.prefetch_percent = r.pod<double>();
  j.outage_minutes = r.pod<std::uint32_t>();
  j.outage_start_minute = r.pod<std::uint32_t>();
  r.finish();
  return j;
}

std::string encode_curve(const OccupancyCurve& c) {
  Writer w;
  w.vec(c.entries);
  w.vec(c.hit_rate);
  w.vec(c.hit_rate_raw);
  w.vec(c.inserted);
  w.vec(c.unexpired);
  w.pod(c.plateau_entries);
  w.pod(c.plateau_unexpired);
  w.pod(c.plateau_hit_rate);
  w.pod(c.plateau_inserts_per_min);
  w.pod(static_cast<std::uint8_t>(c.reached_plateau));
  w.pod(c.sample_rate);
  w.pod(c.head_names);
  w.pod(c.head_expected_entries);
  w.pod(c.sampled_capacity);
  w.pod(c.sampled_requests);
  w.pod(c.run_seconds);
  w.pod(c.mean_entry_bytes);
  w.pod(c.memory_accesses);
  w.pod(c.segment_bytes);
  w.vec(c.prefetch_rate);
  w.pod(c.plateau_prefetch_rate);
  w.vec(c.outage_fresh);
  w.vec(c.outage_stale);
  w.pod(c.outage_start);
  return w.take();
}

OccupancyCurve decode_curve(const std::string& bytes) {
  Reader r(bytes, "curve");
  OccupancyCurve c;
  c.entries = r.vec<float>();
  c.hit_rate = r.vec<float>();
  c.hit_rate_raw = r.vec<float>();
  c.inserted = r.vec<float>();
  c.unexpired = r.vec<float>();
  c.plateau_entries = r.pod<double>();
  c.plateau_unexpired = r.pod<double>();
  c.plateau_hit_rate = r.pod<double>();
  c.plateau_inserts_per_min = r.pod<double>();
  c.reached_plateau = r.pod<std::uint8_t>() != 0;
  c.sample_rate = r.pod<double>();
  c.head_names = r.pod<std::uint64_t>();
  c.head_expected_entries = r.pod<double>();
  c.sampled_capacity = r.pod<std::uint64_t>();
  c.sampled_requests = r.pod<std::uint64_t>();
  c.run_seconds = r.pod<double>();
  c.mean_entry_bytes = r.pod<double>();
  c.memory_accesses = r.pod<double>();
  c.segment_bytes = r.pod<std::uint64_t>();
  c.prefetch_rate = r.vec<float>();
  c.plateau_prefetch_rate = r.pod<double>();
  c.outage_fresh = r.vec<float>();
  c.outage_stale = r.vec<float>();
  c.outage_start = r.pod<std::uint32_t>();
  r.finish();
  return c;
}

}  // namespace dnsarena::sim::fleet
