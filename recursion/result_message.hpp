// SPDX-License-Identifier: GPL-3.0-or-later
// A finished resolution (iterative_resolution.hpp's Result) as a DNS response message, so
// that the serving worker takes it through the same acceptance, scrubbing, TTL policy and
// cache insertion as a forwarded answer (workers/upstream_answer.hpp).
//
// The message: ID 0, QR and RA set, RD as asked of us (set), the result's rcode, the
// question (the lowercase name asked), the answer section (the chain, then the data) and
// the authority section (a negative answer's SOA), every record uncompressed, in the
// order the result holds them, each set's RRSIGs (kept when the servers were asked with
// DO) right after its records, with the set's TTL: what a validator reads
// (workers/validation_jobs.hpp).
#pragma once
#include <cstdint>

#include "common/bytes.hpp"
#include "recursion/iterative_resolution.hpp"

namespace dnsarena::recursion {

// REQUIRES: qname a valid uncompressed wire name. The message may exceed 512 bytes
// (it is never sent over the network as such).
Bytes result_message(const Bytes& qname, std::uint16_t qtype, const Result& result);

}  // namespace dnsarena::recursion
