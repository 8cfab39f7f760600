// SPDX-License-Identifier: GPL-3.0-or-later
// RuleSet -> image (policy_image.hpp): header, slot table, records. Linear in the rules:
// one pass to size, one to write records and place slots.
#pragma once
#include <cstdint>
#include <vector>

#include "policy/rule_set.hpp"

namespace dnsarena::policy {

// Throws PolicyError when a rule's local data does not fit a record (over 65535 bytes).
std::vector<std::uint8_t> compile_policy(const RuleSet& rules);

// Slots for `rules` triggers: a power of two, the load at most 3/4 (at least 16).
std::uint32_t slot_count_for(std::size_t rules);
// Filter words for `rules` triggers: a power of two, 16 to 32 bits per trigger (at least 1).
std::uint32_t filter_words_for(std::size_t rules);

}  // namespace dnsarena::policy
