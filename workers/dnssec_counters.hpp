// SPDX-License-Identifier: GPL-3.0-or-later
// What the workers' DNSSEC validation did (validation_jobs.hpp), for /metrics
// (dnsarena_dnssec_*) and `dnsarena stats` (the answer snapshot's "dnssec" object):
// validations by verdict, the DS / DNSKEY sets fetched or found cached, the crypto done,
// the bounds hit (dnssec/limits.hpp; KeyTrap, NSEC3 floods; jobs and deadlines), and the
// answers synthesized from validated NSEC and NSEC3 ranges (aggressive_nsec.hpp, RFC 8198).
//
// Memory: one anonymous shared mapping beside the answer metrics (answer_metrics.hpp:
// AnswerMetrics owns it, so it reaches every worker and reader the same way, and a
// worker killed and forked again keeps adding to its predecessor's counts), made by the
// supervisor before the first fork:
//
//   offset          size  field
//   0               64    header: rows (u32), zero
//   64 + r x 192    192   row r: u64 counts[24], by DnssecCounter (the unused ones 0)
//
// Rows are the answer metrics' rows: worker i writes its own (a relaxed load and store,
// one writer per row), readers sum them (a sum may mix moments: benign for statistics).
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

#include "common/anonymous_mapping.hpp"

namespace dnsarena::workers {

enum class DnssecCounter : unsigned {
  secure,         // validations by verdict (dnssec/verdict.hpp), in its order
  insecure,
  bogus,
  indeterminate,
  fetches,           // DS / DNSKEY queries sent upstream for a validation
  fetch_cache_hits,  // DS / DNSKEY sets a validation found in the shared cache
  key_cache_seeds,   // zones a validation started from the worker's key cache
  signature_validations,  // RRSIG verifications run
  nsec3_hashes,           // NSEC3 hashes computed (validations and aggressive_nsec.hpp's answers)
  signature_limit,        // validations stopped by max_signature_validations (bogus)
  nsec3_hash_limit,       // ... by max_nsec3_hashes (bogus); or ranges not used for it (aggressive_nsec.hpp)
  nsec3_iteration_limit,  // ... NSEC3 iterations over max_nsec3_iterations (insecure)
  key_tag_collisions_skipped,  // keys not tried past max_key_tag_collisions
  overloaded,  // answers judged bogus for want of a job slot (ValidationJobs::kMaxJobs)
  timeouts,    // validations that reached their deadline (bogus)
  aggressive_nsec_answers,  // NXDOMAIN / NODATA synthesized from validated NSEC / NSEC3 ranges (aggressive_nsec.hpp)
  denial_claims,  // validations of a denial that claimed its zone while they waited for a set (denial_claims.hpp)
  denial_waits,   // misses parked on such a claim instead of asked upstream
};
inline constexpr std::size_t kDnssecCounters = 18;
static_assert(static_cast<unsigned>(DnssecCounter::indeterminate) == 3, "the verdicts first, as dnssec::Verdict");
inline constexpr std::array<std::string_view, kDnssecCounters> kDnssecCounterNames = {
    "secure",       "insecure",     "bogus",           "indeterminate",         "fetches",
    "fetch_cache_hits", "key_cache_seeds", "signature_validations", "nsec3_hashes", "signature_limit",
    "nsec3_hash_limit", "nsec3_iteration_limit", "key_tag_collisions_skipped", "overloaded", "timeouts",
    "aggressive_nsec_answers", "denial_claims", "denial_waits"};

class DnssecCounters {
public:
  struct alignas(64) Row {
    std::atomic<std::uint64_t> counts[24];
    // REQUIRES: the caller is this row's only writer.
    void add(DnssecCounter c, std::uint64_t n = 1) {
      std::atomic<std::uint64_t>& v = counts[static_cast<unsigned>(c)];
      v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
  };
  static_assert(sizeof(Row) == 192, "a row is three whole cache lines: two workers never share one");
  static_assert(kDnssecCounters <= 24, "the counters fit a row");

  // Maps `rows` rows (shared across fork() when `shared`). Throws std::system_error.
  DnssecCounters(unsigned rows, bool shared);
  unsigned rows() const { return *rows_; }
  Row& row(unsigned i) const { return rows_array_[i]; }
  std::array<std::uint64_t, kDnssecCounters> totals() const;

private:
  common::AnonymousMapping map_;
  std::uint32_t* rows_ = nullptr;
  Row* rows_array_ = nullptr;
};

// The totals as Prometheus text: dnsarena_dnssec_validations_total{verdict},
// dnsarena_dnssec_limits_hit_total{limit} (signatures, nsec3_hashes, nsec3_iterations,
// jobs, deadline), and one counter each for the rest (dnsarena_dnssec_fetches_total ...).
void write_dnssec_metrics(std::ostream& o, const std::array<std::uint64_t, kDnssecCounters>& t);

}  // namespace dnsarena::workers
