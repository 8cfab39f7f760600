// SPDX-License-Identifier: GPL-3.0-or-later
// The validator's parts that need no server: trust anchor files in the formats anchors
// are distributed in (and their errors), negative anchors, NSEC3 hashing against
// RFC 5155 appendix A, DS digests against RFC 4034 and RFC 4509, canonical name order
// (RFC 4034 6.1).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "dnssec/denial.hpp"
#include "dnssec/dnskey_trust.hpp"
#include "dnssec/trust_anchors.hpp"
#include "dnssec/verify_bench.hpp"

using namespace dnsarena::dnssec;

namespace {

// The root KSK-2017 as Unbound's unbound-anchor writes root.key (autotrust comments,
// the key on one line) and as Knot Resolver / dns-root-data ship it (DS).
const char* kUnboundRootKey =
    "; autotrust trust anchor file\n"
    ";;id: . 1\n"
    ";;last_queried: 1700000000 ;;Tue Nov 14 22:13:20 2023\n"
    ";;last_success: 1700000000 ;;Tue Nov 14 22:13:20 2023\n"
    ";;next_probe_time: 1700040000 ;;Wed Nov 15 09:20:00 2023\n"
    ";;query_failed: 0\n"
    ";;query_interval: 43200\n"
    ";;retry_time: 8640\n"
    ".\t172800\tIN\tDNSKEY\t257 3 8 AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3+/4RgWOq7HrxRixHlFlExOLAJr5emLvN7SWXgnLh4+B5xQlNVz8Og8kvArMtNROxVQuCaSnIDdD5LKyWbRd2n9WGe2R8PzgCmr3EgVLrjyBxWezF0jLHwVN8efS3rCj/EWgvIWgb9tarpVUDK/b58Da+sqqls3eNbuv7pr+eoZG+SrDK6nWeL3c6H5Apxz7LjVc1uTIdsIXxuOLYA4/ilBmSVIzuDWfdRUfhHdY6+cn8HFRm+2hM8AnXGXws9555KrUB5qihylGa8subX2Nn6UwNR1AkUTV74bU= ;{id = 20326 (ksk), size = 2048b} ;;state=2 [  VALID  ] ;;count=0 ;;lastchange=1700000000 ;;Tue Nov 14 22:13:20 2023\n"
    ".\t172800\tIN\tDNSKEY\t385 3 8 AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3+/4RgWOq7HrxRixHlFlExOLAJr5emLvN7SWXgnLh4+B5xQlNVz8Og8kvArMtNROxVQuCaSnIDdD5LKyWbRd2n9WGe2R8PzgCmr3EgVLrjyBxWezF0jLHwVN8efS3rCj/EWgvIWgb9tarpVUDK/b58Da+sqqls3eNbuv7pr+eoZG+SrDK6nWeL3c6H5Apxz7LjVc1uTIdsIXxuOLYA4/ilBmSVIzuDWfdRUfhHdY6+cn8HFRm+2hM8AnXGXws9555KrUB5qihylGa8subX2Nn6UwNR1AkUTV74bU= ;{id = 20454 (ksk), size = 2048b} ;;state=4 [ REVOKED ] ;;count=0 ;;lastchange=1700000000\n";

const char* kKnotRootKeys =
    "; root.keys, the format of Knot Resolver and dns-root-data's root.ds\n"
    ". IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D\n"
    ". 86400 IN DS ( 38696 8 2\n"
    "      683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16 )\n";

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/dnsarena-anchor-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("trust anchor files: Unbound's root.key and Knot's DS format", "[dnssec][anchors]") {
  TrustAnchors unbound_format;
  const std::string p1 = write_temp(kUnboundRootKey);
  unbound_format.add_file(p1);
  std::remove(p1.c_str());
  REQUIRE(unbound_format.anchors().size() == 1);
  CHECK(unbound_format.anchors()[0].zone == Bytes{0});
  CHECK(unbound_format.anchors()[0].dnskeys.size() == 1);  // the REVOKEd key is no anchor
  CHECK(unbound_format.anchors()[0].ds.empty());

  TrustAnchors knot_format;
  knot_format.add_text(kKnotRootKeys, "root.keys");
  REQUIRE(knot_format.anchors().size() == 1);
  REQUIRE(knot_format.anchors()[0].ds.size() == 2);  // multi-line parentheses too
  const Bytes& ds = knot_format.anchors()[0].ds[0];
  CHECK(ds.size() == 4 + 32);
  CHECK(((ds[0] << 8) | ds[1]) == 20326);
  CHECK(ds[2] == 8);
  CHECK(ds[3] == 2);

  // The anchor governs names below it; nothing governs names outside it.
  TrustAnchors lab;
  lab.add_text("test. DS 1 13 2 " + std::string(64, '0'));
  CHECK(lab.governing(name_from_text("a.b.test.")).anchor != nullptr);
  CHECK(lab.governing(name_from_text("example.")).anchor == nullptr);
}

TEST_CASE("trust anchor files: errors name the file and line", "[dnssec][anchors]") {
  TrustAnchors a;
  const auto message = [&](const std::string& text) {
    try {
      a.add_text(text, "anchors.key");
    } catch (const TrustAnchorError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(message("; comment\n. IN A 192.0.2.1\n"), Catch::Contains("anchors.key:2") && Catch::Contains("only DS and DNSKEY"));
  CHECK_THAT(message(". IN DS 20326 8 2 XYZ\n"), Catch::Contains("anchors.key:1"));
  CHECK_THAT(message(". CH DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D\n"),
             Catch::Contains("anchors.key:1"));
  CHECK_THAT(message("; only comments\n"), Catch::Contains("no DS or DNSKEY"));
  CHECK_THROWS_AS(a.add_file("/nonexistent/root.key"), TrustAnchorError);
  CHECK(a.anchors().empty());
}

TEST_CASE("negative trust anchors govern their domain unless a deeper anchor exists", "[dnssec][anchors]") {
  TrustAnchors a;
  a.add_text(kKnotRootKeys);
  a.add_negative(name_from_text("Example.COM."));
  CHECK(a.governing(name_from_text("www.example.com.")).negative.has_value());
  CHECK(!a.governing(name_from_text("www.example.net.")).negative.has_value());
  a.add_text("sub.example.com. DS 1 13 2 " + std::string(64, '0'));
  CHECK(!a.governing(name_from_text("www.sub.example.com.")).negative.has_value());
  CHECK(a.remove_negative(name_from_text("example.com.")));
  CHECK(!a.governing(name_from_text("www.example.com.")).negative.has_value());
}

TEST_CASE("NSEC3 hashes: RFC 5155 appendix A", "[dnssec][nsec3]") {
  const Bytes salt{0xaa, 0xbb, 0xcc, 0xdd};
  // H(example) = 0p9mhaveqvm6t7vbl5lop2u3t2rp3tom in the RFC's base32hex.
  const Bytes h = nsec3_hash(name_from_text("example."), 12, salt);
  REQUIRE(h.size() == 20);
  // Encode back to base32hex to compare with the RFC's text.
  static const char* b32 = "0123456789abcdefghijklmnopqrstuv";
  std::string text;
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::uint8_t c : h) {
    acc = acc << 8 | c;
    bits += 8;
    while (bits >= 5) text += b32[(acc >> (bits -= 5)) & 31];
  }
  CHECK(text == "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom");
  const Bytes ai = nsec3_hash(name_from_text("a.example."), 12, salt);
  CHECK(ai != h);
}

TEST_CASE("canonical name order (RFC 4034 section 6.1)", "[dnssec][names]") {
  const char* ordered[] = {"example.", "a.example.", "yljkjljk.a.example.", "Z.a.example.", "zABC.a.EXAMPLE.",
                           "z.example.", "*.z.example.", "a.z.example."};
  std::vector<Bytes> names;
  for (const char* n : ordered) names.push_back(name_from_text(n));
  for (std::size_t i = 0; i + 1 < names.size(); ++i) {
    INFO(ordered[i] << " < " << ordered[i + 1]);
    CHECK(canonical_compare(names[i], names[i + 1]) < 0);
  }
}

TEST_CASE("DS digests: RFC 4034 5.4 (SHA-1) and RFC 4509 (SHA-256) examples", "[dnssec][ds]") {
  TrustAnchors a;
  a.add_text(
      "dskey.example.com. 86400 IN DNSKEY 256 3 5 ( AQOeiiR0GOMYkDshWoSKz9Xz fwJr1AYtsmx3TGkJaNXVbfi/\n"
      "  2pHm822aJ5iI9BMzNXxeYCmZ DRD99WYwYqUSdjMmmAphXdvx egXd/M5+X7OrzKBaMbCVdFLU\n"
      "  Uh6DhweJBjEVv5f2wwjM9Xzc nOf+EPbtG9DMBmADjFDc2w/r ljwvFw== )\n"
      "dskey.example.com. 86400 IN DS 60485 5 1 2BB183AF5F22588179A53B0A98631FAD1A292118\n"
      "dskey.example.com. 86400 IN DS 60485 5 2 D4B7D520E7BB5F0F67674A0CCEB1E3E0614B93C4F9E99B8383F6A1E4469DA50A\n");
  REQUIRE(a.anchors().size() == 1);
  const TrustAnchor& t = a.anchors()[0];
  REQUIRE(t.dnskeys.size() == 1);
  REQUIRE(t.ds.size() == 2);
  for (const Bytes& ds : t.ds) {
    INFO("digest type " << int(ds[3]));
    CHECK(ds_matches_dnskey(ds, t.zone, t.dnskeys[0]));
    Bytes wrong = ds;
    wrong.back() ^= 1;
    CHECK(!ds_matches_dnskey(wrong, t.zone, t.dnskeys[0]));
    CHECK(!ds_matches_dnskey(ds, name_from_text("other.example.com."), t.dnskeys[0]));  // the owner is hashed too
  }
  // Algorithm 5 is outside the supported set: such a DS set alone makes the zone insecure.
  const auto verdict = unusable_ds_set(t.ds);
  REQUIRE(verdict.has_value());
  CHECK(verdict->verdict == Verdict::insecure);
  CHECK(verdict->ede == Ede::unsupported_dnskey_algorithm);
  CHECK(!unusable_ds_set({}).has_value());
}

TEST_CASE("the verification benchmark verifies every supported algorithm", "[dnssec][bench]") {
  const VerifyBenchResult r = run_verify_bench({.seconds = 0.01});
  REQUIRE(r.algorithms.size() == 6);
  for (const AlgorithmCost& a : r.algorithms) {
    INFO(a.name);
    CHECK(a.supported);  // GnuTLS on Debian 12 has all six
    CHECK(a.failures == 0);
    CHECK(a.verifications > 0);
    CHECK(a.verify_us > 0);
  }
  REQUIRE(r.nsec3.size() == 4);
  CHECK(r.nsec3.back().hash_us > r.nsec3.front().hash_us);  // 150 iterations cost more than 0
  CHECK(r.worst_signatures_us > 0);
}
