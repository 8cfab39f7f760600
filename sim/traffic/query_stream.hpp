// SPDX-License-Identifier: GPL-3.0-or-later
// The load client's query stream: query k is a pure function of (profile, seeds, k).
//
// Query k draws a rank r with Zipf(zipf) popularity over 1..names (rank r is name
// index r-1, whose place in the universe is already random); then
//   * with probability stray_nxdomain_share: "nx<r>.<zone>" (not a generated name:
//     generated labels are letters only), asked with the profile's type mix -> NXDOMAIN;
//   * with probability stray_nodata_share: name r-1 asked with another of A/AAAA/TXT;
//   * otherwise: name r-1 asked with its own type.
// When ecs_subnets > 0 every query carries an ECS option with source /24 from
// client subnet c (uniform in 0..ecs_subnets-1): 10.<c / 256>.<c % 256>.0/24, the
// same addressing as EntryGenerator's ECS trait.
// Names come from the same EntryGenerator as the upstream's, so the stream's seed for
// names must equal the upstream's --seed; the stream seed only orders the queries.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "dns/ecs_option.hpp"
#include "sim/traffic/zipf_sampler.hpp"
#include "sim/workload/entry_generator.hpp"
#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::sim::traffic {

struct StreamQuery {
  enum class Kind : std::uint8_t { name, nodata, nxdomain };
  Kind kind = Kind::name;
  std::uint64_t name_index = 0;  // for kind nxdomain: the rank's index, not a real name
  Bytes qname;                   // wire form, lowercase
  std::uint16_t qtype = 0;
  dns::EcsOption ecs;
};

class QueryStream {
public:
  QueryStream(const TrafficProfile& profile, std::uint64_t name_seed, std::uint64_t stream_seed,
              std::string_view zone = "zone.");
  // Query number k; `out` is reused.
  void query(std::uint64_t k, StreamQuery& out) const;
  const TrafficProfile& profile() const { return profile_; }

private:
  TrafficProfile profile_;
  EntryGenerator gen_;
  std::uint64_t stream_seed_;
  Bytes zone_;
  ZipfSampler zipf_;
};

}  // namespace dnsarena::sim::traffic
