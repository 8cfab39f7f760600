// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/verify_bench.hpp"

#include <algorithm>
#include <ctime>
#include <stdexcept>

#include "dnssec/denial.hpp"
#include "dnssec/libdnssec_signer.hpp"
#include "dnssec/openssl_verify.hpp"
#include "dnssec/verified_signatures.hpp"
#include "dnssec/zone_keys.hpp"

namespace dnsarena::dnssec {

namespace {

double cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Runs `body` until `seconds` of CPU have passed (checking the clock every 16 calls).
template <typename F>
std::pair<std::uint64_t, double> run_for(double seconds, F&& body) {
  for (int i = 0; i < 16; ++i) body();  // warm-up
  std::uint64_t n = 0;
  const double start = cpu_seconds();
  double now = start;
  while (now - start < seconds) {
    for (int i = 0; i < 16; ++i) body();
    n += 16;
    now = cpu_seconds();
  }
  return {n, now - start};
}

struct Case {
  std::uint8_t algorithm;
  const char* name;
  unsigned bits;
};
constexpr Case kCases[] = {{8, "RSASHA256", 2048},        {10, "RSASHA512", 2048}, {13, "ECDSAP256SHA256", 256},
                           {14, "ECDSAP384SHA384", 384}, {15, "ED25519", 256},     {16, "ED448", 456}};

}  // namespace

VerifyBenchResult run_verify_bench(const VerifyBenchOptions& o) {
  LibdnssecSigner signer;
  VerifyBenchResult result;
  const Bytes zone = name_from_text("bench.test.");
  Rrset rrset{name_from_text("www.bench.test."), 1, 1, 3600, {{192, 0, 2, 1}, {192, 0, 2, 2}}, {}};
  const std::uint32_t now = static_cast<std::uint32_t>(std::time(nullptr));

  for (const Case& c : kCases) {
    AlgorithmCost cost;
    cost.algorithm = c.algorithm;
    cost.name = c.name;
    cost.key_bits = c.bits;
    cost.supported = algorithm_supported(c.algorithm);
    if (!cost.supported) {
      result.algorithms.push_back(cost);
      continue;
    }
    const SigningKey key = signer.generate(c.algorithm, c.bits, zone);
    const Bytes& dnskey = key.dnskey;
    const Bytes sig = signer.sign(key, rrset, zone, now - 3600, now + 86400);
    const RrsigFields fields = *parse_rrsig(sig);
    cost.signature_bytes = fields.signature.size();
    Rrset signed_set = rrset;
    signed_set.rrsigs = {sig};

    const ZoneKeys keys(zone, {dnskey});
    if (keys.size() != 1 || !PublicKey::from_dnskey(dnskey))
      throw std::runtime_error(std::string("OpenSSL refuses the DNSKEY of ") + c.name);
    const Limits defaults;
    VerifiedSignatures& memo = VerifiedSignatures::this_thread();
    memo.set_enabled(false);  // every call verifies
    const auto [n, secs] = run_for(o.seconds, [&] {
      Budget budget(defaults);
      if (verify_rrset(signed_set, keys, now, budget).outcome.verdict != Verdict::secure) ++cost.failures;
    });
    memo.set_enabled(true);  // every call after the first finds it remembered
    const auto [nr, sr] = run_for(o.seconds / 4, [&] {
      Budget budget(defaults);
      if (verify_rrset(signed_set, keys, now, budget).outcome.verdict != Verdict::secure) ++cost.failures;
    });
    cost.remembered_us = sr / static_cast<double>(nr) * 1e6;
    cost.verifications = n;
    cost.verify_us = secs / static_cast<double>(n) * 1e6;
    cost.verify_per_s = static_cast<double>(n) / secs;
    const auto [ni, si] = run_for(o.seconds / 4, [&] {
      if (!PublicKey::from_dnskey(dnskey)) ++cost.failures;
    });
    cost.import_us = si / static_cast<double>(ni) * 1e6;

    // The verification alone, on the same signed data: OpenSSL against libdnssec (the
    // baseline); verify_rrset calls the faster of the two for the algorithm
    // (openssl_verify.hpp: libdnssec for P-384).
    const Bytes data = signed_data(rrset, fields, sig);
    const PublicKey openssl_key = PublicKey::from_dnskey(dnskey);
    const LibdnssecPublicKey libdnssec_key(dnskey);
    const auto [no, so] = run_for(o.seconds, [&] {
      if (!openssl_key.verify_openssl(data, fields.signature)) ++cost.failures;
    });
    cost.openssl_us = so / static_cast<double>(no) * 1e6;
    const auto [nl, sl] = run_for(o.seconds, [&] {
      if (!libdnssec_key.verify(data, fields.signature)) ++cost.failures;
    });
    cost.libdnssec_us = sl / static_cast<double>(nl) * 1e6;
    const auto [nli, sli] = run_for(o.seconds / 4, [&] { const LibdnssecPublicKey imported(dnskey); });
    cost.libdnssec_import_us = sli / static_cast<double>(nli) * 1e6;
    result.algorithms.push_back(cost);
  }

  const Bytes name = name_from_text("a.b.bench.test.");
  const Bytes salt{0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04};
  const Limits limits;
  for (std::uint16_t it : {std::uint16_t{0}, std::uint16_t{10}, std::uint16_t{50},
                           static_cast<std::uint16_t>(limits.max_nsec3_iterations)}) {
    const auto [n, secs] = run_for(o.seconds / 2, [&] {
      if (nsec3_hash(name, it, salt).size() != 20) throw std::runtime_error("NSEC3 hash failed");
    });
    result.nsec3.push_back({it, secs / static_cast<double>(n) * 1e6});
  }
  double slowest = 0;
  for (const AlgorithmCost& a : result.algorithms) slowest = std::max(slowest, a.verify_us);
  result.worst_signatures_us = slowest * limits.max_signature_validations;
  result.worst_nsec3_us = result.nsec3.back().hash_us * limits.max_nsec3_hashes;
  return result;
}

}  // namespace dnsarena::dnssec
