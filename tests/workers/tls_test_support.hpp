// SPDX-License-Identifier: GPL-3.0-or-later
// DNS-over-TLS test helpers: self-signed certificates made at test time (certtool, from
// gnutls-bin: no key is committed) and a small blocking GnuTLS client that speaks
// RFC 7858 framing, so a test can pipeline, read padding, compare certificates and
// resume sessions.
#pragma once
#include <gnutls/gnutls.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dnsarena::test {

// A new EC key and a self-signed certificate for `name` in a fresh directory under /tmp,
// removed by the destructor. Throws when certtool fails.
class TestCertificate {
public:
  explicit TestCertificate(const std::string& name = "dot.test");
  ~TestCertificate();
  TestCertificate(const TestCertificate&) = delete;
  TestCertificate& operator=(const TestCertificate&) = delete;
  const std::string& cert_path() const { return cert_; }
  const std::string& key_path() const { return key_; }
  // SHA-256 of the certificate's DER form, hex.
  std::string fingerprint() const;
  // Copies this certificate and key over the files `cert` and `key` (what an operator
  // does before a reload).
  void install(const std::string& cert, const std::string& key) const;

private:
  std::string dir_, cert_, key_;
};

// One TLS connection to 127.0.0.1:port (certificate not verified: the tests compare its
// fingerprint instead). Every call waits at most `timeout`.
class TlsClient {
public:
  // `resume`: session data of an earlier connection (session_data()), or empty; `alpn`:
  // the one protocol offered.
  explicit TlsClient(std::uint16_t port, const std::vector<std::uint8_t>& resume = {},
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(3000), const char* alpn = "dot");
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;
  bool connected() const { return ok_; }  // the handshake completed
  int fd() const { return fd_; }
  bool resumed() const;
  std::string alpn() const;
  std::string peer_fingerprint() const;  // SHA-256 of the server certificate's DER, hex
  std::vector<std::uint8_t> session_data() const;
  // Sends one length-prefixed message; false on error.
  bool send(const std::vector<std::uint8_t>& msg);
  // Reads one length-prefixed message; empty on timeout, EOF or error.
  std::vector<std::uint8_t> receive();
  // Bytes as they are (another protocol over TLS); false on error, or when a send
  // timeout set on fd() passed.
  bool send_raw(const std::uint8_t* p, std::size_t n);
  // What one record brings, waiting at most `wait`: > 0 bytes, 0 nothing within `wait`,
  // -1 EOF or an error.
  long receive_raw(std::uint8_t* p, std::size_t n, std::chrono::milliseconds wait);

private:
  bool read_exact(std::uint8_t* p, std::size_t n);
  int fd_ = -1;
  gnutls_session_t session_ = nullptr;
  gnutls_certificate_credentials_t cred_ = nullptr;
  std::chrono::milliseconds timeout_;
  bool ok_ = false;
};

// A plain TCP connection to 127.0.0.1:port (no TLS), or -1.
int connect_tcp(std::uint16_t port);

// A DNS message's ID (its first two bytes), 0 for a message shorter than that.
std::uint16_t message_id(const std::vector<std::uint8_t>& wire);

// The EDNS options of a reply's OPT record: (code, length) pairs in order.
std::vector<std::pair<std::uint16_t, std::uint16_t>> opt_options(const std::vector<std::uint8_t>& wire);

}  // namespace dnsarena::test
