// SPDX-License-Identifier: GPL-3.0-or-later
// The supervisor's published JSON files (common/snapshot_file.hpp: the format and where
// they live), under the names the serving code uses.
#pragma once
#include "common/snapshot_file.hpp"

namespace dnsarena::workers {

using common::read_snapshot;
using common::snapshot_path;
using common::write_snapshot;

}  // namespace dnsarena::workers
