// SPDX-License-Identifier: GPL-3.0-or-later
// The OPT pseudo-record (RFC 6891) as this project writes it, in queries and in error
// responses alike:
//
//   offset size  field      (answers of the synthetic upstream use it too)
//   0      1     owner: the root (0)
//   1      2     type OPT (41)
//   3      2     class: the UDP payload we accept (1232)
//   5      1     extended rcode: the rcode's upper 8 bits (BADVERS 16 -> 1)
//   6      1     EDNS version (0)
//   7      2     flags: DO (0x8000) or 0
//   9      2     rdlength
//   11     n     the ECS option when present (ecs_option.hpp), else nothing
//
// Costs: straight-line byte writes, at most kOptRecordBytes + kMaxEcsOptionBytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "dns/ecs_option.hpp"

namespace dnsarena::dns {

// Writes the record above for `rcode` (only its bits past the header's four are
// written), `do_bit`, and the ECS option of `ecs` with scope `ecs_scope` when ecs.present
// (0 in queries, RFC 7871 6). Returns its size.
// REQUIRES: out has room for kOptRecordBytes + kMaxEcsOptionBytes (35) bytes.
std::size_t write_opt_record(std::uint16_t rcode, bool do_bit, const EcsOption& ecs, std::uint8_t ecs_scope,
                             std::uint8_t* out);

// The TIMEOUT of a response's edns-tcp-keepalive option (RFC 7828: how long the server
// keeps an idle connection open, in units of 100 ms), or -1 when the message has none,
// has it without a 2-byte TIMEOUT, or cannot be walked to its OPT record (truncated,
// a name running past the end). Names may be compressed; nothing is decompressed.
int read_tcp_keepalive(std::span<const std::uint8_t> message);

// Whether the message's OPT record holds an option of `code` (its data in *data when
// given); false as well when the message cannot be walked to its OPT record (as above).
bool find_edns_option(std::span<const std::uint8_t> message, std::uint16_t code,
                      std::span<const std::uint8_t>* data = nullptr);

}  // namespace dnsarena::dns
