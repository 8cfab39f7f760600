// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/verified_signatures.hpp"

#include <openssl/evp.h>

#include <cstring>
#include <memory>

namespace dnsarena::dnssec {

namespace {

// SHA-256 fetched once per thread (an implicit fetch per digest costs more than the hash).
struct Sha256 {
  EVP_MD* md = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Sha256() {
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
  }
};

bool update_with_length(EVP_MD_CTX* ctx, std::span<const std::uint8_t> part) {
  // Each part preceded by its length, so no two different triples hash the same bytes.
  const std::uint8_t len[4] = {static_cast<std::uint8_t>(part.size() >> 24), static_cast<std::uint8_t>(part.size() >> 16),
                               static_cast<std::uint8_t>(part.size() >> 8), static_cast<std::uint8_t>(part.size())};
  return EVP_DigestUpdate(ctx, len, sizeof len) == 1 && EVP_DigestUpdate(ctx, part.data(), part.size()) == 1;
}

}  // namespace

VerifiedSignatures& VerifiedSignatures::this_thread() {
  thread_local std::unique_ptr<VerifiedSignatures> memo = std::make_unique<VerifiedSignatures>();
  return *memo;
}

bool VerifiedSignatures::digest(std::span<const std::uint8_t> key_rdata, std::span<const std::uint8_t> signed_data,
                                std::span<const std::uint8_t> signature, Digest& out) {
  thread_local Sha256 sha;
  unsigned int n = 0;
  return sha.md && sha.ctx && EVP_DigestInit_ex(sha.ctx, sha.md, nullptr) == 1 &&
         update_with_length(sha.ctx, key_rdata) && update_with_length(sha.ctx, signed_data) &&
         update_with_length(sha.ctx, signature) && EVP_DigestFinal_ex(sha.ctx, out.data(), &n) == 1 &&
         n == out.size();
}

std::size_t VerifiedSignatures::slot(const Digest& d) const {
  std::uint64_t v = 0;
  std::memcpy(&v, d.data(), sizeof v);
  return static_cast<std::size_t>(v % kSlots);
}

bool VerifiedSignatures::contains(const Digest& d) const {
  const std::size_t s = slot(d);
  if (!enabled_ || !used_[s] || slots_[s] != d) return false;
  ++hits_;
  return true;
}

void VerifiedSignatures::remember(const Digest& d) {
  if (!enabled_) return;
  const std::size_t s = slot(d);
  slots_[s] = d;
  used_[s] = true;
}

void VerifiedSignatures::forget_all() {
  used_.fill(false);
  hits_ = 0;
}

}  // namespace dnsarena::dnssec
