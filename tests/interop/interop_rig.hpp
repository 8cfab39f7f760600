// SPDX-License-Identifier: GPL-3.0-or-later
// The differential test's setup and its one query step.
//
// Rig: knotd serving the generated zones (knot_server.hpp) and `dnsarena serve`
// forwarding to it (two workers, a private segment removed at the end, a config file
// that sets the TTL floor to 0), plus the segment's upstream-query counter, read directly from the stat slots.
//
// ask(): one question in one query shape, asked of knotd once and of dnsarena twice
// (normally a miss, then a hit), each reply compared with knotd's (dns_compare.hpp);
// when any UDP reply has TC the same query goes over TCP to both and is compared too.
// The cache behaviour is judged from the upstream counter around the second query:
//   "not cached [<kind>]"              knotd's answer is complete and its answer and
//                                      authority records all have TTL > 2 s, yet the
//                                      second query went upstream
//   "TTL-0 answer served from cache"   knotd's answer or authority has a TTL 0 record (a
//                                      chain link, say), yet the second query did not
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "cache/segment.hpp"
#include "tests/interop/dns_compare.hpp"
#include "tests/interop/knot_server.hpp"
#include "tests/interop/mismatch_table.hpp"
#include "tests/interop/zone_generator.hpp"
#include "tests/workers/serve_harness.hpp"

namespace dnsarena::interop {

// DNSARENA_INTEROP_NAMES, DNSARENA_INTEROP_SEED...: `fallback` when unset.
unsigned env_unsigned(const char* name, unsigned fallback);

class Rig {
public:
  Rig(std::uint64_t seed, unsigned names);
  ~Rig();
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;

  const GeneratedZones& zones() const { return zones_; }
  KnotServer& knot() { return *knot_; }
  std::uint16_t port() const { return port_; }
  std::uint64_t upstream_queries() const;

  // Asks `q` in `shape` (see above) and adds what differs to `table`.
  void ask(const Question& q, const QueryShape& shape, MismatchTable& table);
  // One query to dnsarena (udp or tcp by shape), parsed.
  Reply query_dnsarena(const std::vector<std::uint8_t>& query, const QueryShape& shape) const;
  Reply query_knot(const std::vector<std::uint8_t>& query, const QueryShape& shape) const;
  std::mt19937_64& rng() { return rng_; }
  std::uint16_t next_id() { return ++id_; }

private:
  GeneratedZones zones_;
  std::unique_ptr<KnotServer> knot_;
  std::uint16_t port_ = 0;
  std::string segment_;
  std::unique_ptr<test::ServeProcess> serve_;
  std::unique_ptr<cache::Segment> seg_;
  std::mt19937_64 rng_;
  std::uint16_t id_ = 0;
};

// The seven UDP shapes of the main pass: no EDNS; EDNS 512, 1232, 4096 with DO off and on.
std::vector<QueryShape> udp_shapes();

}  // namespace dnsarena::interop
