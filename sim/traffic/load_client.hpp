// SPDX-License-Identifier: GPL-3.0-or-later
// The load client of `dnsarena-lab sim load`: a paced UDP query stream and what came back.
//
// Sending: query k of a QueryStream is sent at start + k / rate (open loop: a slow
// server does not slow the client down), round-robin over a few non-blocking UDP
// sockets; each socket owns 65536 query IDs, so sockets >= rate * timeout / 40000.
// Matching: a response is counted only when it arrives on the socket the query left
// from, with the query's ID, qname (case-insensitive) and qtype; anything else is
// counted as `unmatched`. A query with no matching response within `timeout` is lost.
// Latency is send-to-receive time of matched responses (microsecond clock).
// Waiting between sends uses ppoll with a microsecond timeout; a late client sends
// the backlog in bursts of at most 64, and reports the rate it achieved.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "dns/message.hpp"
#include "sim/traffic/query_stream.hpp"

namespace dnsarena::sim::traffic {

struct LoadOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  double rate = 1000;           // queries per second
  std::uint64_t queries = 0;    // total to send
  double timeout_s = 2.0;       // a query not answered within this is lost
  unsigned sockets = 4;
  bool edns = true;             // OPT with payload 1232 (always when ECS is sent)
  // When set, sees every matched response: query number, send-to-receive latency in
  // milliseconds and the parsed response with its records (valid only during the call).
  std::function<void(std::uint64_t k, double latency_ms, const dns::Message& response)> on_answer;
};

struct LoadResult {
  std::uint64_t sent = 0, answered = 0, lost = 0, unmatched = 0, send_errors = 0;
  std::uint64_t truncated = 0, nodata = 0, ecs_scoped = 0;
  std::map<std::uint16_t, std::uint64_t> rcodes;  // rcode -> responses
  double elapsed_s = 0;         // first send to last response or timeout
  double send_s = 0;            // first to last send
  double target_qps = 0;
  double latency_ms_p50 = 0, latency_ms_p90 = 0, latency_ms_p99 = 0, latency_ms_max = 0;

  double achieved_qps() const { return send_s > 0 ? static_cast<double>(sent) / send_s : 0; }
  nlohmann::json to_json() const;
  std::string table() const;
};

// Where query k comes from: a QueryStream, or any other deterministic sequence (the
// outage benchmark's warm-up asks every name once, its miss load fresh names only).
using QuerySource = std::function<void(std::uint64_t k, StreamQuery& out)>;

// Sends options.queries queries of `stream` (from query 0) and collects the results.
// Throws std::runtime_error when the sockets cannot be created or the host is invalid.
LoadResult run_load(const QueryStream& stream, const LoadOptions& options);
LoadResult run_load(const QuerySource& source, const LoadOptions& options);

// "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", or "RCODEn".
std::string rcode_name(std::uint16_t rcode);

}  // namespace dnsarena::sim::traffic
