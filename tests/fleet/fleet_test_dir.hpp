// SPDX-License-Identifier: GPL-3.0-or-later
// The folder of the fleet tests' files (data/, bad/, golden/), given by the build.
#pragma once
#include <string>

namespace dnsarena::test {

inline const std::string kFleetTestDir = DNSARENA_FLEET_TEST_DIR;

}  // namespace dnsarena::test
