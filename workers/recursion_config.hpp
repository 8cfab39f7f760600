// SPDX-License-Identifier: GPL-3.0-or-later
// The `recursion:` section of serve's configuration: whether the workers resolve misses
// themselves from the root (recursive_client.hpp), from which root hints, within which
// bounds.
//
//   recursion: {enabled: false, root_hints: /usr/share/dns/root.hints, max_in_flight: 256,
//               attempt_timeout_ms: 400, max_queries: 32, max_queries_per_server: 1000,
//               qname_minimisation: true,
//               local_root: /var/lib/dnsarena/root.zone, local_root_zonemd: verify}
//
//   enabled             a miss that no forward zone covers is resolved by the worker
//                       (forward zones keep being forwarded); needs root_hints, and no
//                       `upstreams` (those forward the root zone, every name). With
//                       dnssec validation, its answers are validated as forwarded ones
//                       are (validation_jobs.hpp), DS and DNSKEY sets resolved likewise
//   root_hints          the root's NS names and addresses in zone-file syntax (Unbound
//                       root-hints, Knot Resolver hints.root_file); read at start, a file
//                       that does not read is a configuration error
//   max_in_flight       resolutions per worker at once (1 .. 65,536); past it a miss is
//                       answered as overloaded (stale, else SERVFAIL). Each holds at most
//                       one socket, so this is also the resolver's descriptor share
//   attempt_timeout_ms  one query to one authoritative not measured yet, and the least a
//                       measured one waits (its RTO otherwise; doubled per timeout in a
//                       row: authority_outcomes.hpp) (10 .. 60,000), then the next
//                       server (Unbound: its RTT-based timeout, 376 ms for an unknown server)
//   max_queries         authoritative queries per resolution, priming, glue lookups and
//                       chains included (1 .. 256; Unbound's max-sent-count is 32)
//   max_queries_per_server  queries per second to one authoritative address, from every
//                       worker together (0 .. 1,000,000; 0: no bound); past it the
//                       resolution tries the cut's next server (authority_rate.hpp).
//                       Unbound: ratelimit (per zone, off by default); BIND:
//                       fetches-per-server
//   qname_minimisation  RFC 9156 relaxed (Unbound qname-minimisation, kresd's default)
//   local_root          a root zone file (master format): the root servers' answers come
//                       from it, inside each worker, and no query goes to a root server
//                       while the copy is fresh (RFC 8806; local_root.hpp). Loaded with
//                       the config at start and reload: a file that does not parse, has
//                       no SOA or no NS at "." is a configuration error (a reload keeps
//                       the running copy). Unbound: auth-zone name "." with
//                       for-upstream: yes, for-downstream: no; Knot Resolver: prefill
//   local_root_zonemd   the copy's ZONEMD (RFC 8976; local_root_zonemd.hpp): verify (a
//                       ZONEMD that does not match refuses the copy, a copy without one
//                       loads), require (a copy without one is refused too), off; at start,
//                       reload and each local_root_from refresh. The load logs the
//                       verdict. With a dnssec.trust_anchor_file for the root, the
//                       ZONEMD's RRSIG must validate from it too. Unbound: zonemd-check,
//                       zonemd-reject-absence
//   local_root_from     [ADDRESS[@PORT], ...] (port 53 by default; at most
//                       kMaxLocalRootPrimaries): serve keeps local_root fresh by zone
//                       transfer from these primaries, in order (local_root_updater.hpp);
//                       needs local_root, the file the copy is kept in. A missing file at
//                       start is then no error: the root servers are asked until the
//                       first transfer lands. Unbound: auth-zone `primary:`
//   local_root_refresh_min_s  the least time between two refreshes (60; 1 .. 86,400):
//                       the SOA's refresh and retry are bounded to it .. 1 day (Knot DNS:
//                       refresh-min-interval, retry-min-interval)
//
// Unknown keys and out-of-range values are errors naming the file, line and key.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/yaml_reader.hpp"
#include "workers/local_root_zonemd.hpp"
#include "workers/rpz_transfer_config.hpp"  // XfrAddress

namespace dnsarena::workers {

class LocalRoot;

struct RecursionConfig {
  bool enabled = false;
  std::string root_hints;
  unsigned max_in_flight = 256;
  unsigned attempt_timeout_ms = 400;
  unsigned max_queries = 32;
  unsigned max_queries_per_server = 1000;  // per second, host-wide; 0: no bound
  bool qname_minimisation = true;
  std::string local_root;  // the file; empty: none
  ZonemdCheck local_root_zonemd = ZonemdCheck::verify;
  // The file's zone, loaded by read() (nullptr: no local_root). Read-only once loaded.
  std::shared_ptr<const LocalRoot> local_root_zone;
  std::vector<XfrAddress> local_root_from;  // empty: the operator keeps the file fresh
  unsigned local_root_refresh_min_s = 60;
  static constexpr std::size_t kMaxLocalRootPrimaries = 32;

  // Reads the section's keys (the caller rejects the unknown ones) and loads local_root
  // (a file that does not load fails the key; a missing one is fine with local_root_from);
  // `anchors` (may be null): the dnssec section's, which the local root's ZONEMD signature
  // must validate from.
  void read(common::MapReader& section, const dnssec::TrustAnchors* anchors = nullptr);
  // Throws std::invalid_argument when enabled without readable root hints, or beside
  // `upstreams` (has_root_upstreams), local_root without enabled, or local_root_from
  // without local_root.
  void validate(bool has_root_upstreams) const;
};

}  // namespace dnsarena::workers
