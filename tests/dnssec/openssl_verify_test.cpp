// SPDX-License-Identifier: GPL-3.0-or-later
// RRSIG verification through OpenSSL (dnssec/openssl_verify.hpp, ZoneKeys): signatures
// libdnssec makes (libdnssec_signer.hpp, as a zone signer would) verify for every
// algorithm of RFC 8624's validation set, and a one-bit change in the data or the
// signature, or the wrong key, fails; libdnssec's own verification (the bench's baseline)
// gives the same answers. DNSKEYs with a malformed public key are refused at import and
// are unusable keys (ZoneKeys keeps them out).
#include <catch2/catch.hpp>

#include <ctime>

#include "dnssec/libdnssec_signer.hpp"
#include "dnssec/openssl_verify.hpp"
#include "dnssec/zone_keys.hpp"

using namespace dnsarena::dnssec;

namespace {

struct AlgorithmCase {
  std::uint8_t algorithm;
  unsigned bits;
};
constexpr AlgorithmCase kAlgorithms[] = {{8, 2048}, {10, 2048}, {13, 256}, {14, 384}, {15, 256}, {16, 456}};

Verified verify(const Rrset& set, const ZoneKeys& keys, std::uint32_t now) {
  const Limits limits;
  Budget budget(limits);
  return verify_rrset(set, keys, now, budget);
}

Bytes dnskey_of(std::uint8_t algorithm, const Bytes& public_key) {
  Bytes rd{0x01, 0x01, 3, algorithm};  // flags 257, protocol 3
  rd += public_key;
  return rd;
}

}  // namespace

TEST_CASE("OpenSSL verifies libdnssec's signatures of every algorithm, and nothing altered", "[dnssec][openssl]") {
  LibdnssecSigner signer;
  const Bytes zone = name_from_text("sig.test.");
  const Rrset rrset{name_from_text("www.sig.test."), 1, 1, 3600, {{192, 0, 2, 1}, {192, 0, 2, 2}}, {}};
  const auto now = static_cast<std::uint32_t>(std::time(nullptr));
  for (const AlgorithmCase& c : kAlgorithms) {
    INFO("algorithm " << int(c.algorithm));
    REQUIRE(algorithm_supported(c.algorithm));
    const SigningKey key = signer.generate(c.algorithm, c.bits, zone);
    const SigningKey other = signer.generate(c.algorithm, c.bits, zone);
    const Bytes sig = signer.sign(key, rrset, zone, now - 3600, now + 86400);
    const ZoneKeys keys(zone, {key.dnskey});
    REQUIRE(keys.size() == 1);
    CHECK(keys.keys()[0]->tag == key.tag);

    Rrset good = rrset;
    good.rrsigs = {sig};
    const Verified ok = verify(good, keys, now);
    CHECK(ok.outcome.verdict == Verdict::secure);
    REQUIRE(ok.key_rdata != nullptr);
    CHECK(*ok.key_rdata == key.dnskey);

    // The verification alone, OpenSSL and the libdnssec baseline on the same inputs.
    const RrsigFields fields = *parse_rrsig(sig);
    const Bytes data = signed_data(rrset, fields, sig);
    const PublicKey pub = PublicKey::from_dnskey(key.dnskey);
    const LibdnssecPublicKey baseline(key.dnskey);
    CHECK(pub.verify(data, fields.signature));  // the faster library for the algorithm
    CHECK(pub.verify_openssl(data, fields.signature));
    CHECK(baseline.verify(data, fields.signature));

    // One bit of the signed data: a record's RDATA.
    Rrset data_flipped = good;
    data_flipped.rdata[1][3] ^= 0x01;
    const Verified bad_data = verify(data_flipped, keys, now);
    CHECK(bad_data.outcome.verdict == Verdict::bogus);
    CHECK(bad_data.outcome.ede == Ede::dnssec_bogus);
    Bytes data_bit = data;
    data_bit[data_bit.size() / 2] ^= 0x10;
    CHECK(!pub.verify(data_bit, fields.signature));
    CHECK(!pub.verify_openssl(data_bit, fields.signature));
    CHECK(!baseline.verify(data_bit, fields.signature));

    // One bit of the signature, first byte and last byte (ECDSA: in r and in s).
    for (const std::size_t at : {sig.size() - fields.signature.size(), sig.size() - 1}) {
      Rrset sig_flipped = good;
      sig_flipped.rrsigs[0][at] ^= 0x01;
      const Verified bad_sig = verify(sig_flipped, keys, now);
      CHECK(bad_sig.outcome.verdict == Verdict::bogus);
      CHECK(bad_sig.outcome.ede == Ede::dnssec_bogus);
      const RrsigFields f = *parse_rrsig(sig_flipped.rrsigs[0]);
      CHECK(!pub.verify(data, f.signature));
      CHECK(!pub.verify_openssl(data, f.signature));
      // NOTE: libdnssec (nettle) accepts an Ed448 signature whose last octet, the top of
      // S, is not zero; RFC 8032 5.2.7 requires S < L, which OpenSSL checks. The baseline
      // is not asserted there.
      if (c.algorithm != 16 || at != sig.size() - 1) CHECK(!baseline.verify(data, f.signature));
    }
    // A signature of the wrong length is no signature.
    CHECK(!pub.verify(data, fields.signature.first(fields.signature.size() - 1)));
    CHECK(!pub.verify_openssl(data, fields.signature.first(fields.signature.size() - 1)));

    // The wrong key: the RRSIG names the other key's tag, and only that key is there.
    Bytes retagged(sig);
    retagged[16] = static_cast<std::uint8_t>(other.tag >> 8);
    retagged[17] = static_cast<std::uint8_t>(other.tag);
    Rrset wrong_key = rrset;
    wrong_key.rrsigs = {retagged};
    const Verified bad_key = verify(wrong_key, ZoneKeys(zone, {other.dnskey}), now);
    CHECK(bad_key.outcome.verdict == Verdict::bogus);
    CHECK(bad_key.outcome.ede == Ede::dnssec_bogus);
    const RrsigFields rf = *parse_rrsig(retagged);
    CHECK(!PublicKey::from_dnskey(other.dnskey).verify(signed_data(rrset, rf, retagged), rf.signature));
    CHECK(!LibdnssecPublicKey(other.dnskey).verify(data, fields.signature));
  }
}

TEST_CASE("DNSKEYs with a malformed public key are refused at import, unusable in ZoneKeys", "[dnssec][openssl]") {
  const Bytes zone = name_from_text("sig.test.");
  LibdnssecSigner signer;
  const SigningKey p256 = signer.generate(13, 256, zone);
  const SigningKey rsa = signer.generate(8, 2048, zone);

  struct Bad {
    const char* what;
    std::uint8_t algorithm;
    Bytes key;
  };
  // Lengths outside RFC 3110 / 6605 / 8080: refused at import, and kept out of ZoneKeys.
  std::vector<Bad> bad_length;
  for (const AlgorithmCase& c : kAlgorithms) bad_length.push_back({"zero-length key", c.algorithm, {}});
  Bytes short_rsa{3, 0x01, 0x00, 0x01};
  short_rsa.resize(short_rsa.size() + 32, 0xc5);
  bad_length.push_back({"RSA modulus of 256 bits", 8, short_rsa});
  bad_length.push_back({"RSA exponent past the end", 8, {200, 0x01, 0x00, 0x01}});
  bad_length.push_back({"RSA long exponent length cut short", 10, {0, 0x01}});
  Bytes zero_exp{0, 0, 0};
  zero_exp.resize(zero_exp.size() + 256, 0xc5);
  bad_length.push_back({"RSA zero-length exponent", 8, zero_exp});
  Bytes huge_rsa{3, 0x01, 0x00, 0x01};
  huge_rsa.resize(huge_rsa.size() + 513, 0xc5);
  bad_length.push_back({"RSA modulus above 4096 bits", 8, huge_rsa});
  bad_length.push_back({"P-256 key of P-384's length", 13, Bytes(96, 0x11)});
  bad_length.push_back({"Ed25519 key of 31 bytes", 15, Bytes(31, 0x11)});
  bad_length.push_back({"Ed448 key of 32 bytes", 16, Bytes(32, 0x11)});
  for (const Bad& b : bad_length) {
    INFO(b.what);
    CHECK(!public_key_well_formed(b.algorithm, b.key));
    CHECK(!PublicKey::import(b.algorithm, b.key));
    const Bytes rd = dnskey_of(b.algorithm, b.key);
    CHECK(!PublicKey::from_dnskey(rd));
    CHECK(ZoneKeys(zone, {rd}).size() == 0);
    CHECK(ZoneKeys(zone, {rd, p256.dnskey}).size() == 1);  // the good key beside it stays
  }

  // Points not on the curve, of the right length: OpenSSL refuses them at import, so a
  // signature naming such a key fails (EDE 6), as a bad signature does.
  std::vector<Bad> bad_point;
  Bytes off_curve(p256.dnskey.begin() + 4, p256.dnskey.end());
  off_curve.back() ^= 0x01;  // one bit of a real key's Y
  bad_point.push_back({"P-256 point off the curve", 13, off_curve});
  Bytes one_one(64, 0);
  one_one[31] = one_one[63] = 1;
  bad_point.push_back({"P-256 point (1, 1)", 13, one_one});
  bad_point.push_back({"P-384 point of zeros", 14, Bytes(96, 0)});
  const Rrset rrset{name_from_text("www.sig.test."), 1, 1, 3600, {{192, 0, 2, 1}}, {}};
  const auto now = static_cast<std::uint32_t>(std::time(nullptr));
  const Bytes sig = signer.sign(p256, rrset, zone, now - 3600, now + 86400);
  for (const Bad& b : bad_point) {
    INFO(b.what);
    CHECK(public_key_well_formed(b.algorithm, b.key));
    CHECK(!PublicKey::import(b.algorithm, b.key));
    const Bytes rd = dnskey_of(b.algorithm, b.key);
    CHECK(!imported_key(rd));
    const ZoneKeys keys(zone, {rd});
    REQUIRE(keys.size() == 1);
    Bytes retagged = sig;
    retagged[2] = b.algorithm;
    retagged[16] = static_cast<std::uint8_t>(keys.keys()[0]->tag >> 8);
    retagged[17] = static_cast<std::uint8_t>(keys.keys()[0]->tag);
    Rrset set = rrset;
    set.rrsigs = {retagged};
    const Verified v = verify(set, keys, now);
    CHECK(v.outcome.verdict == Verdict::bogus);
    CHECK(v.outcome.ede == Ede::dnssec_bogus);
  }
  CHECK(!PublicKey::from_dnskey(Bytes{0x01, 0x01, 3}));  // RDATA shorter than its fixed fields
  CHECK(!PublicKey::import(5, Bytes(rsa.dnskey.begin() + 4, rsa.dnskey.end())));  // RSASHA1: not in the set
  CHECK(PublicKey::import(8, Bytes(rsa.dnskey.begin() + 4, rsa.dnskey.end())));
}

TEST_CASE("the cache of imported keys stays bounded and keeps serving the same keys", "[dnssec][openssl]") {
  LibdnssecSigner signer;
  const Bytes zone = name_from_text("sig.test.");
  const SigningKey key = signer.generate(15, 256, zone);
  const Rrset rrset{name_from_text("www.sig.test."), 1, 1, 3600, {{192, 0, 2, 1}}, {}};
  const auto now = static_cast<std::uint32_t>(std::time(nullptr));
  const Bytes sig = signer.sign(key, rrset, zone, now - 3600, now + 86400);
  const RrsigFields fields = *parse_rrsig(sig);
  const Bytes data = signed_data(rrset, fields, sig);
  CHECK(imported_key(key.dnskey).verify(data, fields.signature));
  // More distinct keys than the cache holds (Ed25519 imports do not check the point):
  // the first is dropped and imported again when asked, still the same key.
  for (std::size_t i = 0; i < kImportedKeysPerThread + 8; ++i) {
    Bytes k(32, 0x42);
    k[0] = static_cast<std::uint8_t>(i);
    k[1] = static_cast<std::uint8_t>(i >> 8);
    CHECK(imported_key(dnskey_of(15, k)));
    CHECK(imported_keys_cached() <= kImportedKeysPerThread);
  }
  CHECK(imported_keys_cached() == kImportedKeysPerThread);
  const PublicKey again = imported_key(key.dnskey);
  CHECK(again.verify(data, fields.signature));
  const PublicKey copy = again;  // copies share the EVP_PKEY
  CHECK(copy.verify(data, fields.signature));
  Bytes other_sig(fields.signature.begin(), fields.signature.end());
  other_sig[5] ^= 0x80;
  CHECK(!copy.verify(data, other_sig));
}
