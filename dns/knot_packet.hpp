// SPDX-License-Identifier: GPL-3.0-or-later
// libknot, the one DNS parser of the project: its C headers (which carry no extern "C"
// guards, see /work/shared/DEPS.md), an owning pointer to a parsed packet, parsing in
// place, and reading the ECS option out of a parsed packet.
//
// Purpose: every untrusted message (client queries in workers/, upstream answers, the
// synthetic upstream's and load client's messages, the tests' independent reading of our
// responses) goes through parse_in_place, so they all accept and refuse the same bytes.
//
// Costs: knot_pkt_new allocates one knot_pkt_t per message (libknot's own allocator);
// knot_pkt_parse is one pass over the message and decompresses names into that
// allocation. The wire bytes are not copied: they must outlive the packet.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>  // libknot/xdp headers use memset without including <string.h>
#include <memory>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
extern "C" {
#include <libknot/libknot.h>
}
#pragma GCC diagnostic pop

#include "dns/ecs_option.hpp"
#include "dns/server_cookie.hpp"

namespace dnsarena::dns {

struct KnotPktFree {
  void operator()(knot_pkt_t* p) const { knot_pkt_free(p); }
};
using KnotPkt = std::unique_ptr<knot_pkt_t, KnotPktFree>;

struct KnotParse {
  KnotPkt pkt;          // nullptr: not even a packet (over 65535 bytes, or no memory)
  int rc = KNOT_EINVAL; // knot_pkt_parse's result: KNOT_EOK, KNOT_ETRAIL (bytes after
                        // the last record), KNOT_EMALF, ...
};

// Parses `len` bytes at `wire` with knot_pkt_parse(flags). libknot keeps pointers into
// `wire` and may write to it; the caller keeps it alive and unchanged while pkt lives.
// flags: 0, or KNOT_PF_NOCANON (names as written instead of lowercased).
KnotParse parse_in_place(std::uint8_t* wire, std::size_t len, unsigned flags = 0);

enum class EcsRead {
  absent,     // no ECS option in the OPT record (or no OPT record)
  ok,         // `out` filled: family 1 or 2, prefixes within the family's width, address
              // bits past the source prefix zero
  malformed,  // an ECS option libknot refuses (unknown family, a source or scope prefix
              // longer than the family's width, too short); `out` is unchanged
};
// The ECS option of a parsed packet (libknot's index of EDNS options: with two ECS
// options, the last one).
EcsRead read_ecs_option(const knot_pkt_t* pkt, EcsOption& out);

// The COOKIE option of a parsed packet (the last one), copied into `out` when its length
// is one RFC 7873 allows (cookie_length_ok). Returns false for any other length (`out`
// unchanged), true otherwise (out.len 0 when there is none).
bool read_cookie_option(const knot_pkt_t* pkt, Cookie& out);

}  // namespace dnsarena::dns
