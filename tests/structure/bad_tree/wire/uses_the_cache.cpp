// SPDX-License-Identifier: GPL-3.0-or-later
// Breaks the dependency rule on purpose: wire/ (the bottom) may not include cache/, even
// by a path relative to this file. Only read by tests/structure
// (dependency_rule_rejects_a_relative_include); never compiled.
#include "../cache/cache_key.hpp"
