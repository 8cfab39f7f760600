// SPDX-License-Identifier: GPL-3.0-or-later
// A tiny authoritative responder for the serve tests, on a thread of the test process.
//
// It answers a fixed zone "test." over UDP and TCP on 127.0.0.1 (a free port) and counts
// the queries it receives, so a test can prove that an answer came from the cache.
// A name whose first label starts with slow<N> (slow1200x.host.test.) is answered over
// UDP N ms after each query for it arrives, and once<N> only the first query for it
// (later ones get no reply: a reply that comes must be the first attempt's): a recursive
// upstream on a cold name. Held replies do not hold back the others (normal mode only). Over
// UDP an answer larger than the query's EDNS size (512 without EDNS) is sent as Knot
// does: TC, no records. DNSSEC records (fake signatures, signer "test.") are sent only
// when the query has DO. A mode switch makes it hostile: reply with a wrong ID, from
// another port, for another question, or not at all.
//
//   name            type   answer
//   a.test.         A      192.0.2.1, 192.0.2.2 (+ an out-of-bailiwick additional record)
//   aaaa.test.      AAAA   2001:db8::1
//   txt.test.       TXT    "hello upstream"
//   big.test.       TXT    4 strings of 200 bytes (does not fit 512 bytes)
//   cname.test.     A      CNAME target.test., target.test. A 192.0.2.9
//   nodata.test.    AAAA   NOERROR, no answer, SOA
//   ecs.test.       A      10.<b1>.<b2>.1 from the query's ECS address, scope /24
//   chain.test.     A      CNAME c2.test. (TTL 300), c2.test. CNAME h.test. (TTL 1), h A
//   negchain.test.  A      NXDOMAIN: CNAME n2.test. (300), n2 CNAME n3.test. (1), SOA
//   zero.test.      A      192.0.2.10 with TTL 0
//   nosoa.test.     any    NXDOMAIN without SOA (not cacheable)
//   zeroauth.test.  A      192.0.2.11 (300), and NS with TTL 0 in authority
//   hugettl.test.   A      192.0.2.12 with TTL 2^31 (RFC 2181 8: counts as 0)
//   huge.test.      TXT    10 strings of 200 bytes (TC over UDP: only TCP gets it)
//   bignx.test.     A      NXDOMAIN: a chain of 5 CNAMEs to long names (> 1232 bytes), SOA
//   out.test.       A      NOERROR, CNAME elsewhere.example. only (the chain leaves us)
//   x.deleg.test.   any    referral: deleg.test. NS ns.deleg.test., glue A
//   signed.test.    A      NXDOMAIN, SOA; with DO: + NSEC a.test. + 2 RRSIGs
//   x.dname.test.   A      dname.test. DNAME target.test., x CNAME x.target.test., A;
//                          with DO: + RRSIG of the DNAME
//   cname.test.     ANY    the CNAME alone
//   multi.test.     ANY    A (2 records), AAAA, TXT
//   ad.test.        A      192.0.2.13 with AD set (as a validating resolver would claim)
//   *.host.test.    A      192.0.2.100 (any name of at least one label under host.test.)
//   other names     any    NXDOMAIN, SOA (negative TTL 300 = SOA MINIMUM)
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dnsarena::test {

// drop_first: the first query for each name gets no reply (a lost packet);
// lowercase_echo: the reply's question is lowercased (a server that ignores 0x20).
enum class UpstreamMode { normal, wrong_id, wrong_port, wrong_question, silent, drop_first, lowercase_echo };

class TestUpstream {
public:
  TestUpstream();
  ~TestUpstream();
  std::uint16_t port() const { return port_; }
  std::uint64_t queries() const { return queries_.load(); }  // UDP and TCP
  std::uint64_t tcp_queries() const { return tcp_queries_.load(); }
  void set_mode(UpstreamMode m) { mode_.store(m); }
  // Each UDP reply is sent this long after its query arrived (a distant server); the
  // responder sleeps, so it suits sequential clients.
  void set_delay(std::chrono::microseconds d) { delay_us_.store(d.count()); }
  // The question names of the queries received, exactly as sent (case kept), dotted.
  std::vector<std::string> names_received() const;

private:
  void loop();
  void serve_tcp_connection(int conn);
  int fd_ = -1;
  int tcp_fd_ = -1;
  int other_fd_ = -1;  // a second socket, for replies "from the wrong port"
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> queries_{0};
  std::atomic<std::uint64_t> tcp_queries_{0};
  std::atomic<UpstreamMode> mode_{UpstreamMode::normal};
  std::atomic<std::int64_t> delay_us_{0};
  mutable std::mutex names_mutex_;
  std::vector<std::string> names_received_;
  std::set<std::string> dropped_once_;  // drop_first: names already dropped (loop thread only)
  bool record(const std::uint8_t* query, std::size_t len);  // false: drop this query
  std::thread thread_;
};

}  // namespace dnsarena::test
