// SPDX-License-Identifier: GPL-3.0-or-later
// Breaks the dependency rule on purpose: workers/ may not include sim/fleet/.
// Only read by tests/structure (dependency_rule_rejects_an_include); never compiled.
#include "sim/fleet/fleet_config.hpp"
