// SPDX-License-Identifier: GPL-3.0-or-later
// An RPZ copy (rpz_copy_file.hpp) printed as a zone file, one record a line through
// libknot's record printer (the text knotc and kdig print): what `dnsarena policy export`
// shows operators, and what the same zone's libzscanner reading gives back record for record.
#pragma once
#include <cstdio>

#include "policy/rpz_copy_file.hpp"

namespace dnsarena::policy {

// Prints every record of `copy` not yet read to `out`, a comment line naming the zone
// first. Throws PolicyError when a record cannot be printed or `out` cannot be written.
void print_rpz_copy(RpzCopyReader& copy, std::FILE* out);

}  // namespace dnsarena::policy
