// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/self_signed_certificate.hpp"

#include <fstream>
#include <stdexcept>
#include <vector>

#include "bench/lab/serve_process.hpp"

namespace dnsarena::bench {

CertificateFiles make_self_signed_certificate(const std::string& dir, const std::string& name) {
  const CertificateFiles f{dir + "/" + name + "-cert.pem", dir + "/" + name + "-key.pem"};
  const std::string base = dir + "/" + name;
  std::ofstream(base + ".template") << "cn = \"" << name << "\"\ndns_name = \"" << name
                                    << "\"\nexpiration_days = 2\ntls_www_server\nsigning_key\n";
  auto certtool = [&](const std::vector<std::string>& argv, const std::string& log) {
    common::ChildProcess p = spawn_logged(argv, log);
    if (p.wait() != 0) throw std::runtime_error("certtool (gnutls-bin) failed:\n" + slurp(log));
  };
  certtool({"certtool", "--generate-privkey", "--key-type=ecdsa", "--outfile", f.key}, base + "-certtool-key.log");
  certtool({"certtool", "--generate-self-signed", "--load-privkey", f.key, "--template", base + ".template",
            "--outfile", f.cert},
           base + "-certtool-cert.log");
  return f;
}

}  // namespace dnsarena::bench
