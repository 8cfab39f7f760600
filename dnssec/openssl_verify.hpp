// SPDX-License-Identifier: GPL-3.0-or-later
// DNSKEY public keys imported into OpenSSL 3's libcrypto, and RRSIG signature
// verification with them (EVP only: no deprecated RSA_ / EC_KEY_ API, no crypto of ours).
//
// Import (once per key; ZoneKeys holds the result) turns the DNSKEY's public key field
// into an EVP_PKEY:
//   8, 10   RSA (RFC 3110 section 2): exponent length (1 byte, or 0 then 2 bytes),
//           exponent, modulus; modulus 64..512 bytes (RFC 3110's 512..4096 bits),
//           exponent 1..512 bytes -> OSSL_PARAM_BLD n, e, EVP_PKEY_fromdata.
//   13, 14  ECDSA P-256 / P-384 (RFC 6605 section 4): X || Y, 64 / 96 bytes -> the
//           uncompressed point 0x04 || X || Y with the group name, EVP_PKEY_fromdata,
//           then EVP_PKEY_public_check_quick (the point is on the curve, not infinity).
//   15, 16  Ed25519 / Ed448 (RFC 8080 section 3): the raw 32 / 57-byte key,
//           EVP_PKEY_new_raw_public_key.
// Anything else (wrong length, point not on the curve, another algorithm) is refused:
// import returns an empty PublicKey. public_key_well_formed checks the lengths alone,
// without OpenSSL (ZoneKeys keeps keys that fail it out, as unusable keys).
//
// Verification of the signed data (RFC 4034 3.1.8.1, rebuilt by zone_keys.hpp):
//   8, 10   RSASSA-PKCS1-v1_5 with SHA-256 / SHA-512 (RFC 5702).
//   13, 14  ECDSA with SHA-256 / SHA-384; the RRSIG carries r || s (RFC 6605 section 4),
//           which is re-encoded as the DER ECDSA-Sig-Value OpenSSL verifies
//           (ECDSA_SIG_set0, i2d_ECDSA_SIG: encoding only).
//   15, 16  PureEdDSA, one-shot EVP_DigestVerify with no digest (RFC 8080 section 4).
// NOTE: an EVP_MD_CTX per call, not one per thread reused: reuse saves one small
// allocation against 19 µs and more per verification, which the bench did not resolve
// from its noise; the EVP_PKEY_CTX that EVP_DigestVerifyInit makes is allocated either way.
//
// P-384 (14) is the exception: OpenSSL 3.0 has no optimised P-384 and verifies it about
// 2x slower than nettle (`dnsarena dnssec bench`: ~940 against ~480 µs; `openssl speed
// ecdsap384` ~810 µs on the same machine), and it is the slowest algorithm, so it sets the
// KeyTrap bound (max_signature_validations of the slowest). A P-384 key is still imported
// into OpenSSL (that checks the point is on the curve) and is verified through libdnssec
// (libdnssec_signer.hpp LibdnssecPublicKey): the faster library for each algorithm.
//
// Cost: one verification is what OpenSSL's own verify costs plus one EVP_PKEY_CTX made
// by EVP_DigestVerifyInit; `dnsarena dnssec bench` prints it per algorithm beside
// libdnssec's (GnuTLS/nettle), the baseline. An import costs far more than libdnssec's
// (OpenSSL 3.0 builds the curve's group for every EC key: about 20 µs for P-256 against
// under 1), so imports are lazy and cached: imported_key() below.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

struct evp_pkey_st;  // OpenSSL's EVP_PKEY, kept out of this header

namespace dnsarena::dnssec {

class LibdnssecPublicKey;  // libdnssec_signer.hpp

// True for the algorithms this backend verifies: 8, 10, 13, 14, 15, 16 (RFC 8624's
// validation set).
bool openssl_algorithm_supported(std::uint8_t algorithm);

// The lengths of RFC 3110 / 6605 / 8080 for `algorithm`'s public key field, checked
// without OpenSSL. A key that passes may still be refused by import (a point off the curve).
bool public_key_well_formed(std::uint8_t algorithm, std::span<const std::uint8_t> public_key);

class PublicKey {
public:
  PublicKey() = default;
  // Copies share the EVP_PKEY (EVP_PKEY_up_ref); it is never modified after import.
  PublicKey(const PublicKey& o);
  PublicKey& operator=(const PublicKey& o);
  PublicKey(PublicKey&&) noexcept = default;
  PublicKey& operator=(PublicKey&&) noexcept = default;
  // `public_key`: the DNSKEY RDATA after flags, protocol and algorithm (RDATA offset 4).
  // Empty (false) when OpenSSL or the RFC's lengths refuse the key.
  static PublicKey import(std::uint8_t algorithm, std::span<const std::uint8_t> public_key);
  // The same from whole DNSKEY RDATA (flags, protocol, algorithm, key).
  static PublicKey from_dnskey(std::span<const std::uint8_t> rdata);

  explicit operator bool() const { return key_ != nullptr; }
  std::uint8_t algorithm() const { return algorithm_; }

  // True when `signature` (the RRSIG's signature field) is a valid signature of `data`
  // under this key, checked by the faster library for its algorithm (P-384: libdnssec;
  // the others: OpenSSL). False for an empty key.
  bool verify(std::span<const std::uint8_t> data, std::span<const std::uint8_t> signature) const;
  // The same through OpenSSL whatever the algorithm (the bench's comparison).
  bool verify_openssl(std::span<const std::uint8_t> data, std::span<const std::uint8_t> signature) const;

private:
  struct Free {
    void operator()(evp_pkey_st* pkey) const;
  };
  std::unique_ptr<evp_pkey_st, Free> key_;  // immutable once imported: verify only reads it
  std::shared_ptr<const LibdnssecPublicKey> nettle_;  // P-384 only: what verify() uses
  std::uint8_t algorithm_ = 0;
};

// PublicKey::from_dnskey(rdata) through this thread's cache of imported keys, keyed by
// the whole RDATA (refusals are cached too): a zone's keys are imported once per worker
// rather than once per validation. Bound: kImportedKeysPerThread keys (a few KB each);
// past it the oldest is dropped, so a flood of distinct keys costs one import per key
// tried, as without the cache, and callers import only the keys a verification tries
// (ZoneKeys), which the validation's Budget bounds.
inline constexpr std::size_t kImportedKeysPerThread = 512;
PublicKey imported_key(std::span<const std::uint8_t> dnskey_rdata);
std::size_t imported_keys_cached();  // this thread's cache's size (for tests)

}  // namespace dnsarena::dnssec
