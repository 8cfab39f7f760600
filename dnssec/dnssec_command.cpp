// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena dnssec bench` and `dnsarena dnssec check-trust`: CLI, table and JSON
// (update-trust: update_trust_command.cpp).
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/command_table.hpp"
#include "dnssec/c_libraries.hpp"
#include "dnssec/commands.hpp"
#include "dnssec/limits.hpp"
#include "dnssec/trust_anchors.hpp"
#include "dnssec/verify_bench.hpp"
#include "dnssec/zone_keys.hpp"

namespace dnsarena::dnssec {

namespace {

nlohmann::json to_json(const VerifyBenchOptions& o, const VerifyBenchResult& r) {
  nlohmann::json algs = nlohmann::json::array();
  for (const AlgorithmCost& a : r.algorithms)
    algs.push_back({{"algorithm", a.algorithm},         {"name", a.name},
                    {"supported", a.supported},         {"key_bits", a.key_bits},
                    {"signature_bytes", a.signature_bytes}, {"verifications", a.verifications},
                    {"failures", a.failures},           {"verify_us", a.verify_us},
                    {"remembered_us", a.remembered_us},
                    {"verify_per_s", a.verify_per_s},   {"import_us", a.import_us},
                    {"openssl_verify_us", a.openssl_us}, {"libdnssec_verify_us", a.libdnssec_us},
                    {"libdnssec_import_us", a.libdnssec_import_us}});
  nlohmann::json hashes = nlohmann::json::array();
  for (const Nsec3Cost& h : r.nsec3) hashes.push_back({{"iterations", h.iterations}, {"hash_us", h.hash_us}});
  return {{"seconds_per_case", o.seconds},
          {"algorithms", algs},
          {"nsec3", hashes},
          {"worst_signatures_us_per_validation", r.worst_signatures_us},
          {"worst_nsec3_us_per_validation", r.worst_nsec3_us}};
}

void print_table(const VerifyBenchOptions& o, const VerifyBenchResult& r) {
  std::printf("dnsarena dnssec bench: CPU time per RRSIG verification (verify_rrset, one thread, %.2f s per case)\n",
              o.seconds);
  std::printf("verify_rrset and import: the validator (OpenSSL; P-384 through libdnssec); again: verify_rrset of a signature this\n"
              "thread verified before (verified_signatures.hpp); then the verification alone through OpenSSL\n"
              "and through libdnssec (GnuTLS/nettle, the baseline), on the same signed data\n\n");
  std::printf("%-4s %-16s %5s %5s %11s %10s %8s %8s | %9s %11s %8s %10s\n", "alg", "name", "bits", "sig", "µs/verify",
              "verifies/s", "µs/imp", "µs/again", "µs OpenSSL", "µs libdnssec", "speedup", "µs/imp ldns");
  for (const AlgorithmCost& a : r.algorithms) {
    if (!a.supported) {
      std::printf("%-4u %-16s %5u %s\n", a.algorithm, a.name.c_str(), a.key_bits, "unsupported");
      continue;
    }
    std::printf("%-4u %-16s %5u %5zu %11.1f %10.0f %8.1f %8.2f | %10.1f %12.1f %7.2fx %11.1f\n", a.algorithm,
                a.name.c_str(), a.key_bits, a.signature_bytes, a.verify_us, a.verify_per_s, a.import_us,
                a.remembered_us, a.openssl_us, a.libdnssec_us,
                a.libdnssec_us / a.openssl_us, a.libdnssec_import_us);
  }
  std::printf("\n%-22s %12s\n", "NSEC3 iterations", "µs/hash");
  for (const Nsec3Cost& h : r.nsec3) std::printf("%-22u %12.2f\n", h.iterations, h.hash_us);
  const Limits l;
  std::printf("\nworst case per validation at the default bounds (computed from the figures above):\n");
  std::printf("  %u signature checks of the slowest algorithm   %10.0f µs\n", l.max_signature_validations,
              r.worst_signatures_us);
  std::printf("  %u NSEC3 hashes at %u iterations              %10.0f µs\n", l.max_nsec3_hashes, l.max_nsec3_iterations,
              r.worst_nsec3_us);
}

void add_bench(CLI::App& group) {
  auto opts = std::make_shared<VerifyBenchOptions>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = group.add_subcommand("bench", "CPU per RRSIG verification per algorithm, per NSEC3 hash");
  cmd->add_option("--seconds", opts->seconds, "CPU seconds per case")->capture_default_str()->check(CLI::Range(0.01, 60.0));
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->callback([opts, json] {
    const VerifyBenchResult r = run_verify_bench(*opts);
    if (*json) std::cout << to_json(*opts, r).dump(2) << "\n";
    else print_table(*opts, r);
    for (const AlgorithmCost& a : r.algorithms)
      if (a.failures) throw CLI::RuntimeError(1);  // a signature that does not verify is a failure
  });
}

std::string hex(std::span<const std::uint8_t> b) {
  static const char* d = "0123456789ABCDEF";
  std::string s;
  for (std::uint8_t c : b) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

void add_check_trust(CLI::App& group) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto negative = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = group.add_subcommand("check-trust", "Read trust anchor files as the validator would and print them");
  cmd->add_option("files", *files, "Trust anchor files: DS or DNSKEY records in zone-file syntax")->required();
  cmd->add_option("--negative", *negative, "A negative trust anchor (RFC 7646), repeatable");
  cmd->callback([files, negative] {
    TrustAnchors anchors;
    try {
      for (const std::string& f : *files) anchors.add_file(f);
      for (const std::string& n : *negative) anchors.add_negative(name_from_text(n));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dnsarena dnssec check-trust: %s\n", e.what());
      throw CLI::RuntimeError(1);
    }
    for (const TrustAnchor& a : anchors.anchors()) {
      std::printf("%s\n", name_text(a.zone).c_str());
      for (const Bytes& ds : a.ds) {
        const bool usable = ds.size() > 4 && algorithm_supported(ds[2]) && digest_supported(ds[3]);
        std::printf("  DS     tag %5u algorithm %3u digest type %u %s  %s\n", ds[0] << 8 | ds[1], ds[2], ds[3],
                    usable ? "usable     " : "unsupported", hex({ds.data() + 4, ds.size() - 4}).c_str());
      }
      for (const Bytes& k : a.dnskeys) {
        const dnssec_binary_t b{k.size(), const_cast<std::uint8_t*>(k.data())};
        std::uint16_t tag = 0;
        dnssec_keytag(&b, &tag);
        std::printf("  DNSKEY tag %5u algorithm %3u flags %u %s\n", tag, k[3], k[0] << 8 | k[1],
                    algorithm_supported(k[3]) ? "usable" : "unsupported");
      }
    }
    for (const Bytes& n : anchors.negative()) std::printf("%s negative trust anchor\n", name_text(n).c_str());
  });
}

}  // namespace

void add_dnssec_command(CLI::App& app) {
  CLI::App* group = common::add_command_group(app, "dnssec", "DNSSEC validation: benchmark, trust anchors");
  add_bench(group[0]);
  add_check_trust(group[0]);
  add_update_trust(group[0]);
}

}  // namespace dnsarena::dnssec
