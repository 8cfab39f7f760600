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
#include <thread>

#include "bench/lab/commands.hpp"
#include "bench/lab/self_signed_certificate.hpp"
#include "bench/lab/serve_process.hpp"
#include "common/child_process.hpp"
#include "common/loopback.hpp"
#include "common/proc_stats.hpp"
#include "common/sibling_program.hpp"
#include "dns/query_builder.hpp"

namespace dnsarena::bench {

namespace {

// Plain TCP's tcp.max_connections in the bench's serve: DoT has a bound of its own.
constexpr unsigned kPlainTcpBound = 64;

struct TlsIdleOptions {
  unsigned connections = 10000;
  unsigned extra = 1000;
  unsigned workers = 1;
  double hold_s = 5;
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
    for (int again = 0; have < 2 || have < 2u + ((in[0] << 8) | in[1]);) {
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
  ServeProcess serve(spec);
  if (serve.workers().size() != o.workers) throw std::runtime_error("serve's workers did not start:\n" + slurp(serve.log()));
  const std::vector<pid_t> workers = serve.workers();
  auto rss_kib = [&] {
    std::uint64_t k = 0;
    for (pid_t w : workers) k += common::status_kib(w, "RssAnon");
    return k;
  };
  auto cpu_s = [&] {
    double c = 0;
    for (pid_t w : workers) c += common::cpu_seconds(w);
    return c;
  };

  gnutls_certificate_credentials_t cred = nullptr;
  gnutls_certificate_allocate_credentials(&cred);
  std::vector<std::unique_ptr<DotConnection>> conns;
  conns.reserve(o.connections + o.extra);
  conns.push_back(std::make_unique<DotConnection>(dot_port, cred));  // GnuTLS set-up and the cache entry: not counted
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::uint64_t rss0 = rss_kib();
  const double cpu0 = cpu_s();
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t failed = 0;
  for (unsigned i = 1; i < o.connections; ++i) {
    conns.push_back(std::make_unique<DotConnection>(dot_port, cred));
    failed += conns.back()->answered() ? 0 : 1;
  }
  const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double setup_cpu = cpu_s() - cpu0;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::uint64_t rss1 = rss_kib();
  const std::size_t held_at_rss1 = count_open(conns);
  std::this_thread::sleep_for(std::chrono::duration<double>(o.hold_s));
  const std::size_t held = count_open(conns);
  unsigned fds_held = 0;
  for (pid_t w : workers) fds_held += common::open_fds(w);
  for (unsigned i = 0; i < o.extra; ++i) conns.push_back(std::make_unique<DotConnection>(dot_port, cred));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::size_t open_after = count_open(conns);
  const std::uint64_t rss2 = rss_kib();
  conns.clear();
  gnutls_certificate_free_credentials(cred);

  // Per connection the worker holds (the first, not counted, is among them).
  const double per_conn_kib = held_at_rss1 > 1 ? static_cast<double>(rss1 - rss0) / static_cast<double>(held_at_rss1 - 1) : 0;
  nlohmann::json j{{"connections", o.connections},
                   {"workers", o.workers},
                   {"bound_per_worker", bound},
                   {"extra", o.extra},
                   {"hold_s", o.hold_s},
                   {"failed", failed},
                   {"handshakes_per_s", setup_s > 0 ? (o.connections - 1) / setup_s : 0.0},
                   {"worker_cpu_us_per_connection", o.connections > 1 ? setup_cpu * 1e6 / (o.connections - 1) : 0.0},
                   {"rss_anon_kib_before", rss0},
                   {"rss_anon_kib_held", rss1},
                   {"rss_anon_kib_after_extra", rss2},
                   {"kib_per_idle_connection", per_conn_kib},
                   {"held_after_setup", held_at_rss1},
                   {"held_after_hold", held},
                   {"worker_open_fds_held", fds_held},
                   {"open_after_extra", open_after},
                   {"bound", bound * o.workers},
                   {"bound_held", open_after <= bound * o.workers}};
  if (o.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("dnsarena-lab bench tls-idle: %u DoT connections to %u worker(s) (tls.max_connections %u each), then "
              "%u more\n",
              o.connections, o.workers, bound, o.extra);
  std::printf("  set up:   %zu failed; %.0f handshakes/s (one client, sequential); workers' CPU %.0f us per connection\n",
              failed, j["handshakes_per_s"].get<double>(), j["worker_cpu_us_per_connection"].get<double>());
  std::printf("  memory:   workers' RssAnon %.1f -> %.1f MiB with %zu held: %.1f KiB per idle connection\n",
              rss0 / 1024.0, rss1 / 1024.0, held_at_rss1, per_conn_kib);
  std::printf("  held:     %zu of %u open after %.0f s idle (workers' descriptors %u)\n", held, o.connections, o.hold_s,
              fds_held);
  std::printf("  bound:    %zu open after %u more (at most %u: %s); RssAnon %.1f MiB\n", open_after, o.extra,
              bound * o.workers, open_after <= bound * o.workers ? "held" : "EXCEEDED", rss2 / 1024.0);
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
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o] {
    const int rc = run_tls_idle(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::bench
