// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/verify_bench.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "common/bytes.hpp"
#include "dnssec/c_libraries.hpp"
#include "dnssec/denial.hpp"
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

struct KeyStore {
  dnssec_keystore_t* store = nullptr;
  std::string dir;
  KeyStore() {
    char templ[] = "/tmp/dnsarena-dnssec-bench-XXXXXX";
    if (!::mkdtemp(templ)) throw std::runtime_error("mkdtemp failed");
    dir = templ;
    if (dnssec_keystore_init_pkcs8(&store) != DNSSEC_EOK || dnssec_keystore_init(store, dir.c_str()) != DNSSEC_EOK ||
        dnssec_keystore_open(store, dir.c_str()) != DNSSEC_EOK)
      throw std::runtime_error("cannot open a PKCS #8 key store in " + dir);
  }
  ~KeyStore() {
    if (store) {
      dnssec_keystore_close(store);
      dnssec_keystore_deinit(store);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

struct Case {
  std::uint8_t algorithm;
  const char* name;
  unsigned bits;
};
constexpr Case kCases[] = {{8, "RSASHA256", 2048},        {10, "RSASHA512", 2048}, {13, "ECDSAP256SHA256", 256},
                           {14, "ECDSAP384SHA384", 384}, {15, "ED25519", 256},     {16, "ED448", 456}};

}  // namespace

VerifyBenchResult run_verify_bench(const VerifyBenchOptions& o) {
  dnssec_crypto_init();
  KeyStore ks;
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
    char* id = nullptr;
    if (dnssec_keystore_generate(ks.store, static_cast<dnssec_key_algorithm_t>(c.algorithm), c.bits, nullptr, &id) !=
        DNSSEC_EOK)
      throw std::runtime_error(std::string("cannot generate a key of ") + c.name);
    dnssec_key_t* key = nullptr;
    dnssec_key_new(&key);
    dnssec_key_set_algorithm(key, c.algorithm);
    dnssec_key_set_flags(key, 257);
    dnssec_key_set_dname(key, zone.data());
    const int got = dnssec_keystore_get_private(ks.store, id, key);
    std::free(id);
    if (got != DNSSEC_EOK) throw std::runtime_error(std::string("cannot load the key of ") + c.name);
    dnssec_binary_t rdata{};
    dnssec_key_get_rdata(key, &rdata);
    const Bytes dnskey(rdata.data, rdata.data + rdata.size);

    // The RRSIG: fixed fields and signer, then libdnssec's signature over the signed data.
    Bytes sig;
    common::append_u16(sig, rrset.type);
    sig.push_back(c.algorithm);
    sig.push_back(static_cast<std::uint8_t>(label_count(rrset.owner)));
    common::append_u32(sig, rrset.ttl);
    common::append_u32(sig, now + 86400);
    common::append_u32(sig, now - 3600);
    common::append_u16(sig, dnssec_key_get_keytag(key));
    sig += zone;
    const RrsigFields fields = *parse_rrsig(sig + Bytes{0});  // a placeholder signature byte to parse
    const Bytes data = signed_data(rrset, fields, sig);
    dnssec_sign_ctx_t* ctx = nullptr;
    dnssec_binary_t signature{};
    const dnssec_binary_t d{data.size(), const_cast<std::uint8_t*>(data.data())};
    if (dnssec_sign_new(&ctx, key) != DNSSEC_EOK || dnssec_sign_add(ctx, &d) != DNSSEC_EOK ||
        dnssec_sign_write(ctx, DNSSEC_SIGN_NORMAL, &signature) != DNSSEC_EOK)
      throw std::runtime_error(std::string("cannot sign with ") + c.name);
    dnssec_sign_free(ctx);
    sig.append(signature.data, signature.data + signature.size);
    cost.signature_bytes = signature.size;
    dnssec_binary_free(&signature);
    dnssec_key_free(key);
    Rrset signed_set = rrset;
    signed_set.rrsigs = {sig};

    const ZoneKeys keys(zone, {dnskey});
    const Limits defaults;
    const auto [n, secs] = run_for(o.seconds, [&] {
      Budget budget(defaults);
      if (verify_rrset(signed_set, keys, now, budget).outcome.verdict != Verdict::secure) ++cost.failures;
    });
    cost.verifications = n;
    cost.verify_us = secs / static_cast<double>(n) * 1e6;
    cost.verify_per_s = static_cast<double>(n) / secs;
    const auto [ni, si] = run_for(o.seconds / 4, [&] {
      const ZoneKeys imported(zone, {dnskey});
      if (imported.size() != 1) ++cost.failures;
    });
    cost.import_us = si / static_cast<double>(ni) * 1e6;
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
