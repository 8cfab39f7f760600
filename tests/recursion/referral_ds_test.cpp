// SPDX-License-Identifier: GPL-3.0-or-later
// workers/referral_ds.hpp on a real (tiny) segment: a signed referral's DS set, and an
// unsigned referral's proof that there is none, are cached under (child, DS, DO|CD) and
// read back as a validation job reads a fetched set (workers/dnssec_response.hpp); what
// is not a referral from above the child, or carries neither a signed DS set nor a
// signed proof, caches nothing.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "cache/cache.hpp"
#include "cache/entry_format.hpp"
#include "dnssec/rrset.hpp"
#include "tests/cache/test_segment.hpp"
#include "workers/dnssec_response.hpp"
#include "workers/referral_ds.hpp"

namespace {

using dnsarena::common::Bytes;
using dnsarena::dnssec::name_from_text;
namespace ds = dnsarena::dnssec;

ds::Rrset rrset(const std::string& owner, std::uint16_t type, std::uint32_t ttl, Bytes rdata) {
  ds::Rrset s;
  s.owner = name_from_text(owner);
  s.type = type;
  s.ttl = ttl;
  s.rdata.push_back(std::move(rdata));
  return s;
}

// RRSIG RDATA covering `type`, signed by `signer`: algorithm 13, made-up times and signature.
Bytes rrsig(std::uint16_t type, const std::string& signer) {
  Bytes sig = {static_cast<std::uint8_t>(type >> 8), static_cast<std::uint8_t>(type), 13, 2, 0, 0, 14, 16};
  sig.append(10, 7);  // expiration, inception, key tag
  sig += name_from_text(signer);
  sig.append(64, 0x5a);
  return sig;
}

// A referral from example. to child.example.: its NS set, and `extra` in authority.
ds::Response referral(std::vector<ds::Rrset> extra) {
  ds::Response r;
  r.qname = name_from_text("www.child.example.");
  r.qtype = 1;
  r.authority.push_back(rrset("child.example.", ds::kTypeNs, 3600, name_from_text("ns.child.example.")));
  for (ds::Rrset& s : extra) r.authority.push_back(std::move(s));
  return r;
}

// NSEC RDATA: the next owner, then a type bitmap of window 0 (NS, RRSIG, NSEC: no DS).
Bytes nsec_no_ds(const std::string& next) {
  Bytes rdata = name_from_text(next);
  rdata += Bytes{0, 6, 0x20, 0, 0, 0, 0, 0x03};
  return rdata;
}

struct Fixture {
  dnsarena::test::TestSegment seg{dnsarena::test::tiny_geometry(1000, 64 << 10, 8), "refds"};
  dnsarena::cache::Cache cache{seg.seg};
  dnsarena::workers::TtlPolicy ttl;
  dnsarena::workers::ReferralDs keeper{cache, ttl};
  std::unique_ptr<dnsarena::cache::EntryCopy> copy = std::make_unique<dnsarena::cache::EntryCopy>();

  // The cached answer to (name, DS) as a validation job reads it; false: none.
  bool read(const std::string& name, ds::Response& out) {
    const dnsarena::cache::CacheKey key(name_from_text(name), ds::kTypeDs,
                                        dnsarena::cache::kKeyDo | dnsarena::cache::kKeyCd);
    if (cache.peek(key, dnsarena::cache::wall_clock_now(), *copy) != dnsarena::cache::LookupStatus::hit) return false;
    dnsarena::cache::EntryReader entry(copy->span());
    return entry.valid() && dnsarena::workers::to_dnssec_response(entry, out);
  }
};

}  // namespace

TEST_CASE("a signed referral's DS set is cached for the child's DS question", "[recursion][dnssec]") {
  Fixture f;
  ds::Rrset ds_set = rrset("child.example.", ds::kTypeDs, 3600, Bytes(36, 0x11));
  ds_set.rrsigs.push_back(rrsig(ds::kTypeDs, "example."));
  REQUIRE(f.keeper.keep(referral({ds_set}), name_from_text("example.")));
  ds::Response got;
  REQUIRE(f.read("child.example.", got));
  CHECK(got.rcode == 0);
  REQUIRE(got.answer.size() == 1);
  CHECK(got.answer[0].type == ds::kTypeDs);
  CHECK(got.answer[0].rrsigs.size() == 1);
}

TEST_CASE("an unsigned referral's signed proof of no DS is cached as a denial of the child's DS",
          "[recursion][dnssec]") {
  Fixture f;
  ds::Rrset nsec = rrset("child.example.", ds::kTypeNsec, 300, nsec_no_ds("d.example."));
  nsec.rrsigs.push_back(rrsig(ds::kTypeNsec, "example."));
  // An NSEC3 record as an NSEC3 zone's referral carries it (owner a hash label).
  ds::Rrset nsec3 = rrset("0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.example.", ds::kTypeNsec3, 600, Bytes(30, 0x01));
  nsec3.rrsigs.push_back(rrsig(ds::kTypeNsec3, "example."));
  REQUIRE(f.keeper.keep(referral({nsec, nsec3}), name_from_text("example.")));
  ds::Response got;
  REQUIRE(f.read("child.example.", got));
  CHECK(got.rcode == 0);
  CHECK(got.answer.empty());
  REQUIRE(got.authority.size() == 2);
  for (const ds::Rrset& s : got.authority) {
    INFO("type " << s.type);
    CHECK((s.type == ds::kTypeNsec || s.type == ds::kTypeNsec3));
    CHECK(s.rrsigs.size() == 1);
    CHECK(s.ttl <= 300);  // the shortest of the proof's TTLs
  }
  const auto nsec_read = std::find_if(got.authority.begin(), got.authority.end(),
                                      [](const ds::Rrset& s) { return s.type == ds::kTypeNsec; });
  REQUIRE(nsec_read != got.authority.end());
  CHECK(nsec_read->owner == name_from_text("child.example."));
  CHECK(nsec_read->rdata == nsec.rdata);
}

TEST_CASE("what is no referral from above the child, or proves nothing signed, caches nothing",
          "[recursion][dnssec]") {
  Fixture f;
  ds::Rrset unsigned_nsec = rrset("child.example.", ds::kTypeNsec, 300, nsec_no_ds("d.example."));
  ds::Rrset signed_nsec = unsigned_nsec;
  signed_nsec.rrsigs.push_back(rrsig(ds::kTypeNsec, "example."));
  ds::Rrset unsigned_ds = rrset("child.example.", ds::kTypeDs, 3600, Bytes(36, 0x11));

  CHECK_FALSE(f.keeper.keep(referral({}), name_from_text("example.")));               // no proof at all
  CHECK_FALSE(f.keeper.keep(referral({unsigned_nsec}), name_from_text("example.")));  // an NSEC without RRSIG
  ds::Rrset elsewhere = rrset("b.example.", ds::kTypeNsec, 300, nsec_no_ds("d.example."));
  elsewhere.rrsigs.push_back(rrsig(ds::kTypeNsec, "example."));
  CHECK_FALSE(f.keeper.keep(referral({elsewhere}), name_from_text("example.")));  // an NSEC not at the child
  CHECK_FALSE(f.keeper.keep(referral({unsigned_ds, signed_nsec}), name_from_text("example.")));  // DS unsigned
  CHECK_FALSE(f.keeper.keep(referral({signed_nsec}), name_from_text("child.example.")));  // the child's own server
  CHECK_FALSE(f.keeper.keep(referral({signed_nsec}), name_from_text("other.")));          // not its parent's
  ds::Response answer = referral({signed_nsec});
  answer.aa = true;  // an authoritative answer, not a referral
  CHECK_FALSE(f.keeper.keep(answer, name_from_text("example.")));
  ds::Response nxdomain = referral({signed_nsec});
  nxdomain.rcode = 3;
  CHECK_FALSE(f.keeper.keep(nxdomain, name_from_text("example.")));
  ds::Response got;
  CHECK_FALSE(f.read("child.example.", got));
}
