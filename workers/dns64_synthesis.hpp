// SPDX-License-Identifier: GPL-3.0-or-later
// The answers DNS64 synthesizes (dns64.hpp), as cache entries under the client's key with
// the DNS64 flag: the query path inserts them and writes the client's answer from them
// like any fetched answer (so the client's ID, case, EDNS, options and size limit apply).
//
//   aaaa_from_a    from the answer the pipeline wrote for `NAME A` (a hit, stale, or the
//                  upstream's): every A record becomes the AAAA record of its address
//                  under the prefix (RFC 6052), TTL min(A TTL, the AAAA NODATA's SOA cap:
//                  RFC 6147 5.1.7); the CNAME and DNAME records of the chain are kept
//                  (the A and AAAA questions share one chain), as are the rcode and the
//                  authority section of a negative A answer (NXDOMAIN or NODATA: the
//                  client's AAAA question gets the same); DNSSEC records are dropped (a
//                  synthesized answer is not signed data, and never has AD)
//   ptr_from_ipv4  from the answer written for `d.c.b.a.in-addr.arpa PTR`: its records,
//                  the ones owned by the in-addr.arpa name now owned by the client's
//                  ip6.arpa name (as Unbound answers: the IPv4 PTR data under the IPv6
//                  name), authority and rcode kept, DNSSEC records dropped
//   as_is          the real AAAA answer a DNS64 client got (AAAA records outside the
//                  exclude ranges, or NXDOMAIN), every record and AD as written, so that
//                  the client's next hit is one lookup of its own key, not a miss of it
//                  and then the real entry (twice the instructions per hit,
//                  bench/dns64_hit_instructions.sh); one more entry per such name
//
// The message is read back with the upstream parser (upstream_answer.hpp: one libknot
// parse, names decompressed, the chain and the authority selected as for an upstream's
// reply), so what is cached is what an upstream answer of that shape would cache. A
// message the parser refuses (SERVFAIL, REFUSED, FORMERR) gives no entry: the caller
// answers SERVFAIL. A truncated message (the A answer did not fit the client's limit)
// gives none either: its AAAA answer would not fit.
//
// Costs: one parse and one encode per synthesized miss, reusing this object's vectors;
// a later client finds the entry in the cache (a hit costs what any hit costs).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cache/entry_codec.hpp"
#include "dns/client_query.hpp"
#include "workers/dns64.hpp"
#include "workers/upstream_answer.hpp"

namespace dnsarena::workers {

class Dns64Synthesizer {
public:
  enum class Kind { aaaa_from_a, ptr_from_ipv4, as_is };

  // The entry for `key` from msg[0, n), the answer the pipeline wrote for `asked` (the A
  // or in-addr.arpa PTR question). Returns the entry's length (entry()), 0 for none.
  std::size_t build(Kind kind, const Dns64Prefix& prefix, const dns::ClientQuery& asked, const std::uint8_t* msg,
                    std::size_t n, std::uint32_t ttl_cap, const cache::CacheKey& key, std::uint32_t now,
                    const TtlPolicy& ttl);
  // The last built entry, padded (Cache::insert_encoded's input).
  std::span<const std::uint8_t> entry() const { return entry_; }
  // Whether the cache may keep it (upstream_answer.hpp: cacheable).
  bool cacheable() const { return cacheable_; }

private:
  // The aaaa_from_a or ptr_from_ipv4 answer from `in`; its records in records_ and addresses_.
  cache::Answer rewritten(Kind kind, const Dns64Prefix& prefix, const cache::Answer& in, std::uint32_t ttl_cap);

  UpstreamAnswer parsed_;
  std::vector<cache::RecordData> records_[3];
  std::vector<std::array<std::uint8_t, 16>> addresses_;
  std::vector<std::uint8_t> entry_;
  bool cacheable_ = false;
};

}  // namespace dnsarena::workers
