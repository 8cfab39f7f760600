// SPDX-License-Identifier: GPL-3.0-or-later
#include "fleet_walk.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "rank_histogram.hpp"
#include "rollout_sim.hpp"

namespace dnsarena::sim::fleet {

namespace {

constexpr std::int64_t kNoEvent = std::numeric_limits<std::int64_t>::max();

// One instance while a span is walked.
struct InstanceState {
  const WalkRow* row = nullptr;   // its values now
  const WalkRow* last = nullptr;  // its table's last row: settled (constant) from there on
  std::int64_t next_event = kNoEvent;  // minute of its next event
  double rate = 0;
  std::uint32_t event = 0;  // index of its latest event in FleetWalk::events
  std::uint32_t version = 0;
};

// The nearest-rank positions of p50, p90, p98, p99 among n values.
void percentile_ranks(std::size_t n, std::size_t (&ranks)[4]) {
  const double quantiles[4] = {0.50, 0.90, 0.98, 0.99};
  for (int q = 0; q < 4; ++q) {
    // Nearest rank: the smallest value with at least q * n values at or below it.
    const double rank = std::ceil(quantiles[q] * static_cast<double>(n));
    ranks[q] = std::min(n - 1, static_cast<std::size_t>(std::max(1.0, rank)) - 1);
  }
}

// Walks steps [first, end). Wake-ups: `near_` holds the instances to revisit at the next
// step, in the order they were scheduled; `far_` those scheduled further ahead (at an
// event), per step. A step visits its far list, then the near list: the order in which
// they were scheduled, so the running sums add up in the same order on every run.
class SpanWalker {
public:
  SpanWalker(const FleetWalk& walk, std::int64_t first, std::int64_t end)
      : walk_(walk),
        step_(walk.step_minutes),
        first_(first),
        end_(end),
        histogram_(walk.distinct.size()),
        state_(walk.instances()),
        far_(static_cast<std::size_t>(end - first)) {}

  void walk(RolloutStep* out) {
    const std::size_t count = walk_.instances();
    std::size_t ranks[4];
    percentile_ranks(count, ranks);
    for (std::size_t i = 0; i < count; ++i) {
      place(static_cast<std::uint32_t>(i), first_, true);
      requests_ += walk_.rate[i];
    }
    std::vector<std::uint32_t> now;
    for (std::int64_t s = first_; s < end_; ++s) {
      if (s > first_) {
        now.swap(near_);  // before the visits: they schedule into near_ for s + 1
        near_.clear();
        std::vector<std::uint32_t>& far = far_[static_cast<std::size_t>(s - first_)];
        for (std::uint32_t i : far) visit(i, s);
        std::vector<std::uint32_t>().swap(far);
        for (std::uint32_t i : now) visit(i, s);
      }
      std::uint32_t pick[4];
      histogram_.select(ranks, 4, pick);
      RolloutStep& st = out[s - first_];
      st.minute = s * step_;
      st.p50_gb = walk_.distinct[pick[0]] / kGB, st.p90_gb = walk_.distinct[pick[1]] / kGB;
      st.p98_gb = walk_.distinct[pick[2]] / kGB, st.p99_gb = walk_.distinct[pick[3]] / kGB;
      st.fleet_total_gb = total_rss_ / kGB;
      st.mean_hit_rate = requests_ > 0 ? hits_ / requests_ : 0;
      st.upstream_qps = requests_ - hits_ + prefetches_;  // prefetches_ is exactly 0 without prefetch
      st.share_upgraded = upgraded_ / static_cast<double>(count);
    }
  }

private:
  // Revisits instance i at step s: the next row of its table while nothing happened
  // since the last visit, else a new placement from its events.
  void visit(std::uint32_t i, std::int64_t s) {
    InstanceState& st = state_[i];
    const WalkRow* old = st.row;
    total_rss_ -= old->rss;
    hits_ -= st.rate * old->hit;
    prefetches_ -= st.rate * old->prefetch;
    upgraded_ -= st.version;  // re-added below: the version may change
    if (s * step_ < st.next_event) {
      ++st.row;  // on its curve (else it would not have been woken before its next event)
      record(i, s, old->value);
    } else {
      place(i, s, false, old->value);
    }
  }

  // Sets instance i's event and row at step s from its events.
  void place(std::uint32_t i, std::int64_t s, bool first, std::uint32_t old_value = 0) {
    InstanceState& st = state_[i];
    const std::int64_t minute = s * step_;
    const std::size_t begin = walk_.event_start[i], end = walk_.event_start[i + 1];
    std::size_t e;
    if (first) {
      st.rate = walk_.rate[i];
      e = static_cast<std::size_t>(std::upper_bound(walk_.events.begin() + static_cast<std::ptrdiff_t>(begin),
                                                    walk_.events.begin() + static_cast<std::ptrdiff_t>(end), minute,
                                                    [](std::int64_t m, const WalkEvent& ev) { return m < ev.minute; }) -
                                   walk_.events.begin()) -
          1;
    } else {
      e = st.event;
      while (e + 1 < end && walk_.events[e + 1].minute <= minute) ++e;
    }
    const WalkEvent& ev = walk_.events[e];
    const WalkRow* rows = walk_.rows.data() + walk_.table_start[ev.table];
    const std::int64_t size = static_cast<std::int64_t>(walk_.table_start[ev.table + 1] - walk_.table_start[ev.table]);
    const std::int64_t age = (minute - ev.minute) / step_ + ev.start_age;
    st.event = static_cast<std::uint32_t>(e);
    st.version = ev.version;
    st.row = rows + std::min(age, size - 1);
    st.last = rows + (size - 1);
    st.next_event = e + 1 < end ? walk_.events[e + 1].minute : kNoEvent;
    if (first) {
      histogram_.add(st.row->value);
      add_values(st);
      schedule(i, s, st);
    } else {
      record(i, s, old_value);
    }
  }

  // Moves instance i from `old_value` to its row's in the histogram, adds its values, schedules its next visit.
  void record(std::uint32_t i, std::int64_t s, std::uint32_t old_value) {
    const InstanceState& st = state_[i];
    if (st.row->value != old_value) {
      histogram_.remove(old_value);
      histogram_.add(st.row->value);
    }
    add_values(st);
    schedule(i, s, st);
  }

  void add_values(const InstanceState& st) {
    total_rss_ += st.row->rss;
    hits_ += st.rate * st.row->hit;
    prefetches_ += st.rate * st.row->prefetch;
    upgraded_ += st.version;
  }

  // Next visit: the next step while on the curve, else the step of the next event.
  void schedule(std::uint32_t i, std::int64_t s, const InstanceState& st) {
    std::int64_t next = s + 1;
    if (st.row == st.last) {
      if (st.next_event == kNoEvent) return;
      next = std::max(s + 1, (st.next_event + step_ - 1) / step_);
    }
    if (next == s + 1) {
      if (next < end_) near_.push_back(i);
    } else if (next < end_) {
      far_[static_cast<std::size_t>(next - first_)].push_back(i);
    }
  }

  const FleetWalk& walk_;
  std::int64_t step_, first_, end_;
  RankHistogram histogram_;
  std::vector<InstanceState> state_;
  std::vector<std::uint32_t> near_;
  std::vector<std::vector<std::uint32_t>> far_;
  double total_rss_ = 0, hits_ = 0, requests_ = 0, upgraded_ = 0, prefetches_ = 0;
};

class LocalSpanRunner final : public SpanRunner {
public:
  void run(const FleetWalk& walk, std::vector<RolloutStep>& steps) override { walk_all_spans(walk, steps); }
};

LocalSpanRunner g_local;
SpanRunner* g_current = &g_local;

}  // namespace

std::int64_t span_count(std::int64_t steps) { return std::min(steps, kSpans); }

std::int64_t span_first(std::int64_t steps, std::int64_t span) { return steps * span / span_count(steps); }

void walk_span(const FleetWalk& walk, std::int64_t first, std::int64_t end, RolloutStep* out) {
  if (walk.instances() == 0 || walk.events.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("fleet walk: no instances, or more than 2^32 events");
  SpanWalker(walk, first, end).walk(out);
}

void walk_all_spans(const FleetWalk& walk, std::vector<RolloutStep>& steps) {
  steps.resize(static_cast<std::size_t>(walk.steps));
  const std::int64_t spans = span_count(walk.steps);
  tbb::parallel_for(std::int64_t{0}, spans, [&](std::int64_t span) {
    const std::int64_t first = span_first(walk.steps, span);
    walk_span(walk, first, span_first(walk.steps, span + 1), steps.data() + first);
  });
}

SpanRunner& span_runner() { return *g_current; }
ScopedSpanRunner::ScopedSpanRunner(SpanRunner& runner) : previous_(g_current) { g_current = &runner; }
ScopedSpanRunner::~ScopedSpanRunner() { g_current = previous_; }

}  // namespace dnsarena::sim::fleet
