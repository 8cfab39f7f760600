// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/workers/serve_harness.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/child_process.hpp"
#include "common/find_program.hpp"
#include "common/loopback.hpp"
#include "common/proc_stats.hpp"
#include "tests/command_output.hpp"
#include "common/socket_owners.hpp"
#include "dns/knot_packet.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"
#include "workers/metrics_process.hpp"  // kMetricsProcessName
#include "workers/serve_config.hpp"

namespace dnsarena::test {

namespace {

std::uint64_t now_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace

std::string dnsarena_binary() { return DNSARENA_BINARY; }

std::string kdig_program() { return common::require_program("kdig", "install knot-dnsutils (.ci/install-deps)"); }

std::uint16_t free_port() { return common::free_loopback_port(); }

std::string unique_segment(const std::string& tag) {
  static int n = 0;
  return "dnsarena-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
}

void forward_test_zone(std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--local-zone") == args.end())
    args.insert(args.end(), {"--local-zone", "test. nodefault"});
}

ServeProcess::ServeProcess(std::vector<std::string> args, std::uint16_t port) : port_(port) {
  forward_test_zone(args);
  static int n = 0;
  log_path_ = "/tmp/dnsarena-serve-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".log";
  std::vector<std::string> argv{dnsarena_binary(), "serve"};
  argv.insert(argv.end(), args.begin(), args.end());
  child_ = common::ChildProcess(argv, {.log_path = log_path_, .truncate_log = true});
}

ServeProcess::~ServeProcess() { stop(); }

bool ServeProcess::wait_ready(std::chrono::milliseconds timeout) {
  const std::uint64_t deadline = now_ms() + static_cast<std::uint64_t>(timeout.count());
  while (now_ms() < deadline) {
    if (!child_.running()) return false;
    // Our serve's own listener: another process that holds the same port would accept
    // too (and answer our queries) while ours still waits in its port grace.
    if (common::accepts_tcp(port_) && common::process_listens_tcp(child_.pid(), port_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int ServeProcess::stop() {
  if (child_.pid() <= 0) return 0;
  child_.stop(std::chrono::seconds(5));
  const int status = child_.wait_status();
  child_ = common::ChildProcess();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<pid_t> ServeProcess::children() const {
  std::vector<pid_t> workers;
  for (const pid_t pid : common::child_pids(child_.pid())) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name != dnsarena::workers::kMetricsProcessName) workers.push_back(pid);  // /metrics's own process
  }
  return workers;
}

std::string ServeProcess::log() const {
  std::ifstream f(log_path_);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::uint8_t> make_query(std::uint16_t id, const std::string& name, std::uint16_t qtype,
                                     std::uint16_t edns_size, bool do_bit, std::uint8_t edns_version) {
  std::vector<std::uint8_t> q{static_cast<std::uint8_t>(id >> 8), static_cast<std::uint8_t>(id), 0x01, 0x00, 0, 1, 0, 0,
                              0, 0, 0, static_cast<std::uint8_t>(edns_size ? 1 : 0)};
  std::size_t start = 0;
  while (start < name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    q.push_back(static_cast<std::uint8_t>(dot - start));
    q.insert(q.end(), name.begin() + static_cast<long>(start), name.begin() + static_cast<long>(dot));
    start = dot + 1;
  }
  q.push_back(0);
  q.insert(q.end(), {static_cast<std::uint8_t>(qtype >> 8), static_cast<std::uint8_t>(qtype), 0, 1});
  if (edns_size)
    q.insert(q.end(), {0, 0, 41, static_cast<std::uint8_t>(edns_size >> 8), static_cast<std::uint8_t>(edns_size), 0,
                       edns_version, static_cast<std::uint8_t>(do_bit ? 0x80 : 0), 0, 0, 0});
  return q;
}

std::size_t DnsReply::count(unsigned section, std::uint16_t type) const {
  return static_cast<std::size_t>(std::count_if(records.begin(), records.end(), [&](const ReplyRecord& r) {
    return r.section == section && r.type == type;
  }));
}

std::vector<std::uint8_t> make_ecs_query(std::uint16_t id, const std::string& name, std::uint16_t qtype,
                                         std::uint8_t source_prefix, std::array<std::uint8_t, 4> address) {
  const std::size_t abytes = (source_prefix + 7u) / 8u;
  std::vector<std::uint8_t> data{0, 1, source_prefix, 0};
  data.insert(data.end(), address.begin(), address.begin() + static_cast<long>(abytes));
  return with_edns_option(make_query(id, name, qtype), wire::kOptionEcs, data);
}

std::vector<std::uint8_t> with_edns_option(std::vector<std::uint8_t> query, std::uint16_t code,
                                           const std::vector<std::uint8_t>& data) {
  const std::size_t rdlen_at = query.size() - 2;  // the OPT ends the query: its RDLENGTH, then its options
  const std::size_t rdlen = ((query[rdlen_at] << 8) | query[rdlen_at + 1]) + 4 + data.size();
  query[rdlen_at] = static_cast<std::uint8_t>(rdlen >> 8);
  query[rdlen_at + 1] = static_cast<std::uint8_t>(rdlen);
  query.insert(query.end(), {static_cast<std::uint8_t>(code >> 8), static_cast<std::uint8_t>(code),
                             static_cast<std::uint8_t>(data.size() >> 8), static_cast<std::uint8_t>(data.size())});
  query.insert(query.end(), data.begin(), data.end());
  return query;
}

std::string write_config(const std::string& text) {
  static int n = 0;
  const std::string path =
      "/tmp/dnsarena-serve-config-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

DnsReply parse_reply(const std::vector<std::uint8_t>& wire) {
  DnsReply r;
  r.wire = wire;
  if (wire.size() < 12) return r;
  r.answered = true;
  r.id = static_cast<std::uint16_t>((wire[0] << 8) | wire[1]);
  r.flags = static_cast<std::uint16_t>((wire[2] << 8) | wire[3]);
  std::vector<std::uint8_t> copy = wire;
  const auto [pkt, rc] = dns::parse_in_place(copy.data(), copy.size());
  if (!pkt || rc != KNOT_EOK) return r;
  r.extended_rcode = knot_pkt_ext_rcode(pkt.get());
  r.has_opt = knot_pkt_has_edns(pkt.get());
  dns::EcsOption ecs;
  if (dns::read_ecs_option(pkt.get(), ecs) == dns::EcsRead::ok) r.ecs_scope = ecs.scope_prefix;
  if (pkt->opt_rr)
    if (const std::uint8_t* ede = knot_edns_get_option(pkt->opt_rr, KNOT_EDNS_OPTION_EDE, nullptr);
        ede && ((ede[2] << 8) | ede[3]) >= 2)
      r.ede = (ede[4] << 8) | ede[5];
  dns::Cookie cookie;
  if (dns::read_cookie_option(pkt.get(), cookie)) r.cookie.assign(cookie.bytes.begin(), cookie.bytes.begin() + cookie.len);
  for (unsigned sec = 0; sec < 3; ++sec) {
    const knot_pktsection_t* section = knot_pkt_section(pkt.get(), static_cast<knot_section_t>(KNOT_ANSWER + sec));
    for (std::uint16_t i = 0; i < section->count; ++i) {
      const knot_rrset_t* rr = knot_pkt_rr(section, i);
      if (rr->type == wire::kTypeOpt) continue;
      for (std::uint16_t k = 0; k < rr->rrs.count; ++k)
        r.records.push_back({sec, wire::wire_to_text({rr->owner, knot_dname_size(rr->owner)}), rr->type, rr->ttl});
    }
  }
  for (auto& rec : r.records)
    for (char& c : rec.owner) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const knot_pktsection_t* an = knot_pkt_section(pkt.get(), KNOT_ANSWER);
  for (std::uint16_t i = 0; i < an->count; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(an, i);
    for (std::uint16_t k = 0; k < rr->rrs.count; ++k) {
      const knot_rdata_t* rd = knot_rdataset_at(&rr->rrs, k);
      std::string s = std::to_string(rr->type) + " ";
      char hex[3];
      for (std::uint16_t b = 0; b < rd->len; ++b) {
        std::snprintf(hex, sizeof hex, "%02x", rd->data[b]);
        s += hex;
      }
      r.answers.push_back(s);
    }
  }
  std::sort(r.answers.begin(), r.answers.end());
  return r;
}

bool udp_answered_within(std::uint16_t port, const std::vector<std::uint8_t>& packet, int attempts) {
  for (int i = 0; i < attempts; ++i)
    if (udp_exchange(port, packet, std::chrono::milliseconds(500)).answered) return true;
  return false;
}

namespace {

// "127.0.0.1:53" or "[::1]:53".
std::string address_text(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    ::inet_ntop(AF_INET, &v4.sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(v4.sin_port));
  }
  const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
  ::inet_ntop(AF_INET6, &v6.sin6_addr, host, sizeof host);
  return "[" + std::string(host) + "]:" + std::to_string(ntohs(v6.sin6_port));
}

DnsReply udp_exchange_with(const workers::Endpoint& server, const std::vector<std::uint8_t>& packet,
                           std::chrono::milliseconds timeout, const char* source, std::string* replied_from) {
  const int fd = ::socket(server.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (source) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    if (::inet_pton(AF_INET, source, &from.sin_addr) != 1 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0)
      throw std::runtime_error(std::string("udp_exchange: cannot bind the source ") + source);
  }
  ::connect(fd, reinterpret_cast<const sockaddr*>(&server.addr), server.len);
  ::send(fd, packet.data(), packet.size(), 0);
  std::vector<std::uint8_t> buf(65535);
  pollfd p{fd, POLLIN, 0};
  DnsReply r;
  if (::poll(&p, 1, static_cast<int>(timeout.count())) == 1) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const ssize_t n = ::recvfrom(fd, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n > 0) r = parse_reply({buf.begin(), buf.begin() + n});
    if (n > 0 && replied_from) *replied_from = address_text(from);
  }
  ::close(fd);
  return r;
}

}  // namespace

DnsReply udp_exchange(std::uint16_t port, const std::vector<std::uint8_t>& packet, std::chrono::milliseconds timeout,
                      const char* source) {
  return udp_exchange_with(workers::Endpoint::parse("127.0.0.1:" + std::to_string(port)), packet, timeout, source,
                           nullptr);
}

DnsReply udp_exchange_at(const std::string& server, const std::vector<std::uint8_t>& packet, std::string* replied_from,
                         std::chrono::milliseconds timeout) {
  return udp_exchange_with(workers::Endpoint::parse(server), packet, timeout, nullptr, replied_from);
}

DnsReply tcp_exchange(std::uint16_t port, const std::vector<std::uint8_t>& packet, std::chrono::milliseconds timeout) {
  return tcp_exchange_at("127.0.0.1:" + std::to_string(port), packet, timeout);
}

DnsReply tcp_exchange_at(const std::string& server, const std::vector<std::uint8_t>& packet,
                         std::chrono::milliseconds timeout) {
  const workers::Endpoint to = workers::Endpoint::parse(server);
  const int fd = ::socket(to.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  DnsReply r;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to.addr), to.len) != 0) {
    ::close(fd);
    return r;
  }
  std::vector<std::uint8_t> msg{static_cast<std::uint8_t>(packet.size() >> 8), static_cast<std::uint8_t>(packet.size())};
  msg.insert(msg.end(), packet.begin(), packet.end());
  ::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
  std::vector<std::uint8_t> in;
  const std::uint64_t deadline = now_ms() + static_cast<std::uint64_t>(timeout.count());
  while (now_ms() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) != 1) continue;
    std::uint8_t buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.insert(in.end(), buf, buf + n);
    if (in.size() >= 2 && in.size() >= 2u + ((in[0] << 8) | in[1])) {
      r = parse_reply({in.begin() + 2, in.begin() + 2 + ((in[0] << 8) | in[1])});
      break;
    }
  }
  ::close(fd);
  return r;
}

std::string run_command(const std::string& cmd, int* status) { return command_output(cmd, status); }

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

int connected_udp_socket(std::uint16_t port) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string kdig_records(std::uint16_t port, const std::string& name, const std::string& type,
                         const std::string& extra) {
  const std::string out = run_command(kdig_program() + " @127.0.0.1 -p " + std::to_string(port) + " " + name + " " + type +
                                      " +noall +answer +authority +timeout=2 +retry=0 " + extra + " 2>&1");
  // Drop the TTL column (the second field) and sort.
  std::vector<std::string> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string owner, ttl, rest;
    if (!(f >> owner >> ttl)) continue;
    std::getline(f, rest);
    lines.push_back(owner + rest);
  }
  std::sort(lines.begin(), lines.end());
  std::string joined;
  for (const auto& l : lines) joined += l + "\n";
  return joined;
}

nlohmann::json serve_stats(const std::string& segment) {
  int status = 0;
  const std::string out =
      run_command(dnsarena_binary() + " stats --segment " + segment + " --json --interval 0 2>&1", &status);
  if (status != 0) throw std::runtime_error("dnsarena stats failed: " + out);
  return nlohmann::json::parse(out);
}

std::size_t live_cache_entries(const std::string& segment) {
  int status = 0;
  const std::string out = run_command(dnsarena_binary() + " dump " + segment + " 2>&1", &status);
  if (status != 0) throw std::runtime_error("dnsarena dump failed: " + out);
  return occurrences(out, "\n$ENTRY ");
}

std::size_t tcp_connections_to(std::uint16_t port) {
  // "sl local_address rem_address st ...": addresses as HEX_IP:HEX_PORT, st in hex
  // (01 ESTABLISHED, 08 CLOSE_WAIT). 127.0.0.1 is 0100007F in the kernel's byte order.
  char remote[32];
  std::snprintf(remote, sizeof remote, "0100007F:%04X", static_cast<unsigned>(port));
  std::ifstream f("/proc/net/tcp");
  std::string line;
  std::getline(f, line);  // the header
  std::size_t n = 0;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string slot, local, rem, state;
    if (in >> slot >> local >> rem >> state && rem == remote && (state == "01" || state == "08")) ++n;
  }
  return n;
}

std::uint64_t voluntary_switches(pid_t pid) { return common::status_kib(pid, "voluntary_ctxt_switches"); }

}  // namespace dnsarena::test
