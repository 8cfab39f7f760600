// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/recursion_config.hpp"

#include <stdexcept>

#include "recursion/delegation.hpp"
#include "workers/local_root.hpp"
#include "workers/local_root_source.hpp"

namespace dnsarena::workers {

void RecursionConfig::read(common::MapReader& s, const dnssec::TrustAnchors* anchors) {
  enabled = s.boolean_or("enabled", enabled);
  root_hints = s.text_or("root_hints", root_hints);
  max_in_flight = static_cast<unsigned>(s.integer_or("max_in_flight", max_in_flight, 1, 65536));
  attempt_timeout_ms = static_cast<unsigned>(s.integer_or("attempt_timeout_ms", attempt_timeout_ms, 10, 60000));
  max_queries = static_cast<unsigned>(s.integer_or("max_queries", max_queries, 1, 256));
  max_queries_per_server =
      static_cast<unsigned>(s.integer_or("max_queries_per_server", max_queries_per_server, 0, 1000000));
  qname_minimisation = s.boolean_or("qname_minimisation", qname_minimisation);
  local_root = s.text_or("local_root", local_root);
  try {
    local_root_zonemd = parse_zonemd_check(s.text_or("local_root_zonemd", "verify"));
  } catch (const std::invalid_argument& e) {
    s.fail("local_root_zonemd", e.what());
  }
  read_local_root_from(s, *this);
  local_root_zone.reset();
  if (local_root.empty() || (!local_root_from.empty() && local_root_missing(local_root))) return;
  try {
    local_root_zone = LocalRoot::load(local_root, local_root_zonemd, anchors);
  } catch (const std::runtime_error& e) {
    s.fail("local_root", e.what());
  }
}

void RecursionConfig::validate(bool has_root_upstreams) const {
  if (!enabled && !local_root.empty())
    throw std::invalid_argument("recursion.local_root: needs recursion.enabled (only the recursive resolver asks the root)");
  if (!local_root_from.empty() && local_root.empty())
    throw std::invalid_argument("recursion.local_root_from: needs recursion.local_root (the file the copy is kept in)");
  if (!enabled) return;
  if (has_root_upstreams)
    throw std::invalid_argument("recursion.enabled: `upstreams` forwards every name; with recursion, forward "
                                "only some zones (forward_zones)");
  if (root_hints.empty()) throw std::invalid_argument("recursion.root_hints: needed with recursion.enabled");
  try {
    recursion::read_root_hints(root_hints);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(std::string("recursion.root_hints: ") + e.what());
  }
}

}  // namespace dnsarena::workers
