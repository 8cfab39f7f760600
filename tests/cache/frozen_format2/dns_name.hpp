// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/dns_name.hpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Helpers for DNS names in uncompressed wire form (length-prefixed labels, root at end).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace dnsarena::frozen2 {

inline constexpr std::size_t kMaxNameWire = 255;

// Length of the wire name at the start of `bytes`, or 0 if it is not a valid uncompressed
// name (label > 63, total > 255, runs past the end, or contains a compression pointer).
std::size_t wire_name_length(std::span<const std::uint8_t> bytes);

inline std::uint8_t ascii_lower(std::uint8_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// Copies a valid wire name lowercased. REQUIRES: dst has src.size() bytes.
void lowercase_copy(std::uint8_t* dst, std::span<const std::uint8_t> src);

// Case-insensitive equality of two wire names of the same length.
bool wire_names_equal_ci(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

// "www.example.com" or "www.example.com." -> wire form. Throws std::invalid_argument.
std::basic_string<std::uint8_t> name_to_wire(std::string_view text);
// Wire form -> dotted text with a trailing dot ("." for the root).
std::string wire_to_text(std::span<const std::uint8_t> wire);

}  // namespace dnsarena::frozen2
