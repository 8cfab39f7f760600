// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/dnssec_counters.hpp"

#include <tuple>
#include <utility>

namespace dnsarena::workers {

DnssecCounters::DnssecCounters(unsigned rows, bool shared) {
  if (rows == 0) rows = 1;
  map_ = common::AnonymousMapping(64 + static_cast<std::size_t>(rows) * sizeof(Row), shared, "dnssec counters table");
  auto* base = static_cast<std::uint8_t*>(map_.data());  // zero-filled: every count 0
  rows_ = reinterpret_cast<std::uint32_t*>(base);
  *rows_ = rows;
  rows_array_ = reinterpret_cast<Row*>(base + 64);
}

std::array<std::uint64_t, kDnssecCounters> DnssecCounters::totals() const {
  std::array<std::uint64_t, kDnssecCounters> t{};
  for (unsigned r = 0; r < rows(); ++r)
    for (std::size_t c = 0; c < kDnssecCounters; ++c) t[c] += rows_array_[r].counts[c].load(std::memory_order_relaxed);
  return t;
}

void write_dnssec_metrics(std::ostream& o, const std::array<std::uint64_t, kDnssecCounters>& t) {
  auto at = [&](DnssecCounter c) { return t[static_cast<unsigned>(c)]; };
  o << "# HELP dnsarena_dnssec_validations_total Forwarded answers validated, by verdict\n"
       "# TYPE dnsarena_dnssec_validations_total counter\n";
  for (unsigned v = 0; v < 4; ++v)
    o << "dnsarena_dnssec_validations_total{verdict=\"" << kDnssecCounterNames[v] << "\"} " << t[v] << "\n";
  o << "# HELP dnsarena_dnssec_limits_hit_total Validations cut short by a bound (KeyTrap, NSEC3, jobs, deadline)\n"
       "# TYPE dnsarena_dnssec_limits_hit_total counter\n";
  const std::pair<const char*, DnssecCounter> limits[] = {{"signatures", DnssecCounter::signature_limit},
                                                          {"nsec3_hashes", DnssecCounter::nsec3_hash_limit},
                                                          {"nsec3_iterations", DnssecCounter::nsec3_iteration_limit},
                                                          {"jobs", DnssecCounter::overloaded},
                                                          {"deadline", DnssecCounter::timeouts}};
  for (const auto& [name, c] : limits) o << "dnsarena_dnssec_limits_hit_total{limit=\"" << name << "\"} " << at(c) << "\n";
  const std::pair<const char*, DnssecCounter> plain[] = {
      {"fetches", DnssecCounter::fetches},
      {"fetch_cache_hits", DnssecCounter::fetch_cache_hits},
      {"key_cache_seeds", DnssecCounter::key_cache_seeds},
      {"signature_validations", DnssecCounter::signature_validations},
      {"nsec3_hashes", DnssecCounter::nsec3_hashes},
      {"key_tag_collisions_skipped", DnssecCounter::key_tag_collisions_skipped}};
  for (const auto& [name, c] : plain)
    o << "# TYPE dnsarena_dnssec_" << name << "_total counter\ndnsarena_dnssec_" << name << "_total " << at(c) << "\n";
  const std::tuple<const char*, const char*, DnssecCounter> aggressive[] = {
      {"answers", "NXDOMAIN and NODATA answered from validated NSEC and NSEC3 ranges (RFC 8198)",
       DnssecCounter::aggressive_nsec_answers},
      {"denial_claims", "Validations of a denial that held its zone's misses back while they fetched keys",
       DnssecCounter::denial_claims},
      {"denial_waits", "Misses that waited for a denial of their zone being validated instead of going upstream",
       DnssecCounter::denial_waits}};
  for (const auto& [name, help, c] : aggressive)
    o << "# HELP dnsarena_aggressive_nsec_" << name << "_total " << help << "\n# TYPE dnsarena_aggressive_nsec_" << name
      << "_total counter\ndnsarena_aggressive_nsec_" << name << "_total " << at(c) << "\n";
}

}  // namespace dnsarena::workers
