// SPDX-License-Identifier: GPL-3.0-or-later
// Breaks the dependency rule on purpose: admin/ (operator commands such as `check`) may
// not include workers/ (serving). Only read by tests/structure
// (dependency_rule_rejects_an_admin_include); never compiled.
#include "workers/serve_config.hpp"
