// SPDX-License-Identifier: GPL-3.0-or-later
// Curve jobs and curves as bytes, for MPI messages between ranks (distributed_run.hpp).
//
// Format: fields in declaration order, native byte order and float formats (every rank
// runs the same build on the same architecture: the bytes of a float are its value, so a
// curve computed on rank 3 is bit-identical on rank 0), strings and vectors prefixed by
// a u64 length. A message that ends early or has bytes left over is an error.
#pragma once
#include <string>

#include "cache_curve.hpp"
#include "curve_job.hpp"

namespace dnsarena::sim::fleet {

std::string encode_job(const CurveJob& job);
CurveJob decode_job(const std::string& bytes);  // throws std::runtime_error
std::string encode_curve(const OccupancyCurve& curve);
OccupancyCurve decode_curve(const std::string& bytes);  // throws std::runtime_error

}  // namespace dnsarena::sim::fleet
