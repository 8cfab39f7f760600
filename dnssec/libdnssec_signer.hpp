// SPDX-License-Identifier: GPL-3.0-or-later
// Keys generated and RRsets signed by libdnssec (Knot's library, over GnuTLS/nettle), for
// `dnsarena dnssec bench` and the tests: what a zone signer would publish, made in the
// process so that the verifier under test (OpenSSL, openssl_verify.hpp) checks signatures
// it did not make. Also libdnssec's own verification, which the bench times beside
// OpenSSL's as its baseline, and which the validator uses for P-384 (openssl_verify.hpp).
//
//   LibdnssecSigner s;                            // a PKCS #8 store in a temporary directory
//   SigningKey k = s.generate(13, 256, zone);     // k.dnskey: DNSKEY RDATA (flags 257)
//   Bytes rrsig = s.sign(k, rrset, zone, inception, expiration);  // RRSIG RDATA
//   LibdnssecPublicKey pub(k.dnskey);             // the baseline verifier
//   pub.verify(signed_data(...), signature);
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dnssec/rrset.hpp"

struct dnssec_key;  // libdnssec's dnssec_key_t
struct dnssec_keystore;

namespace dnsarena::dnssec {

struct KeyFree {
  void operator()(dnssec_key* key) const;
};

struct SigningKey {
  std::uint8_t algorithm = 0;
  Bytes dnskey;  // RDATA: flags 257 (SEP zone key), protocol 3, algorithm, public key
  std::uint16_t tag = 0;
  std::unique_ptr<dnssec_key, KeyFree> key;  // holds the private key
};

class LibdnssecSigner {
public:
  LibdnssecSigner();  // throws std::runtime_error when the store cannot be made
  ~LibdnssecSigner();  // removes the store's directory
  LibdnssecSigner(const LibdnssecSigner&) = delete;
  LibdnssecSigner& operator=(const LibdnssecSigner&) = delete;

  // A new key of `algorithm` (`bits`: RSA modulus size; the curve's size otherwise).
  // Throws std::runtime_error when libdnssec cannot make it.
  SigningKey generate(std::uint8_t algorithm, unsigned bits, const Bytes& zone);
  // The RRSIG RDATA over `rrset` (its TTL as the original TTL, labels = the owner's) by
  // `key` for `zone`. Throws std::runtime_error when libdnssec cannot sign.
  Bytes sign(const SigningKey& key, const Rrset& rrset, const Bytes& zone, std::uint32_t inception,
             std::uint32_t expiration) const;

private:
  void close();
  dnssec_keystore* store_ = nullptr;
  std::string dir_;
};

// A DNSKEY imported into libdnssec: the bench's baseline, and the validator's verifier
// for P-384, which nettle checks about 2x faster than OpenSSL 3.0.
class LibdnssecPublicKey {
public:
  explicit LibdnssecPublicKey(std::span<const std::uint8_t> dnskey);  // throws when refused
  bool verify(std::span<const std::uint8_t> data, std::span<const std::uint8_t> signature) const;

private:
  std::unique_ptr<dnssec_key, KeyFree> key_;
};

}  // namespace dnsarena::dnssec
