// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers for the serve tests: a free port, a `dnsarena serve` child process that is
// always stopped within bounded time, a raw UDP/TCP DNS client, kdig, and stats.
#pragma once
#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/child_process.hpp"

namespace dnsarena::test {

// A port free for both UDP and TCP on 127.0.0.1 at the time of the call, reserved for
// this test process (common::free_loopback_port).
std::uint16_t free_port();
// Writes `text` to a new file under /tmp (unique to this process) and returns its path.
std::string write_config(const std::string& text);
// A segment name unique to this test process.
std::string unique_segment(const std::string& tag);

// The tests' upstreams serve names under test., a default local zone that serve answers
// itself (RFC 6761; policy/default_local_zones.hpp): every serve a test starts forwards
// it, as an operator forwards a zone of their own, by `--local-zone "test. nodefault"`
// appended to `args`, unless the test gives --local-zone itself.
void forward_test_zone(std::vector<std::string>& args);

// `dnsarena serve ARGS...` (with forward_test_zone), output to a log file. The destructor
// stops it (SIGTERM, then SIGKILL after 5 s).
class ServeProcess {
public:
  ServeProcess(std::vector<std::string> args, std::uint16_t port);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;
  pid_t pid() const { return child_.pid(); }
  // Waits until this serve (its supervisor's own listening socket, per /proc) accepts TCP
  // on the port. False after `timeout`, or at once when the process exited.
  bool wait_ready(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // SIGTERM and wait; returns the exit status (or -1 when it had to be killed).
  int stop();
  // True once the process has exited by itself within `limit` (stop() then gives its status).
  bool wait_exit(std::chrono::milliseconds limit) { return child_.wait_exit(limit); }
  // The supervisor's children but the /metrics process (metrics_process.hpp): its workers,
  // and the helper processes of the features a test turns on (RPZ transfers, probes).
  std::vector<pid_t> children() const;
  std::string log() const;

private:
  common::ChildProcess child_;
  std::uint16_t port_;
  std::string log_path_;
};

// One record of a reply, OPT aside.
struct ReplyRecord {
  unsigned section = 0;  // 0 answer, 1 authority, 2 additional
  std::string owner;     // lowercase, dotted, trailing dot
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
};

struct DnsReply {
  bool answered = false;
  std::uint16_t id = 0;
  std::uint16_t flags = 0;
  unsigned rcode() const { return flags & 0xF; }
  unsigned extended_rcode = 0;  // the full rcode with the OPT's upper bits (e.g. 16 BADVERS)
  bool has_opt = false;
  int ecs_scope = -1;  // the ECS option's SCOPE PREFIX-LENGTH, -1 without an ECS option
  int ede = -1;        // the Extended DNS Error's INFO-CODE (RFC 8914), -1 without one
  std::vector<std::uint8_t> cookie;  // the COOKIE option's bytes (client + server cookie), empty without one
  bool tc() const { return (flags & 0x0200) != 0; }
  bool ad() const { return (flags & 0x0020) != 0; }
  std::vector<std::string> answers;  // "type rdata-hex" per answer record
  std::vector<ReplyRecord> records;  // every record but the OPT, in order
  std::size_t count(unsigned section, std::uint16_t type) const;
  std::vector<std::uint8_t> wire;
};

// Builds a query (RD set; EDNS with payload `edns_size` when > 0, with DO and the EDNS
// version as given).
std::vector<std::uint8_t> make_query(std::uint16_t id, const std::string& name, std::uint16_t qtype,
                                     std::uint16_t edns_size = 1232, bool do_bit = false,
                                     std::uint8_t edns_version = 0);
// A query with EDNS and an ECS option for the IPv4 subnet a.b.c.d/source_prefix (only
// the prefix's bytes are sent, as RFC 7871 requires).
std::vector<std::uint8_t> make_ecs_query(std::uint16_t id, const std::string& name, std::uint16_t qtype,
                                         std::uint8_t source_prefix, std::array<std::uint8_t, 4> address);
// `query` (which ends with its OPT record, as make_query writes it) with one more EDNS
// option appended to the OPT.
std::vector<std::uint8_t> with_edns_option(std::vector<std::uint8_t> query, std::uint16_t code,
                                           const std::vector<std::uint8_t>& data);
// Sends `packet` over UDP (from `source`, an IPv4 address, when given) and waits for
// one reply.
DnsReply udp_exchange(std::uint16_t port, const std::vector<std::uint8_t>& packet,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000),
                      const char* source = nullptr);
// Sends `packet` over UDP up to `attempts` times, 500 ms apart, until one is answered:
// a service's workers answer, not just the kernel's TCP accept (wait_ready).
bool udp_answered_within(std::uint16_t port, const std::vector<std::uint8_t>& packet, int attempts = 20);
DnsReply tcp_exchange(std::uint16_t port, const std::vector<std::uint8_t>& packet,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
// The same with `server` ("127.0.0.2:53", "[::1]:53"). Over UDP the socket is connected to
// it, so the kernel hands it only a reply sent from that very address; `replied_from`
// (when given) gets the reply's source as "address:port" / "[address]:port".
DnsReply udp_exchange_at(const std::string& server, const std::vector<std::uint8_t>& packet,
                         std::string* replied_from = nullptr,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
DnsReply tcp_exchange_at(const std::string& server, const std::vector<std::uint8_t>& packet,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
DnsReply parse_reply(const std::vector<std::uint8_t>& wire);

// Runs a command, returns its stdout (exit code in *status when given).
std::string run_command(const std::string& cmd, int* status = nullptr);
// How many times `what` occurs in `text` (a log line counted across reloads, say).
std::size_t occurrences(const std::string& text, const std::string& what);
// A non-blocking UDP socket connected to 127.0.0.1:`port` (its own source port), or -1.
int connected_udp_socket(std::uint16_t port);
// Stops and joins a test's client thread when the scope ends, also when a failed REQUIRE
// leaves it early: `stop` is what the thread's loop looks at.
struct JoinOnExit {
  std::atomic<bool>& stop;
  std::thread& thread;
  ~JoinOnExit() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
};

// Waits (up to 10 s, looking every 50 ms) until `pred()`; false when it never held.
template <typename Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 200; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}
// kdig's path, found on PATH at run time; throws, saying what to install, when absent.
std::string kdig_program();
// kdig answer and authority sections with TTLs removed, sorted.
std::string kdig_records(std::uint16_t port, const std::string& name, const std::string& type,
                         const std::string& extra = "");
// `dnsarena stats --segment S --json --interval 0`.
nlohmann::json serve_stats(const std::string& segment);

// Events a test waits for (with eventually()) instead of sleeping:
// Entries of `segment` not expired now (the $ENTRY blocks of `dnsarena dump`): 0 once
// every entry's TTL has run out.
std::size_t live_cache_entries(const std::string& segment);
// TCP connections on this host to 127.0.0.1:`port` whose local end is still open
// (ESTABLISHED, or CLOSE_WAIT: the peer closed, this end not yet), from /proc/net/tcp:
// 0 once the connecting side closed them all.
std::size_t tcp_connections_to(std::uint16_t port);
// How many times process `pid`'s main thread went to sleep and woke (voluntary context
// switches, /proc/PID/status): a supervisor's timed checks each add one.
std::uint64_t voluntary_switches(pid_t pid);

std::string dnsarena_binary();

}  // namespace dnsarena::test
