// SPDX-License-Identifier: GPL-3.0-or-later
// The memo of verified signatures (dnssec/verified_signatures.hpp) under verify_rrset: a
// signature verified once is not verified again, and nothing the memo holds changes a
// verdict: an altered signature or data, another key, or a validity window that has
// passed are judged as without it.
#include <catch2/catch.hpp>

#include <ctime>

#include "dnssec/libdnssec_signer.hpp"
#include "dnssec/verified_signatures.hpp"
#include "dnssec/zone_keys.hpp"

using namespace dnsarena::dnssec;

namespace {

Verified memo_verify(const Rrset& set, const ZoneKeys& keys, std::uint32_t now) {
  const Limits limits;
  Budget budget(limits);
  return verify_rrset(set, keys, now, budget);
}

struct MemoFixture {
  LibdnssecSigner signer;
  Bytes zone = name_from_text("memo.test.");
  Rrset rrset{name_from_text("www.memo.test."), 1, 1, 3600, {{192, 0, 2, 1}, {192, 0, 2, 2}}, {}};
  std::uint32_t now = static_cast<std::uint32_t>(std::time(nullptr));
  SigningKey key = signer.generate(13, 256, zone);
  Rrset good = [this] {
    Rrset r = rrset;
    r.rrsigs = {signer.sign(key, rrset, zone, now - 3600, now + 86400)};
    return r;
  }();
};

}  // namespace

TEST_CASE("verified signatures: the second verification of the same RRSIG is remembered", "[dnssec][memo]") {
  MemoFixture s;
  VerifiedSignatures& memo = VerifiedSignatures::this_thread();
  memo.forget_all();
  const ZoneKeys keys(s.zone, {s.key.dnskey});
  CHECK(memo_verify(s.good, keys, s.now).outcome.verdict == Verdict::secure);
  CHECK(memo.hits() == 0);
  const Verified again = memo_verify(s.good, keys, s.now);
  CHECK(again.outcome.verdict == Verdict::secure);
  CHECK(memo.hits() == 1);
  REQUIRE(again.key_rdata != nullptr);
  CHECK(*again.key_rdata == s.key.dnskey);
}

TEST_CASE("verified signatures: what the memo holds never makes an altered RRset secure", "[dnssec][memo]") {
  MemoFixture s;
  VerifiedSignatures& memo = VerifiedSignatures::this_thread();
  memo.forget_all();
  const ZoneKeys keys(s.zone, {s.key.dnskey});
  REQUIRE(memo_verify(s.good, keys, s.now).outcome.verdict == Verdict::secure);

  Rrset bad_sig = s.good;
  bad_sig.rrsigs[0].back() ^= 0x01;
  CHECK(memo_verify(bad_sig, keys, s.now).outcome.verdict == Verdict::bogus);

  Rrset bad_data = s.good;
  bad_data.rdata[1][3] ^= 0x01;
  CHECK(memo_verify(bad_data, keys, s.now).outcome.verdict == Verdict::bogus);

  // Another key of the same zone: its tag differs, so the RRSIG names no key of it.
  const SigningKey other = s.signer.generate(13, 256, s.zone);
  const ZoneKeys other_keys(s.zone, {other.dnskey});
  CHECK(memo_verify(s.good, other_keys, s.now).outcome.verdict == Verdict::bogus);

  // The validity window is checked every time: past its expiration, EDE 7.
  const Verified late = memo_verify(s.good, keys, s.now + 2 * 86400);
  CHECK(late.outcome.verdict == Verdict::bogus);
  CHECK(late.outcome.ede == Ede::signature_expired);
  CHECK(memo.hits() == 0);
}

TEST_CASE("verified signatures: the digest separates its three parts", "[dnssec][memo]") {
  const Bytes ab{'a', 'b'}, c{'c'}, a{'a'}, bc{'b', 'c'}, sig{'s'};
  VerifiedSignatures::Digest d{}, split{}, again{};
  REQUIRE(VerifiedSignatures::digest(ab, c, sig, d));
  REQUIRE(VerifiedSignatures::digest(a, bc, sig, split));
  REQUIRE(VerifiedSignatures::digest(ab, c, sig, again));
  CHECK(d != split);
  CHECK(d == again);
  VerifiedSignatures& memo = VerifiedSignatures::this_thread();
  memo.forget_all();
  CHECK_FALSE(memo.contains(d));
  memo.remember(d);
  CHECK(memo.contains(d));
  memo.set_enabled(false);
  CHECK_FALSE(memo.contains(d));
  memo.set_enabled(true);
}
