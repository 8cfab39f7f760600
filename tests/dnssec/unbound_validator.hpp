// SPDX-License-Identifier: GPL-3.0-or-later
// Unbound's validator as the reference (validator + iterator, a trust anchor file, every
// zone knotd serves in signed_zones.hpp as a stub zone), and the names every differential
// test of the validator asks it: positive, NXDOMAIN, NODATA, wildcard, opt-out, NSEC3
// iterations over the bound, a DS that matches no key, an insecure delegation, DS and
// DNSKEY sets themselves, over ECDSA, RSA, Ed25519 and NSEC3 zones.
//
// Left out: names under unsupalg.test. and unsupdigest.test. (their DS sets point to
// zones knotd does not serve, so Unbound's iterator cannot reach them) and under
// deleg.optout.test. (an unsigned delegation to a server that does not exist).
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/child_process.hpp"
#include "dnssec/rrset.hpp"
#include "tests/dnssec/signed_zones.hpp"
#include "tests/workers/serve_harness.hpp"

namespace dnsarena::dnssec::test {

class UnboundValidator {
public:
  UnboundValidator(const SignedZones& zones, const std::string& anchor_file) {
    port_ = dnsarena::test::free_port();
    dir_ = zones.dir() + "/unbound";
    std::filesystem::create_directories(dir_);
    std::ostringstream c;
    c << "server:\n  interface: 127.0.0.1\n  port: " << port_ << "\n  do-ip6: no\n  do-not-query-localhost: no\n"
      << "  username: \"\"\n  chroot: \"\"\n  directory: \"" << dir_ << "\"\n  pidfile: \"" << dir_ << "/unbound.pid\"\n"
      << "  use-syslog: no\n  logfile: \"\"\n  verbosity: 1\n  num-threads: 1\n  so-reuseport: no\n"
      << "  module-config: \"validator iterator\"\n  trust-anchor-file: \"" << anchor_file << "\"\n"
      << "  ede: yes\n  val-log-level: 2\n  qname-minimisation: no\n  aggressive-nsec: no\n"
      << "  access-control: 127.0.0.0/8 allow\n  minimal-responses: yes\n"
      << "  local-zone: \"test.\" nodefault\n";  // RFC 6761 names are local zones by default
    for (const char* z : {"test.", "rsa.test.", "ed.test.", "n3.test.", "optout.test.", "hiter.test.", "badds.test.",
                          "unsigned.test."})
      c << "stub-zone:\n  name: \"" << z << "\"\n  stub-addr: 127.0.0.1@" << zones.port() << "\n";
    std::ofstream(dir_ + "/unbound.conf") << c.str();
    unbound_ = dnsarena::common::ChildProcess({UNBOUND_PROGRAM, "-d", "-c", dir_ + "/unbound.conf"},
                                             {.log_path = dir_ + "/unbound.log", .truncate_log = true,
                                              .die_with_parent = true});
    // Until it answers (a refused port fails at once: poll until a deadline).
    const auto probe = dnsarena::test::make_query(1, "www.test.", 1, 1232, true);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (!dnsarena::test::udp_exchange(port_, probe, std::chrono::milliseconds(500)).answered) {
      if (std::chrono::steady_clock::now() > deadline || !unbound_.running())
        throw std::runtime_error("unbound did not start; see " + dir_);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  dnsarena::test::DnsReply ask(const std::string& name, std::uint16_t type) const {
    static std::uint16_t id = 100;
    return dnsarena::test::udp_exchange(port_, dnsarena::test::make_query(++id, name, type, 1232, true),
                                        std::chrono::milliseconds(3000));
  }

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return unbound_.pid(); }

private:
  std::uint16_t port_ = 0;
  std::string dir_;
  dnsarena::common::ChildProcess unbound_;
};

struct Name {
  std::string name;
  std::uint16_t type;
};

inline std::vector<Name> differential_names() {
  constexpr std::uint16_t kA = 1, kTxt = 16, kAaaa = 28;
  std::vector<Name> names{{"www.test.", kA},         {"nope.test.", kA},          {"www.test.", kAaaa},
                          {"a.wild.test.", kA},      {"a.wild.test.", kTxt},      {"www.optout.test.", kA},
                          {"nope.optout.test.", kA}, {"deleg.optout.test.", kTypeDs},
                          {"www.hiter.test.", kA},   {"nope.hiter.test.", kA},    {"www.badds.test.", kA},
                          {"nope.badds.test.", kA},  {"www.unsigned.test.", kA},  {"nope.unsigned.test.", kA},
                          {"unsigned.test.", kTypeDs}, {"rsa.test.", kTypeDs},    {"test.", kTypeDnskey}};
  for (const char* z : {"rsa.test.", "ed.test.", "n3.test."}) {
    for (const char* label : {"www.", "nope.", "a.wild.", "x.y.z.", "wild."})
      for (std::uint16_t t : {kA, kAaaa, kTxt}) names.push_back({std::string(label) + z, t});
  }
  return names;
}

}  // namespace dnsarena::dnssec::test
