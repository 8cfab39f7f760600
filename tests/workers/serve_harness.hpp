// Helpers for the serve tests: a free port, a `dnsarena serve` child process that is
// always stopped within bounded time, a raw UDP/TCP DNS client, kdig, and stats.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/child_process.hpp"

namespace dnsarena::test {

// A port free for both UDP and TCP on 127.0.0.1 at the time of the call.
std::uint16_t free_port();
// A segment name unique to this test process.
std::string unique_segment(const std::string& tag);

// `dnsarena serve ARGS...`, output to a log file. The destructor stops it (SIGTERM, then
// SIGKILL after 5 s).
class ServeProcess {
public:
  ServeProcess(std::vector<std::string> args, std::uint16_t port);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;
  pid_t pid() const { return child_.pid(); }
  // Waits until a worker accepts TCP on the port. False after `timeout`.
  bool wait_ready(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // SIGTERM and wait; returns the exit status (or -1 when it had to be killed).
  int stop();
  std::vector<pid_t> children() const;
  std::string log() const;

private:
  common::ChildProcess child_;
  std::uint16_t port_;
  std::string log_path_;
};

struct DnsReply {
  bool answered = false;
  std::uint16_t id = 0;
  std::uint16_t flags = 0;
  unsigned rcode() const { return flags & 0xF; }
  bool tc() const { return (flags & 0x0200) != 0; }
  std::vector<std::string> answers;  // "type rdata-hex" per answer record
  std::vector<std::uint8_t> wire;
};

// Builds a query (RD set; EDNS with payload `edns_size` when > 0).
std::vector<std::uint8_t> make_query(std::uint16_t id, const std::string& name, std::uint16_t qtype,
                                     std::uint16_t edns_size = 1232);
// Sends `packet` over UDP and waits for one reply.
DnsReply udp_exchange(std::uint16_t port, const std::vector<std::uint8_t>& packet,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
DnsReply tcp_exchange(std::uint16_t port, const std::vector<std::uint8_t>& packet,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
DnsReply parse_reply(const std::vector<std::uint8_t>& wire);

// Runs a command, returns its stdout (exit code in *status when given).
std::string run_command(const std::string& cmd, int* status = nullptr);
// kdig's path, found on PATH at run time; throws, saying what to install, when absent.
std::string kdig_program();
// kdig answer and authority sections with TTLs removed, sorted.
std::string kdig_records(std::uint16_t port, const std::string& name, const std::string& type,
                         const std::string& extra = "");
// `dnsarena stats --segment S --json --interval 0`.
nlohmann::json serve_stats(const std::string& segment);

std::string dnsarena_binary();

}  // namespace dnsarena::test
