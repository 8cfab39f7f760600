// SPDX-License-Identifier: GPL-3.0-or-later
// Finding an external program (kdig, dnsperf, unbound) on PATH at run time, so that a
// tool is needed only by the commands and tests that use it, not at configure time.
#pragma once
#include <optional>
#include <string>

namespace dnsarena::common {

// The full path of `name` in $PATH (the first executable match), or nullopt.
// A name containing '/' is returned as is when it is executable.
std::optional<std::string> find_program(const std::string& name);

// As find_program, then /usr/sbin/NAME: daemons (knotd, unbound, kresd) that a
// non-root PATH often lacks.
std::optional<std::string> find_daemon_program(const std::string& name);

// As find_program, but throws std::runtime_error naming the program, the PATH searched
// and `hint` (e.g. "install knot-dnsutils: .ci/install-deps") when it is absent.
std::string require_program(const std::string& name, const std::string& hint);

}  // namespace dnsarena::common
