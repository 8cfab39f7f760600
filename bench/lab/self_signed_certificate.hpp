// SPDX-License-Identifier: GPL-3.0-or-later
// A self-signed certificate for the lab benches that start TLS listeners (bench serve
// --dot/--doh, bench upstream, bench tls-idle): a new ECDSA key and a certificate whose CN
// and DNS name are `name`, made by certtool (gnutls-bin) in `dir`, valid 2 days. No key
// is ever committed.
#pragma once
#include <string>

namespace dnsarena::bench {

struct CertificateFiles {
  std::string cert;  // DIR/NAME-cert.pem
  std::string key;   // DIR/NAME-key.pem
};

// Throws std::runtime_error with certtool's output when it fails.
CertificateFiles make_self_signed_certificate(const std::string& dir, const std::string& name);

}  // namespace dnsarena::bench
