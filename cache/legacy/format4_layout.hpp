// SPDX-License-Identifier: GPL-3.0-or-later
// Format 4 (commit ff9406f up to the DNSSEC verdict in the entry): what a reader needs
// that differs from the current format. FORMAT-DEPENDENT. Frozen: never edit a released
// format's description.
//
// Segment, StatSlot (512 bytes), index slot, region descriptors and key blobs: as in
// format 5.
//
// Entry info byte (offset 2):
//
//   |7|6|5 |4 |3 2 1 0|
//   |0|0|AD|WC| rcode |   bits 6-7 zero (format 5: the DNSSEC verdict, 0 = not validated)
//
// A format 4 entry therefore reads in format 5 as an entry cached without validation,
// which is what it is: the migration copies its bytes unchanged.
#pragma once
#include "format_traits.hpp"

namespace dnsarena::cache::legacy {

inline constexpr FormatTraits kFormat4{4, 512, 16, 0xFFFF};

}  // namespace dnsarena::cache::legacy
