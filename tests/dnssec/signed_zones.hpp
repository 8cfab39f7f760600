// SPDX-License-Identifier: GPL-3.0-or-later
// Signed zones made on the fly and served by knotd, for the validator's tests.
//
// In a private temporary directory: keymgr generates one key per signed zone (a CSK, the
// algorithm of the zone's policy) in the KASP database before knotd starts, so the parent
// zone can carry each child's DS (keymgr ... ds); then knotd signs every zone at load
// (dnssec-signing: on, policies with `manual: on` so the pregenerated keys are used) and
// serves them on 127.0.0.1:<free port>. The anchor is the DS set of "test.", written in
// Knot's DS format (anchor_ds_file) and Unbound's DNSKEY format (anchor_dnskey_file).
//
//   test.            ECDSA P-256, NSEC: www A, *.wild A, alias CNAME www.rsa.test.,
//                    toinsecure CNAME www.unsigned.test., dn DNAME rsa.test.; the
//                    delegations below
//   rsa.test.        RSA/SHA-256 (2048), NSEC        } each: www A, b A, d A,
//   ed.test.         Ed25519, NSEC                   } *.wild TXT
//   n3.test.         ECDSA P-256, NSEC3 (salt, 0 iterations)
//                    (and with distinct_names: d0 .. d<N-1> A in each of the three)
//   optout.test.     NSEC3 with opt-out, and an unsigned delegation deleg.optout.test.
//   hiter.test.      NSEC3 with 200 iterations (above RFC 9276's bound)
//   badds.test.      signed, but the DS in test. matches no key
//   unsigned.test.   not signed, no DS in test. (an insecure delegation)
//   unsupalg.test.   DS of algorithm 253 only;  unsupdigest.test.: DS of digest type 3 only
//
// Cost: about a second (key generation, RSA the most, and the first signing).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/child_process.hpp"
#include "dnssec/rrset.hpp"

namespace dnsarena::dnssec::test {

// The start of a knot.conf for a knotd of the tests: its rundir and KASP storage in
// `dir`, listening on 127.0.0.1@`port`, one worker of each kind, logging to stderr.
std::string knotd_conf_head(const std::string& dir, std::uint16_t port);

class SignedZones {
public:
  // `distinct_names`: rsa.test., ed.test. and n3.test. also hold d0 .. d<N-1> A, each
  // name signed on its own (the validation bench's names that no wildcard shares).
  // Throws std::runtime_error.
  explicit SignedZones(unsigned distinct_names = 0);
  ~SignedZones();
  SignedZones(const SignedZones&) = delete;
  SignedZones& operator=(const SignedZones&) = delete;

  std::uint16_t port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string anchor_ds_file() const { return dir_ + "/anchor-ds.key"; }
  std::string anchor_dnskey_file() const { return dir_ + "/anchor-dnskey.key"; }

  // Asks knotd (DO and CD set; TCP when the UDP reply is truncated, or when three UDP
  // attempts of a second each got none): the raw reply, empty when none came.
  std::vector<std::uint8_t> ask(const std::string& name, std::uint16_t type) const;
  std::vector<std::uint8_t> ask(const Bytes& name, std::uint16_t type) const;
  // The same, parsed; throws when the reply does not parse.
  Response fetch(const Bytes& name, std::uint16_t type) const;
  Response fetch(const std::string& name, std::uint16_t type) const;

private:
  std::string keymgr(const std::vector<std::string>& args) const;
  bool wait_signed(std::chrono::milliseconds timeout);

  std::string dir_;
  std::uint16_t port_ = 0;
  common::ChildProcess knotd_;
};

}  // namespace dnsarena::dnssec::test
