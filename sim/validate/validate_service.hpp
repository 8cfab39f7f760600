// SPDX-License-Identifier: GPL-3.0-or-later
// The measured half of `dnsarena-lab sim validate`: the real service under a paced load.
//
// Steps (all children of this process, on 127.0.0.1, stopped and reaped at the end or
// on error or interruption; the segment is removed):
//   1. `dnsarena-lab sim upstream --port U --seed S [--profile P] [--ttl-scale F]` (the
//      synthetic authoritative; F = minute_s / 60 when the clock is compressed);
//   2. `dnsarena serve` on a fresh, uniquely named segment (--reset-segment,
//      `stale: {max_age_s}` and `prefetch: {percent}` in its config when this serve knows
//      the keys (each probed with `serve --check-config`: a serve without the feature
//      rejects it; then it is left out and the run says so),
//      --remove-segment, --no-metrics), --workers W, --max-entries C, --arena-bytes A,
//      regions of `region_bytes` (through a two-line config file, serve has no flag for
//      it), ECS policy forward when the profile's load sends ECS (else off);
//   3. after the workers accept connections: this process attaches the segment (a
//      cache::Cache with the tool role, which only reads the header and stat slots) and
//      records the "before load" sample;
//   4. `dnsarena-lab sim load --rate R --duration D --json` with the same profile and seed.
//      Time 0 is the first query the service counted (polled every 50 ms), so the
//      samples line up with the load's own clock within that; then every
//      `sample_every_s` a sample until D, and the load's JSON report at its end;
//   Times in the options and the samples are simulated seconds: with minute_s < 60 a
//   simulated minute lasts minute_s real seconds (F = minute_s / 60): the load runs
//   duration_s x F real seconds at `rate` real q/s, samples are taken every
//   sample_every_s x F real seconds, the upstream serves TTLs x F, serve's stale window
//   is stale_max_age_s x F, and serve's waits that span minutes are x F too (the probe
//   interval of a down upstream, upstream_health.down_backoff_*_ms, and failure_cache.max_s;
//   each at least 1 of its unit). A key's chance of a hit depends on its queries per TTL, which
//   this keeps; the model is run at rate x F queries per simulated second.
//   5. with an outage (outage_s > 0): right after the sample at outage_at_s the upstream
//      is sent SIGUSR1 (`sim upstream`'s black-hole switch: it reads and drops every
//      query) and right after the sample at outage_at_s + outage_s SIGUSR2 (it answers
//      again), so the samples at both ends bound the outage. An upstream that the signal
//      ended (a build without the switch) is an error.
//
// A sample: live entries (segment header), queries/hits/lookups summed over all stat
// slots (workers/stats_report.hpp), Pss of the supervisor and its workers
// (validate_process.hpp: the shared segment counted once), and the segment's resident
// bytes (tmpfs blocks).
// The service's memory compared with the model is Pss_Anon + Pss_Shmem (heaps, stacks,
// the segment once). Pss_File (program text and libraries) is recorded but left out: it
// is shared with the upstream, the load and this process (the same binary) and with
// every other program using the same libraries, so the service's share of it moves by
// megabytes with what else runs (two identical runs measured 4.8 and 6.2 MiB of total
// Pss before load), which at this scale would drown the cache.
// Hit rate is hits / queries, not hits / lookups: a query carrying ECS looks up the
// plain key and then the client's subnet at every prefix (workers/worker.cpp), so one
// query is up to 25 lookups but at most one hit.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "validate_process.hpp"

namespace dnsarena::sim::fleet {

struct ServiceOptions {
  std::string program;        // dnsarena-lab, for sim upstream and sim load (common::self_executable())
  std::string daemon;         // dnsarena, for serve (common::daemon_program(): beside the lab)
  std::string profile_path;   // empty: the embedded published profile
  std::string work_dir;       // logs and the serve config go here (must exist)
  std::uint64_t seed = 1;     // names of upstream and load
  double rate = 2000;         // queries per second
  std::uint32_t duration_s = 300;      // simulated seconds, as every time below
  std::uint32_t sample_every_s = 10;
  std::uint32_t minute_s = 60;         // real seconds per simulated minute (60: real time)
  unsigned workers = 2;
  std::uint64_t capacity = 20'000;  // serve --max-entries
  std::uint64_t arena_bytes = 0;    // serve --arena-bytes
  std::uint32_t region_bytes = 64u << 10;
  bool ecs_forward = false;
  std::uint32_t outage_at_s = 0, outage_s = 0;  // upstream silent in [at, at + s) after the first query; 0 s = none
  std::uint32_t stale_max_age_s = 86'400;        // serve's stale.max_age_s (when it knows the key)
  unsigned prefetch_percent = 0;                 // serve's prefetch.percent (when it knows the key)
  std::function<void(const std::string&)> progress;  // one line per step (may be empty)
};

struct ServiceSample {
  double t_s = 0;                   // simulated seconds since the first query (negative: before load)
  std::uint64_t entries = 0;        // live entries
  std::uint64_t queries = 0, hits = 0, lookups = 0, servfail = 0;  // cumulative
  std::uint64_t inserts = 0, second_chances = 0;                   // cumulative
  // Resilience counters (cache/stat_slots.hpp), cumulative: stale answers (serve-stale),
  // misses answered from the failure cache, answers at the response deadline, prefetches.
  std::uint64_t stale_answers = 0, failure_cached = 0, deadline_answers = 0, prefetches = 0;
  std::uint64_t arena_bytes_in_use = 0;  // arena bytes holding written entries (dead ones too)
  Pss pss;                          // supervisor + workers
  std::uint64_t segment_resident_bytes = 0;
  unsigned processes = 0;           // processes summed into pss
  std::uint64_t memory_bytes() const { return pss.anon + pss.shmem; }
};

struct ServiceRun {
  std::string segment;
  std::uint64_t segment_bytes = 0, index_bytes = 0, arena_bytes = 0;  // geometry as created
  ServiceSample before_load;
  std::vector<ServiceSample> samples;  // t = 0, every sample_every_s, up to duration
  nlohmann::json load;                 // `sim load --json` report
  std::uint64_t sent = 0, answered = 0, lost = 0, servfail_answers = 0;
  double achieved_qps = 0;
  // The outage's bounding samples (indexes into samples; equal when there was none).
  std::size_t outage_first_sample = 0, outage_last_sample = 0;
  double wall_s = 0;                   // start of upstream to the end of the load
};

// Set from a signal handler (SIGINT/SIGTERM): run_service stops its children and throws.
std::atomic<bool>& validate_interrupted();

// Runs the service and the load. Throws std::runtime_error with the failing child's log
// tail when a child does not start or dies.
ServiceRun run_service(const ServiceOptions& o);

}  // namespace dnsarena::sim::fleet
