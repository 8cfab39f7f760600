// SPDX-License-Identifier: GPL-3.0-or-later
// The fleet walk's input and a span's rows as bytes, for MPI messages between ranks
// (distributed_run.hpp; format: byte_codec.hpp). Rank 0 sends the walk to every rank
// once, then spans as tasks; each span comes back as its RolloutStep rows.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fleet_walk.hpp"
#include "rollout_sim.hpp"

namespace dnsarena::sim::fleet {

std::string encode_walk(const FleetWalk& walk);
FleetWalk decode_walk(const std::string& bytes);  // throws std::runtime_error

struct SpanTask {
  std::int64_t first = 0, end = 0;  // steps [first, end)
};
std::string encode_span(const SpanTask& span);
SpanTask decode_span(const std::string& bytes);  // throws std::runtime_error

std::string encode_steps(const RolloutStep* steps, std::size_t count);
std::vector<RolloutStep> decode_steps(const std::string& bytes);  // throws std::runtime_error

}  // namespace dnsarena::sim::fleet
