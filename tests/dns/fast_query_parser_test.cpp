// SPDX-License-Identifier: GPL-3.0-or-later
// The hand-written fast path of query parsing against libknot's (query_parser_diff.hpp):
// every fuzz-corpus query, generated common queries (names, types, DO, CD, payload sizes,
// ECS v4/v6 at several prefixes, cookies, padding, two ECS options), and the corpus and
// every third generated query mutated byte by byte, truncated and extended. The fast path must take the common
// queries (or it would be a fast path in name only) and agree with libknot exactly.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/bytes.hpp"
#include "dns/query_builder.hpp"
#include "tests/dns/query_parser_diff.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::dns {
namespace {

using namespace wire;

using Wire = std::vector<std::uint8_t>;

Wire build(const QuerySpec& spec) {
  const common::Bytes b = build_query(spec);
  return Wire(b.begin(), b.end());
}

// Appends an EDNS option to a query built with an OPT (its only additional record, right
// after the question), and fixes the OPT's rdlength.
void append_option(Wire& w, std::uint16_t code, const Wire& data) {
  std::size_t p = kHeaderBytes;
  while (w[p] != 0) p += 1u + w[p];
  const std::size_t rdlen_pos = p + 1 + 4 + 9;  // question end, QTYPE+QCLASS, OPT to rdlength
  REQUIRE(get16(&w[p + 1 + 4 + 1]) == kTypeOpt);
  w.push_back(static_cast<std::uint8_t>(code >> 8));
  w.push_back(static_cast<std::uint8_t>(code));
  w.push_back(static_cast<std::uint8_t>(data.size() >> 8));
  w.push_back(static_cast<std::uint8_t>(data.size()));
  w.insert(w.end(), data.begin(), data.end());
  put16(&w[rdlen_pos], static_cast<std::uint16_t>(w.size() - rdlen_pos - 2));
}

// A client ECS option (scope 0), address as given (build_query writes its source bits).
EcsOption ecs(std::uint16_t family, std::uint8_t source, std::array<std::uint8_t, 16> address) {
  return EcsOption{.present = true, .family = family, .source_prefix = source, .scope_prefix = 0, .address = address};
}

// Common queries: the shapes the fast path exists for, plus neighbours it must decline.
std::vector<Wire> generated_queries() {
  std::vector<common::Bytes> names = {wire::name_to_wire("a.test"), wire::name_to_wire("Www.Example.COM"),
                                      wire::name_to_wire("."), wire::name_to_wire(std::string(63, 'x') + ".test")};
  {
    std::string longest;  // 255 bytes of wire: 3 labels of 63 and one of 61
    for (int i = 0; i < 3; ++i) longest += std::string(63, 'a' + i) + ".";
    longest += std::string(61, 'd');
    names.push_back(wire::name_to_wire(longest));
  }
  const std::uint16_t types[] = {kTypeA, kTypeAaaa, kTypeTxt, kTypeAny, kTypeMx, 0, kTypeIxfr, kTypeAxfr, 65535};
  std::vector<Wire> out;
  std::uint16_t id = 1;
  for (const auto& name : names)
    for (std::uint16_t t : types) {
      out.push_back(build({.id = id++, .qname = name, .qtype = t, .edns = false}));
      out.push_back(build({.id = id++, .qname = name, .qtype = t, .cd = true, .do_bit = true}));
      out.push_back(build({.id = id++, .qname = name, .qtype = t, .ecs = ecs(kEcsFamilyIpv4, 24, {198, 51, 100, 7})}));
      out.push_back(build({.id = id++, .qname = name, .qtype = t, .ecs = ecs(kEcsFamilyIpv6, 56, {0x20, 1, 0xd, 0xb8, 1, 2, 3, 4})}));
    }
  const auto& n = names[1];
  for (std::uint8_t src : {0, 1, 7, 8, 9, 23, 25, 31, 32})
    out.push_back(build({.id = 7, .qname = n, .qtype = kTypeA, .ecs = ecs(kEcsFamilyIpv4, src, {255, 255, 255, 255})}));
  for (std::uint8_t src : {0, 48, 57, 64, 127, 128})
    out.push_back(build({.id = 8, .qname = n, .qtype = kTypeA, .ecs = ecs(kEcsFamilyIpv6, src, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})}));
  // Cookies (RFC 7873, option 10), padding (12), unknown options, two ECS options.
  Wire w = build({.id = 9, .qname = n, .qtype = kTypeA, .do_bit = true});
  append_option(w, 10, Wire(8, 0xAB));
  out.push_back(w);
  append_option(w, 12, Wire(20, 0));
  out.push_back(w);
  Wire x = build({.id = 10, .qname = n, .qtype = kTypeA, .ecs = ecs(kEcsFamilyIpv4, 24, {10, 1, 2, 0})});
  append_option(x, 10, Wire(24, 0x11));
  out.push_back(x);
  append_option(x, kOptionEcs, Wire{0, 1, 16, 0, 10, 9});
  out.push_back(x);
  append_option(x, 65001, Wire{});
  out.push_back(x);
  // Payload sizes in the OPT's class: 0, 1 (class IN, refused by libknot with empty
  // rdata), 511, 512, 4096, 65535.
  for (std::uint16_t payload : {0, 1, 511, 512, 4096, 65535}) {
    Wire p = build({.id = 11, .qname = n, .qtype = kTypeA, .edns = true});
    put16(&p[p.size() - 8], payload);
    out.push_back(p);
  }
  return out;
}

std::vector<Wire> corpus_queries() {
  std::vector<Wire> out;
  const std::filesystem::path dir = std::filesystem::path(DNSARENA_SOURCE_DIR) / "tests/fuzz/corpus/query_parser";
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(f.path(), std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::filesystem::path diff = std::filesystem::path(DNSARENA_SOURCE_DIR) / "tests/fuzz/corpus/query_parser_diff";
  for (const auto& f : std::filesystem::directory_iterator(diff)) {
    std::ifstream in(f.path(), std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

void check_same(const Wire& w) {
  const testing::DiffResult r = testing::diff_parsers(w.data(), w.size());
  INFO(r.mismatch);
  REQUIRE(r.mismatch.empty());
}

TEST_CASE("the fast path takes the common queries and agrees with libknot", "[dns][fast_parser]") {
  std::size_t taken = 0, common = 0;
  for (const Wire& w : generated_queries()) {
    check_same(w);
    const testing::DiffResult r = testing::diff_parsers(w.data(), w.size());
    ClientQuery q;
    Wire copy = w;
    const bool knot_ok = parse_query_knot(copy.data(), copy.size(), q) == ParseVerdict::ok;
    if (knot_ok) {
      ++common;
      // Every ok query the generator writes has the common shape, except the class-IN OPT
      // with empty rdata, which libknot refuses anyway (not ok).
      CHECK(r.fast_taken);
    } else {
      CHECK_FALSE(r.fast_taken);
    }
    taken += r.fast_taken;
  }
  CHECK(common >= 140);
  CHECK(taken == common);
}

TEST_CASE("the corpus queries agree through both paths", "[dns][fast_parser]") {
  const std::vector<Wire> corpus = corpus_queries();
  REQUIRE(corpus.size() >= 10);
  std::size_t taken = 0;
  for (const Wire& w : corpus) {
    check_same(w);
    taken += testing::diff_parsers(w.data(), w.size()).fast_taken;
  }
  CHECK(taken >= 4);  // a, aaaa_edns_do, ecs, ecs6 at least
}

TEST_CASE("mutated, truncated and extended queries agree through both paths", "[dns][fast_parser]") {
  // Every third generated query (each shape is there with several names and types) and
  // the whole corpus: ~60,000 packets, a few seconds of CPU.
  std::vector<Wire> seeds;
  const std::vector<Wire> generated = generated_queries();
  for (std::size_t i = 0; i < generated.size(); i += 3) seeds.push_back(generated[i]);
  for (Wire& w : corpus_queries()) seeds.push_back(std::move(w));
  const std::uint8_t values[] = {0x00, 0x01, 0x08, 0x0A, 0x29, 0x40, 0xC0, 0xFF};
  std::size_t checked = 0, taken = 0;
  for (const Wire& seed : seeds) {
    for (std::size_t i = 0; i < seed.size(); ++i) {
      for (std::uint8_t v : values) {
        Wire m = seed;
        if (m[i] == v) continue;
        m[i] = v;
        const testing::DiffResult r = testing::diff_parsers(m.data(), m.size());
        INFO("seed size " << seed.size() << " byte " << i << " = " << int(v) << "\n" << r.mismatch);
        REQUIRE(r.mismatch.empty());
        taken += r.fast_taken;
        ++checked;
      }
      Wire cut(seed.begin(), seed.begin() + static_cast<std::ptrdiff_t>(i));
      check_same(cut);
      ++checked;
    }
    for (std::uint8_t v : {0x00, 0x0A}) {
      Wire longer = seed;
      longer.push_back(v);
      check_same(longer);
      longer.insert(longer.end(), {0, 10, 0, 0});  // a trailing empty option-like run
      check_same(longer);
      checked += 2;
    }
  }
  INFO("checked " << checked << ", taken " << taken);
  CHECK(checked > 30000);
  CHECK(taken > 1000);  // mutations of ID, flags, type and address bytes stay common
}

}  // namespace
}  // namespace dnsarena::dns
