// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/openssl_verify.hpp"

#include "dnssec/libdnssec_signer.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dnsarena::dnssec {

namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using ParamBldPtr = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using ParamPtr = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM, OSSL_PARAM_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using EcdsaSigPtr = std::unique_ptr<ECDSA_SIG, Deleter<ECDSA_SIG, ECDSA_SIG_free>>;

// Imports `params` as a public key of `type` ("RSA", "EC").
PkeyPtr from_params(const char* type, const OSSL_PARAM* params) {
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* pkey = nullptr;
  if (!ctx || !params || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &pkey, EVP_PKEY_PUBLIC_KEY, const_cast<OSSL_PARAM*>(params)) <= 0)
    return nullptr;
  return PkeyPtr(pkey);
}

// RFC 3110 section 2: where the exponent starts and how long it is; false when the
// lengths are outside the RFC's (modulus 512..4096 bits, exponent at most as long).
bool rsa_layout(std::span<const std::uint8_t> k, std::size_t& at, std::size_t& exp_len, std::size_t& mod_len) {
  if (k.empty()) return false;
  exp_len = k[0];
  at = 1;
  if (exp_len == 0) {
    if (k.size() < 3) return false;
    exp_len = static_cast<std::size_t>(k[1]) << 8 | k[2];
    at = 3;
  }
  if (exp_len == 0 || exp_len > 512 || k.size() < at + exp_len) return false;
  mod_len = k.size() - at - exp_len;
  return mod_len >= 64 && mod_len <= 512;
}

PkeyPtr import_rsa(std::span<const std::uint8_t> k) {
  std::size_t at = 0, exp_len = 0, mod_len = 0;
  if (!rsa_layout(k, at, exp_len, mod_len)) return nullptr;
  BnPtr e(BN_bin2bn(k.data() + at, static_cast<int>(exp_len), nullptr));
  BnPtr n(BN_bin2bn(k.data() + at + exp_len, static_cast<int>(mod_len), nullptr));
  ParamBldPtr bld(OSSL_PARAM_BLD_new());
  if (!e || !n || !bld || !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, n.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, e.get()))
    return nullptr;
  const ParamPtr params(OSSL_PARAM_BLD_to_param(bld.get()));
  return from_params("RSA", params.get());
}

// RFC 6605 section 4: X || Y.
PkeyPtr import_ec(const char* group, std::size_t coordinate, std::span<const std::uint8_t> k) {
  if (k.size() != 2 * coordinate) return nullptr;
  std::array<unsigned char, 1 + 2 * 48> point{};
  point[0] = 0x04;  // uncompressed (SEC 1 2.3.3)
  std::copy(k.begin(), k.end(), point.begin() + 1);
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, const_cast<char*>(group), 0),
      OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, point.data(), 1 + k.size()),
      OSSL_PARAM_construct_end()};
  PkeyPtr pkey = from_params("EC", params);
  if (!pkey) return nullptr;
  PkeyCtxPtr check(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey.get(), nullptr));
  if (!check || EVP_PKEY_public_check_quick(check.get()) <= 0) return nullptr;  // on the curve, not infinity
  return pkey;
}

// RFC 8080 section 3.
PkeyPtr import_raw(int type, std::size_t size, std::span<const std::uint8_t> k) {
  if (k.size() != size) return nullptr;
  return PkeyPtr(EVP_PKEY_new_raw_public_key(type, nullptr, k.data(), k.size()));
}

// The digest an algorithm signs with (RFC 5702, RFC 6605); EdDSA hashes by itself.
const EVP_MD* digest_of(std::uint8_t algorithm) {
  switch (algorithm) {
    case 8: case 13: return EVP_sha256();
    case 10: return EVP_sha512();
    case 14: return EVP_sha384();
    default: return nullptr;
  }
}

// RFC 6605 section 4: r || s, each `coordinate` bytes -> DER ECDSA-Sig-Value.
bool ecdsa_der(std::span<const std::uint8_t> sig, std::size_t coordinate, std::vector<unsigned char>& out) {
  if (sig.size() != 2 * coordinate) return false;
  EcdsaSigPtr s(ECDSA_SIG_new());
  BIGNUM* r = BN_bin2bn(sig.data(), static_cast<int>(coordinate), nullptr);
  BIGNUM* ss = BN_bin2bn(sig.data() + coordinate, static_cast<int>(coordinate), nullptr);
  if (!s || !r || !ss || !ECDSA_SIG_set0(s.get(), r, ss)) {  // set0 owns r and s only when it succeeds
    BN_free(r);
    BN_free(ss);
    return false;
  }
  const int len = i2d_ECDSA_SIG(s.get(), nullptr);
  if (len <= 0) return false;
  out.resize(static_cast<std::size_t>(len));
  unsigned char* p = out.data();
  return i2d_ECDSA_SIG(s.get(), &p) == len;
}


}  // namespace

void PublicKey::Free::operator()(evp_pkey_st* pkey) const { EVP_PKEY_free(pkey); }

PublicKey::PublicKey(const PublicKey& o) : nettle_(o.nettle_), algorithm_(o.algorithm_) {
  if (o.key_ && EVP_PKEY_up_ref(o.key_.get()) == 1) key_.reset(o.key_.get());
}

PublicKey& PublicKey::operator=(const PublicKey& o) {
  if (this != &o) *this = PublicKey(o);
  return *this;
}

bool public_key_well_formed(std::uint8_t algorithm, std::span<const std::uint8_t> k) {
  std::size_t at = 0, exp_len = 0, mod_len = 0;
  switch (algorithm) {
    case 8: case 10: return rsa_layout(k, at, exp_len, mod_len);
    case 13: return k.size() == 64;
    case 14: return k.size() == 96;
    case 15: return k.size() == 32;
    case 16: return k.size() == 57;
    default: return false;
  }
}

bool openssl_algorithm_supported(std::uint8_t a) {
  switch (a) {
    case 8: case 10: case 13: case 14: case 15: case 16: return true;
    default: return false;
  }
}

PublicKey PublicKey::import(std::uint8_t algorithm, std::span<const std::uint8_t> k) {
  PkeyPtr pkey;
  switch (algorithm) {
    case 8: case 10: pkey = import_rsa(k); break;
    case 13: pkey = import_ec("P-256", 32, k); break;
    case 14: pkey = import_ec("P-384", 48, k); break;
    case 15: pkey = import_raw(EVP_PKEY_ED25519, 32, k); break;
    case 16: pkey = import_raw(EVP_PKEY_ED448, 57, k); break;
    default: break;
  }
  PublicKey out;
  if (!pkey) return out;
  if (algorithm == 14) {  // verified through libdnssec: see the header
    std::vector<std::uint8_t> rdata{0x01, 0x01, 3, algorithm};  // flags (zone, SEP), protocol, algorithm
    rdata.insert(rdata.end(), k.begin(), k.end());
    try {
      out.nettle_ = std::make_shared<const LibdnssecPublicKey>(rdata);
    } catch (const std::exception&) {
      return out;  // refused
    }
  }
  out.key_.reset(pkey.release());
  out.algorithm_ = algorithm;
  return out;
}

PublicKey PublicKey::from_dnskey(std::span<const std::uint8_t> rdata) {
  if (rdata.size() < 4) return {};
  return import(rdata[3], rdata.subspan(4));
}

bool PublicKey::verify(std::span<const std::uint8_t> data, std::span<const std::uint8_t> signature) const {
  if (nettle_) return nettle_->verify(data, signature);
  return verify_openssl(data, signature);
}

bool PublicKey::verify_openssl(std::span<const std::uint8_t> data, std::span<const std::uint8_t> signature) const {
  if (!key_) return false;
  std::vector<unsigned char> der;
  if (algorithm_ == 13 || algorithm_ == 14) {
    if (!ecdsa_der(signature, algorithm_ == 13 ? 32 : 48, der)) return false;
    signature = der;
  }
  const MdCtxPtr ctx(EVP_MD_CTX_new());
  return ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, digest_of(algorithm_), nullptr, key_.get()) > 0 &&
         EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), data.data(), data.size()) == 1;
}

namespace {

// Per thread, so no lock: a worker is one thread. `order` holds the keys in insertion
// order for eviction (a string_view into the map's own key: node keys do not move).
struct ImportedKeys {
  std::unordered_map<std::string, PublicKey> keys;
  std::deque<std::string_view> order;
};
thread_local ImportedKeys cache;

}  // namespace

std::size_t imported_keys_cached() { return cache.keys.size(); }

PublicKey imported_key(std::span<const std::uint8_t> rdata) {
  const std::string key(rdata.begin(), rdata.end());
  if (auto it = cache.keys.find(key); it != cache.keys.end()) return it->second;
  if (cache.keys.size() >= kImportedKeysPerThread) {
    cache.keys.erase(std::string(cache.order.front()));
    cache.order.pop_front();
  }
  const auto [it, inserted] = cache.keys.emplace(key, PublicKey::from_dnskey(rdata));
  cache.order.push_back(it->first);
  return it->second;
}

}  // namespace dnsarena::dnssec
