// SPDX-License-Identifier: GPL-3.0-or-later
#include "fleet_walk_codec.hpp"

#include <stdexcept>
#include <type_traits>

#include "byte_codec.hpp"

namespace dnsarena::sim::fleet {

// A field added to FleetWalk must be added to the codec below too: the size says so.
static_assert(sizeof(FleetWalk) == 2 * 8 + 6 * sizeof(std::vector<float>),
              "FleetWalk changed: encode/decode the new field in fleet_walk_codec.cpp, then update this size");
static_assert(std::is_trivially_copyable_v<RolloutStep> && std::is_trivially_copyable_v<WalkRow> &&
              std::is_trivially_copyable_v<WalkEvent>);

std::string encode_walk(const FleetWalk& walk) {
  Writer w;
  w.pod(walk.step_minutes);
  w.pod(walk.steps);
  w.vec(walk.distinct);
  w.vec(walk.rows);
  w.vec(walk.table_start);
  w.vec(walk.rate);
  w.vec(walk.event_start);
  w.vec(walk.events);
  return w.take();
}

FleetWalk decode_walk(const std::string& bytes) {
  Reader r(bytes, "fleet walk");
  FleetWalk walk;
  walk.step_minutes = r.pod<std::int64_t>();
  walk.steps = r.pod<std::int64_t>();
  walk.distinct = r.vec<float>();
  walk.rows = r.vec<WalkRow>();
  walk.table_start = r.vec<std::uint64_t>();
  walk.rate = r.vec<double>();
  walk.event_start = r.vec<std::uint64_t>();
  walk.events = r.vec<WalkEvent>();
  r.finish();
  if (walk.step_minutes < 1 || walk.event_start.size() != walk.rate.size() + 1 || walk.table_start.empty())
    throw std::runtime_error("fleet walk message: inconsistent sizes");
  return walk;
}

std::string encode_span(const SpanTask& span) {
  Writer w;
  w.pod(span.first);
  w.pod(span.end);
  return w.take();
}

SpanTask decode_span(const std::string& bytes) {
  Reader r(bytes, "fleet span");
  SpanTask span;
  span.first = r.pod<std::int64_t>();
  span.end = r.pod<std::int64_t>();
  r.finish();
  if (span.first < 0 || span.end < span.first) throw std::runtime_error("fleet span message: bad step range");
  return span;
}

std::string encode_steps(const RolloutStep* steps, std::size_t count) {
  Writer w;
  w.vec(std::vector<RolloutStep>(steps, steps + count));
  return w.take();
}

std::vector<RolloutStep> decode_steps(const std::string& bytes) {
  Reader r(bytes, "fleet steps");
  std::vector<RolloutStep> steps = r.vec<RolloutStep>();
  r.finish();
  return steps;
}

}  // namespace dnsarena::sim::fleet
