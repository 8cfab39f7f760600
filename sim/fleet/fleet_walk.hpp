// SPDX-License-Identifier: GPL-3.0-or-later
// The fleet steps of `sim rollout`: every instance's RSS and hit rate at every step, the
// exact RSS percentiles across instances, the fleet totals (rollout_sim.hpp builds the
// input: instances, their restart/upgrade events, the RSS-by-age tables).
//
// The steps are cut into kSpans spans (fewer when there are fewer steps), each walked on
// its own from the instances' events: a span's rows do not depend on the others, so the
// spans run on threads (walk_all_spans) or MPI ranks (distributed_run.hpp) in any order, and
// the rows are the same bit for bit. The cut itself is part of the result (each span
// starts its running sums afresh), so it depends only on the step count.
//
// Per span: every instance is placed at the span's first step, then revisited only when
// its value can change: every step while it is on its curve, then at its next event.
// A revisit on the curve reads the instance's state and the next row of its table (rows
// hold RSS index, RSS and hit rate together: one cache line serves ~5 steps), moves the
// instance in the rank histogram (rank_histogram.hpp) and updates the running sums.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dnsarena::sim::fleet {

struct RolloutStep;

// One row of an age table: the instance's values at one age (in steps).
struct WalkRow {
  std::uint32_t value = 0;  // index of `rss` in FleetWalk::distinct
  float rss = 0, hit = 0;
  float prefetch = 0;       // background refreshes per request (prefetch), upstream beside the misses
};

// A restart or the upgrade: from `minute` on (since sim start; may be negative: the
// initial uptime) the instance follows table `table` from age `start_age`.
struct WalkEvent {
  std::int64_t minute = 0;
  std::uint32_t table = 0;
  std::uint32_t start_age = 0;  // 0: cold; else where a warm upgrade's migrated cache sits
  std::uint32_t version = 0;    // 0 from-layout, 1 to-layout
  std::uint32_t unused = 0;
};

struct FleetWalk {
  std::int64_t step_minutes = 1;
  std::int64_t steps = 0;          // rows of the result: steps 0 .. steps-1
  std::vector<float> distinct;     // every table's RSS values, sorted, distinct
  std::vector<WalkRow> rows;       // the tables, one after another
  std::vector<std::uint64_t> table_start;  // table t: rows[table_start[t] .. table_start[t+1])
  std::vector<double> rate;        // per instance, q/s
  std::vector<std::uint64_t> event_start;  // instance i: events[event_start[i] .. event_start[i+1])
  std::vector<WalkEvent> events;   // per instance, sorted by minute

  std::size_t instances() const { return rate.size(); }
};

inline constexpr std::int64_t kSpans = 32;
// The span cut of `steps` steps: span k is [span_first(steps, k), span_first(steps, k + 1)).
std::int64_t span_count(std::int64_t steps);
std::int64_t span_first(std::int64_t steps, std::int64_t span);

// Rows for steps [first, end) of `walk` into out[0 .. end - first). Thread-safe (reads `walk` only).
void walk_span(const FleetWalk& walk, std::int64_t first, std::int64_t end, RolloutStep* out);

// All spans, in parallel on this process's threads (oneTBB).
void walk_all_spans(const FleetWalk& walk, std::vector<RolloutStep>& steps);

// Who walks the spans: this process by default; distributed_run.hpp installs one that
// spreads them over MPI ranks for the duration of a command (ScopedSpanRunner).
class SpanRunner {
public:
  virtual ~SpanRunner() = default;
  // Fills steps[0 .. walk.steps).
  virtual void run(const FleetWalk& walk, std::vector<RolloutStep>& steps) = 0;
};

SpanRunner& span_runner();

// Installs `runner` until destroyed. Not thread-safe: from the thread running the command.
class ScopedSpanRunner {
public:
  explicit ScopedSpanRunner(SpanRunner& runner);
  ~ScopedSpanRunner();
  ScopedSpanRunner(const ScopedSpanRunner&) = delete;
  ScopedSpanRunner& operator=(const ScopedSpanRunner&) = delete;

private:
  SpanRunner* previous_;
};

}  // namespace dnsarena::sim::fleet
