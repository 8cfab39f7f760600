// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena dnssec bench`: the CPU a validation spends per RRSIG verification, per
// algorithm, and per NSEC3 hash, per iteration count.
//
// For each algorithm of RFC 8624's validation set (8 and 10 with 2048-bit keys; 13, 14,
// 15, 16) libdnssec generates a key in a private PKCS #8 store (a temporary directory)
// and signs an RRset of two A records as a zone signer would (libdnssec_signer.hpp).
// What is timed is what the validator runs for one RRSIG: verify_rrset on a prepared
// ZoneKeys (tag lookup, the signed data rebuilt, one OpenSSL verification); and apart,
// importing the DNSKEY into OpenSSL (PublicKey::from_dnskey: what the worker's cache of
// imported keys saves on a hit, openssl_verify.hpp). Side by side on the same signed data: the verification alone through
// OpenSSL (openssl_verify.hpp) and through libdnssec (GnuTLS/nettle), the baseline the
// validator used before, with libdnssec's import. Time is the process's CPU time
// (CLOCK_PROCESS_CPUTIME_ID), one thread, each case run for `seconds` after a warm-up;
// every verification must succeed (a failure is counted and fails the command).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace dnsarena::dnssec {

struct VerifyBenchOptions {
  double seconds = 0.5;  // CPU seconds per case
};

struct AlgorithmCost {
  std::uint8_t algorithm = 0;
  std::string name;
  bool supported = false;
  unsigned key_bits = 0;
  std::size_t signature_bytes = 0;
  std::uint64_t verifications = 0;
  std::uint64_t failures = 0;
  double verify_us = 0;     // CPU µs per verify_rrset (one RRSIG, one key)
  double remembered_us = 0;  // the same when this thread verified it before (verified_signatures.hpp)
  double verify_per_s = 0;  // per core
  double import_us = 0;     // CPU µs per DNSKEY imported into OpenSSL (uncached)
  double openssl_us = 0;    // CPU µs per verification alone, OpenSSL
  double libdnssec_us = 0;  // the same through libdnssec (GnuTLS/nettle): the baseline
  double libdnssec_import_us = 0;  // CPU µs per DNSKEY imported into libdnssec
};

struct Nsec3Cost {
  std::uint16_t iterations = 0;
  double hash_us = 0;
};

struct VerifyBenchResult {
  std::vector<AlgorithmCost> algorithms;
  std::vector<Nsec3Cost> nsec3;
  // Computed from the figures above at the default Limits: the most CPU one validation
  // may spend on signatures (max_signature_validations x the slowest algorithm) and on
  // NSEC3 hashes (max_nsec3_hashes x a hash at max_nsec3_iterations).
  double worst_signatures_us = 0;
  double worst_nsec3_us = 0;
};

// Throws std::runtime_error when the key store or a signature cannot be made.
VerifyBenchResult run_verify_bench(const VerifyBenchOptions& options);

}  // namespace dnsarena::dnssec
