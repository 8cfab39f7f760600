// SPDX-License-Identifier: GPL-3.0-or-later
// The validator against zones knotd signed in the test (signed_zones.hpp): secure answers
// and denials for each algorithm and for NSEC and NSEC3, insecure delegations, and broken
// variants made on purpose, each with its verdict and EDE.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <set>

#include "dns/message.hpp"
#include "dnssec/denial.hpp"
#include "dnssec/dnskey_trust.hpp"
#include "tests/dnssec/chain_runner.hpp"
#include "wire/dns_name.hpp"

using namespace dnsarena::dnssec;
using namespace dnsarena::dnssec::test;

namespace {

constexpr std::uint16_t kA = 1, kAaaa = 28, kTxt = 16;

SignedZones& zones() {
  static SignedZones z;  // one knotd for the whole binary: signing costs a second
  return z;
}

TrustAnchors anchors() {
  TrustAnchors a;
  a.add_file(zones().anchor_ds_file());
  return a;
}

std::string describe(const RunResult& r) {
  return std::string(verdict_name(r.outcome.verdict)) + " ede=" + std::to_string(static_cast<int>(r.outcome.ede)) +
         " (" + std::string(r.outcome.why) + ") validations=" + std::to_string(r.counters.signature_validations) +
         " hashes=" + std::to_string(r.counters.nsec3_hashes);
}

void require(const RunResult& r, Verdict v, Ede e = Ede::none) {
  INFO(describe(r));
  CHECK(r.outcome.verdict == v);
  CHECK(r.outcome.ede == e);
}

// The earliest inception and expiration among the RRSIGs of a response.
std::pair<std::uint32_t, std::uint32_t> window(const Response& r) {
  for (const Rrset& s : r.answer)
    for (const Bytes& rd : s.rrsigs)
      if (auto f = parse_rrsig(rd)) return {f->inception, f->expiration};
  FAIL("no RRSIG in the answer");
  return {0, 0};
}

// Base32hex (RFC 4648 section 7), the NSEC3 owner label.
Bytes base32hex(std::span<const std::uint8_t> text) {
  Bytes out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::uint8_t c : text) {
    acc = acc << 5 | static_cast<std::uint32_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    if ((bits += 5) >= 8) out.push_back(static_cast<std::uint8_t>(acc >> (bits -= 8)));
  }
  return out;
}

// True when the NSEC or NSEC3 set covers or matches `name` (the test's own reading, for
// choosing records that do not).
bool covers(const Rrset& s, const Bytes& name) {
  const Bytes& rd = s.rdata.at(0);
  if (s.type == kTypeNsec) {
    const Bytes next = lowercase_name({rd.data(), rd.size()});
    return canonical_compare(s.owner, name) <= 0 &&
           (canonical_compare(next, s.owner) <= 0 || canonical_compare(name, next) < 0);
  }
  const Bytes salt(rd.begin() + 5, rd.begin() + 5 + rd[4]);
  const Bytes h = nsec3_hash(name, static_cast<std::uint16_t>(rd[2] << 8 | rd[3]), salt);
  const Bytes owner = base32hex({s.owner.data() + 1, s.owner[0]});
  const std::size_t at = 6u + rd[4];
  const Bytes next(rd.begin() + static_cast<std::ptrdiff_t>(at), rd.begin() + static_cast<std::ptrdiff_t>(at + rd[at - 1]));
  return owner < next ? (owner <= h && h < next) : (owner <= h || h < next);
}

}  // namespace

TEST_CASE("secure answers for every algorithm, NSEC and NSEC3", "[dnssec][zones]") {
  const TrustAnchors a = anchors();
  for (const char* name : {"www.test.", "www.rsa.test.", "www.ed.test.", "www.n3.test.", "www.optout.test."}) {
    INFO(name);
    const RunResult r = validate_name(zones(), a, name, kA);
    require(r, Verdict::secure);
    CHECK(r.counters.signature_validations >= 2);
  }
}

TEST_CASE("secure denials: NXDOMAIN and NODATA by NSEC and NSEC3", "[dnssec][zones]") {
  const TrustAnchors a = anchors();
  for (const char* name : {"nope.test.", "nope.rsa.test.", "c.ed.test.", "nope.n3.test.", "x.y.z.n3.test."}) {
    INFO(name);
    const Response resp = zones().fetch(std::string(name), kA);
    REQUIRE(resp.rcode == 3);
    require(run_validation(zones(), a, resp), Verdict::secure);
  }
  for (const char* name : {"www.test.", "www.rsa.test.", "www.ed.test.", "www.n3.test."}) {
    INFO(name);
    const Response resp = zones().fetch(std::string(name), kAaaa);
    REQUIRE(resp.rcode == 0);
    REQUIRE(resp.answer.empty());
    require(run_validation(zones(), a, resp), Verdict::secure);
  }
  // Empty non-terminal under NSEC3 and a wildcard NODATA.
  require(validate_name(zones(), a, "a.wild.n3.test.", kA), Verdict::secure);
  require(validate_name(zones(), a, "a.wild.rsa.test.", kA), Verdict::secure);
}

TEST_CASE("wildcard answers need the next closer name denied", "[dnssec][zones]") {
  const TrustAnchors a = anchors();
  for (const char* name : {"a.wild.test.", "a.wild.rsa.test.", "x.wild.ed.test.", "q.wild.n3.test."}) {
    INFO(name);
    const Response resp = zones().fetch(std::string(name), name == std::string("a.wild.test.") ? kA : kTxt);
    REQUIRE(!resp.answer.empty());
    require(run_validation(zones(), a, resp), Verdict::secure);

    // Stripped: no NSEC / NSEC3 at all.
    Response stripped = resp;
    std::erase_if(stripped.authority, [](const Rrset& s) { return s.type == kTypeNsec || s.type == kTypeNsec3; });
    require(run_validation(zones(), a, stripped), Verdict::bogus, Ede::nsec_missing);

    // Forged: the denial records replaced by genuine, validly signed ones of the same zone
    // (from NODATA answers at its names) that do not cover the next closer name.
    const std::string zone = std::string(name).substr(std::string(name).find("wild.") + 5);
    const Bytes next_closer = name_from_text(name);
    Response forged = stripped;
    for (const char* other : {"", "b.", "d.", "ns.", "www.", "wild.", "*.wild."})
      for (const Rrset& s : zones().fetch(other + zone, kAaaa).authority)
        if ((s.type == kTypeNsec || s.type == kTypeNsec3) && !covers(s, next_closer) &&
            !find_rrset(forged.authority, s.owner, s.type))
          forged.authority.push_back(s);
    REQUIRE(forged.authority.size() > stripped.authority.size());
    require(run_validation(zones(), a, forged), Verdict::bogus, Ede::dnssec_bogus);
  }
}

TEST_CASE("insecure delegations, unsupported algorithms and digests, opt-out, iterations", "[dnssec][zones]") {
  const TrustAnchors a = anchors();
  require(validate_name(zones(), a, "www.unsigned.test.", kA), Verdict::insecure);
  require(validate_name(zones(), a, "nope.unsigned.test.", kA), Verdict::insecure);
  require(validate_name(zones(), a, "www.unsupalg.test.", kA), Verdict::insecure, Ede::unsupported_dnskey_algorithm);
  require(validate_name(zones(), a, "www.unsupdigest.test.", kA), Verdict::insecure, Ede::unsupported_ds_digest_type);
  // An unsigned delegation under opt-out: its DS denial is insecure (RFC 5155 8.6).
  const Response ds = zones().fetch(std::string("deleg.optout.test."), kTypeDs);
  require(run_validation(zones(), a, ds), Verdict::insecure);
  // 200 NSEC3 iterations: answers are signed and secure; denials are insecure (RFC 9276).
  require(validate_name(zones(), a, "www.hiter.test.", kA), Verdict::secure);
  const RunResult it = validate_name(zones(), a, "nope.hiter.test.", kA);
  require(it, Verdict::insecure);
  CHECK(it.counters.nsec3_iterations_over);
  CHECK(it.counters.nsec3_hashes == 0);  // refused before hashing
}

TEST_CASE("DS records of digest types 2 and 4 (keymgr's) match the child's key", "[dnssec][zones]") {
  for (const char* zone : {"rsa.test.", "ed.test.", "n3.test."}) {
    INFO(zone);
    const Bytes z = name_from_text(zone);
    const Response ds = zones().fetch(z, kTypeDs);
    const Response keys = zones().fetch(z, kTypeDnskey);
    const Rrset* ds_set = find_rrset(ds.answer, z, kTypeDs);
    const Rrset* key_set = find_rrset(keys.answer, z, kTypeDnskey);
    REQUIRE(ds_set);
    REQUIRE(key_set);
    std::set<int> digests;
    for (const Bytes& d : ds_set->rdata) {
      digests.insert(d[3]);
      CHECK(ds_matches_dnskey(d, z, key_set->rdata.at(0)));
    }
    CHECK(digests == std::set<int>{2, 4});
  }
}

TEST_CASE("a DS that matches no DNSKEY is bogus: DNSKEY Missing", "[dnssec][zones]") {
  require(validate_name(zones(), anchors(), "www.badds.test.", kA), Verdict::bogus, Ede::dnskey_missing);
  TrustAnchors wrong;
  wrong.add_text("test. DS 1 13 2 " + std::string(64, '0'));
  require(validate_name(zones(), wrong, "www.test.", kA), Verdict::bogus, Ede::dnskey_missing);
}

TEST_CASE("expired and not yet valid signatures", "[dnssec][zones]") {
  const TrustAnchors a = anchors();
  const Response resp = zones().fetch(std::string("www.rsa.test."), kA);
  const auto [inception, expiration] = window(resp);
  require(run_validation(zones(), a, resp, {}, expiration + 86400), Verdict::bogus, Ede::signature_expired);
  require(run_validation(zones(), a, resp, {}, inception - 86400), Verdict::bogus, Ede::signature_not_yet_valid);
  const RunResult early = run_validation(zones(), a, resp, {}, inception + 1);
  require(early, Verdict::secure);
  CHECK(early.outcome.max_ttl == 3600);  // the original TTL (RFC 4035 5.3.3)
  const RunResult late = run_validation(zones(), a, resp, {}, expiration - 100);
  CHECK(late.outcome.max_ttl == 100);    // the time left before the RRSIG expires
  require(run_validation(zones(), a, resp, {}, expiration), Verdict::secure);  // inclusive (RFC 4035 5.3.1)
}

TEST_CASE("missing RRSIGs, stripped NSEC, altered data", "[dnssec][zones]") {
  const TrustAnchors a = anchors();
  Response resp = zones().fetch(std::string("www.ed.test."), kA);
  Response unsigned_answer = resp;
  for (Rrset& s : unsigned_answer.answer) s.rrsigs.clear();
  require(run_validation(zones(), a, unsigned_answer), Verdict::bogus, Ede::rrsigs_missing);

  // An unrelated set riding along the signed answer: checked like the rest.
  Response riding = resp;
  riding.answer.push_back(Rrset{name_from_text("evil.ed.test."), kA, 1, 3600, {{192, 0, 2, 99}}, {}});
  require(run_validation(zones(), a, riding), Verdict::bogus, Ede::rrsigs_missing);

  Response altered = resp;
  altered.answer.at(0).rdata.at(0) = {192, 0, 2, 66};
  require(run_validation(zones(), a, altered), Verdict::bogus, Ede::dnssec_bogus);

  for (const char* name : {"nope.ed.test.", "nope.n3.test."}) {
    INFO(name);
    Response nx = zones().fetch(std::string(name), kA);
    std::erase_if(nx.authority, [](const Rrset& s) { return s.type == kTypeNsec || s.type == kTypeNsec3; });
    require(run_validation(zones(), a, nx), Verdict::bogus, Ede::nsec_missing);
  }
  // A signed NXDOMAIN turned into NODATA (the rcode is not signed): the records deny the
  // name, not the type, so NODATA is not proven.
  Response nodata = zones().fetch(std::string("nope.rsa.test."), kA);
  nodata.rcode = 0;
  require(run_validation(zones(), a, nodata), Verdict::bogus, Ede::dnssec_bogus);
  // The child's DNSKEY set stripped of its signatures on the way (the chain's fetch).
  const RunResult r = run_validation(zones(), a, resp, {}, now_seconds(), [](const Need& n, Response& reply) {
    if (n.type == kTypeDnskey && n.name == name_from_text("ed.test."))
      for (Rrset& s : reply.answer) s.rrsigs.clear();
  });
  require(r, Verdict::bogus, Ede::rrsigs_missing);
}

TEST_CASE("negative trust anchors and names without an anchor", "[dnssec][zones]") {
  TrustAnchors a = anchors();
  a.add_negative(name_from_text("badds.test."));
  require(validate_name(zones(), a, "www.badds.test.", kA), Verdict::insecure);
  require(validate_name(zones(), a, "www.rsa.test.", kA), Verdict::secure);
  a.add_negative(name_from_text("test."));
  require(validate_name(zones(), a, "www.rsa.test.", kA), Verdict::insecure);
  TrustAnchors other;
  other.add_text("example. DS 1 13 2 " + std::string(64, '0'));
  require(validate_name(zones(), other, "www.test.", kA), Verdict::indeterminate);
}

TEST_CASE("the anchor as DNSKEY, in Unbound's root.key format", "[dnssec][zones]") {
  TrustAnchors a;
  a.add_file(zones().anchor_dnskey_file());
  REQUIRE(a.anchors().size() == 1);
  CHECK(a.anchors()[0].dnskeys.size() == 1);
  require(validate_name(zones(), a, "www.n3.test.", kA), Verdict::secure);
}

TEST_CASE("bounds: signature validations and NSEC3 hashes per validation", "[dnssec][zones][hostile]") {
  const TrustAnchors a = anchors();
  Limits tight;
  tight.max_signature_validations = 2;  // the anchor's DNSKEY, the child's DS, then none
  const RunResult r = validate_name(zones(), a, "www.rsa.test.", kA, tight);
  require(r, Verdict::bogus, Ede::dnssec_bogus);
  CHECK(r.counters.signature_limit_hit);
  CHECK(r.counters.signature_validations == 2);

  // A deep name under NSEC3: each label of the closest encloser proof is one hash.
  Limits few_hashes;
  few_hashes.max_nsec3_hashes = 3;
  const RunResult h = validate_name(zones(), a, "a.b.c.d.e.f.n3.test.", kA, few_hashes);
  require(h, Verdict::bogus, Ede::dnssec_bogus);
  CHECK(h.counters.nsec3_hash_limit_hit);
  CHECK(h.counters.nsec3_hashes == 3);
  const RunResult ok = validate_name(zones(), a, "a.b.c.d.e.f.n3.test.", kA);
  require(ok, Verdict::secure);
  CHECK(ok.counters.nsec3_hashes > 3);
}

namespace {

// An RSA DNSKEY (flags 256) that is not the zone's but carries key tag `tag`: a random
// modulus whose last two bytes are searched for the tag (RFC 4034 appendix B's checksum).
Bytes rsa_key_with_tag(std::uint16_t tag, std::uint32_t seed) {
  Bytes rd{0x01, 0x00, 3, 8, 3, 0x01, 0x00, 0x01};  // flags 256, protocol 3, alg 8, e = 65537
  std::uint32_t x = seed * 2654435761u + 1;
  for (int i = 0; i < 256; ++i) {
    x = x * 1103515245u + 12345u;
    rd.push_back(static_cast<std::uint8_t>(x >> 16));
  }
  rd[8] |= 0x80;  // a full 2048-bit modulus
  for (std::uint32_t v = 0; v < 65536; ++v) {
    rd[rd.size() - 2] = static_cast<std::uint8_t>(v >> 8);
    rd[rd.size() - 1] = static_cast<std::uint8_t>(v);
    std::uint32_t ac = 0;
    for (std::size_t i = 0; i < rd.size(); ++i) ac += (i & 1) ? rd[i] : static_cast<std::uint32_t>(rd[i]) << 8;
    ac += ac >> 16;
    if ((ac & 0xffff) == tag) return rd;
  }
  FAIL("no modulus with the key tag");
  return {};
}

}  // namespace

TEST_CASE("KeyTrap: keys sharing the RRSIG's key tag are tried at most max_key_tag_collisions times",
          "[dnssec][zones][hostile]") {
  const Response answer = zones().fetch(std::string("www.rsa.test."), kA);
  const Response keys = zones().fetch(std::string("rsa.test."), kTypeDnskey);
  const Rrset* dnskey = find_rrset(keys.answer, name_from_text("rsa.test."), kTypeDnskey);
  REQUIRE(dnskey);
  REQUIRE(dnskey->rdata.size() == 1);
  const Rrset& a = answer.answer.at(0);
  const std::uint16_t tag = parse_rrsig(a.rrsigs.at(0))->key_tag;

  // Ten impostors before the real key: the hostile zone's DNSKEY set.
  std::vector<Bytes> hostile;
  for (std::uint32_t i = 0; i < 10; ++i) hostile.push_back(rsa_key_with_tag(tag, i));
  hostile.push_back(dnskey->rdata[0]);
  const ZoneKeys zone_keys(name_from_text("rsa.test."), hostile);
  REQUIRE(zone_keys.size() == 11);

  Budget bounded(Limits{});
  const Verified v = verify_rrset(a, zone_keys, now_seconds(), bounded);
  CHECK(v.outcome.verdict == Verdict::bogus);
  CHECK(bounded.counters().signature_validations == Limits{}.max_key_tag_collisions);
  CHECK(bounded.counters().key_tag_collisions_skipped == 7);

  Limits lax;
  lax.max_key_tag_collisions = 16;
  Budget unbounded(lax);
  CHECK(verify_rrset(a, zone_keys, now_seconds(), unbounded).outcome.verdict == Verdict::secure);
  CHECK(unbounded.counters().signature_validations == 11);

  // Many RRSIGs of that tag (the other half of KeyTrap): the validation budget stops them.
  Rrset many = a;
  for (int i = 0; i < 20; ++i) {
    Bytes sig = a.rrsigs[0];
    sig.back() ^= static_cast<std::uint8_t>(i + 1);
    many.rrsigs.insert(many.rrsigs.begin(), sig);
  }
  Budget b2(lax);
  const Verified v2 = verify_rrset(many, zone_keys, now_seconds(), b2);
  CHECK(v2.outcome.verdict == Verdict::bogus);
  CHECK(b2.counters().signature_limit_hit);
  CHECK(b2.counters().signature_validations == lax.max_signature_validations);
}

TEST_CASE("CNAME chains across zones take the weakest verdict", "[dnssec][zones]") {
  const TrustAnchors a = anchors();
  // knotd answers the CNAME of its zone only; a forwarder's upstream gives the whole chain:
  // the chain is the CNAME reply with the target's answer appended.
  const auto chain = [](const char* alias, const char* target) {
    Response r = zones().fetch(std::string(alias), kA);
    const Response t = zones().fetch(std::string(target), kA);
    r.answer.insert(r.answer.end(), t.answer.begin(), t.answer.end());
    return r;
  };
  const Response secure = chain("alias.test.", "www.rsa.test.");
  REQUIRE(secure.answer.size() == 2);
  const RunResult s = run_validation(zones(), a, secure);
  require(s, Verdict::secure);
  require(run_validation(zones(), a, chain("toinsecure.test.", "www.unsigned.test.")), Verdict::insecure);

  Response unsigned_target = secure;
  unsigned_target.answer.back().rrsigs.clear();
  require(run_validation(zones(), a, unsigned_target), Verdict::bogus, Ede::rrsigs_missing);
  Response unsigned_alias = secure;
  unsigned_alias.answer.front().rrsigs.clear();
  require(run_validation(zones(), a, unsigned_alias), Verdict::bogus, Ede::rrsigs_missing);
  // The chain cut short: the alias alone proves nothing about its target.
  require(validate_name(zones(), a, "alias.test.", kA), Verdict::bogus, Ede::nsec_missing);
}

TEST_CASE("an anchor or a negative anchor below an established zone takes over there", "[dnssec][zones]") {
  // One response with sets of two zones: the walk establishes test. first (the alias),
  // then meets the NTA at rsa.test. on the way to the target's signer.
  TrustAnchors a = anchors();
  a.add_negative(name_from_text("rsa.test."));
  Response r = zones().fetch(std::string("alias.test."), kA);
  const Response t = zones().fetch(std::string("www.rsa.test."), kA);
  r.answer.insert(r.answer.end(), t.answer.begin(), t.answer.end());
  require(run_validation(zones(), a, r), Verdict::insecure);

  // A second anchor for ed.test. itself, wrong: the deeper anchor governs, and fails. (The
  // response carries a set of ed.test. beside the answer; every signer's zone is walked.)
  TrustAnchors two = anchors();
  two.add_text("ed.test. DS 1 15 2 " + std::string(64, '0'));
  Response e = zones().fetch(std::string("www.test."), kA);
  const Response et = zones().fetch(std::string("www.ed.test."), kA);
  e.answer.insert(e.answer.end(), et.answer.begin(), et.answer.end());
  require(run_validation(zones(), two, e), Verdict::bogus, Ede::dnskey_missing);
}

TEST_CASE("hostile bytes: mutated replies never crash, a changed signed byte is never secure",
          "[dnssec][zones][hostile]") {
  const TrustAnchors a = anchors();
  std::uint32_t x = 12345;  // fixed seed: the same mutations every run
  const auto next = [&x] {
    x = x * 1103515245u + 12345u;
    return x >> 8;
  };
  for (const char* name : {"www.rsa.test.", "nope.n3.test.", "a.wild.ed.test."}) {
    INFO(name);
    const std::vector<std::uint8_t> wire = zones().ask(std::string(name), std::string(name) == "a.wild.ed.test." ? kTxt : kA);
    REQUIRE(!wire.empty());
    // Whole-message mutations: parse or not; when it parses, the validation ends.
    for (int i = 0; i < 300; ++i) {
      std::vector<std::uint8_t> m = wire;
      for (int k = 0; k < 1 + static_cast<int>(next() % 4); ++k) m[12 + next() % (m.size() - 12)] ^= static_cast<std::uint8_t>(1 + next() % 255);
      Response r;
      std::string error;
      if (!parse_response(m, r, error)) continue;
      const RunResult res = run_validation(zones(), a, r);
      CHECK(res.steps <= Validation::kMaxSteps);
    }
    // One byte of signed RDATA changed: never secure.
    const Response base = zones().fetch(std::string(name), std::string(name) == "a.wild.ed.test." ? kTxt : kA);
    for (int i = 0; i < 40; ++i) {
      Response r = base;
      std::vector<Rrset*> sets;
      for (Rrset& s : r.answer) sets.push_back(&s);
      for (Rrset& s : r.authority)
        if (s.type != kTypeNs) sets.push_back(&s);
      Rrset& s = *sets[next() % sets.size()];
      Bytes& rd = s.rdata[next() % s.rdata.size()];
      rd[next() % rd.size()] ^= static_cast<std::uint8_t>(1 + next() % 255);
      const RunResult res = run_validation(zones(), a, r);
      INFO("mutated set type " << s.type << ": " << describe(res));
      CHECK(res.outcome.verdict != Verdict::secure);
    }
  }
}

TEST_CASE("a parent's NSEC at a delegation denies nothing in the child (RFC 6840 4.1)", "[dnssec][zones][hostile]") {
  const TrustAnchors a = anchors();
  // test.'s own NXDOMAIN for rsb.test.: its NSEC at the delegation rsa.test. (NS, DS, no
  // SOA) runs to the next name of test. and so spans every name under rsa.test.
  const Response parent_denial = zones().fetch(std::string("rsb.test."), kA);
  REQUIRE(parent_denial.rcode == 3);
  require(run_validation(zones(), a, parent_denial), Verdict::secure);
  REQUIRE(find_rrset(parent_denial.authority, name_from_text("rsa.test."), kTypeNsec));
  // Replayed as the answer for www.rsa.test., which exists in the signed child.
  Response forged = parent_denial;
  forged.qname = name_from_text("www.rsa.test.");
  require(run_validation(zones(), a, forged), Verdict::bogus, Ede::dnssec_bogus);
  forged.rcode = 0;  // as NODATA
  require(run_validation(zones(), a, forged), Verdict::bogus, Ede::dnssec_bogus);
}

TEST_CASE("DNAME: the synthesized CNAME needs no signature, a changed one is bogus", "[dnssec][zones]") {
  const TrustAnchors a = anchors();
  Response r = zones().fetch(std::string("www.dn.test."), kA);
  REQUIRE(find_rrset(r.answer, name_from_text("dn.test."), kTypeDname));
  const Response t = zones().fetch(std::string("www.rsa.test."), kA);
  for (const Rrset& s : t.answer)
    if (!find_rrset(r.answer, s.owner, s.type)) r.answer.push_back(s);
  require(run_validation(zones(), a, r), Verdict::secure);

  Response changed = r;
  for (Rrset& s : changed.answer)
    if (s.type == kTypeCname) s.rdata.at(0) = name_from_text("www.ed.test.");
  const Response e = zones().fetch(std::string("www.ed.test."), kA);
  changed.answer.insert(changed.answer.end(), e.answer.begin(), e.answer.end());
  require(run_validation(zones(), a, changed), Verdict::bogus, Ede::rrsigs_missing);
}

TEST_CASE("a parent's key does not speak for data below an established cut", "[dnssec][zones][hostile]") {
  const TrustAnchors a = anchors();
  // www.rsa.test. (signed by rsa.test., which the walk establishes) and the parent's
  // NSEC for rsb.test. moved below the cut: an NSEC owned by x.rsa.test. but signed by
  // test. The signature no longer matches the owner either; what is checked first is who
  // may sign there at all.
  Response r = zones().fetch(std::string("www.rsa.test."), kA);
  const Response parent = zones().fetch(std::string("rsb.test."), kA);
  const Rrset* nsec = find_rrset(parent.authority, name_from_text("rsa.test."), kTypeNsec);
  REQUIRE(nsec);
  Rrset moved = *nsec;
  moved.owner = name_from_text("x.rsa.test.");
  r.authority.push_back(moved);
  const RunResult res = run_validation(zones(), a, r);
  require(res, Verdict::bogus, Ede::dnssec_bogus);
  CHECK(res.outcome.why == "RRSIG signer above the zone that holds the name");
  // At the cut itself the parent's set is fine: the DS question's answer.
  require(validate_name(zones(), a, "rsa.test.", kTypeDs), Verdict::secure);
}

TEST_CASE("an insecure NSEC3 zone met earlier does not make a later unproven denial insecure",
          "[dnssec][zones][hostile]") {
  const TrustAnchors a = anchors();
  // Two unsigned sets: x.hiter.test. (walked first: its DS denial has 200 iterations, so
  // that name is insecure) and www.ed.test., whose DS denial is stripped on the way.
  Response r = zones().fetch(std::string("www.test."), kA);
  r.answer.push_back(Rrset{name_from_text("www.ed.test."), kA, 1, 3600, {{192, 0, 2, 7}}, {}});
  r.answer.push_back(Rrset{name_from_text("x.hiter.test."), kA, 1, 3600, {{192, 0, 2, 8}}, {}});
  const RunResult res = run_validation(zones(), a, r, {}, now_seconds(), [](const Need& n, Response& reply) {
    if (n.type == kTypeDs && n.name == name_from_text("www.ed.test."))
      std::erase_if(reply.authority, [](const Rrset& s) { return s.type == kTypeNsec || s.type == kTypeNsec3; });
  });
  CHECK(res.counters.nsec3_iterations_over);
  require(res, Verdict::bogus, Ede::nsec_missing);
}

TEST_CASE("SectionBuilder from another parser's records equals parse_response", "[dnssec][zones]") {
  for (const char* name : {"www.rsa.test.", "nope.n3.test.", "a.wild.ed.test.", "test."}) {
    INFO(name);
    const std::uint16_t type = std::string(name) == "test." ? kTypeDnskey : kA;
    const std::vector<std::uint8_t> wire = zones().ask(std::string(name), type);
    Response direct;
    std::string error;
    REQUIRE(parse_response(wire, direct, error));
    dnsarena::dns::Message m;
    REQUIRE(dnsarena::dns::parse_message(wire, m, true) == dnsarena::dns::ParseStatus::ok);
    for (auto [records, sets] : {std::pair{&m.answer, &direct.answer}, std::pair{&m.authority, &direct.authority}}) {
      SectionBuilder b;
      // Reversed, and the owner in upper case: order and case must not matter.
      for (auto it = records->rbegin(); it != records->rend(); ++it) {
        std::string upper = it->owner;
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        const auto owner = dnsarena::wire::name_to_wire(upper);
        b.add(owner, it->type, 1, it->ttl, it->rdata);
      }
      std::vector<Rrset> built = b.finish();
      REQUIRE(built.size() == sets->size());
      for (const Rrset& s : *sets) {
        const Rrset* t = find_rrset(built, s.owner, s.type);
        REQUIRE(t);
        CHECK(std::set<Bytes>(t->rdata.begin(), t->rdata.end()) == std::set<Bytes>(s.rdata.begin(), s.rdata.end()));
        CHECK(std::set<Bytes>(t->rrsigs.begin(), t->rrsigs.end()) == std::set<Bytes>(s.rrsigs.begin(), s.rrsigs.end()));
      }
    }
  }
}

TEST_CASE("seeded with an earlier validation's zones, a miss costs one verification", "[dnssec][zones]") {
  const TrustAnchors a = anchors();
  Validation cold(a, Limits{}, now_seconds());
  cold.start(zones().fetch(std::string("www.rsa.test."), kA));
  while (const auto& need = cold.need()) {
    Response reply = zones().fetch(need->name, need->type);
    cold.provide(&reply);
  }
  REQUIRE(cold.outcome().verdict == Verdict::secure);
  CHECK(cold.steps() == 3);  // DNSKEY test., DS rsa.test., DNSKEY rsa.test.
  CHECK(cold.counters().signature_validations == 4);
  const std::uint32_t kept = cold.zones().at(name_from_text("rsa.test.")).outcome.max_ttl;
  CHECK(kept > 0);
  CHECK(kept <= 3600);  // the DS set's TTL in test. (its $TTL)

  const RunResult warm = run_seeded(zones(), a, cold.zones(), zones().fetch(std::string("b.rsa.test."), kA));
  require(warm, Verdict::secure);
  CHECK(warm.steps == 0);
  CHECK(warm.counters.signature_validations == 1);
  const RunResult nx = run_seeded(zones(), a, cold.zones(), zones().fetch(std::string("nope.rsa.test."), kA));
  require(nx, Verdict::secure);
  CHECK(nx.steps == 0);

  // Seeded with the wrong keys for rsa.test. (ed.test.'s): nothing verifies.
  ZoneTrustMap wrong;
  const Response ed_keys = zones().fetch(std::string("ed.test."), kTypeDnskey);
  wrong[name_from_text("rsa.test.")] =
      ZoneTrust{Outcome::secure(), ZoneKeys(name_from_text("rsa.test."), ed_keys.answer.at(0).rdata)};
  require(run_seeded(zones(), a, wrong, zones().fetch(std::string("www.rsa.test."), kA)), Verdict::bogus,
          Ede::dnskey_missing);
}

TEST_CASE("CPU per validation, cold chain and seeded", "[.][dnssec][perf]") {
  // Replies fetched once; then only the validator's CPU is timed (no network).
  const TrustAnchors a = anchors();
  for (const char* zone : {"rsa.test.", "n3.test.", "ed.test.", "test."}) {
    const std::string name = std::string("www.") + zone, nx = std::string("nope.") + zone;
    std::map<std::pair<Bytes, std::uint16_t>, Response> replies;
    const auto fetch = [&](const Bytes& n, std::uint16_t t) -> const Response& {
      auto key = std::make_pair(n, t);
      auto it = replies.find(key);
      if (it == replies.end()) it = replies.emplace(key, zones().fetch(n, t)).first;
      return it->second;
    };
    const Response answer = zones().fetch(name, kA), negative = zones().fetch(nx, kA);
    ZoneTrustMap established;
    const auto validate = [&](const Response& r, const ZoneTrustMap* seed) {
      Validation v(a, Limits{}, now_seconds());
      if (seed)
        for (const auto& [z, t] : *seed)
          if (t.outcome.verdict == Verdict::secure) v.trust_secure(z, t.keys.rdata());
      v.start(r);
      while (const auto& need = v.need()) v.provide(&fetch(need->name, need->type));
      REQUIRE(v.outcome().verdict == Verdict::secure);
      return v.counters().signature_validations;
    };
    {  // the chain's replies fetched once (into `replies`), the zones it established kept
      Validation v(a, Limits{}, now_seconds());
      v.start(answer);
      while (const auto& need = v.need()) v.provide(&fetch(need->name, need->type));
      for (const auto& [z, t] : v.zones()) established.emplace(z, ZoneTrust{t.outcome, ZoneKeys(z, t.keys.rdata())});
    }
    const auto time_us = [&](const Response& r, const ZoneTrustMap* seed) {
      constexpr int n = 200;
      timespec t0{}, t1{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
      for (int i = 0; i < n; ++i) validate(r, seed);
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
      return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / n;
    };
    const double cold = time_us(answer, nullptr), seeded = time_us(answer, &established),
                 negative_seeded = time_us(negative, &established);
    std::printf("%-10s cold %7.1f µs  seeded %7.1f µs  NXDOMAIN seeded %7.1f µs\n", zone, cold, seeded,
                negative_seeded);
  }
}

TEST_CASE("a reply with thousands of unsigned sets ends within the step bound", "[dnssec][zones][hostile]") {
  Response r = zones().fetch(std::string("www.rsa.test."), kA);
  for (int i = 0; i < 3000; ++i)
    r.answer.push_back(Rrset{name_from_text("n" + std::to_string(i) + ".rsa.test."), kA, 1, 60, {{192, 0, 2, 1}}, {}});
  // Each unsigned owner is a name to walk to (one DS question, two NSEC checks): the
  // signature budget ends it first.
  const RunResult res = run_validation(zones(), anchors(), r);
  require(res, Verdict::bogus, Ede::dnssec_bogus);
  CHECK(res.outcome.why == "signature validation limit reached");
  CHECK(res.counters.signature_validations == Limits{}.max_signature_validations);
  CHECK(res.steps < Validation::kMaxSteps);
  // With no signature bound, the step bound ends it.
  Limits lax;
  lax.max_signature_validations = 1'000'000;
  const RunResult steps = run_validation(zones(), anchors(), r, lax);
  require(steps, Verdict::bogus, Ede::dnssec_bogus);
  CHECK(steps.outcome.why == "chain of trust too long");
  CHECK(steps.steps == Validation::kMaxSteps + 1);
}
