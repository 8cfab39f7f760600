// SPDX-License-Identifier: GPL-3.0-or-later
// dnssec/zone_digest.hpp against RFC 8976 Appendix A (the zones and digests are the RFC's
// data): the simple example (A.1), the complex one (A.2: duplicates, upper case owners
// and RDATA names, out-of-zone data, occluded data, a ZONEMD below the apex, a wildcard),
// multiple digests (A.3: SHA-384, SHA-512 and two unsupported records), root-servers.net
// (A.4: a real zone of 2018). Then what must
// not verify: one byte of one record changed, a record added, the serial off, only
// unknown algorithms, two records of one scheme and algorithm, a short digest.
#include <string>

#include <catch2/catch.hpp>

#include "dnssec/rrset.hpp"
#include "dnssec/zone_digest.hpp"
#include "policy/zone_scanner.hpp"

namespace {

using dnsarena::dnssec::ZoneDigest;
using dnsarena::dnssec::ZonemdStatus;
using dnsarena::dnssec::ZonemdVerdict;

// The zone text read by libzscanner (as LocalRoot::load reads a file) into a ZoneDigest.
ZoneDigest digest_of(const std::string& text, const std::string& origin = "example.") {
  ZoneDigest z(dnsarena::dnssec::name_from_text(origin));
  dnsarena::policy::ZoneScanner scanner("test zone", origin);
  scanner.open_text(text);
  for (dnsarena::policy::ScannedRecord r; scanner.next(r);) z.add(r.owner, r.type, 1, r.ttl, r.rdata);
  return z;
}

ZonemdVerdict verify(const std::string& text, std::uint32_t serial = 2018031900) { return digest_of(text).verify(serial); }

std::string hex(const dnsarena::common::Bytes& b) {
  std::string s;
  for (auto c : b) s += "0123456789abcdef"[c >> 4], s += "0123456789abcdef"[c & 15];
  return s;
}

// RFC 8976 A.1.
const std::string kSimple = R"(
example.      86400  IN  SOA     ns1 admin 2018031900 1800 900 604800 86400
example.      86400  IN  NS      ns1
example.      86400  IN  NS      ns2
example.      86400  IN  ZONEMD  2018031900 1 1 (
                                 c68090d90a7aed716bc459f9340e3d7c
                                 1370d4d24b7e2fc3a1ddc0b9a87153b9
                                 a9713b3c9ae5cc27777f98b8e730044c )
ns1           3600   IN  A       203.0.113.63
ns2           3600   IN  AAAA    2001:db8::63
)";

// RFC 8976 A.2.
const std::string kComplex = R"(
example.      86400  IN  SOA     ns1 admin 2018031900 1800 900 604800 86400
example.      86400  IN  NS      ns1
example.      86400  IN  NS      ns2
example.      86400  IN  ZONEMD  2018031900 1 1 (
                                 a3b69bad980a3504e1cffcb0fd6397f9
                                 3848071c93151f552ae2f6b1711d4bd2
                                 d8b39808226d7b9db71e34b72077f8fe )
ns1           3600   IN  A       203.0.113.63
NS2           3600   IN  AAAA    2001:db8::63
occluded.sub  7200   IN  TXT     "I'm occluded but must be digested"
sub           7200   IN  NS      ns1
duplicate     300    IN  TXT     "I must be digested just once"
duplicate     300    IN  TXT     "I must be digested just once"
foo.test.     555    IN  TXT     "out-of-zone data must be excluded"
UPPERCASE     3600   IN  TXT     "canonicalize uppercase owner names"
*             777    IN  PTR     dont-forget-about-wildcards
mail          3600   IN  MX      20 MAIL1
mail          3600   IN  MX      10 Mail2.Example.
sortme        3600   IN  AAAA    2001:db8::5:61
sortme        3600   IN  AAAA    2001:db8::3:62
sortme        3600   IN  AAAA    2001:db8::4:63
sortme        3600   IN  AAAA    2001:db8::1:65
sortme        3600   IN  AAAA    2001:db8::2:64
non-apex      900    IN  ZONEMD  2018031900 1 1 (
                                 616c6c6f77656420
                                 6275742069676e6f
                                 7265642e20616c6c
                                 6f77656420627574
                                 2069676e6f726564
                                 2e20616c6c6f7765 )
)";

// RFC 8976 A.3.
const std::string kMultiple = R"(
example.      86400  IN  SOA     ns1 admin 2018031900 1800 900 604800 86400
example.      86400  IN  NS      ns1.example.
example.      86400  IN  NS      ns2.example.
example.      86400  IN  ZONEMD  2018031900 1 1 (
                                 62e6cf51b02e54b9b5f967d547ce4313
                                 6792901f9f88e637493daaf401c92c27
                                 9dd10f0edb1c56f8080211f8480ee306 )
example.      86400  IN  ZONEMD  2018031900 1 2 (
                                 08cfa1115c7b948c4163a901270395ea
                                 226a930cd2cbcf2fa9a5e6eb85f37c8a
                                 4e114d884e66f176eab121cb02db7d65
                                 2e0cc4827e7a3204f166b47e5613fd27 )
example.      86400  IN  ZONEMD  2018031900 1 240 (
                                 e2d523f654b9422a96c5a8f44607bbee )
example.      86400  IN  ZONEMD  2018031900 241 1 (
                                 e1846540e33a9e4189792d18d5d131f6
                                 05fc283e )
ns1.example.  3600   IN  A       203.0.113.63
ns2.example.  86400  IN  TXT     "This example has multiple digests"
NS2.EXAMPLE.  3600   IN  AAAA    2001:db8::63
)";

// RFC 8976 A.4: the root-servers.net zone of September 2018.
const std::string kRootServers = R"(
root-servers.net.     3600000 IN  SOA     a.root-servers.net. nstld.verisign-grs.com. 2018091100 14400 7200 1209600 3600000
root-servers.net.     3600000 IN  NS      a.root-servers.net.
root-servers.net.     3600000 IN  NS      b.root-servers.net.
root-servers.net.     3600000 IN  NS      c.root-servers.net.
root-servers.net.     3600000 IN  NS      d.root-servers.net.
root-servers.net.     3600000 IN  NS      e.root-servers.net.
root-servers.net.     3600000 IN  NS      f.root-servers.net.
root-servers.net.     3600000 IN  NS      g.root-servers.net.
root-servers.net.     3600000 IN  NS      h.root-servers.net.
root-servers.net.     3600000 IN  NS      i.root-servers.net.
root-servers.net.     3600000 IN  NS      j.root-servers.net.
root-servers.net.     3600000 IN  NS      k.root-servers.net.
root-servers.net.     3600000 IN  NS      l.root-servers.net.
root-servers.net.     3600000 IN  NS      m.root-servers.net.
a.root-servers.net.   3600000 IN  AAAA    2001:503:ba3e::2:30
a.root-servers.net.   3600000 IN  A       198.41.0.4
b.root-servers.net.   3600000 IN  MX      20 mail.isi.edu.
b.root-servers.net.   3600000 IN  AAAA    2001:500:200::b
b.root-servers.net.   3600000 IN  A       199.9.14.201
c.root-servers.net.   3600000 IN  AAAA    2001:500:2::c
c.root-servers.net.   3600000 IN  A       192.33.4.12
d.root-servers.net.   3600000 IN  AAAA    2001:500:2d::d
d.root-servers.net.   3600000 IN  A       199.7.91.13
e.root-servers.net.   3600000 IN  AAAA    2001:500:a8::e
e.root-servers.net.   3600000 IN  A       192.203.230.10
f.root-servers.net.   3600000 IN  AAAA    2001:500:2f::f
f.root-servers.net.   3600000 IN  A       192.5.5.241
g.root-servers.net.   3600000 IN  AAAA    2001:500:12::d0d
g.root-servers.net.   3600000 IN  A       192.112.36.4
h.root-servers.net.   3600000 IN  AAAA    2001:500:1::53
h.root-servers.net.   3600000 IN  A       198.97.190.53
i.root-servers.net.   3600000 IN  MX      10 mx.i.root-servers.org.
i.root-servers.net.   3600000 IN  AAAA    2001:7fe::53
i.root-servers.net.   3600000 IN  A       192.36.148.17
j.root-servers.net.   3600000 IN  AAAA    2001:503:c27::2:30
j.root-servers.net.   3600000 IN  A       192.58.128.30
k.root-servers.net.   3600000 IN  AAAA    2001:7fd::1
k.root-servers.net.   3600000 IN  A       193.0.14.129
l.root-servers.net.   3600000 IN  AAAA    2001:500:9f::42
l.root-servers.net.   3600000 IN  A       199.7.83.42
m.root-servers.net.   3600000 IN  AAAA    2001:dc3::35
m.root-servers.net.   3600000 IN  A       202.12.27.33
root-servers.net.     3600000 IN  ZONEMD  2018091100 1 1 (
                                 f1ca0ccd91bd5573d9f431c00ee0101b
                                 2545c97602be0a978a3b11dbfc1c776d
                                 5b3e86ae3d973d6b5349ba7f04340f79 )
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("ZONEMD: the RFC 8976 simple, complex, multiple-digest and root-servers.net examples verify", "[zonemd]") {
  SECTION("A.1 simple") {
    const ZonemdVerdict v = verify(kSimple);
    CHECK(v.status == ZonemdStatus::verified);
    CHECK(v.hash == 1);
    CHECK(digest_of(kSimple).soa_serial() == 2018031900u);
    CHECK(hex(*digest_of(kSimple).compute(1)) ==
          "c68090d90a7aed716bc459f9340e3d7c1370d4d24b7e2fc3a1ddc0b9a87153b9a9713b3c9ae5cc27777f98b8e730044c");
  }
  SECTION("A.2 complex") {
    const ZonemdVerdict v = verify(kComplex);
    INFO(v.detail);
    CHECK(v.status == ZonemdStatus::verified);
  }
  SECTION("A.3 multiple digests: SHA-384 and SHA-512 both match, the unknown ones are passed over") {
    CHECK(verify(kMultiple).status == ZonemdStatus::verified);
    ZoneDigest z = digest_of(kMultiple);
    CHECK(hex(*z.compute(1)) ==
          "62e6cf51b02e54b9b5f967d547ce43136792901f9f88e637493daaf401c92c279dd10f0edb1c56f8080211f8480ee306");
    CHECK(hex(*z.compute(2)) ==
          "08cfa1115c7b948c4163a901270395ea226a930cd2cbcf2fa9a5e6eb85f37c8a"
          "4e114d884e66f176eab121cb02db7d652e0cc4827e7a3204f166b47e5613fd27");
    CHECK_FALSE(z.compute(240));
    CHECK(z.apex_zonemd().rdata.size() == 4);
  }
  SECTION("A.4 root-servers.net") {
    const ZonemdVerdict v = digest_of(kRootServers, "root-servers.net.").verify(2018091100);
    INFO(v.detail);
    CHECK(v.status == ZonemdStatus::verified);
  }
  SECTION("A zone without ZONEMD at its apex is absent, not failed") {
    const std::string none = "example. 86400 IN SOA ns1 admin 2018031900 1800 900 604800 86400\nexample. 86400 IN NS ns1\n";
    CHECK(verify(none).status == ZonemdStatus::absent);
  }
}

TEST_CASE("ZONEMD: a changed, added or mis-serialled zone does not verify, and says why", "[zonemd]") {
  SECTION("one byte of one record changed: the digest found and the one computed are both named") {
    const ZonemdVerdict v = verify(replaced(kComplex, "203.0.113.63", "203.0.113.64"));
    CHECK(v.status == ZonemdStatus::failed);
    CHECK_THAT(v.detail, Catch::Contains("the record says a3b69bad980a3504") && Catch::Contains("the zone's SHA-384 digest is"));
  }
  SECTION("a record added") {
    CHECK(verify(kSimple + "extra 3600 IN A 192.0.2.1\n").status == ZonemdStatus::failed);
  }
  SECTION("a TTL changed") {
    CHECK(verify(replaced(kSimple, "ns1           3600", "ns1           3601")).status == ZonemdStatus::failed);
  }
  SECTION("the ZONEMD serial is not the SOA's") {
    const ZonemdVerdict v = verify(kSimple, 2018031901);
    CHECK(v.status == ZonemdStatus::failed);
    CHECK_THAT(v.detail, Catch::Contains("serial 2018031900 is not the SOA serial 2018031901"));
  }
  SECTION("out-of-zone data and a duplicate record do not change the digest") {
    CHECK(verify(kComplex + "bar.test. 60 IN A 192.0.2.9\nduplicate 300 IN TXT \"I must be digested just once\"\n").status ==
          ZonemdStatus::verified);
  }
  SECTION("a ZONEMD RRSIG at the apex is left out, any other RRSIG is digested") {
    const std::string sig_zonemd =
        "example. 86400 IN RRSIG ZONEMD 13 1 86400 20260101000000 20250101000000 1 example. AAAA\n";
    CHECK(verify(kSimple + sig_zonemd).status == ZonemdStatus::verified);
    CHECK(digest_of(kSimple + sig_zonemd).apex_zonemd().rrsigs.size() == 1);
    const std::string sig_ns = "example. 86400 IN RRSIG NS 13 1 86400 20260101000000 20250101000000 1 example. AAAA\n";
    CHECK(verify(kSimple + sig_ns).status == ZonemdStatus::failed);
  }
}

TEST_CASE("ZONEMD: unsupported, duplicate and malformed records follow RFC 8976 sections 2 and 4", "[zonemd]") {
  const std::string soa_ns =
      "example. 86400 IN SOA ns1 admin 2018031900 1800 900 604800 86400\nexample. 86400 IN NS ns1\n";
  SECTION("only unknown schemes and algorithms: unsupported, not failed") {
    const ZonemdVerdict v = verify(soa_ns + "example. 86400 IN ZONEMD 2018031900 1 240 e2d523f654b9422a96c5a8f44607bbee\n"
                                            "example. 86400 IN ZONEMD 2018031900 241 1 e2d523f654b9422a96c5a8f44607bbee\n");
    CHECK(v.status == ZonemdStatus::unsupported);
    CHECK_THAT(v.detail, Catch::Contains("ZONEMD 1 240: scheme or hash algorithm not supported"));
  }
  SECTION("two SHA-384 records, one of them right: neither is used") {
    const std::string zero(96, '0');
    const ZonemdVerdict v = verify(kSimple + "example. 86400 IN ZONEMD 2018031900 1 1 " + zero + "\n");
    CHECK(v.status == ZonemdStatus::failed);
    CHECK_THAT(v.detail, Catch::Contains("more than one ZONEMD with this scheme and hash algorithm"));
  }
  SECTION("two SHA-384 records beside a right SHA-512 one: the SHA-512 one verifies") {
    const std::string zero(96, '0');
    const std::string a3_sha512 = kMultiple + "example. 86400 IN ZONEMD 2018031900 1 1 " + zero + "\n";
    const ZonemdVerdict v = verify(a3_sha512);
    CHECK(v.status == ZonemdStatus::verified);
    CHECK(v.hash == 2);
  }
  SECTION("the same ZONEMD record twice is one record, and 100,000 of them cost a sort") {
    std::string many = kSimple;
    for (int i = 0; i < 100000; ++i)
      many += "example. 86400 IN ZONEMD 2018031900 1 1 "
              "c68090d90a7aed716bc459f9340e3d7c1370d4d24b7e2fc3a1ddc0b9a87153b9a9713b3c9ae5cc27777f98b8e730044c\n";
    ZoneDigest z = digest_of(many);
    CHECK(z.verify(2018031900).status == ZonemdStatus::verified);
    CHECK(z.apex_zonemd().rdata.size() == 1);
  }
  SECTION("a digest shorter than the algorithm's") {
    const ZonemdVerdict v = verify(soa_ns + "example. 86400 IN ZONEMD 2018031900 1 1 e2d523f654b9422a96c5a8f44607bbee\n");
    CHECK(v.status == ZonemdStatus::failed);
    CHECK_THAT(v.detail, Catch::Contains("a digest of 16 bytes, SHA-384 gives 48"));
  }
}
