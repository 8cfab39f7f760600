// SPDX-License-Identifier: GPL-3.0-or-later
// What a DNS64 client's query carries through the query path while its answer is being
// built (query_pipeline_dns64.cpp): the step whose answer comes next, the client's own
// question, and what the earlier step decided. A client waiting for the upstream holds
// it in its Waiter (upstream_client.hpp; shared, as a Waiter is copied); nullptr there
// means an ordinary client.
//
// Steps (RFC 6147):
//   aaaa   the real AAAA question (its answer decides: kept, or the A step)
//   a      NAME A, whose answer becomes the synthesized AAAA answer
//   ptr    d.c.b.a.in-addr.arpa PTR for a PTR question under the prefix (5.3.1)
//
// Cost and bounds: one allocation per step of a DNS64 miss (sizeof(Dns64Wait), about
// 400 bytes), held while its client waits, so bounded as the waiting clients are
// (upstream_max_in_flight, 64 clients a query, per worker). A DNS64 client's AAAA miss
// costs at most two upstream queries (AAAA, then A) under the same in-flight and
// per-name bounds as any, and up to three entries (the real AAAA, the A, the
// synthesized or copied AAAA), evicted as any.
#pragma once
#include <cstdint>

#include "dns/client_query.hpp"
#include "workers/query_check.hpp"

namespace dnsarena::workers {

struct Dns64Wait {
  enum class Step : std::uint8_t { aaaa, a, ptr };
  Step step = Step::aaaa;
  dns::ClientQuery client;   // the client's question (AAAA or PTR), its ID, case and EDNS
  CheckedQuery checked;      // its check stage's parameters, the DNS64 key flag removed
  std::uint8_t key_flags = 0;  // the synthesized entry's key flags (with cache::kKeyDns64)
  std::uint32_t ttl_cap = UINT32_MAX;  // from the AAAA NODATA's SOA (dns64.hpp)
  std::uint64_t arrived_us = 0;  // when the client's query came
};

}  // namespace dnsarena::workers
