// SPDX-License-Identifier: GPL-3.0-or-later
// An authoritative server that rejects EDNS, as old middleboxes and servers do: every
// query with an OPT record is answered FORMERR (RFC 6891 7: the resolver should ask again
// without EDNS). For the recursive resolver's EDNS fallback tests; on a thread of the test
// process, UDP and TCP on port 53 of a loopback address of its own (127.54.0.N, the
// first N free), so a root hints file can name it.
//
// Without an OPT record it serves every zone, the root included, authoritatively:
//   ". NS"                    ns.intolerant. with its address as glue (priming)
//   ns.intolerant. A          its own address
//   big.<anything> TXT        four 200-byte TXT strings (over 512 bytes): over UDP an
//                             empty reply with TC, over TCP the whole set
//   any other name, type A    192.0.2.77
//   anything else             NODATA (authoritative, no records)
// Counts the queries it received with and without EDNS, and over TCP.
//
// Bounds: datagrams shorter than a header, with QR set, or whose question does not parse
// are dropped; one TCP connection at a time, read with a 1 s limit.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace dnsarena::bench {

class EdnsIntolerantServer {
public:
  // Binds UDP and TCP port 53 of the first free 127.54.0.N and starts the thread. Throws
  // std::runtime_error when none can be bound (port 53 needs root).
  EdnsIntolerantServer();
  ~EdnsIntolerantServer();
  EdnsIntolerantServer(const EdnsIntolerantServer&) = delete;
  EdnsIntolerantServer& operator=(const EdnsIntolerantServer&) = delete;

  const std::string& address() const { return address_; }
  // Writes a root hints file naming this server as the only root; returns its path.
  std::string write_root_hints(const std::string& dir) const;
  std::uint64_t edns_queries() const { return edns_.load(); }
  std::uint64_t plain_queries() const { return plain_.load(); }
  std::uint64_t tcp_queries() const { return tcp_.load(); }

private:
  void loop();
  int udp_ = -1, tcp_fd_ = -1;
  std::string address_;
  std::uint8_t v4_[4] = {};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> edns_{0}, plain_{0}, tcp_{0};
  std::thread thread_;
};

}  // namespace dnsarena::bench
