// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench tls-idle`: many idle DNS-over-TLS connections held by serve's
// workers, within their configured bound.
//
// Steps (all on loopback; every child stopped at the end):
//   1. `dnsarena-lab sim upstream`, a self-signed certificate (certtool, gnutls-bin) and a
//      serve with --workers workers (default 1), DoT on, tls.max_connections =
//      --connections / --workers (rounded up: the bound is per worker), plain TCP's
//      tcp.max_connections at 64 (a DoT-heavy deployment's split), no per-client
//      limit (every connection comes from 127.0.0.1), an idle timeout far longer than
//      the run.
//   2. This process opens --connections DoT connections one after another (TLS 1.3 full
//      handshake each, no resumption), asks one query on each and keeps it open: the
//      handshakes per second of that phase, and the workers' RssAnon before and after
//      (KiB per idle connection). The kernel spreads connections over the workers
//      (SO_REUSEPORT), not exactly evenly: with several workers one may reach its bound
//      and close its oldest connections while another has room.
//   3. After --hold seconds, how many of them the server still holds (a connection it
//      closed reads EOF).
//   4. --extra more connections past the bound: the worker must close its least recently
//      used ones (tls.max_connections holds), so at the end at most the bound are open.
//   5. With --unbound, then --kresd: serve stopped, the peer's DoT listener takes steps 2-4
//      from the same client with the same certificate, measured the same way.
// The RLIMIT_NOFILE soft limit of this process is raised to its hard limit; serve raises
// its own at start (docs/operator-guide.md). A worker budgets its DoT pool, its plain TCP
// pool and upstream sockets: 10,000 DoT connections in one worker fit a limit of 20,000.
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "bench/lab/commands.hpp"
#include "bench/lab/kresd_config.hpp"
#include "bench/lab/self_signed_certificate.hpp"
#include "bench/lab/serve_process.hpp"
#include "bench/lab/unbound_process.hpp"
#include "common/child_process.hpp"
#include "common/loopback.hpp"
#include "common/proc_stats.hpp"
#include "common/sibling_program.hpp"
#include "dns/query_builder.hpp"

namespace dnsarena::bench {

namespace {

// Plain TCP's tcp.max_connections in the bench's serve: DoT has a bound of its own.
constexpr unsigned kPlainTcpBound = 64;
// With --unbound, Unbound's incoming-num-tcp is this many times --connections. Unbound
// shortens tcp-idle-timeout once fewer than 50% of its TCP buffers are free (to 1%, 0.2%,
// then 0 of it, unbound.conf(5)), so it holds N idle connections only with 2N buffers:
// with N it kept 101 of 200. Unbound also needs two descriptors per TCP buffer and about
// 100 more ("cannot increase max open fds from 20000 to 40100" for 20,000 buffers), so
// RLIMIT_NOFILE caps the buffers at (limit - kUnboundFixedFds) / 2.
constexpr unsigned kUnboundBufferFactor = 2;
constexpr unsigned kUnboundFixedFds = 128;

struct TlsIdleOptions {
  unsigned connections = 10000;
  unsigned extra = 1000;
  unsigned workers = 1;
  double hold_s = 5;
  bool unbound = false;  // then Unbound over DoT, the same way
  bool kresd = false;    // then Knot Resolver
  bool json = false;
};

// One DoT client connection: TCP, a TLS handshake (certificate not verified: the bench
// measures the server), one query answered. Blocking, with 5 s timeouts.
class DotConnection {
public:
  DotConnection(std::uint16_t port, gnutls_certificate_credentials_t cred) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    const timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const sockaddr_in a = common::loopback_v4(port);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) return;
    if (gnutls_init(&tls_, GNUTLS_CLIENT) != 0 || gnutls_set_default_priority(tls_) != 0 ||
        gnutls_credentials_set(tls_, GNUTLS_CRD_CERTIFICATE, cred) != 0)
      return;
    gnutls_transport_set_int(tls_, fd_);
    int rc;
    do rc = gnutls_handshake(tls_);
    while (rc < 0 && !gnutls_error_is_fatal(rc) && rc != GNUTLS_E_AGAIN);
    if (rc != 0) return;
    std::uint8_t q[dns::kMaxQueryBytes + 2];
    static const std::uint8_t name[] = {1, 'a', 4, 'z', 'o', 'n', 'e', 0};
    const std::size_t len = dns::write_query({.id = 7, .qname = {name, sizeof name}, .qtype = 1}, q + 2, sizeof q - 2);
    q[0] = static_cast<std::uint8_t>(len >> 8);
    q[1] = static_cast<std::uint8_t>(len);
    if (gnutls_record_send(tls_, q, len + 2) != static_cast<ssize_t>(len + 2)) return;
    std::uint8_t in[4096];
    std::size_t have = 0;
    // A TLS 1.3 session ticket before the answer comes back as GNUTLS_E_AGAIN: read on.
    // Each read acknowledges at once (TCP_QUICKACK does not stick): a server that leaves
    // Nagle on (Unbound) would otherwise wait for this client's delayed ACK, 40 ms, before
    // the answer that follows its session tickets.
    for (int again = 0; have < 2 || have < 2u + ((in[0] << 8) | in[1]);) {
      ::setsockopt(fd_, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
      const ssize_t n = gnutls_record_recv(tls_, in + have, sizeof in - have);
      if ((n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) && ++again < 8) continue;
      if (n <= 0) return;
      have += static_cast<std::size_t>(n);
    }
    answered_ = true;
  }
  ~DotConnection() {
    if (tls_) gnutls_deinit(tls_);
    if (fd_ >= 0) ::close(fd_);
  }
  DotConnection(const DotConnection&) = delete;
  DotConnection& operator=(const DotConnection&) = delete;
  bool answered() const { return answered_; }
  // Still open: nothing to read (the server closing it makes it readable: EOF or alert).
  bool open() const {
    if (fd_ < 0 || !answered_) return false;
    pollfd p{fd_, POLLIN | POLLRDHUP, 0};
    return ::poll(&p, 1, 0) == 0;
  }

private:
  int fd_ = -1;
  gnutls_session_t tls_ = nullptr;
  bool answered_ = false;
};

std::size_t count_open(const std::vector<std::unique_ptr<DotConnection>>& c) {
  std::size_t n = 0;
  for (const auto& x : c) n += x->open() ? 1 : 0;
  return n;
}

// What one server did with the connections: set-up cost, memory, how many it kept.
struct IdleRun {
  std::size_t failed = 0;
  double handshakes_per_s = 0;
  double cpu_us_per_connection = 0;  // the server's CPU, the first connection not counted
  std::uint64_t rss0 = 0, rss1 = 0, rss2 = 0;  // RssAnon KiB: before, held, after --extra
  std::size_t held_at_rss1 = 0, held = 0, open_after = 0;
  unsigned fds_held = 0;

  // Per connection the server holds (the first, not counted, is among them).
  double kib_per_connection() const {
    return held_at_rss1 > 1 ? static_cast<double>(rss1 - rss0) / static_cast<double>(held_at_rss1 - 1) : 0;
  }
  // Full handshakes (each with its one query answered) per CPU-second of the server: what
  // one core of it could accept, the client's share not counted.
  double handshakes_per_cpu_s() const { return cpu_us_per_connection > 0 ? 1e6 / cpu_us_per_connection : 0; }

  // bound 0: the server has none (JSON null).
  nlohmann::json json(unsigned bound) const {
    return {{"failed", failed},
            {"handshakes_per_s", handshakes_per_s},
            {"worker_cpu_us_per_connection", cpu_us_per_connection},
            {"handshakes_per_worker_cpu_s", handshakes_per_cpu_s()},
            {"rss_anon_kib_before", rss0},
            {"rss_anon_kib_held", rss1},
            {"rss_anon_kib_after_extra", rss2},
            {"kib_per_idle_connection", kib_per_connection()},
            {"held_after_setup", held_at_rss1},
            {"held_after_hold", held},
            {"worker_open_fds_held", fds_held},
            {"open_after_extra", open_after},
            {"bound", bound ? nlohmann::json(bound) : nlohmann::json(nullptr)},
            {"bound_held", bound ? nlohmann::json(open_after <= bound) : nlohmann::json(nullptr)}};
  }

  // bound 0: the server has none.
  void print(const char* who, const TlsIdleOptions& o, unsigned bound) const {
    std::printf("  set up:   %zu failed; %.0f handshakes/s (one client, sequential); %s CPU %.0f us per connection "
                "(%.0f handshakes per CPU-second)\n",
                failed, handshakes_per_s, who, cpu_us_per_connection, handshakes_per_cpu_s());
    std::printf("  memory:   %s RssAnon %.1f -> %.1f MiB with %zu held: %.1f KiB per idle connection\n", who,
                rss0 / 1024.0, rss1 / 1024.0, held_at_rss1, kib_per_connection());
    std::printf("  held:     %zu of %u open after %.0f s idle (%s descriptors %u)\n", held, o.connections, o.hold_s, who,
                fds_held);
    if (bound == 0)
      std::printf("  bound:    %zu open after %u more (no connection bound); RssAnon %.1f MiB\n", open_after, o.extra,
                  rss2 / 1024.0);
    else
      std::printf("  bound:    %zu open after %u more (at most %u: %s); RssAnon %.1f MiB\n", open_after, o.extra, bound,
                  open_after <= bound ? "held" : "EXCEEDED", rss2 / 1024.0);
  }
};

// Opens o.connections DoT connections to `port` one after another and keeps them, waits
// o.hold_s, then opens o.extra more; `pids` are the server's processes, measured.
IdleRun measure_idle(std::uint16_t port, const std::vector<pid_t>& pids, const TlsIdleOptions& o,
                     gnutls_certificate_credentials_t cred) {
  auto rss_kib = [&] {
    std::uint64_t k = 0;
    for (pid_t p : pids) k += common::status_kib(p, "RssAnon");
    return k;
  };
  auto cpu_s = [&] {
    double c = 0;
    for (pid_t p : pids) c += common::cpu_seconds(p);
    return c;
  };
  IdleRun r;
  std::vector<std::unique_ptr<DotConnection>> conns;
  conns.reserve(o.connections + o.extra);
  conns.push_back(std::make_unique<DotConnection>(port, cred));  // GnuTLS set-up and the cache entry: not counted
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  r.rss0 = rss_kib();
  const double cpu0 = cpu_s();
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned i = 1; i < o.connections; ++i) {
    conns.push_back(std::make_unique<DotConnection>(port, cred));
    r.failed += conns.back()->answered() ? 0 : 1;
  }
  const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double setup_cpu = cpu_s() - cpu0;
  r.handshakes_per_s = setup_s > 0 ? (o.connections - 1) / setup_s : 0.0;
  r.cpu_us_per_connection = o.connections > 1 ? setup_cpu * 1e6 / (o.connections - 1) : 0.0;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  r.rss1 = rss_kib();
  r.held_at_rss1 = count_open(conns);
  std::this_thread::sleep_for(std::chrono::duration<double>(o.hold_s));
  r.held = count_open(conns);
  for (pid_t p : pids) r.fds_held += common::open_fds(p);
  for (unsigned i = 0; i < o.extra; ++i) conns.push_back(std::make_unique<DotConnection>(port, cred));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  r.open_after = count_open(conns);
  r.rss2 = rss_kib();
  return r;
}

int run_tls_idle(const TlsIdleOptions& o) {
  // This process holds every connection; serve (which inherits the limit) budgets its DoT
  // pool, its plain TCP pool and upstream sockets per worker. Both
  // need room: the limit is raised to what serve's budget needs when this process may
  // (root), else to the hard limit, and a short one is said.
  const std::uint64_t need = std::uint64_t{o.connections} + o.extra + 64;
  const unsigned bound = (o.connections + o.workers - 1) / o.workers;  // per worker
  // serve's budget (descriptor_budget.hpp): the DoT pool, the plain one, about 50 fixed,
  // 64 upstream.
  const std::uint64_t serve_need = std::uint64_t{bound} + kPlainTcpBound + 50 + 64;
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  const rlim_t want = static_cast<rlim_t>(std::max(need, serve_need));
  if (nofile.rlim_max < want) {
    rlimit raised{want, want};
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) nofile = raised;
  }
  nofile.rlim_cur = nofile.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &nofile);
  if (nofile.rlim_cur < need)
    throw std::runtime_error("RLIMIT_NOFILE hard limit " + std::to_string(nofile.rlim_max) + " is below the " +
                             std::to_string(need) + " descriptors this run needs (ulimit -Hn)");
  if (nofile.rlim_cur < serve_need)
    std::fprintf(stderr, "bench tls-idle: RLIMIT_NOFILE %llu is below serve's budget for %u DoT and %u TCP "
                         "connections per worker: it will hold fewer (its log says how many; try --workers)\n",
                 static_cast<unsigned long long>(nofile.rlim_cur), bound, kPlainTcpBound);
  const std::string dir = "/tmp/dnsarena-bench-tls-idle-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};

  const std::uint16_t up_port = common::free_loopback_port();
  common::ChildProcess upstream = spawn_logged({common::sibling_program("dnsarena-lab"), "sim", "upstream", "--port",
                                                std::to_string(up_port)},
                                               dir + "/upstream.log");
  if (!wait_tcp(up_port, upstream)) throw std::runtime_error("sim upstream did not start:\n" + slurp(dir + "/upstream.log"));
  const auto [cert, key] = make_self_signed_certificate(dir, "idle.bench");
  const std::uint16_t dot_port = common::free_loopback_port();
  std::ofstream(dir + "/serve.yaml") << "tls: {listen: [127.0.0.1:" << dot_port << "], certificate: " << cert
                                     << ", key: " << key << ", max_connections: " << bound
                                     << "}\ntcp: {max_connections: " << kPlainTcpBound
                                     << ", max_connections_per_client: 0, idle_timeout_ms: 3600000}\n";
  ServeSpec spec;
  spec.binary = common::daemon_program();
  spec.dir = dir;
  spec.tag = "tls-idle";
  spec.workers = o.workers;
  spec.args = {"--config", dir + "/serve.yaml", "--upstream", "127.0.0.1:" + std::to_string(up_port)};
  std::optional<ServeProcess> serve(std::in_place, spec);
  if (serve->workers().size() != o.workers)
    throw std::runtime_error("serve's workers did not start:\n" + slurp(serve->log()));
  const std::vector<pid_t> workers = serve->workers();

  gnutls_certificate_credentials_t cred = nullptr;
  gnutls_certificate_allocate_credentials(&cred);
  struct FreeCred {
    gnutls_certificate_credentials_t c;
    ~FreeCred() { gnutls_certificate_free_credentials(c); }
  } free_cred{cred};
  const IdleRun served = measure_idle(dot_port, workers, o, cred);
  nlohmann::json j = served.json(bound * o.workers);
  j["connections"] = o.connections;
  j["workers"] = o.workers;
  j["bound_per_worker"] = bound;
  j["extra"] = o.extra;
  j["hold_s"] = o.hold_s;
  serve.reset();  // stopped: the peer runs alone

  // Unbound (one thread) holding the same connections over its DoT listener: the same
  // client, the same certificate, incoming-num-tcp as kUnboundBufferFactor says.
  std::optional<IdleRun> peer;
  unsigned unbound_buffers = 0;
  if (o.unbound) {
    const std::uint16_t peer_dot = common::free_loopback_port();
    unbound_buffers = static_cast<unsigned>(std::min<std::uint64_t>(
        std::uint64_t{kUnboundBufferFactor} * o.connections,
        nofile.rlim_cur > kUnboundFixedFds ? (nofile.rlim_cur - kUnboundFixedFds) / 2 : 1));
    UnboundSpec u;
    u.dir = dir;
    u.tag = "tls-idle";
    u.threads = 1;
    u.forward_addrs = {"127.0.0.1@" + std::to_string(up_port)};
    u.server_lines = {"interface: 127.0.0.1@" + std::to_string(peer_dot),
                      "tls-port: " + std::to_string(peer_dot),
                      "tls-service-key: \"" + key + "\"",
                      "tls-service-pem: \"" + cert + "\"",
                      "incoming-num-tcp: " + std::to_string(unbound_buffers),
                      "tcp-idle-timeout: 3600000",
                      "outgoing-range: 64"};
    UnboundProcess unbound(u);
    // Started: its plain DNS port listens; its DoT listener opens with it.
    if (!common::accepts_tcp(peer_dot)) throw std::runtime_error("unbound does not listen for DoT on " + std::to_string(peer_dot));
    peer = measure_idle(peer_dot, {unbound.pid()}, o, cred);
    j["unbound"] = peer->json(unbound_buffers);
    j["unbound"]["incoming_num_tcp"] = unbound_buffers;
    j["unbound"]["version"] = unbound_version();
  }

  // Knot Resolver (kresd, one process) the same way: its DoT listener, tcp_in_idle at an
  // hour; it has no connection bound of its own.
  std::optional<IdleRun> kresd_run;
  if (o.kresd) {
    const std::uint16_t dns_port = common::free_loopback_port();
    const std::uint16_t kresd_dot = common::free_loopback_port();
    const std::string conf = dir + "/kresd.conf";
    std::ofstream(conf) << kresd_config_text({.dir = dir,
                                              .cache_mib = 32,
                                              .dns_port = dns_port,
                                              .dot_port = kresd_dot,
                                              .cert = cert,
                                              .key = key,
                                              .upstream_port = up_port,
                                              .extra = {"net.tcp_in_idle(3600000)"}});
    const std::string rundir = dir + "/kresd";
    std::filesystem::create_directories(rundir);
    common::ChildProcess kresd = spawn_logged({"kresd", "-n", "-c", conf, rundir}, dir + "/kresd.log");
    if (!wait_tcp(kresd_dot, kresd)) throw std::runtime_error("kresd did not listen for DoT:\n" + slurp(dir + "/kresd.log"));
    kresd_run = measure_idle(kresd_dot, {kresd.pid()}, o, cred);
    j["kresd"] = kresd_run->json(0);
    kresd.stop();
  }

  if (o.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("dnsarena-lab bench tls-idle: %u DoT connections to %u worker(s) (tls.max_connections %u each), then "
              "%u more\n",
              o.connections, o.workers, bound, o.extra);
  served.print("workers'", o, bound * o.workers);
  if (peer) {
    std::printf("unbound %s, 1 thread, the same connections (incoming-num-tcp %u%s, tcp-idle-timeout 3600 s):\n",
                unbound_version().c_str(), unbound_buffers,
                unbound_buffers < kUnboundBufferFactor * o.connections ? ", capped by RLIMIT_NOFILE" : "");
    peer->print("unbound's", o, unbound_buffers);
  }
  if (kresd_run) {
    std::printf("kresd, 1 process, the same connections (net.tcp_in_idle 3600 s):\n");
    kresd_run->print("kresd's", o, 0);
  }
  return 0;
}

}  // namespace

void add_bench_tls_idle_command(CLI::App& bench) {
  auto o = std::make_shared<TlsIdleOptions>();
  auto* cmd = bench.add_subcommand(
      "tls-idle",
      "Idle DNS-over-TLS connections held by serve's workers: --connections opened (a full handshake and one\n"
      "query each) and kept; handshakes per second, KiB per idle connection, how many are still held after\n"
      "--hold seconds, and whether tls.max_connections (--connections / --workers each) holds when --extra\n"
      "more arrive.");
  cmd->add_option("--workers", o->workers, "serve's workers")->check(CLI::Range(1u, 64u))->capture_default_str();
  cmd->add_option("--connections", o->connections, "connections held; tls.max_connections is this / --workers")
      ->check(CLI::Range(10u, 100000u))
      ->capture_default_str();
  cmd->add_option("--extra", o->extra, "connections opened past the bound")->check(CLI::Range(0u, 100000u))->capture_default_str();
  cmd->add_option("--hold", o->hold_s, "seconds the connections stay idle before they are counted")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_flag("--unbound", o->unbound,
                "then the same connections to Unbound's DoT listener (one thread, incoming-num-tcp 2 x --connections, "
                "capped by RLIMIT_NOFILE), measured the same way (JSON: \"unbound\")");
  cmd->add_flag("--kresd", o->kresd,
                "then the same connections to Knot Resolver's DoT listener (kresd, one process, tcp_in_idle an hour), "
                "measured the same way (JSON: \"kresd\")");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o] {
    const int rc = run_tls_idle(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::bench
