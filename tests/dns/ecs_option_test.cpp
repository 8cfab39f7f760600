// SPDX-License-Identifier: GPL-3.0-or-later
// The ECS option and prefix masking (wire/address_prefix.hpp, dns/ecs_option.hpp).
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <vector>

#include "dns/ecs_option.hpp"
#include "wire/address_prefix.hpp"

namespace dnsarena::dns {
namespace {

using namespace wire;

using Address = std::array<std::uint8_t, 16>;

Address all_ones() {
  Address a;
  a.fill(0xFF);
  return a;
}

// The reference: bit by bit.
Address masked_bitwise(const Address& a, unsigned prefix) {
  Address out{};
  for (unsigned b = 0; b < 128 && b < prefix; ++b)
    if (a[b / 8] & (0x80u >> (b % 8))) out[b / 8] |= static_cast<std::uint8_t>(0x80u >> (b % 8));
  return out;
}

TEST_CASE("clear_bits_past_prefix keeps exactly the prefix's bits", "[dns][ecs]") {
  SECTION("prefix 0 clears everything") {
    Address a = all_ones();
    wire::clear_bits_past_prefix(a, 0);
    CHECK(a == Address{});
  }
  SECTION("prefix 32 keeps an IPv4 address and clears the rest of the array") {
    Address a = all_ones();
    wire::clear_bits_past_prefix(a, 32);
    CHECK(a == Address{0xFF, 0xFF, 0xFF, 0xFF});
  }
  SECTION("prefix 128 keeps all of an IPv6 address") {
    Address a = all_ones();
    wire::clear_bits_past_prefix(a, 128);
    CHECK(a == all_ones());
  }
  SECTION("a prefix past the span's end changes nothing") {
    std::array<std::uint8_t, 4> v4{1, 2, 3, 4};
    wire::clear_bits_past_prefix(v4, 33);
    CHECK(v4 == std::array<std::uint8_t, 4>{1, 2, 3, 4});
  }
  SECTION("prefixes that are not multiples of 8") {
    Address a = all_ones();
    wire::clear_bits_past_prefix(a, 23);
    CHECK(a == Address{0xFF, 0xFF, 0xFE});
    a = all_ones();
    wire::clear_bits_past_prefix(a, 1);
    CHECK(a == Address{0x80});
    a = all_ones();
    wire::clear_bits_past_prefix(a, 57);
    CHECK(a == Address{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x80});
  }
  SECTION("every prefix 0..128 agrees with a bit-by-bit mask") {
    const Address pattern{0xA5, 0x5A, 0xFF, 0x0F, 0xF0, 0x81, 0x7E, 0xC3,
                          0x3C, 0x99, 0x66, 0x12, 0x34, 0x56, 0x78, 0x9A};
    for (unsigned prefix = 0; prefix <= 128; ++prefix) {
      Address a = pattern;
      wire::clear_bits_past_prefix(a, prefix);
      INFO("prefix " << prefix);
      CHECK(a == masked_bitwise(pattern, prefix));
    }
  }
}

TEST_CASE("cut_to_prefix shortens, never lengthens, and clears the scope", "[dns][ecs]") {
  EcsOption e;
  e.present = true;
  e.family = kEcsFamilyIpv4;
  e.source_prefix = 32;
  e.scope_prefix = 9;
  e.address = {192, 0, 2, 77};
  cut_to_prefix(e, 24);
  CHECK(e.source_prefix == 24);
  CHECK(e.scope_prefix == 0);
  CHECK(e.address == Address{192, 0, 2, 0});
  cut_to_prefix(e, 30);  // longer than what is left: stays /24
  CHECK(e.source_prefix == 24);
  CHECK(e.address == Address{192, 0, 2, 0});
  cut_to_prefix(e, 0);
  CHECK(e.source_prefix == 0);
  CHECK(e.address == Address{});
}

TEST_CASE("write_ecs_option writes the RFC 7871 layout with the address cut to the source", "[dns][ecs]") {
  EcsOption e;
  e.present = true;
  e.family = kEcsFamilyIpv6;
  e.source_prefix = 57;
  e.address = all_ones();  // bits past the source set on purpose: they must not be sent
  std::array<std::uint8_t, kMaxEcsOptionBytes + 4> out;
  out.fill(0xEE);
  const std::size_t n = write_ecs_option(e, 5, out.data());
  REQUIRE(n == 8 + 8);
  const std::vector<std::uint8_t> want{0, 8, 0, 12, 0, 2, 57, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x80};
  CHECK(std::vector<std::uint8_t>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n)) == want);
  CHECK(out[n] == 0xEE);  // nothing written past the option

  e.source_prefix = 0;  // "do not use my address": no address bytes at all
  CHECK(write_ecs_option(e, 0, out.data()) == 8);
  CHECK(out[3] == 4);
  e.family = kEcsFamilyIpv4;
  e.source_prefix = 32;
  CHECK(write_ecs_option(e, 0, out.data()) == 12);
  CHECK(ecs_family_bits(kEcsFamilyIpv4) == 32);
  CHECK(ecs_family_bits(kEcsFamilyIpv6) == 128);
}

}  // namespace
}  // namespace dnsarena::dns
