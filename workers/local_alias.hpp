// SPDX-License-Identifier: GPL-3.0-or-later
// A CNAME in the policy's local data, followed (as Unbound follows a local-data CNAME in a
// redirect zone, in every zone type here): the client that asked `alias.example. A` and
// matched `alias.example. CNAME www.example.net.` gets the local CNAME, then the answer
// for `www.example.net. A` as the query path finds it (a fresh hit, stale by the usual
// rules, else the upstream), with the target's rcode and authority section (an NXDOMAIN's
// SOA), in the client's ID, case and EDNS.
//
//   LocalAlias          the client's question and the local CNAME records that lead from
//                       it to the name resolved, uncompressed; a client waiting for the
//                       upstream carries it in its Waiter (shared: a Waiter is copied)
//   first_local_cname   the CNAME a policy answer holds (write_policy_answer's layout)
//   write_alias_answer  the final message: the client's question, the CNAME records, then
//                       every record of the target's message (answer, authority,
//                       additional, its OPT last) re-written
//
// Composition: the target's message is written by the pipeline's writers for the target's
// question, so its names are compressed against that message (pointers to its question
// and to its own records). They are read back decompressed and written again through a
// NameCompressor (wire/name_compressor.hpp) in the final message: the owners and the names
// of the types the writer compresses (NS, CNAME, PTR, MX, SOA), every other rdata copied
// as it is (the writer never compresses it). Cost: one pass over the target's records,
// each name decompressed (at most 255 bytes) and compressed again against at most 48
// earlier names, about what writing the answer from the cache costs; no allocation. The
// answer stays as small as a server's, so a client at 512 or 1232 bytes gets what fits.
// Over the client's limit (or the target's answer truncated) the answer is sent empty with
// TC (the OPT kept).
//
// A target is looked up in the policy first: a name with local data (or any other rule) is
// answered by it, another local CNAME followed in turn. Unbound resolves a local alias's
// target by its iterator alone, so a local chain ends after one CNAME there (the upstream's
// answer for the second name). Bound: at most kMaxLocalCnames local CNAMEs are followed.
// Each costs one policy lookup and one record in the prefix (a waiting client holds them,
// at most 8 x 520 bytes): 8 bounds both, is more than any real chain of local aliases,
// and ends a loop (a -> b -> a), answered SERVFAIL, as a resolver answers a CNAME loop.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dns/client_query.hpp"

namespace dnsarena::workers {

inline constexpr unsigned kMaxLocalCnames = 8;

struct LocalAlias {
  dns::ClientQuery client;             // the question asked, in the client's case
  std::vector<std::uint8_t> records;   // the CNAME records, owners and targets in full
  unsigned count = 0;
  // The target's answer is checked by the response policy (its own CNAME chain and
  // addresses; policy_gate.hpp): false when the target was exempted by a PASSTHRU rule.
  bool check_target = true;

  // Appends `owner` CNAME `target` with `ttl` (both uncompressed wire names).
  void add(std::span<const std::uint8_t> owner, std::uint32_t ttl, std::span<const std::uint8_t> target);
};

// Whether a local CNAME is followed for `q`: not when the client asks for the CNAME itself
// or for ANY (the record alone answers, as in Unbound).
bool follows_local_cname(const dns::ClientQuery& q);

struct LocalCname {
  bool found = false;
  std::uint32_t ttl = 0;
  std::uint8_t target[255];
  std::size_t target_len = 0;
};
// The CNAME that is the first answer record of msg[0, n) (a policy answer), decompressed.
LocalCname first_local_cname(const std::uint8_t* msg, std::size_t n);

// The final answer (above) in dst from the target's message src[0, sn); returns its size,
// 0 when src is not a message this can read or dst's `cap` is too small. REQUIRES: src
// and dst do not overlap; limit <= cap.
std::size_t write_alias_answer(const LocalAlias& alias, const std::uint8_t* src, std::size_t sn, std::uint8_t* dst,
                               std::size_t limit, std::size_t cap);

}  // namespace dnsarena::workers
