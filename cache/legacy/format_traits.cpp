// SPDX-License-Identifier: GPL-3.0-or-later
// FORMAT-DEPENDENT: the list of formats a segment can be migrated from.
#include "format_traits.hpp"

#include "../format_version.hpp"
#include "../index_slot.hpp"
#include "../stat_slots.hpp"
#include "format2_layout.hpp"
#include "format3_layout.hpp"
#include "format4_layout.hpp"

namespace dnsarena::cache::legacy {

namespace {
constexpr FormatTraits kCurrent{kFormatVersion, sizeof(StatSlot), kGenTagShift, kGenTagMask};
static_assert(kFormatVersion == 5, "a format bump adds the replaced version's traits below (format_traits.hpp)");
}  // namespace

const FormatTraits* format_traits(std::uint32_t version) {
  switch (version) {
    case 2: return &kFormat2;
    case 3: return &kFormat3;
    case 4: return &kFormat4;
    case kFormatVersion: return &kCurrent;
    default: return nullptr;
  }
}

}  // namespace dnsarena::cache::legacy
