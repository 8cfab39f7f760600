// SPDX-License-Identifier: GPL-3.0-or-later
// What a DNS-over-TLS server (RFC 7858) needs from GnuTLS, made by the supervisor before
// it forks the workers, so every worker serves with the same certificate and the same
// session ticket key: a ticket issued by worker A resumes on worker B.
//
//   TlsCredentials::load(cert, key)  reads a PEM certificate (chain) and its private key;
//                     throws std::runtime_error saying which file and what is wrong
//                     (missing, unreadable, not PEM, key not matching the certificate).
//                     The supervisor calls it at start (an error stops the start) and at
//                     each reload (an error keeps the running credentials).
//   TlsTicketKey      a random master key for session tickets (RFC 8446 4.6.1, RFC 5077),
//                     made once for the service's life: a reload keeps it, so tickets
//                     stay valid across a reload. GnuTLS derives the key in use from it
//                     and the time, rotating it on its own.
//   TlsServerSettings what a worker's TLS TcpServer reads (tcp_server.hpp).
//
// Protocol: TLS 1.3 and 1.2 only (kTlsPriority), ALPN "dot" offered (RFC 7858 3.1 as
// registered by RFC 8310) or "h2" for DNS over HTTPS (doh_server.hpp), no client
// certificates.
//
// The GnuTLS objects are plain heap memory: a forked worker has its own copy of them, so
// a reload may free the old credentials in the supervisor while retiring workers still
// use theirs.
#pragma once
#include <gnutls/gnutls.h>

#include <memory>
#include <string>

namespace dnsarena::workers {

inline constexpr const char* kTlsPriority = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
inline constexpr const char* kTlsAlpn = "dot";
inline constexpr const char* kDohAlpn = "h2";  // DNS over HTTPS (RFC 8484 5.2: HTTP/2)

class TlsCredentials {
public:
  static std::unique_ptr<TlsCredentials> load(const std::string& certificate, const std::string& key);
  ~TlsCredentials();
  TlsCredentials(const TlsCredentials&) = delete;
  TlsCredentials& operator=(const TlsCredentials&) = delete;

  gnutls_certificate_credentials_t credentials() const { return cred_; }
  gnutls_priority_t priority() const { return priority_; }
  // SHA-256 of the first certificate (DER), hex: logged at load so an operator can tell
  // which certificate is served.
  const std::string& fingerprint() const { return fingerprint_; }

private:
  TlsCredentials() = default;
  gnutls_certificate_credentials_t cred_ = nullptr;
  gnutls_priority_t priority_ = nullptr;
  std::string fingerprint_;
};

class TlsTicketKey {
public:
  TlsTicketKey();  // throws std::runtime_error when GnuTLS cannot make one
  ~TlsTicketKey();
  TlsTicketKey(const TlsTicketKey&) = delete;
  TlsTicketKey& operator=(const TlsTicketKey&) = delete;
  const gnutls_datum_t* get() const { return &key_; }

private:
  gnutls_datum_t key_{};
};

struct TlsServerSettings {
  const TlsCredentials* credentials = nullptr;
  const TlsTicketKey* ticket_key = nullptr;
  unsigned handshake_timeout_ms = 5000;
  unsigned max_handshakes = 64;  // in progress at once; a new one closes the oldest
  const char* alpn = kTlsAlpn;   // the one protocol offered: "dot", or "h2" for DoH
};

// SHA-256 of a certificate's DER form, lowercase hex ("" when GnuTLS cannot hash it).
std::string certificate_fingerprint(const gnutls_datum_t& der);

// A non-blocking server session over the connected socket `fd` with the settings above
// (credentials, priority, ticket key, the settings' ALPN). nullptr when GnuTLS refuses.
gnutls_session_t new_server_session(int fd, const TlsServerSettings& settings);

}  // namespace dnsarena::workers
