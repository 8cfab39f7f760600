// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/dnssec/signed_zones.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "dns/query_builder.hpp"
#include "tests/workers/serve_harness.hpp"

namespace dnsarena::dnssec::test {

namespace {

struct ZoneSpec {
  const char* name;      // relative to test.
  const char* policy;    // nullptr: unsigned
  const char* keygen;    // keymgr generate arguments
};

// The child zones of test. (test. itself uses the "ecdsa" policy).
const ZoneSpec kChildren[] = {
    {"rsa", "rsa", "algorithm=8 size=2048"},
    {"ed", "ed", "algorithm=15"},
    {"n3", "n3", "algorithm=13"},
    {"optout", "optout", "algorithm=13"},
    {"hiter", "hiter", "algorithm=13"},
    {"badds", "ecdsa", "algorithm=13"},
    {"unsigned", nullptr, nullptr},
};

const char* kPolicies =
    "policy:\n"
    "  - id: ecdsa\n    algorithm: ecdsap256sha256\n    manual: on\n"
    "  - id: rsa\n    algorithm: rsasha256\n    manual: on\n"
    "  - id: ed\n    algorithm: ed25519\n    manual: on\n"
    "  - id: n3\n    algorithm: ecdsap256sha256\n    manual: on\n    nsec3: on\n    nsec3-iterations: 0\n"
    "    nsec3-salt-length: 8\n"
    "  - id: optout\n    algorithm: ecdsap256sha256\n    manual: on\n    nsec3: on\n    nsec3-opt-out: on\n"
    "    nsec3-iterations: 0\n    nsec3-salt-length: 0\n"
    "  - id: hiter\n    algorithm: ecdsap256sha256\n    manual: on\n    nsec3: on\n    nsec3-iterations: 200\n"
    "    nsec3-salt-length: 4\n";

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string child_zone_text(const std::string& origin, unsigned distinct_names) {
  std::ostringstream z;
  z << "$ORIGIN " << origin << "\n$TTL 3600\n"
    << "@ SOA ns h 1 3600 600 86400 300\n@ NS ns\nns A 127.0.0.1\n"
    << "www A 192.0.2.2\nb A 192.0.2.3\nd A 192.0.2.4\n*.wild TXT \"wildcard\"\n";
  if (origin == "optout.test.") z << "deleg NS ns.deleg\nns.deleg A 127.0.0.1\n";
  if (origin == "rsa.test." || origin == "ed.test." || origin == "n3.test.")
    for (unsigned i = 0; i < distinct_names; ++i) z << "d" << i << " A 198.51.100." << (i % 250 + 1) << "\n";
  return z.str();
}

}  // namespace

std::string SignedZones::keymgr(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{KEYMGR_PROGRAM, "-c", dir_ + "/knot.conf"};
  argv.insert(argv.end(), args.begin(), args.end());
  int status = 0;
  std::string out = common::run_and_capture(argv, status);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("keymgr failed: " + out);
  return out;
}

std::string knotd_conf_head(const std::string& dir, std::uint16_t port) {
  std::ostringstream c;
  c << "server:\n    rundir: \"" << dir << "\"\n    listen: 127.0.0.1@" << port << "\n"
    << "    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n"
    << "database:\n    storage: \"" << dir << "/db\"\n"
    << "log:\n  - target: stderr\n    any: info\n";
  return c.str();
}

SignedZones::SignedZones(unsigned distinct_names) {
  char templ[] = "/tmp/dnsarena-dnssec-XXXXXX";
  if (!::mkdtemp(templ)) throw std::runtime_error("mkdtemp failed");
  dir_ = templ;
  std::filesystem::create_directories(dir_ + "/db/keys");
  std::filesystem::create_directories(dir_ + "/zones");
  port_ = dnsarena::test::free_port();
  std::ostringstream c;
  c << knotd_conf_head(dir_, port_) << kPolicies
    << "template:\n  - id: default\n    storage: \"" << dir_ << "/zones\"\n    file: \"%s.zone\"\n"
    << "    zonefile-sync: -1\n    journal-content: none\n"
    << "zone:\n  - domain: test.\n    dnssec-signing: on\n    dnssec-policy: ecdsa\n";
  for (const ZoneSpec& z : kChildren) {
    c << "  - domain: " << z.name << ".test.\n";
    if (z.policy) c << "    dnssec-signing: on\n    dnssec-policy: " << z.policy << "\n";
  }
  write_file(dir_ + "/knot.conf", c.str());

  keymgr({"test.", "generate", "algorithm=13", "ksk=yes", "zsk=yes"});
  std::ostringstream parent;
  parent << "$ORIGIN test.\n$TTL 3600\n@ SOA ns h 1 3600 600 86400 300\n@ NS ns\nns A 127.0.0.1\n"
         << "www A 192.0.2.1\n*.wild A 192.0.2.9\n"
         << "alias CNAME www.rsa.test.\ntoinsecure CNAME www.unsigned.test.\ndn DNAME rsa.test.\n";
  for (const ZoneSpec& z : kChildren) {
    const std::string origin = std::string(z.name) + ".test.";
    parent << z.name << " NS ns." << z.name << "\nns." << z.name << " A 127.0.0.1\n";
    if (z.policy) {
      std::vector<std::string> args{origin, "generate", "ksk=yes", "zsk=yes"};
      std::istringstream extra(z.keygen);
      for (std::string a; extra >> a;) args.push_back(a);
      keymgr(args);
      if (std::string(z.name) == "badds") {
        parent << "badds DS 1234 13 2 " << std::string(64, 'a') << "\n";
      } else {
        std::istringstream ds(keymgr({origin, "ds"}));
        for (std::string line; std::getline(ds, line);)
          if (line.find(" DS ") != std::string::npos && line.find(" 13 1 ") == std::string::npos &&
              line.find(" 8 1 ") == std::string::npos && line.find(" 15 1 ") == std::string::npos)
            parent << line << "\n";
      }
    }
    write_file(dir_ + "/zones/" + origin + "zone", child_zone_text(origin, distinct_names));
  }
  parent << "unsupalg NS ns.unsupalg\nns.unsupalg A 127.0.0.1\nunsupalg DS 4321 253 2 " << std::string(64, 'b') << "\n";
  parent << "unsupdigest NS ns.unsupdigest\nns.unsupdigest A 127.0.0.1\nunsupdigest DS 4321 13 3 "
         << std::string(64, 'c') << "\n";
  write_file(dir_ + "/zones/test.zone", parent.str());

  // The anchor in both formats: DS (Knot Resolver's root.keys, dns-root-data's root.ds) and
  // DNSKEY with Unbound's autotrust comments.
  std::string ds_lines;
  std::istringstream ds(keymgr({"test.", "ds"}));
  for (std::string line; std::getline(ds, line);)
    if (line.find(" 13 2 ") != std::string::npos) ds_lines += line + "\n";
  write_file(anchor_ds_file(), "; trust anchor for the lab's test. zone\n" + ds_lines);
  std::string dnskey = keymgr({"test.", "dnskey"});
  const auto at = dnskey.find("DNSKEY");
  if (at == std::string::npos) throw std::runtime_error("keymgr dnskey printed no DNSKEY");
  write_file(anchor_dnskey_file(), "; autotrust trust anchor file\n;;id: test. 1\n;;last_queried: 0 ;;Thu Jan  1\n"
                                   "test.\t3600\tIN\t" + dnskey.substr(at, dnskey.find('\n', at) - at) +
                                   " ;{id = 1 (ksk), size = 256b} ;;state=2 [  VALID  ] ;;count=0 ;;lastchange=0\n");

  knotd_ = common::ChildProcess({KNOTD_PROGRAM, "-c", dir_ + "/knot.conf"},
                                {.log_path = dir_ + "/knotd.log", .truncate_log = true, .die_with_parent = true});
  if (!wait_signed(std::chrono::seconds(20))) throw std::runtime_error("knotd did not serve the signed zones; see " + dir_);
}

SignedZones::~SignedZones() {
  knotd_.stop();
  std::error_code ec;
  if (!std::getenv("DNSARENA_DNSSEC_KEEP")) std::filesystem::remove_all(dir_, ec);
}

bool SignedZones::wait_signed(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::string> zones{"test."};
  for (const ZoneSpec& z : kChildren)
    if (z.policy) zones.push_back(std::string(z.name) + ".test.");
  std::size_t ready = 0;
  while (std::chrono::steady_clock::now() < deadline && knotd_.running()) {
    for (; ready < zones.size(); ++ready) {
      std::string error;
      Response r;
      const auto wire = ask(zones[ready], kTypeDnskey);
      if (wire.empty() || !parse_response(wire, r, error)) break;
      const Rrset* keys = find_rrset(r.answer, r.qname, kTypeDnskey);
      if (!keys || keys->rrsigs.empty()) break;
    }
    if (ready == zones.size()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::vector<std::uint8_t> SignedZones::ask(const Bytes& name, std::uint16_t type) const {
  static std::uint16_t id = 1;
  dns::QuerySpec spec;
  spec.id = ++id;
  spec.qname = name;
  spec.qtype = type;
  spec.cd = true;
  spec.do_bit = true;
  const common::Bytes q = dns::build_query(spec);
  const std::vector<std::uint8_t> packet(q.begin(), q.end());
  // A busy machine may delay a UDP reply past the timeout: asked again, then over TCP.
  dnsarena::test::DnsReply r;
  for (int attempt = 0; attempt < 3 && r.wire.empty(); ++attempt)
    r = dnsarena::test::udp_exchange(port_, packet, std::chrono::milliseconds(1000));
  if (r.wire.empty() || r.tc()) r = dnsarena::test::tcp_exchange(port_, packet, std::chrono::milliseconds(5000));
  return r.wire;
}

std::vector<std::uint8_t> SignedZones::ask(const std::string& name, std::uint16_t type) const {
  return ask(name_from_text(name), type);
}

Response SignedZones::fetch(const Bytes& name, std::uint16_t type) const {
  const auto wire = ask(name, type);
  Response r;
  std::string error;
  if (!parse_response(wire, r, error)) throw std::runtime_error("reply for " + name_text(name) + ": " + error);
  return r;
}

Response SignedZones::fetch(const std::string& name, std::uint16_t type) const {
  return fetch(name_from_text(name), type);
}

}  // namespace dnsarena::dnssec::test
