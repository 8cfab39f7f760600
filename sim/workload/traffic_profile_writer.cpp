// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/workload/traffic_profile_writer.hpp"

#include <charconv>
#include <sstream>

namespace dnsarena::sim {

namespace {

// Shortest text that reads back to exactly `v`.
std::string number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::string traffic_profile_yaml(const TrafficProfile& p) {
  std::ostringstream o;
  o << "names: " << p.names << '\n'
    << "zipf: " << number(p.zipf) << '\n'
    << "qps: " << number(p.qps) << '\n'
    << "qtypes: {a: " << number(p.share_a) << ", aaaa: " << number(p.share_aaaa) << ", other: " << number(p.share_other)
    << ", per_name: " << (p.qtype_per_name ? "true" : "false") << "}\n"
    << "records: {min: " << p.records_min << ", max: " << p.records_max << "}\n"
    << "other_rdata_bytes: {min: " << p.other_rdata_min << ", max: " << p.other_rdata_max << "}\n"
    << "labels: {min: " << p.labels_min << ", max: " << p.labels_max << "}\n"
    << "label_bytes: {min: " << p.label_bytes_min << ", max: " << p.label_bytes_max << "}\n";
  if (p.ttl.uniform) {
    o << "ttl: {min: " << p.ttl.uniform_min << ", max: " << p.ttl.uniform_max << "}\n";
  } else {
    o << "ttl:\n";
    for (const TtlBucket& b : p.ttl.buckets) o << "  - {seconds: " << b.seconds << ", share: " << number(b.share) << "}\n";
  }
  o << "negative: {share: " << number(p.negative_share) << ", ttl: " << p.negative_ttl << "}\n"
    << "cname: {share: " << number(p.cname_share) << "}\n"
    << "stray: {nodata_share: " << number(p.stray_nodata_share)
    << ", nxdomain_share: " << number(p.stray_nxdomain_share) << "}\n"
    << "ecs: {share: " << number(p.ecs_share) << ", subnets: " << p.ecs_subnets
    << ", prefix: " << unsigned{p.ecs_prefix} << ", prefix_v6: " << unsigned{p.ecs_prefix_v6} << "}\n";
  return o.str();
}

}  // namespace dnsarena::sim
