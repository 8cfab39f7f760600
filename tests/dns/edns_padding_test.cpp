// SPDX-License-Identifier: GPL-3.0-or-later
// EDNS Padding of responses (dns/edns_padding.hpp): block-aligned sizes, the option's
// bytes, the OPT record's RDLENGTH, records after the OPT kept, and the cases left alone.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "dns/edns_padding.hpp"

using dnsarena::dns::pad_response;

namespace {

void put16(std::vector<std::uint8_t>& m, unsigned v) {
  m.push_back(static_cast<std::uint8_t>(v >> 8));
  m.push_back(static_cast<std::uint8_t>(v));
}

// A response for a.test. A with `answers` A records (the owner compressed) and, when
// `opt`, an OPT record (carrying `opt_data` bytes of an option 65001) placed before a
// last additional A record when `opt_not_last`.
std::vector<std::uint8_t> response(unsigned answers, bool opt, std::size_t opt_data = 0, bool opt_not_last = false) {
  std::vector<std::uint8_t> m{0x12, 0x34, 0x81, 0x80};
  put16(m, 1);
  put16(m, answers);
  put16(m, 0);
  put16(m, (opt ? 1 : 0) + (opt_not_last ? 1 : 0));
  for (int b : {1, int{'a'}, 4, int{'t'}, int{'e'}, int{'s'}, int{'t'}, 0}) m.push_back(static_cast<std::uint8_t>(b));
  put16(m, 1);
  put16(m, 1);
  auto a_record = [&](std::uint8_t last) {
    m.push_back(0xC0);
    m.push_back(12);
    put16(m, 1);
    put16(m, 1);
    put16(m, 0);
    put16(m, 300);
    put16(m, 4);
    for (int b : {192, 0, 2, int{last}}) m.push_back(static_cast<std::uint8_t>(b));
  };
  for (unsigned i = 0; i < answers; ++i) a_record(static_cast<std::uint8_t>(i));
  if (opt) {
    m.push_back(0);
    put16(m, 41);
    put16(m, 1232);
    put16(m, 0);
    put16(m, 0);
    put16(m, opt_data ? 4 + opt_data : 0);
    if (opt_data) {
      put16(m, 65001);
      put16(m, opt_data);
      m.insert(m.end(), opt_data, 0xAB);
    }
  }
  if (opt_not_last) a_record(99);
  return m;
}

}  // namespace

TEST_CASE("pad_response: sizes are multiples of the block, the option is zeros and RDLENGTH grows by it",
          "[dns][padding]") {
  for (unsigned answers : {0u, 1u, 5u, 40u}) {
    const std::vector<std::uint8_t> m = response(answers, true);
    std::vector<std::uint8_t> out(65535);
    const std::size_t n = pad_response(m, 468, out.data(), out.size());
    INFO("answers " << answers << " size " << m.size());
    REQUIRE(n > 0);
    CHECK(n % 468 == 0);
    CHECK(n >= m.size() + 4);
    CHECK(n < m.size() + 4 + 468);
    // The OPT is last: its RDLENGTH (offset m.size() - 2) now covers the option.
    const std::size_t pad = n - m.size() - 4;
    CHECK(((out[m.size() - 2] << 8) | out[m.size() - 1]) == static_cast<int>(4 + pad));
    CHECK(out[m.size()] == 0);
    CHECK(out[m.size() + 1] == 12);
    CHECK(((out[m.size() + 2] << 8) | out[m.size() + 3]) == static_cast<int>(pad));
    for (std::size_t i = m.size() + 4; i < n; ++i) REQUIRE(out[i] == 0);
    CHECK(std::equal(m.begin(), m.end() - 2, out.begin()));  // all else unchanged
  }
}

TEST_CASE("pad_response: an existing option is kept, a record after the OPT is moved intact", "[dns][padding]") {
  const std::vector<std::uint8_t> m = response(2, true, 10, true);
  std::vector<std::uint8_t> out(65535);
  const std::size_t n = pad_response(m, 468, out.data(), out.size());
  REQUIRE(n == 468);
  const std::size_t tail = 16;  // the last A record: pointer, type, class, TTL, RDLENGTH, 4 bytes
  CHECK(std::equal(m.end() - tail, m.end(), out.begin() + static_cast<long>(n - tail)));
  const std::size_t opt_rdlen_at = m.size() - tail - 14 - 2;  // before the 14-byte option
  CHECK(((out[opt_rdlen_at] << 8) | out[opt_rdlen_at + 1]) == static_cast<int>(14 + 4 + (n - m.size() - 4)));
  CHECK(out[opt_rdlen_at + 2 + 4] == 0xAB);  // the option that was there first
}

TEST_CASE("pad_response: no OPT, truncated input or no room leave the message alone", "[dns][padding]") {
  std::vector<std::uint8_t> out(65535);
  CHECK(pad_response(response(1, false), 468, out.data(), out.size()) == 0);
  std::vector<std::uint8_t> cut = response(1, true);
  cut.resize(cut.size() - 3);
  CHECK(pad_response(cut, 468, out.data(), out.size()) == 0);
  CHECK(pad_response(response(1, true), 468, out.data(), 467) == 0);
  CHECK(pad_response(std::vector<std::uint8_t>(5, 0), 468, out.data(), out.size()) == 0);
}
