// SPDX-License-Identifier: GPL-3.0-or-later
// dns::read_tcp_keepalive (dns/opt_record.hpp): the server's edns-tcp-keepalive TIMEOUT
// found past compressed names and other options, and -1 for every message that has none
// or cannot be walked; find_edns_option, the walk it is made of, for any option.
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "dns/opt_record.hpp"

using dnsarena::dns::read_tcp_keepalive;

namespace {

using Bytes = std::vector<std::uint8_t>;

// A response to www.example. A with one answer (its owner a pointer to the question) and,
// in the additional section, an OPT record with `options`.
Bytes response(const Bytes& options, bool with_opt = true) {
  Bytes m{0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, static_cast<std::uint8_t>(with_opt ? 1 : 0)};
  const Bytes question{3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0, 1, 0, 1};
  const Bytes answer{0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0x0E, 0x10, 0, 4, 192, 0, 2, 1};
  m.insert(m.end(), question.begin(), question.end());
  m.insert(m.end(), answer.begin(), answer.end());
  if (with_opt) {
    const Bytes opt{0, 0, 41, 0x10, 0, 0, 0, 0, 0, static_cast<std::uint8_t>(options.size() >> 8),
                    static_cast<std::uint8_t>(options.size())};
    m.insert(m.end(), opt.begin(), opt.end());
    m.insert(m.end(), options.begin(), options.end());
  }
  return m;
}

const Bytes kCookie{0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};  // a client cookie, 8 bytes

}  // namespace

TEST_CASE("edns-tcp-keepalive: the server's TIMEOUT, after other options", "[dns][keepalive]") {
  CHECK(read_tcp_keepalive(response({0, 11, 0, 2, 0, 100})) == 100);
  Bytes both = kCookie;
  both.insert(both.end(), {0, 11, 0, 2, 0x01, 0x2C});
  CHECK(read_tcp_keepalive(response(both)) == 300);
  CHECK(read_tcp_keepalive(response({0, 11, 0, 2, 0, 0})) == 0);  // 0: close when idle
}

TEST_CASE("edns-tcp-keepalive: -1 without the option or for a message that cannot be walked", "[dns][keepalive]") {
  CHECK(read_tcp_keepalive(response({}, false)) == -1);   // no OPT record
  CHECK(read_tcp_keepalive(response(kCookie)) == -1);     // OPT without the option
  CHECK(read_tcp_keepalive(response({0, 11, 0, 0})) == -1);  // no TIMEOUT (a client's form)
  const Bytes good = response({0, 11, 0, 2, 0, 100});
  for (std::size_t cut = 0; cut < good.size(); ++cut)  // every truncation
    CHECK(read_tcp_keepalive({good.data(), cut}) == -1);
  Bytes overlong = good;
  overlong[overlong.size() - 3] = 9;  // the option's length runs past the record
  CHECK(read_tcp_keepalive(overlong) == -1);
  Bytes reserved = good;
  reserved[12] = 0x80;  // a label type no message may use
  CHECK(read_tcp_keepalive(reserved) == -1);
  // An OPT-typed record in the answer section is not the OPT record.
  Bytes misplaced = good;
  misplaced[7] = 2, misplaced[11] = 0;  // the OPT record counted as an answer, none additional
  CHECK(read_tcp_keepalive(misplaced) == -1);
}

TEST_CASE("find_edns_option: any option by code, its data, after other options", "[dns][keepalive]") {
  using dnsarena::dns::find_edns_option;
  Bytes both = kCookie;
  both.insert(both.end(), {0, 15, 0, 2, 0, 3});  // EDE 3, stale answer
  const Bytes m = response(both);
  std::span<const std::uint8_t> data;
  REQUIRE(find_edns_option(m, 15, &data));
  CHECK(Bytes(data.begin(), data.end()) == Bytes{0, 3});
  REQUIRE(find_edns_option(m, 10, &data));
  CHECK(data.size() == 8);
  CHECK_FALSE(find_edns_option(m, 11));
  CHECK_FALSE(find_edns_option(response({}, false), 15));
  for (std::size_t cut = 0; cut < m.size(); ++cut) CHECK_FALSE(find_edns_option({m.data(), cut}, 15));
}
