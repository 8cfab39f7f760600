// SPDX-License-Identifier: GPL-3.0-or-later
// knotd, the reference server of the differential test, as a child process.
//
// Purpose: serve the generated zones on 127.0.0.1:<free port> from a private temporary
// directory (config, zone files, rundir, storage with the KASP database and the keys that
// knotd generates when it signs), and change records while it runs (knotc over the
// control socket in that directory). Nothing outside the directory is touched; knotd is
// a common::ChildProcess (SIGTERM, SIGKILL after 5 s; dies with the test) and the
// destructor removes the directory after stopping it.
//
// knotd 3.2 configuration written (see knot.conf(5)):
//   server:   listen 127.0.0.1@PORT, udp-max-payload 4096 (so an EDNS 4096 client can
//             get a large answer over UDP; the default 1232 would hide upstream TC),
//             one UDP, one TCP and one background worker (the machine is shared)
//   policy:   "nsec3" (nsec3: on, 0 iterations, no salt) for the NSEC3 zone; the other
//             signed zone uses the default policy (NSEC, ECDSAP256SHA256)
//   template: zone files read once, never written back (zonefile-sync: -1), no journal
//   zone:     one entry per zone, dnssec-signing: on for the signed ones
//
// Cost: start and signing take well under a second for a few thousand records.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/child_process.hpp"
#include "tests/interop/zone_generator.hpp"

namespace dnsarena::interop {

// One record to put in place of the RRset (owner, type) in a knotc transaction.
struct RecordChange {
  std::string owner;  // absolute
  std::uint32_t ttl = 0;
  std::string type;
  std::string rdata;
};

// More of knotd's configuration, for a test that makes knotd a primary (zone transfers,
// NOTIFY, TSIG: the RPZ transfer tests).
struct KnotOptions {
  std::string sections;    // whole sections (key:, remote:, acl:), written before template:
  std::string zone_lines;  // lines added to every zone entry ("    acl: xfr\n")
  bool journal = false;    // keep changes in the journal (IXFR from journal) instead of none
};

class KnotServer {
public:
  // Writes everything and starts knotd. Throws std::runtime_error when it cannot.
  explicit KnotServer(const std::vector<ZoneFile>& zones, const KnotOptions& options = {});
  ~KnotServer();
  KnotServer(const KnotServer&) = delete;
  KnotServer& operator=(const KnotServer&) = delete;

  std::uint16_t port() const { return port_; }
  // The private directory (removed with the server): other files of the test may go there.
  const std::string& dir() const { return dir_; }
  // Until every zone answers its SOA over UDP, a signed zone with an RRSIG (DO set).
  bool wait_ready(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // One knotc transaction in `zone` replacing each (owner, type) RRset by the given
  // record. False with knotc's output in `error` on failure.
  bool replace_records(const std::string& zone, const std::vector<RecordChange>& changes, std::string& error);
  std::string log() const;
  // Stops knotd at once (SIGKILL): a primary that dies in the middle of a transfer.
  void kill() { knotd_.kill(); }

private:
  std::string conf() const { return dir_ + "/knot.conf"; }
  // knotc -c CONF ARGS... (no shell); true on exit code 0, its stdout in `output`.
  bool knotc(const std::vector<std::string>& args, std::string& output) const;

  std::string dir_;
  std::uint16_t port_ = 0;
  std::vector<ZoneFile> zones_;
  common::ChildProcess knotd_;
};

}  // namespace dnsarena::interop
