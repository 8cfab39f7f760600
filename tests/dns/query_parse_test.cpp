// SPDX-License-Identifier: GPL-3.0-or-later
// Round trips through the one builder and the two parsers of dns/, and the verdicts on
// malformed input (the ones workers/ and sim/traffic/ gave before the layer existed).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "common/bytes.hpp"
#include "dns/client_query.hpp"
#include "dns/knot_packet.hpp"
#include "dns/message.hpp"
#include "dns/query_builder.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::dns {
namespace {

using namespace wire;

using Wire = std::vector<std::uint8_t>;

EcsOption v4_ecs(std::uint8_t source, std::array<std::uint8_t, 16> address) {
  EcsOption e;
  e.present = true;
  e.family = kEcsFamilyIpv4;
  e.source_prefix = source;
  e.address = address;
  return e;
}

Wire query_bytes(const QuerySpec& spec) {
  const common::Bytes b = build_query(spec);
  return Wire(b.begin(), b.end());
}

ParseVerdict verdict(Wire w, ClientQuery& q) { return parse_query(w.data(), w.size(), q); }
ParseVerdict verdict(Wire w) {
  ClientQuery q;
  return verdict(std::move(w), q);
}
ParseStatus status(const Wire& w) {
  Message m;
  return parse_message(w, m);
}

// Offsets into a query built for qname `n` bytes long: the OPT record, the ECS option.
std::size_t opt_at(const common::Bytes& qname) { return kHeaderBytes + qname.size() + 4; }
std::size_t ecs_at(const common::Bytes& qname) { return opt_at(qname) + kOptRecordBytes; }

const common::Bytes kName = wire::name_to_wire("Www.Example.COM");

TEST_CASE("write_query and build_query write the same bytes", "[dns][build]") {
  const QuerySpec spec{.id = 0xBEEF, .qname = kName, .qtype = kTypeAaaa, .cd = true, .do_bit = true,
                       .ecs = v4_ecs(24, {198, 51, 100, 0})};
  std::uint8_t buf[kMaxQueryBytes];
  const std::size_t n = write_query(spec, buf, sizeof buf);
  const common::Bytes b = build_query(spec);
  CHECK(common::Bytes(buf, n) == b);
  CHECK(write_query(spec, buf, 12 + kName.size() + 4 + 11 + 23) == 0);  // may not fit: not started
}

TEST_CASE("tcp_keepalive: an empty edns-tcp-keepalive option after the ECS option, counted in rdlength",
          "[dns][build]") {
  const QuerySpec plain{.id = 1, .qname = kName, .qtype = kTypeA, .ecs = v4_ecs(24, {198, 51, 100, 0})};
  QuerySpec kept = plain;
  kept.tcp_keepalive = true;
  const common::Bytes a = build_query(plain), b = build_query(kept);
  REQUIRE(b.size() == a.size() + 4);
  CHECK(common::Bytes(b.begin(), b.begin() + static_cast<long>(a.size())) != a);  // the rdlength differs
  CHECK(get16(b.data() + opt_at(kName) + 9) == get16(a.data() + opt_at(kName) + 9) + 4);
  CHECK(get16(b.data() + a.size()) == kOptionTcpKeepalive);
  CHECK(get16(b.data() + a.size() + 2) == 0);
  Message m;
  CHECK(parse_message(b, m) == ParseStatus::ok);
  // Without EDNS asked for, the option still brings its OPT record.
  const common::Bytes bare = build_query({.id = 2, .qname = kName, .qtype = kTypeA, .edns = false, .tcp_keepalive = true});
  CHECK(get16(bare.data() + 10) == 1);
  CHECK(get16(bare.data() + bare.size() - 4) == kOptionTcpKeepalive);
}

TEST_CASE("a built query parses back as the client query it describes", "[dns][build][parse]") {
  const QuerySpec spec{.id = 0x1234, .qname = kName, .qtype = kTypeTxt, .cd = true, .do_bit = true,
                       .ecs = v4_ecs(23, {10, 1, 3, 0})};
  ClientQuery q;
  REQUIRE(verdict(query_bytes(spec), q) == ParseVerdict::ok);
  CHECK(q.id == 0x1234);
  CHECK((q.flags & kFlagRd) != 0);
  CHECK(q.cd());
  CHECK(common::Bytes(q.qname().begin(), q.qname().end()) == kName);  // case as sent
  CHECK(q.qtype == kTypeTxt);
  CHECK(q.qclass == kClassIn);
  CHECK(q.edns);
  CHECK(q.do_bit);
  CHECK(q.udp_size == kEdnsPayload);
  REQUIRE(q.ecs.present);
  CHECK(q.ecs.family == kEcsFamilyIpv4);
  CHECK(q.ecs.source_prefix == 23);
  CHECK(q.ecs.scope_prefix == 0);
  CHECK(q.ecs.address == std::array<std::uint8_t, 16>{10, 1, 2, 0});  // bit 24 is past /23
}

TEST_CASE("a built query parses back as a whole message", "[dns][build][parse]") {
  for (const std::uint8_t source : {0, 8, 24, 32}) {
    const QuerySpec spec{.id = 7, .qname = kName, .qtype = kTypeA, .edns = false,
                         .ecs = v4_ecs(source, {203, 0, 113, 9})};
    Message m;
    REQUIRE(parse_message(query_bytes(spec), m) == ParseStatus::ok);
    INFO("source " << int(source));
    CHECK(m.id == 7);
    CHECK(!m.qr);
    CHECK(m.rd);
    CHECK(m.qname == kName);
    CHECK(m.qtype == kTypeA);
    CHECK(m.edns);  // an ECS option asks for an OPT even without `edns`
    CHECK(!m.do_bit);
    REQUIRE(m.ecs.present);
    CHECK(m.ecs.source_prefix == source);
    EcsOption want = v4_ecs(source, {203, 0, 113, 9});
    cut_to_prefix(want, source);
    CHECK(m.ecs.address == want.address);
  }
  SECTION("IPv6 /56 and /128") {
    for (const std::uint8_t source : {56, 128}) {
      EcsOption e;
      e.present = true;
      e.family = kEcsFamilyIpv6;
      e.source_prefix = source;
      e.address = {0x20, 0x01, 0x0d, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
      Message m;
      REQUIRE(parse_message(query_bytes({.id = 8, .qname = kName, .qtype = kTypeA, .ecs = e}), m) ==
              ParseStatus::ok);
      CHECK(m.ecs.family == kEcsFamilyIpv6);
      CHECK(m.ecs.source_prefix == source);
      cut_to_prefix(e, source);
      CHECK(m.ecs.address == e.address);
    }
  }
  SECTION("no EDNS asked: no OPT record") {
    Message m;
    const Wire w = query_bytes({.id = 9, .qname = kName, .qtype = kTypeA, .edns = false});
    REQUIRE(parse_message(w, m) == ParseStatus::ok);
    CHECK(!m.edns);
    CHECK(get16(w.data() + 10) == 0);
    CHECK(w.size() == kHeaderBytes + kName.size() + 4);
  }
}

TEST_CASE("malformed client queries get the verdicts they always got", "[dns][parse]") {
  const QuerySpec plain{.id = 1, .qname = kName, .qtype = kTypeA};
  const Wire good = query_bytes(plain);
  REQUIRE(verdict(good) == ParseVerdict::ok);

  SECTION("shorter than a header: dropped; header alone: FORMERR") {
    CHECK(verdict(Wire(good.begin(), good.begin() + 11)) == ParseVerdict::drop);
    CHECK(verdict(Wire(good.begin(), good.begin() + 12)) == ParseVerdict::formerr);
    CHECK(status(Wire(good.begin(), good.begin() + 11)) == ParseStatus::drop);
    CHECK(status(Wire(good.begin(), good.begin() + 12)) == ParseStatus::formerr);
  }
  SECTION("truncated in the question or the OPT record: FORMERR") {
    CHECK(verdict(Wire(good.begin(), good.begin() + 20)) == ParseVerdict::formerr);
    CHECK(verdict(Wire(good.begin(), good.end() - 1)) == ParseVerdict::formerr);
    CHECK(status(Wire(good.begin(), good.begin() + 20)) == ParseStatus::formerr);
  }
  SECTION("qdcount other than 1: FORMERR") {
    Wire w = good;
    put16(w.data() + 4, 0);
    CHECK(verdict(w) == ParseVerdict::formerr);
    CHECK(status(w) == ParseStatus::formerr);
    put16(w.data() + 4, 2);
    CHECK(verdict(w) == ParseVerdict::formerr);
    CHECK(status(w) == ParseStatus::formerr);
  }
  SECTION("a response is never answered") {
    Wire w = good;
    put16(w.data() + 2, static_cast<std::uint16_t>(get16(w.data() + 2) | kFlagQr));
    CHECK(verdict(w) == ParseVerdict::drop);
  }
  SECTION("opcode other than QUERY: NOTIMP, with the question kept") {
    Wire w = good;
    put16(w.data() + 2, static_cast<std::uint16_t>(get16(w.data() + 2) | (2u << 11)));
    ClientQuery q;
    CHECK(verdict(w, q) == ParseVerdict::notimp);
    CHECK(q.qname_len == kName.size());
  }
  SECTION("zone transfers and type 0: NOTIMP; class CH: REFUSED") {
    CHECK(verdict(query_bytes({.id = 1, .qname = kName, .qtype = kTypeAxfr})) == ParseVerdict::notimp);
    CHECK(verdict(query_bytes({.id = 1, .qname = kName, .qtype = kTypeIxfr})) == ParseVerdict::notimp);
    CHECK(verdict(query_bytes({.id = 1, .qname = kName, .qtype = 0})) == ParseVerdict::notimp);
    Wire w = good;
    put16(w.data() + kHeaderBytes + kName.size() + 2, 3);
    CHECK(verdict(w) == ParseVerdict::refused);
  }
  SECTION("EDNS version 1: BADVERS") {
    Wire w = good;
    w[opt_at(kName) + 6] = 1;
    CHECK(verdict(w) == ParseVerdict::badvers);
    Message m;
    REQUIRE(parse_message(w, m) == ParseStatus::ok);  // the simulator reads it and decides
    CHECK(m.edns_version == 1);
  }
  SECTION("bad ECS options: FORMERR from both parsers") {
    const Wire with_ecs = query_bytes({.id = 1, .qname = kName, .qtype = kTypeA, .ecs = v4_ecs(24, {10, 0, 0})});
    REQUIRE(verdict(with_ecs) == ParseVerdict::ok);
    const std::size_t at = ecs_at(kName);
    Wire w = with_ecs;
    put16(w.data() + at + 4, 3);  // family 3
    CHECK(verdict(w) == ParseVerdict::formerr);
    CHECK(status(w) == ParseStatus::formerr);
    w = with_ecs;
    w[at + 6] = 33;  // source /33 for IPv4
    CHECK(verdict(w) == ParseVerdict::formerr);
    CHECK(status(w) == ParseStatus::formerr);
    w = with_ecs;
    w[at + 7] = 24;  // a scope in a query (RFC 7871 7.1.1): the resolver refuses it
    CHECK(verdict(w) == ParseVerdict::formerr);
    Message m;
    CHECK(parse_message(w, m) == ParseStatus::ok);  // the simulator reads it
    CHECK(m.ecs.scope_prefix == 24);
  }
  SECTION("an answer record in a query: FORMERR for the resolver") {
    Wire w = good;
    put16(w.data() + 6, 1);
    CHECK(verdict(w) == ParseVerdict::formerr);
  }
}

TEST_CASE("read_ecs_option: absent, ok and malformed", "[dns][parse]") {
  for (const bool with_ecs : {false, true}) {
    Wire w = query_bytes({.id = 1, .qname = kName, .qtype = kTypeA, .ecs = v4_ecs(with_ecs ? 24 : 0, {})});
    if (!with_ecs) w = query_bytes({.id = 1, .qname = kName, .qtype = kTypeA});
    const auto [pkt, rc] = parse_in_place(w.data(), w.size());
    REQUIRE(pkt);
    REQUIRE(rc == KNOT_EOK);
    EcsOption e;
    CHECK(read_ecs_option(pkt.get(), e) == (with_ecs ? EcsRead::ok : EcsRead::absent));
    CHECK(e.present == with_ecs);
  }
  CHECK(!parse_in_place(nullptr, 65536).pkt);
}

TEST_CASE("error responses carry the extended rcode in the OPT and echo the ECS", "[dns][build]") {
  const Wire with_ecs = query_bytes({.id = 0x4242, .qname = kName, .qtype = kTypeA, .do_bit = true,
                                     .ecs = v4_ecs(24, {192, 0, 2})});
  std::uint8_t out[kMaxErrorResponseBytes];
  SECTION("BADVERS: 16 is 1 in the OPT, 0 in the header; parsing stopped before the ECS") {
    Wire w = with_ecs;
    w[opt_at(kName) + 6] = 1;  // EDNS version 1
    ClientQuery q;
    REQUIRE(verdict(w, q) == ParseVerdict::badvers);
    CHECK(write_error_response(q, kRcodeBadVers, out, sizeof out - 1) == 0);  // may not fit: not started
    const std::size_t n = write_error_response(q, kRcodeBadVers, out, sizeof out);
    Message m;
    REQUIRE(parse_message({out, n}, m) == ParseStatus::ok);
    CHECK(m.id == 0x4242);
    CHECK(m.qr);
    CHECK((get16(out + 2) & 0xF) == 0);
    CHECK(m.rcode == kRcodeBadVers);
    CHECK(m.qname == kName);
    CHECK(m.do_bit);
    CHECK(!m.ecs.present);
  }
  SECTION("FORMERR for a scope in a query: the ECS is echoed with scope 0") {
    Wire w = with_ecs;
    w[ecs_at(kName) + 7] = 24;
    ClientQuery q;
    REQUIRE(verdict(w, q) == ParseVerdict::formerr);
    const std::size_t n = write_error_response(q, kRcodeFormErr, out, sizeof out);
    Message m;
    REQUIRE(parse_message({out, n}, m) == ParseStatus::ok);
    CHECK(m.rcode == kRcodeFormErr);
    REQUIRE(m.ecs.present);
    CHECK(m.ecs.source_prefix == 24);
    CHECK(m.ecs.scope_prefix == 0);
    CHECK(m.ecs.address == std::array<std::uint8_t, 16>{192, 0, 2});
  }
}

}  // namespace
}  // namespace dnsarena::dns
