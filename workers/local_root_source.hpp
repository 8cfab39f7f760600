// SPDX-License-Identifier: GPL-3.0-or-later
// Where the local root copy comes from (recursion_config.hpp): the strict reader of
// recursion.local_root_from (the primaries serve keeps the copy fresh from, by zone
// transfer: local_root_updater.hpp) and local_root_refresh_min_s, and the one rule that
// changes at start with them: a local_root file that does not exist yet is no error (the
// first transfer writes it; until then the root servers are asked), while a file that
// exists and does not load still is.
#pragma once
#include <string>

namespace dnsarena::common {
class MapReader;
}

namespace dnsarena::workers {

struct RecursionConfig;

// Reads local_root_from (a list of "ADDRESS[@PORT]", port 53 by default, no address
// twice, at most RecursionConfig::kMaxLocalRootPrimaries) and local_root_refresh_min_s
// into `c`. Throws ConfigError at the bad key or entry.
void read_local_root_from(common::MapReader& s, RecursionConfig& c);

// True when `path` does not exist (ENOENT): with local_root_from, serve starts without a
// copy and the first transfer writes it.
bool local_root_missing(const std::string& path);

}  // namespace dnsarena::workers
