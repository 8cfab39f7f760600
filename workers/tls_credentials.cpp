// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/tls_credentials.hpp"

#include <gnutls/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace dnsarena::workers {

namespace {

// A clear reason before GnuTLS's own ("Error while reading file" says neither which
// file nor why).
void check_readable(const std::string& what, const std::string& path) {
  if (path.empty()) throw std::runtime_error("tls." + what + ": no file given");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("tls." + what + " '" + path + "': " + std::strerror(errno));
  std::fclose(f);
}

}  // namespace

std::unique_ptr<TlsCredentials> TlsCredentials::load(const std::string& certificate, const std::string& key) {
  check_readable("certificate", certificate);
  check_readable("key", key);
  std::unique_ptr<TlsCredentials> t(new TlsCredentials);
  if (gnutls_certificate_allocate_credentials(&t->cred_) < 0) throw std::runtime_error("tls: out of memory");
  // GnuTLS checks here that the key belongs to the certificate (GNUTLS_E_CERTIFICATE_KEY_MISMATCH).
  const int rc = gnutls_certificate_set_x509_key_file(t->cred_, certificate.c_str(), key.c_str(), GNUTLS_X509_FMT_PEM);
  if (rc < 0)
    throw std::runtime_error("tls: certificate '" + certificate + "' with key '" + key + "': " + gnutls_strerror(rc));
  const char* err_pos = nullptr;
  if (const int p = gnutls_priority_init(&t->priority_, kTlsPriority, &err_pos); p < 0)
    throw std::runtime_error(std::string("tls: priority string: ") + gnutls_strerror(p));
  gnutls_datum_t der{};
  if (gnutls_certificate_get_crt_raw(t->cred_, 0, 0, &der) == 0) t->fingerprint_ = certificate_fingerprint(der);
  return t;
}

std::string certificate_fingerprint(const gnutls_datum_t& der) {
  unsigned char digest[32];
  std::size_t len = sizeof digest;
  if (gnutls_fingerprint(GNUTLS_DIG_SHA256, &der, digest, &len) != 0) return "";
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < len; ++i) {
    s += digits[digest[i] >> 4];
    s += digits[digest[i] & 15];
  }
  return s;
}

TlsCredentials::~TlsCredentials() {
  if (priority_) gnutls_priority_deinit(priority_);
  if (cred_) gnutls_certificate_free_credentials(cred_);
}

TlsTicketKey::TlsTicketKey() {
  if (const int rc = gnutls_session_ticket_key_generate(&key_); rc < 0)
    throw std::runtime_error(std::string("tls: session ticket key: ") + gnutls_strerror(rc));
}

TlsTicketKey::~TlsTicketKey() {
  if (key_.data) {
    gnutls_memset(key_.data, 0, key_.size);
    gnutls_free(key_.data);
  }
}

gnutls_session_t new_server_session(int fd, const TlsServerSettings& settings) {
  gnutls_session_t s = nullptr;
  if (gnutls_init(&s, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL) < 0) return nullptr;
  gnutls_datum_t alpn{reinterpret_cast<unsigned char*>(const_cast<char*>(settings.alpn)),
                      static_cast<unsigned>(std::strlen(settings.alpn))};
  if (gnutls_priority_set(s, settings.credentials->priority()) < 0 ||
      gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, settings.credentials->credentials()) < 0 ||
      (settings.ticket_key && gnutls_session_ticket_enable_server(s, settings.ticket_key->get()) < 0) ||
      gnutls_alpn_set_protocols(s, &alpn, 1, 0) < 0) {
    gnutls_deinit(s);
    return nullptr;
  }
  gnutls_certificate_server_set_request(s, GNUTLS_CERT_IGNORE);
  gnutls_handshake_set_timeout(s, 0);  // our own, in the TcpServer sweep: never a blocking wait
  gnutls_transport_set_int(s, fd);
  return s;
}

}  // namespace dnsarena::workers
