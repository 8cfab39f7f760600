// SPDX-License-Identifier: GPL-3.0-or-later
// A DNS hierarchy on this machine, for the recursive resolver's tests and benches: one
// knotd per authoritative address on a block of loopback addresses 127.53.K.2..10 (port
// 53, the port every resolver queries; K is the first block no other hierarchy of the host
// holds), serving a root zone, TLDs and leaf zones, and a root hints file pointing at the
// two root servers. Unbound (`root-hints`, `do-not-query-localhost: no`), Knot Resolver
// (`hints.root`) and dnsarena's own resolver all start from that file.
//
// Servers (host part of 127.53.K.x) and what each serves:
//   .2  a.root-servers.net  "."        referrals to net, com, org; glue for every TLD server
//   .3  b.root-servers.net  "."        the same zone (two roots: priming sees both)
//   .4  a.gtld-servers.net  net, com   com: delegations with and without glue (below)
//   .5  ns1.org             org        hoster.org, example.org (glue)
//   .6  ns1.example.com     example.com, outside.com, lame.com, silent.com, slow.com
//   .7  ns1.hoster.org      hoster.org, sub.example.com
//   .8  ns.example.org      example.org; named as a server of lame.com and broken.com
//                           which it does not serve: it answers them REFUSED (lame)
//   .9  ns1.silent.com      nothing answers: a UDP socket held by this object and never
//                           answered (silent_queries() counts what it received), no TCP
//                           listener
//   .10 ns1.slow.com        slow.com's only server: a relay (delaying_relay.hpp) that
//                           holds every query 150 ms (HierarchyOptions::slow_delay) before .6 answers it
//
// Delegations: example.com (in-bailiwick glue, plus an out-of-bailiwick NS without glue,
// ns.hoster.org); outside.com (only ns.hoster.org: the resolver must resolve it through
// org first); sub.example.com (a cut below a leaf zone, glue in example.com); lame.com (one
// lame and one good server); broken.com (only lame: SERVFAIL); silent.com (one silent
// and one good server). Data: CNAME chains crossing zones (chain.example.com ->
// c1.hoster.org -> www.example.org), a DNAME (dname.example.com -> example.org), an answer
// over 1232 bytes (big.example.com TXT: TC over UDP, the whole answer over TCP), an empty
// non-terminal, a name five labels deep, NXDOMAIN at a leaf and at the root.
//
// kHierarchyNames lists the questions the tests and benches ask, with the rcode every
// correct resolver returns.
//
// Each knotd counts the queries it receives (mod-stats), read by authoritative_queries(),
// and the zone transfers it serves (zone_transfers()). With HierarchyOptions::root_transfers
// the root servers are primaries of "." for 127.0.0.0/8 (a local root's, RFC 8806);
// zone_file() and reload_zone() let a test change a zone while they run.
//
// Signed (HierarchyOptions::signed_zones, off by default): the same servers and names,
// the zones listed in hierarchy_signing.hpp signed by their knotds with keys generated
// first (each parent carries its children's DS), plus bogus.com. (served by .6, signed,
// with a DS in com. that matches no key: www.bogus.com. is bogus); trust_anchor() is the
// root's DS. kSignedHierarchyNames lists the names whose DNSSEC verdict each exercises.
//
// Cost: seven knotd processes (one UDP, one TCP, one background worker each) and the
// slow server's thread, ready in well under a second. The private directory (configs, zones, logs, root hints) is
// removed by the destructor unless DNSARENA_HIERARCHY_KEEP is set.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/lab/delaying_relay.hpp"
#include "common/child_process.hpp"

namespace dnsarena::bench {

struct HierarchyName {
  const char* name;
  std::uint16_t qtype;
  std::uint16_t rcode;  // what a correct resolver answers: 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN
};

// The questions of the lab hierarchy (see the header comment for what each exercises).
extern const std::vector<HierarchyName> kHierarchyNames;

// What a validating resolver makes of a name of the signed hierarchy.
enum class HierarchyVerdict { secure, insecure, bogus };
struct SignedHierarchyName {
  const char* name;
  std::uint16_t qtype;
  std::uint16_t rcode;  // with validation (bogus: 2, SERVFAIL)
  HierarchyVerdict verdict;
};
// Secure answers, NXDOMAIN and NODATA proofs (NSEC and NSEC3), a chain across signed zones,
// insecure delegations, and the bogus zone.
extern const std::vector<SignedHierarchyName> kSignedHierarchyNames;

struct HierarchyOptions {
  bool signed_zones = false;  // see the header comment
  std::chrono::milliseconds slow_delay{150};  // how long the slow server (slow.com.'s) holds each query
  // The root servers (.2, .3) allow AXFR and IXFR of "." to 127.0.0.0/8 (a local root's
  // primaries, RFC 8806 Appendix A); off: refused, as knotd does without an ACL.
  bool root_transfers = false;
};

// True when knotd is on PATH or in /usr/sbin.
bool knotd_installed();
// False when this process may not bind port 53 (not root, no CAP_NET_BIND_SERVICE,
// net.ipv4.ip_unprivileged_port_start above 53): no hierarchy can start here.
bool port53_permitted();

class DnsHierarchy {
public:
  // Writes the zones and configs, binds the silent server, starts every knotd and waits
  // until each serves its zones' SOA. Throws std::runtime_error (with the failing knotd's
  // log) when it cannot, or when no block of addresses has port 53 free.
  explicit DnsHierarchy(HierarchyOptions options = {});
  ~DnsHierarchy();
  DnsHierarchy(const DnsHierarchy&) = delete;
  DnsHierarchy& operator=(const DnsHierarchy&) = delete;

  // "127.53.K.<host>" (host 2..10, as in the table above).
  std::string address(unsigned host) const;
  // The address of the (first) knotd that serves `zone` ("example.com.", "." ...).
  // Throws std::invalid_argument for a zone no knotd of the hierarchy serves.
  std::string server_of(const std::string& zone) const;
  // The root hints file: ". NS a.root-servers.net." and the roots' A records.
  const std::string& root_hints() const { return hints_path_; }
  // The root zone file the root servers serve (master format): a local root's copy
  // (RFC 8806, recursion.local_root).
  std::string root_zone() const { return dir_ + "/knotd-2/zones/root.zone"; }
  // The root servers' addresses, as in the hints file.
  std::vector<std::string> root_addresses() const { return {address(2), address(3)}; }
  // The root's DS in zone-file syntax (signed hierarchies only; else "").
  const std::string& trust_anchor() const { return anchor_path_; }
  // The private directory (removed with the hierarchy): other files of a test may go there.
  const std::string& dir() const { return dir_; }
  // Queries every knotd has received so far, UDP and TCP (knotd's mod-stats, read with
  // knotc over each knotd's control socket): the authoritative queries resolvers sent,
  // the silent server's aside. Throws std::runtime_error when a knotd cannot be asked.
  std::uint64_t authoritative_queries() const;
  // The same for the knotd of one host (2..10) alone.
  std::uint64_t authoritative_queries(unsigned host) const;
  // Queries of one type ("DS", "DNSKEY", "A": knotd's names) every knotd has received.
  std::uint64_t authoritative_queries_of_type(const std::string& type) const;
  // The same for the knotd of one host (2..10) alone.
  std::uint64_t authoritative_queries_of_type(const std::string& type, unsigned host) const;
  // Zone transfers (AXFR and IXFR) the knotd of `host` has served: counted in
  // authoritative_queries(host), not in any query type.
  std::uint64_t zone_transfers(unsigned host) const;
  // Makes the knotd of `host` read `origin`'s zone file again (knotc zone-reload, waiting
  // until it is loaded): after a test rewrote the file. Throws std::runtime_error when
  // knotc fails.
  void reload_zone(unsigned host, const std::string& origin) const;
  // The zone file the knotd of `host` serves `origin` from.
  std::string zone_file(unsigned host, const std::string& origin) const;
  // Every knotd's log, each headed by its address.
  std::string logs() const;
  // Datagrams the silent server (.9) has received so far (read off its socket here, never
  // answered; the kernel queue holds about 200 of them between two calls).
  std::uint64_t silent_queries();

private:
  struct Server;
  // Writes the files, binds the silent server, starts the knotds and waits for them.
  void start(const std::string& knotd);
  // Stops every knotd, closes the sockets, frees the block and removes the directory.
  void release();
  // The sum of knotc's `counter` lines on one knotd (those whose name holds `index`).
  std::uint64_t counter_sum(const Server& s, const std::string& counter, const std::string& index) const;
  std::string dir_;
  std::string hints_path_;
  std::string anchor_path_;
  HierarchyOptions options_;
  unsigned block_ = 0;
  int block_lock_fd_ = -1;
  int silent_fd_ = -1;
  std::uint64_t silent_seen_ = 0;
  std::unique_ptr<DelayingRelay> slow_;
  std::vector<std::unique_ptr<Server>> servers_;
};

}  // namespace dnsarena::bench
