// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/libdnssec_signer.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "common/bytes.hpp"
#include "dnssec/c_libraries.hpp"
#include "dnssec/zone_keys.hpp"

namespace dnsarena::dnssec {

namespace {

dnssec_binary_t as_binary(std::span<const std::uint8_t> s) {
  return dnssec_binary_t{s.size(), const_cast<std::uint8_t*>(s.data())};
}

}  // namespace

void KeyFree::operator()(dnssec_key* key) const { dnssec_key_free(key); }

LibdnssecSigner::LibdnssecSigner() {
  dnssec_crypto_init();
  char templ[] = "/tmp/dnsarena-dnssec-keys-XXXXXX";
  if (!::mkdtemp(templ)) throw std::runtime_error("mkdtemp failed");
  dir_ = templ;
  if (dnssec_keystore_init_pkcs8(&store_) != DNSSEC_EOK || dnssec_keystore_init(store_, dir_.c_str()) != DNSSEC_EOK ||
      dnssec_keystore_open(store_, dir_.c_str()) != DNSSEC_EOK) {
    close();
    throw std::runtime_error("cannot open a PKCS #8 key store in " + dir_);
  }
}

LibdnssecSigner::~LibdnssecSigner() { close(); }

void LibdnssecSigner::close() {
  if (store_) {
    dnssec_keystore_close(store_);
    dnssec_keystore_deinit(store_);
    store_ = nullptr;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

SigningKey LibdnssecSigner::generate(std::uint8_t algorithm, unsigned bits, const Bytes& zone) {
  const std::string what = "algorithm " + std::to_string(algorithm);
  char* id = nullptr;
  if (dnssec_keystore_generate(store_, static_cast<dnssec_key_algorithm_t>(algorithm), bits, nullptr, &id) !=
      DNSSEC_EOK)
    throw std::runtime_error("cannot generate a key of " + what);
  SigningKey k;
  dnssec_key_t* key = nullptr;
  dnssec_key_new(&key);
  k.key.reset(key);
  dnssec_key_set_algorithm(key, algorithm);
  dnssec_key_set_flags(key, 257);
  dnssec_key_set_dname(key, zone.data());
  const int got = dnssec_keystore_get_private(store_, id, key);
  std::free(id);
  if (got != DNSSEC_EOK) throw std::runtime_error("cannot load the key of " + what);
  dnssec_binary_t rdata{};
  dnssec_key_get_rdata(key, &rdata);
  k.algorithm = algorithm;
  k.dnskey.assign(rdata.data, rdata.data + rdata.size);
  k.tag = dnssec_key_get_keytag(key);
  return k;
}

Bytes LibdnssecSigner::sign(const SigningKey& key, const Rrset& rrset, const Bytes& zone, std::uint32_t inception,
                            std::uint32_t expiration) const {
  Bytes sig;
  common::append_u16(sig, rrset.type);
  sig.push_back(key.algorithm);
  sig.push_back(static_cast<std::uint8_t>(label_count(rrset.owner)));
  common::append_u32(sig, rrset.ttl);
  common::append_u32(sig, expiration);
  common::append_u32(sig, inception);
  common::append_u16(sig, key.tag);
  sig += zone;
  const RrsigFields fields = *parse_rrsig(sig + Bytes{0});  // a placeholder signature byte to parse
  const Bytes data = signed_data(rrset, fields, sig);
  dnssec_sign_ctx_t* ctx = nullptr;
  dnssec_binary_t signature{};
  const dnssec_binary_t d = as_binary(data);
  const bool ok = dnssec_sign_new(&ctx, key.key.get()) == DNSSEC_EOK && dnssec_sign_add(ctx, &d) == DNSSEC_EOK &&
                  dnssec_sign_write(ctx, DNSSEC_SIGN_NORMAL, &signature) == DNSSEC_EOK;
  dnssec_sign_free(ctx);
  if (!ok) throw std::runtime_error("cannot sign with algorithm " + std::to_string(key.algorithm));
  sig.append(signature.data, signature.data + signature.size);
  dnssec_binary_free(&signature);
  return sig;
}

LibdnssecPublicKey::LibdnssecPublicKey(std::span<const std::uint8_t> dnskey) {
  dnssec_crypto_init();
  dnssec_key_t* key = nullptr;
  if (dnssec_key_new(&key) != DNSSEC_EOK) throw std::runtime_error("dnssec_key_new failed");
  key_.reset(key);
  const dnssec_binary_t b = as_binary(dnskey);
  if (dnssec_key_set_rdata(key, &b) != DNSSEC_EOK || !dnssec_key_can_verify(key))
    throw std::runtime_error("libdnssec refuses the DNSKEY");
}

bool LibdnssecPublicKey::verify(std::span<const std::uint8_t> data, std::span<const std::uint8_t> signature) const {
  dnssec_sign_ctx_t* ctx = nullptr;
  if (dnssec_sign_new(&ctx, key_.get()) != DNSSEC_EOK) return false;
  const dnssec_binary_t d = as_binary(data), s = as_binary(signature);
  const bool ok = dnssec_sign_add(ctx, &d) == DNSSEC_EOK && dnssec_sign_verify(ctx, false, &s) == DNSSEC_EOK;
  dnssec_sign_free(ctx);
  return ok;
}

}  // namespace dnsarena::dnssec
