// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's one step into the response policy (policy/): after a query is checked and
// before the cache is asked. A name no rule matches costs the lookup alone (policy_view.hpp)
// and goes on as without policy; a match is counted and, unless PASSTHRU, answered here,
// never from or into the cache.
//
// The image is the supervisor's sealed mapping, inherited at fork (policy/sealed_image.hpp):
// a reload compiles a new one and the workers forked for the new config get it, while the
// retiring ones finish on the old mapping, which the kernel frees with the last of them.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cache/cache.hpp"
#include "dns/client_query.hpp"
#include "policy/policy_view.hpp"

namespace dnsarena::workers {

class DnstapWriter;  // dnstap_writer.hpp

// True when the policy decided the query: `size` is the answer's size (0: no answer).
// False: no rule, or PASSTHRU; the query goes on to the cache. An answer written is
// marked for dnstap (`tap`, nullptr: off) as a policy answer.
bool apply_policy(const policy::PolicyView& view, const dns::ClientQuery& q, std::size_t limit, std::uint8_t* out,
                  std::size_t cap, cache::Cache& cache, std::size_t& size, DnstapWriter* tap = nullptr);

}  // namespace dnsarena::workers
