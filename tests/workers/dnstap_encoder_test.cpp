// SPDX-License-Identifier: GPL-3.0-or-later
// serve's dnstap encoder (workers/dnstap_encoder.hpp) against the reference: what it
// writes is decoded by the unpacker protoc-c generates from dnstap.proto, and every
// field must come back as written, including lengths and values that take several varint
// bytes and the largest DNS message.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "dnstap.pb-c.h"
#include "workers/dnstap_encoder.hpp"

using namespace dnsarena::workers::dnstap_wire;

namespace {

std::vector<std::uint8_t> filled(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

bool same(const ProtobufCBinaryData& d, const std::vector<std::uint8_t>& v) {
  return d.len == v.size() && std::equal(v.begin(), v.end(), d.data);
}

}  // namespace

TEST_CASE("dnstap encoder: every field decodes with protoc-c's unpacker", "[dnstap]") {
  for (const std::size_t message_size : {std::size_t{0}, std::size_t{12}, std::size_t{127}, std::size_t{128},
                                         std::size_t{300}, std::size_t{16384}, std::size_t{65535}}) {
    CAPTURE(message_size);
    const std::vector<std::uint8_t> identity = filled(200, 1), version = filled(3, 9);
    const std::vector<std::uint8_t> client = filled(16, 3), server = filled(4, 5), zone = filled(13, 11);
    const std::vector<std::uint8_t> query = filled(message_size, 17), response = filled(message_size / 2 + 1, 23);
    std::vector<std::uint8_t> header(2 * (identity.size() + version.size()) + 32);
    Writer h(header.data());
    h.bytes_field(dnstap_field::identity, identity);
    h.bytes_field(dnstap_field::version, version);
    header.resize(h.size());
    std::vector<std::uint8_t> body(2 * (query.size() + response.size()) + 256);
    Writer m(body.data());
    m.uint_field(message_field::type, static_cast<std::uint64_t>(MessageType::forwarder_response));
    m.uint_field(message_field::socket_protocol, static_cast<std::uint64_t>(SocketProtocol::tcp));
    m.uint_field(message_field::socket_family, static_cast<std::uint64_t>(SocketFamily::inet6));
    m.bytes_field(message_field::query_address, client);
    m.uint_field(message_field::query_port, 65535);
    m.bytes_field(message_field::response_address, server);
    m.uint_field(message_field::response_port, 53);
    m.bytes_field(message_field::query_zone, zone);
    m.uint_field(message_field::query_time_sec, 1'790'000'000'000ull);  // more than 32 bits
    m.fixed32_field(message_field::query_time_nsec, 999'999'999);
    m.bytes_field(message_field::query_message, query);
    m.uint_field(message_field::response_time_sec, 1);
    m.fixed32_field(message_field::response_time_nsec, 0);
    m.bytes_field(message_field::response_message, response);
    body.resize(m.size());
    std::vector<std::uint8_t> frame(frame_size(header, body));
    write_frame(header, body, frame.data());

    Dnstap__Dnstap* d = dnstap__dnstap__unpack(nullptr, frame.size(), frame.data());
    REQUIRE(d != nullptr);
    CHECK(d->type == DNSTAP__DNSTAP__TYPE__MESSAGE);
    CHECK((d->has_identity && same(d->identity, identity)));
    CHECK((d->has_version && same(d->version, version)));
    REQUIRE(d->message != nullptr);
    const Dnstap__Message& g = *d->message;
    CHECK(g.type == DNSTAP__MESSAGE__TYPE__FORWARDER_RESPONSE);
    CHECK((g.has_socket_protocol && g.socket_protocol == DNSTAP__SOCKET_PROTOCOL__TCP));
    CHECK((g.has_socket_family && g.socket_family == DNSTAP__SOCKET_FAMILY__INET6));
    CHECK((g.has_query_address && same(g.query_address, client)));
    CHECK((g.has_query_port && g.query_port == 65535));
    CHECK((g.has_response_address && same(g.response_address, server)));
    CHECK((g.has_response_port && g.response_port == 53));
    CHECK((g.has_query_zone && same(g.query_zone, zone)));
    CHECK((g.has_query_time_sec && g.query_time_sec == 1'790'000'000'000ull));
    CHECK((g.has_query_time_nsec && g.query_time_nsec == 999'999'999));
    CHECK((g.has_query_message && same(g.query_message, query)));
    CHECK((g.has_response_time_sec && g.response_time_sec == 1));
    CHECK((g.has_response_time_nsec && g.response_time_nsec == 0));
    CHECK((g.has_response_message && same(g.response_message, response)));
    dnstap__dnstap__free_unpacked(d, nullptr);
  }
}

TEST_CASE("dnstap encoder: varint sizes at each 7-bit boundary", "[dnstap]") {
  for (const std::uint64_t v : {0ull, 127ull, 128ull, 16383ull, 16384ull, (1ull << 35) - 1, ~0ull}) {
    std::uint8_t buf[kMaxVarint];
    Writer w(buf);
    w.varint(v);
    CHECK(w.size() == varint_size(v));
  }
  CHECK(varint_size(~0ull) == kMaxVarint);
}
