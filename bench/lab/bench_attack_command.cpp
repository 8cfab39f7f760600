// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench attack`: `dnsarena serve` on a hostile network, one row per scenario.
//
// Every scenario starts its own serve (2 workers, a private segment removed at the end,
// loopback only) with forward zones to peers in this process (attack_peers.hpp):
//   real.  -> AuthUpstream: answers every A name with an address known in advance
//   hole.  -> BlackHole: never answers (only the flood scenario)
// Scenarios, each one row with its figure, its target and whether it was met:
//   tcp-pipeline  one TCP client pipelines N queries and never reads: growth of the
//                 largest worker RSS (target < 8 MiB).
//   tcp-slow      N slow clients (one byte every 3 s, each from its own 127.1.x.y
//                 address) while a normal TCP query is made every second: all answered.
//   flood         random-subdomain flood at R q/s at hole. for S s, while legitimate
//                 hits (500 q/s over 1,000 cached names) and misses (50 q/s of new names
//                 under real.) run: workers' descriptors stay under their limit, hits
//                 answered >= 99.9%, misses answered >= 99.9%.
//   spoof         an off-path attacker (raw socket, source = the upstream's address and
//                 port) sends F forged answers to random ports with random IDs for the
//                 names just asked, while the resolver resolves N names (real upstream
//                 20 ms away; name i is asked once i/N of the forged answers are out, so
//                 the race holds whatever rate the attacker reaches); then every name is
//                 asked again: 0 forged records cached.
//   fill          all-miss fill of N names at R q/s: 0 SERVFAIL, 0 lost.
//   cpu-per-hit   workers' CPU time per answered hit at a fixed rate; with
//                 --baseline-binary, the same for that binary, interleaved 3 times, and the
//                 ratio of medians (target <= 1.05); --hit-rounds runs of each.
// Bounds: every load, spoofer and wait has a count and a deadline; children are
// ChildProcess objects (stopped by their destructor on every path, SIGKILL after 5 s) and
// segments are removed by serve itself (--remove-segment) and again here. SIGINT/SIGTERM
// set a flag that ends the loads early; the scenario then unwinds and cleans up.
// --quick shrinks every figure so the whole run takes under a minute; `--check` makes the
// exit code 1 when a target that does not depend on timing is missed (forged records
// cached, RSS growth, descriptors), for the ctest.
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "bench/lab/attack_peers.hpp"
#include "bench/lab/commands.hpp"
#include "bench/lab/serve_process.hpp"
#include "cache/segment.hpp"
#include "common/child_process.hpp"
#include "common/loopback.hpp"
#include "common/proc_stats.hpp"
#include "common/process_limits.hpp"
#include "common/sibling_program.hpp"

namespace dnsarena::bench {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::atomic<bool> g_interrupted{false};
void on_interrupt(int) { g_interrupted = true; }
// --serve-config: given to every serve this run starts (`-c FILE`), to compare settings.
std::string g_serve_config;

struct AttackOptions {
  bool quick = false;
  bool json = false;
  bool check = false;
  std::string only;  // one scenario by name
  std::string baseline_binary;
  unsigned pipeline_queries = 10000;
  unsigned slow_clients = 2000;
  double slow_seconds = 20;
  double flood_rate = 5000;
  double flood_seconds = 60;
  unsigned spoof_names = 10000;
  std::uint64_t spoof_forged = 1000000;
  double spoof_seconds = 10;
  std::uint64_t fill_names = 1000000;
  double fill_rate = 10000;
  double hit_rate = 20000;
  double hit_seconds = 5;
  unsigned hit_rounds = 3;
  void make_quick() {
    quick = true;
    slow_clients = 200;
    slow_seconds = 5;
    flood_rate = 1000;
    flood_seconds = 5;
    spoof_names = 1000;
    spoof_forged = 100000;
    spoof_seconds = 3;
    fill_names = 20000;
    fill_rate = 5000;
    hit_seconds = 2;
  }
};

struct Row {
  std::string scenario, figure, target;
  std::optional<bool> met;    // nullopt: not measured (said why in figure)
  bool timing_free = false;   // a target --check asserts
  nlohmann::json detail;
};

// The host's UDP datagrams dropped for a full receive buffer so far (/proc/net/snmp
// Udp RcvbufErrors): a loss inside the kernel, whoever's socket it was.
std::uint64_t udp_rcvbuf_errors() {
  std::istringstream in(slurp("/proc/net/snmp"));
  std::string names, values, line;
  while (std::getline(in, line))
    if (line.rfind("Udp:", 0) == 0) {
      if (names.empty()) names = line;
      else values = line;
    }
  std::istringstream n(names), v(values);
  std::string name, value;
  while (n >> name && v >> value)
    if (name == "RcvbufErrors") return std::stoull(value);
  return 0;
}

// What serve counted that explains a SERVFAIL (empty when its counters were not read).
std::string serve_summary(const nlohmann::json& t) {
  if (!t.is_object()) return "";
  auto get = [&](const char* k) { return t.contains(k) ? t[k].get<std::uint64_t>() : 0; };
  return "; serve counted " + std::to_string(get("upstream_timeouts")) + " upstream timeouts, " +
         std::to_string(get("upstream_jostled")) + " jostled, " + std::to_string(get("upstream_overload")) +
         " refused by a bound";
}

// One `dnsarena serve` with 2 workers and forward zones real. (and hole. when given).
class Serve : public ServeProcess {
public:
  Serve(const std::string& binary, const std::string& dir, const std::string& tag, std::uint16_t real_port,
        std::uint16_t hole_port = 0, std::uint64_t max_entries = 200000, const std::string& arena = "64M")
      : ServeProcess(spec(binary, dir, tag, real_port, hole_port, max_entries, arena)) {}

private:
  static ServeSpec spec(const std::string& binary, const std::string& dir, const std::string& tag,
                        std::uint16_t real_port, std::uint16_t hole_port, std::uint64_t max_entries,
                        const std::string& arena) {
    ServeSpec s{.binary = binary, .dir = dir, .tag = tag, .segment_prefix = "dnsarena-bench-attack",
                .max_entries = max_entries, .arena = arena};
    s.args = {"--forward-zone", "real.=127.0.0.1:" + std::to_string(real_port)};
    if (hole_port) s.args.insert(s.args.end(), {"--forward-zone", "hole.=127.0.0.1:" + std::to_string(hole_port)});
    if (!g_serve_config.empty()) s.args.insert(s.args.end(), {"-c", g_serve_config});
    return s;
  }
};

std::function<std::vector<std::uint8_t>(std::uint64_t)> names(const std::string& prefix, const std::string& zone,
                                                              std::uint64_t modulo = 0) {
  return [=](std::uint64_t i) { return wire_name(prefix + std::to_string(modulo ? i % modulo : i) + "." + zone); };
}

LoadResult load(std::uint16_t port, std::uint64_t count, double rate,
                std::function<std::vector<std::uint8_t>(std::uint64_t)> name, std::chrono::milliseconds timeout = 3000ms,
                std::function<void(std::uint64_t, const std::uint8_t*, std::size_t)> on_reply = {},
                std::atomic<std::uint64_t>* sent = nullptr) {
  LoadSpec s;
  s.port = port;
  s.count = count;
  s.rate = rate;
  s.timeout = timeout;
  s.name = std::move(name);
  s.on_reply = std::move(on_reply);
  s.sent = sent;
  s.stop = &g_interrupted;
  return run_load(s);
}

nlohmann::json load_json(const LoadResult& r) {
  return {{"sent", r.sent},         {"answered", r.answered}, {"noerror", r.noerror}, {"nxdomain", r.nxdomain},
          {"servfail", r.servfail}, {"refused", r.refused},   {"lost", r.lost()}};
}

// A framed TCP query exchange on a fresh connection; true when an answer came in `wait`.
bool tcp_query(std::uint16_t port, std::chrono::milliseconds wait) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = common::loopback_v4(port);
  timeval tv{static_cast<time_t>(wait.count() / 1000), static_cast<suseconds_t>(wait.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (ok) {
    const std::vector<std::uint8_t> q = make_a_query(7, wire_name("h0.real"));
    std::vector<std::uint8_t> framed{static_cast<std::uint8_t>(q.size() >> 8), static_cast<std::uint8_t>(q.size())};
    framed.insert(framed.end(), q.begin(), q.end());
    std::uint8_t buf[2];
    ok = ::send(fd, framed.data(), framed.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(framed.size()) &&
         ::recv(fd, buf, 2, MSG_WAITALL) == 2;
  }
  ::close(fd);
  return ok;
}

Row tcp_pipeline(const AttackOptions& o, const std::string& bin, const std::string& dir) {
  AuthUpstream up;
  Serve s(bin, dir, "pipeline", up.port());
  load(s.port(), 1, 100, names("h", "real"));  // h0.real. cached
  std::uint64_t before = 0;
  for (pid_t p : s.workers()) before = std::max(before, common::status_kib(p, "VmRSS"));
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in a = common::loopback_v4(s.port());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("tcp-pipeline: connect");
  std::vector<std::uint8_t> all;
  for (unsigned i = 0; i < o.pipeline_queries; ++i) {
    const std::vector<std::uint8_t> q = make_a_query(static_cast<std::uint16_t>(i), wire_name("h0.real"));
    all.push_back(static_cast<std::uint8_t>(q.size() >> 8));
    all.push_back(static_cast<std::uint8_t>(q.size()));
    all.insert(all.end(), q.begin(), q.end());
  }
  // Send all of it without ever reading; the server stops reading when its output for us
  // is full, so the send may stall: give it 10 s, then stop.
  std::size_t done = 0;
  const auto deadline = Clock::now() + 10s;
  while (done < all.size() && Clock::now() < deadline && !g_interrupted) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 100) != 1) continue;
    const ssize_t n = ::send(fd, all.data() + done, all.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EINTR) break;  // the server closed us: fine
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  std::this_thread::sleep_for(1s);
  std::uint64_t after = 0;
  for (pid_t p : s.workers()) after = std::max(after, common::status_kib(p, "VmRSS"));
  ::close(fd);
  const double growth_mib = (static_cast<double>(after) - static_cast<double>(before)) / 1024.0;
  // Under AddressSanitizer a worker's RSS also holds the allocator's quarantine (freed
  // blocks kept back to catch use after free) and shadow memory: the growth then says
  // nothing of our buffers (+25 MiB measured), so the row is reported but not judged.
#if defined(__SANITIZE_ADDRESS__)
  const std::optional<bool> met;
  const char* note = " (ASan build: RSS not judged)";
#else
  const std::optional<bool> met = growth_mib < 8.0;
  const char* note = "";
#endif
  Row r{"tcp-pipeline", "", "RSS growth < 8 MiB", met, true, {}};
  char buf[240];
  std::snprintf(buf, sizeof buf, "%u queries pipelined, never read (%zu of %zu bytes accepted): largest worker RSS %+.2f MiB%s",
                o.pipeline_queries, done, all.size(), growth_mib, note);
  r.figure = buf;
  r.detail = {{"queries", o.pipeline_queries}, {"bytes_accepted", done}, {"bytes", all.size()},
              {"rss_kib_before", before}, {"rss_kib_after", after}, {"rss_growth_mib", growth_mib}};
  return r;
}

// A non-blocking TCP connection from 127.1.x.y (the i-th slow client's own address) to
// the service; -1 when out of descriptors or the address cannot be bound.
int slow_connect(unsigned i, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl((127u << 24) | (1u << 16) | ((i / 250) << 8) | (i % 250 + 1));
  sockaddr_in to = common::loopback_v4(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
    ::close(fd);
    return -1;
  }
  ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  return fd;
}

Row tcp_slow(const AttackOptions& o, const std::string& bin, const std::string& dir) {
  AuthUpstream up;
  Serve s(bin, dir, "slow", up.port());
  load(s.port(), 1, 100, names("h", "real"));
  std::vector<int> slow(o.slow_clients, -1);
  std::vector<std::size_t> offset(o.slow_clients, 0);  // bytes of `framed` each has sent
  for (unsigned i = 0; i < o.slow_clients && !g_interrupted; ++i) slow[i] = slow_connect(i, s.port());
  std::this_thread::sleep_for(200ms);
  // Each slow client trickles a real query, one byte at a time.
  const std::vector<std::uint8_t> q = make_a_query(9, wire_name("h0.real"));
  std::vector<std::uint8_t> framed{static_cast<std::uint8_t>(q.size() >> 8), static_cast<std::uint8_t>(q.size())};
  framed.insert(framed.end(), q.begin(), q.end());
  unsigned asked = 0, answered = 0;
  std::uint64_t reconnects = 0;
  const auto t0 = Clock::now();
  auto last_trickle = t0 - 10s;
  while (Clock::now() - t0 < std::chrono::duration<double>(o.slow_seconds) && !g_interrupted) {
    if (Clock::now() - last_trickle >= 3s) {
      // One byte on every slow connection; one the server closed is opened again at once
      // (the attacker keeps its 2,000 clients).
      last_trickle = Clock::now();
      for (unsigned i = 0; i < slow.size(); ++i) {
        std::uint8_t b;
        const bool closed = slow[i] >= 0 && ::recv(slow[i], &b, 1, MSG_DONTWAIT) == 0;
        if (slow[i] >= 0 && !closed &&
            ::send(slow[i], &framed[offset[i] % framed.size()], 1, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0) {
          ++offset[i];
          continue;
        }
        if (slow[i] >= 0 && !closed && (errno == EAGAIN || errno == ENOTCONN)) continue;  // still connecting
        if (slow[i] >= 0) ::close(slow[i]);
        slow[i] = slow_connect(i, s.port());
        offset[i] = 0;
        ++reconnects;
      }
    }
    const auto q0 = Clock::now();
    ++asked;
    if (tcp_query(s.port(), 2000ms)) ++answered;
    std::this_thread::sleep_until(q0 + 1s);
  }
  unsigned open = 0;
  for (int fd : slow) {
    if (fd < 0) continue;
    std::uint8_t b;
    const ssize_t n = ::recv(fd, &b, 1, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ++open;
    ::close(fd);
  }
  Row r{"tcp-slow", "", "every normal TCP query answered", asked > 0 && answered == asked, false, {}};
  char buf[220];
  std::snprintf(buf, sizeof buf,
                "%u slow clients (one byte per 3 s, %llu reconnects, %u open at the end): %u of %u normal TCP "
                "queries answered",
                o.slow_clients, static_cast<unsigned long long>(reconnects), open, answered, asked);
  r.figure = buf;
  r.detail = {{"slow_clients", o.slow_clients}, {"reconnects", reconnects}, {"slow_open_at_end", open},
              {"asked", asked}, {"answered", answered}};
  return r;
}

std::vector<Row> flood(const AttackOptions& o, const std::string& bin, const std::string& dir) {
  AuthUpstream up;
  BlackHole hole;
  Serve s(bin, dir, "flood", up.port(), hole.port());
  constexpr unsigned kHitNames = 1000;
  load(s.port(), kHitNames, 5000, names("h", "real"));  // warm the hits
  const auto flood_count = static_cast<std::uint64_t>(o.flood_rate * o.flood_seconds);
  const std::uint32_t salt = arc4random();
  LoadResult flood_r, hits_r, miss_r;
  std::atomic<bool> done{false};
  unsigned max_fds = 0;
  std::uint64_t fd_limit = 0;
  std::thread sampler([&] {
    while (!done) {
      for (pid_t p : s.workers()) {
        max_fds = std::max(max_fds, common::open_fds(p));
        const std::uint64_t lim = common::nofile_soft_limit(p);
        if (lim) fd_limit = fd_limit ? std::min(fd_limit, lim) : lim;
      }
      std::this_thread::sleep_for(200ms);
    }
  });
  std::thread hits([&] {
    hits_r = load(s.port(), static_cast<std::uint64_t>(500 * o.flood_seconds), 500, names("h", "real", kHitNames));
  });
  std::thread misses([&] {
    miss_r = load(s.port(), static_cast<std::uint64_t>(50 * o.flood_seconds), 50,
                  names("m" + std::to_string(salt) + "-", "real"));
  });
  const std::uint64_t drops_before = udp_rcvbuf_errors();
  flood_r = load(s.port(), flood_count, o.flood_rate, names("r" + std::to_string(salt) + "-", "hole"), 10000ms);
  hits.join();
  misses.join();
  done = true;
  sampler.join();
  const std::uint64_t drops = udp_rcvbuf_errors() - drops_before;
  const nlohmann::json served = s.totals();
  std::vector<Row> rows;
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "%.0f q/s for %.0f s at a black hole: workers' descriptors at most %u (limit %llu); flood: %llu "
                "SERVFAIL, %llu lost of %llu",
                o.flood_rate, o.flood_seconds, max_fds, static_cast<unsigned long long>(fd_limit),
                static_cast<unsigned long long>(flood_r.servfail), static_cast<unsigned long long>(flood_r.lost()),
                static_cast<unsigned long long>(flood_r.sent));
  rows.push_back({"flood-fds", buf, "descriptors under the limit", fd_limit > 0 && max_fds < fd_limit, true,
                  {{"max_fds", max_fds}, {"fd_limit", fd_limit}, {"flood", load_json(flood_r)}}});
  const double hit_share = hits_r.sent ? static_cast<double>(hits_r.noerror) / static_cast<double>(hits_r.sent) : 0;
  std::snprintf(buf, sizeof buf,
                "legitimate hits during the flood: %llu of %llu answered NOERROR (%.3f%%); kernel UDP receive-buffer "
                "drops on the host: %llu",
                static_cast<unsigned long long>(hits_r.noerror), static_cast<unsigned long long>(hits_r.sent),
                100 * hit_share, static_cast<unsigned long long>(drops));
  rows.push_back({"flood-hits", buf, ">= 99.9% answered", hit_share >= 0.999, false, load_json(hits_r)});
  rows.back().detail["udp_rcvbuf_errors_during_flood"] = drops;
  rows.front().detail["serve_counters"] = served;
  const double miss_share = miss_r.sent ? static_cast<double>(miss_r.noerror) / static_cast<double>(miss_r.sent) : 0;
  std::snprintf(buf, sizeof buf,
                "legitimate misses to a working upstream during the flood: %llu of %llu answered NOERROR (%.3f%%), "
                "%llu SERVFAIL",
                static_cast<unsigned long long>(miss_r.noerror), static_cast<unsigned long long>(miss_r.sent),
                100 * miss_share, static_cast<unsigned long long>(miss_r.servfail));
  rows.push_back({"flood-misses", buf + serve_summary(served), ">= 99.9% answered", miss_share >= 0.999, false,
                  load_json(miss_r)});
  return rows;
}

Row spoof(const AttackOptions& o, const std::string& bin, const std::string& dir) {
  AuthUpstream up(20);  // 20 ms away: the window the attacker races
  Serve s(bin, dir, "spoof", up.port(), 0, 200000, "64M");
  const std::array<std::uint8_t, 4> forged{6, 6, 6, 6};
  const std::uint32_t salt = arc4random();
  auto name = names("s" + std::to_string(salt) + "-", "real");
  std::atomic<std::uint64_t> progress{0}, forged_sent{0};
  std::atomic<bool> attacker_done{false};
  // Bounded: the attacker stops after its count or this long, and so does the resolution.
  const auto limit = std::chrono::milliseconds(static_cast<long>(std::max(30.0, 10 * o.spoof_seconds) * 1000));
  std::string attacker_error;
  std::thread attacker([&] {
    try {
      run_spoofer(up.port(), o.spoof_forged, limit, name, progress, 200, forged, forged_sent, g_interrupted);
    } catch (const std::exception& e) {
      attacker_error = e.what();
    }
    attacker_done = true;
  });
  std::uint64_t forged_seen = 0;
  auto check = [&](std::uint64_t i, const std::uint8_t* w, std::size_t n, std::uint64_t& forged_n,
                   std::uint64_t& wrong_n) {
    std::array<std::uint8_t, 4> got{};
    if (!first_a_record(w, n, got)) return;
    const std::vector<std::uint8_t> qn = name(i);
    if (got == forged) ++forged_n;
    else if (got != real_address(qn.data(), qn.size())) ++wrong_n;
  };
  std::uint64_t wrong_during = 0;
  LoadSpec race;
  race.port = s.port();
  race.count = o.spoof_names;
  race.rate = o.spoof_names / o.spoof_seconds;  // at most; the forged answers pace it
  race.timeout = 5000ms;
  race.name = name;
  race.on_reply = [&](std::uint64_t i, const std::uint8_t* w, std::size_t n) { check(i, w, n, forged_seen, wrong_during); };
  race.sent = &progress;
  race.stop = &g_interrupted;
  // Name i is asked once i / names of the forged answers are out: each name meets its
  // share of the race whatever speed the attacker reaches on this machine.
  race.allowed = [&]() -> std::uint64_t {
    if (attacker_done) return o.spoof_names;
    return 1 + static_cast<std::uint64_t>(static_cast<double>(forged_sent.load()) * o.spoof_names /
                                          static_cast<double>(o.spoof_forged));
  };
  race.send_limit = limit;
  const auto t0 = Clock::now();
  const LoadResult resolve = run_load(race);
  const double race_s = std::chrono::duration<double>(Clock::now() - t0).count();
  progress = std::max<std::uint64_t>(progress, 1);
  attacker.join();
  if (!attacker_error.empty()) throw std::runtime_error(attacker_error);
  // Every name again: from the cache now; what it holds is what later clients get.
  std::uint64_t forged_cached = 0, wrong_cached = 0, real_cached = 0;
  const LoadResult verify = load(s.port(), o.spoof_names, 20000, name, 3000ms,
                                 [&](std::uint64_t i, const std::uint8_t* w, std::size_t n) {
                                   const std::uint64_t before = forged_cached + wrong_cached;
                                   check(i, w, n, forged_cached, wrong_cached);
                                   if (forged_cached + wrong_cached == before) ++real_cached;
                                 });
  Row r{"spoof", "", "0 forged records cached", forged_cached == 0 && wrong_cached == 0, true, {}};
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "%llu forged answers sent in %.0f s while %llu names resolved (%llu answered): %llu forged and %llu "
                "wrong records cached, %llu real; %llu forged answers served during the race",
                static_cast<unsigned long long>(forged_sent.load()), race_s,
                static_cast<unsigned long long>(resolve.sent), static_cast<unsigned long long>(resolve.noerror),
                static_cast<unsigned long long>(forged_cached), static_cast<unsigned long long>(wrong_cached),
                static_cast<unsigned long long>(real_cached), static_cast<unsigned long long>(forged_seen));
  r.figure = buf;
  r.detail = {{"forged_sent", forged_sent.load()}, {"race_seconds", race_s}, {"names", o.spoof_names},
              {"resolve", load_json(resolve)}, {"verify", load_json(verify)}, {"forged_cached", forged_cached},
              {"wrong_cached", wrong_cached}, {"real_cached", real_cached}, {"forged_served_during_race", forged_seen}};
  if (resolve.sent < o.spoof_names) r.met = false;  // not every name was raced: no figure
  return r;
}

Row fill(const AttackOptions& o, const std::string& bin, const std::string& dir) {
  AuthUpstream up;
  const std::uint64_t entries = std::max<std::uint64_t>(2 * o.fill_names, 100000);
  const std::string arena = std::to_string(std::max<std::uint64_t>(64, o.fill_names * 400 / (1 << 20))) + "M";
  Serve s(bin, dir, "fill", up.port(), 0, entries, arena);
  const std::uint32_t salt = arc4random();
  const std::uint64_t drops_before = udp_rcvbuf_errors();
  const LoadResult r = load(s.port(), o.fill_names, o.fill_rate, names("f" + std::to_string(salt) + "-", "real"), 5000ms);
  const std::uint64_t drops = udp_rcvbuf_errors() - drops_before;
  const nlohmann::json served = s.totals();
  Row row{"fill", "", "0 SERVFAIL, 0 lost", r.servfail == 0 && r.lost() == 0 && r.sent == o.fill_names, false,
          load_json(r)};
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "all-miss fill of %llu names at %.0f q/s: %llu SERVFAIL, %llu lost, %llu upstream queries; kernel "
                "UDP receive-buffer drops on the host: %llu",
                static_cast<unsigned long long>(o.fill_names), o.fill_rate, static_cast<unsigned long long>(r.servfail),
                static_cast<unsigned long long>(r.lost()), static_cast<unsigned long long>(up.queries()),
                static_cast<unsigned long long>(drops));
  row.figure = buf + serve_summary(served);
  row.detail["upstream_queries"] = up.queries();
  row.detail["udp_rcvbuf_errors"] = drops;
  row.detail["serve_counters"] = served;
  return row;
}

// Workers' CPU microseconds per answered hit, one run.
double cpu_per_hit_once(const AttackOptions& o, const std::string& bin, const std::string& dir, const std::string& tag,
                        std::uint64_t* answered) {
  AuthUpstream up;
  Serve s(bin, dir, tag, up.port());
  constexpr unsigned kNames = 1000;
  load(s.port(), kNames, 5000, names("h", "real"));
  const double before = s.workers_cpu();
  const LoadResult r = load(s.port(), static_cast<std::uint64_t>(o.hit_rate * o.hit_seconds), o.hit_rate,
                            names("h", "real", kNames));
  const double cpu = s.workers_cpu() - before;
  *answered = r.noerror;
  return r.noerror ? cpu * 1e6 / static_cast<double>(r.noerror) : 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

Row cpu_per_hit(const AttackOptions& o, const std::string& bin, const std::string& dir) {
  std::vector<double> ours, base;
  std::uint64_t answered = 0;
  const unsigned rounds = o.baseline_binary.empty() ? 1 : o.hit_rounds;
  for (unsigned i = 0; i < rounds && !g_interrupted; ++i) {
    ours.push_back(cpu_per_hit_once(o, bin, dir, "hit-" + std::to_string(i), &answered));
    if (!o.baseline_binary.empty())
      base.push_back(cpu_per_hit_once(o, o.baseline_binary, dir, "hit-base-" + std::to_string(i), &answered));
  }
  Row r{"cpu-per-hit", "", "<= 1.05 x the baseline", std::nullopt, false, {}};
  char buf[240];
  if (base.empty()) {
    std::snprintf(buf, sizeof buf, "%.2f us of worker CPU per hit at %.0f q/s (no --baseline-binary: not compared)",
                  median(ours), o.hit_rate);
  } else {
    const double ratio = median(base) > 0 ? median(ours) / median(base) : 0;
    r.met = ratio > 0 && ratio <= 1.05;
    std::snprintf(buf, sizeof buf,
                  "%.2f us of worker CPU per hit vs %.2f us for the baseline (medians of %u interleaved runs at %.0f "
                  "q/s): ratio %.3f",
                  median(ours), median(base), rounds, o.hit_rate, ratio);
    r.detail["ratio"] = ratio;
  }
  r.figure = buf;
  r.detail["cpu_us_per_hit"] = ours;
  r.detail["baseline_cpu_us_per_hit"] = base;
  r.detail["rate"] = o.hit_rate;
  return r;
}

int run_attack(const AttackOptions& o) {
  common::install_stop_signals(on_interrupt);
  common::raise_nofile_soft_limit(o.slow_clients + 1024);
  const std::string bin = common::daemon_program();
  const std::string dir = "/tmp/dnsarena-bench-attack-" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0700);
  std::vector<Row> rows;
  const auto t0 = Clock::now();
  using Scenario = std::function<void()>;
  const std::vector<std::pair<std::string, Scenario>> scenarios = {
      {"tcp-pipeline", [&] { rows.push_back(tcp_pipeline(o, bin, dir)); }},
      {"tcp-slow", [&] { rows.push_back(tcp_slow(o, bin, dir)); }},
      {"flood", [&] { for (Row& r : flood(o, bin, dir)) rows.push_back(std::move(r)); }},
      {"spoof", [&] { rows.push_back(spoof(o, bin, dir)); }},
      {"fill", [&] { rows.push_back(fill(o, bin, dir)); }},
      {"cpu-per-hit", [&] { rows.push_back(cpu_per_hit(o, bin, dir)); }},
  };
  std::string error;
  for (const auto& [name, run] : scenarios) {
    if (g_interrupted || (!o.only.empty() && o.only != name)) continue;
    try {
      run();
    } catch (const std::exception& e) {
      error = name + ": " + e.what();
      break;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  bool check_failed = false;
  for (const Row& r : rows)
    if (r.timing_free && r.met == false) check_failed = true;
  if (o.json) {
    nlohmann::json j;
    j["quick"] = o.quick;
    j["seconds"] = seconds;
    j["interrupted"] = g_interrupted.load();
    if (!error.empty()) j["error"] = error;
    j["rows"] = nlohmann::json::array();
    for (const Row& r : rows)
      j["rows"].push_back({{"scenario", r.scenario}, {"figure", r.figure}, {"target", r.target},
                           {"met", r.met ? nlohmann::json(*r.met) : nlohmann::json(nullptr)}, {"detail", r.detail}});
    std::cout << j.dump() << "\n";
  } else {
    std::printf("dnsarena-lab bench attack%s: %.0f s, serve with 2 workers on loopback (logs in %s)\n",
                o.quick ? " --quick" : "", seconds, dir.c_str());
    std::printf("%-13s %-5s %-34s %s\n", "scenario", "met", "target", "figure");
    for (const Row& r : rows)
      std::printf("%-13s %-5s %-34s %s\n", r.scenario.c_str(), !r.met ? "-" : *r.met ? "yes" : "NO", r.target.c_str(),
                  r.figure.c_str());
    if (!error.empty()) std::printf("stopped: %s\n", error.c_str());
    if (g_interrupted) std::printf("interrupted: the remaining scenarios were skipped\n");
  }
  if (!error.empty() || g_interrupted) return 1;
  return o.check && check_failed ? 1 : 0;
}

}  // namespace

void add_bench_attack_command(CLI::App& bench) {
  auto o = std::make_shared<AttackOptions>();
  auto quick = std::make_shared<bool>(false);
  auto* cmd = bench.add_subcommand(
      "attack",
      "serve on a hostile network (loopback only): TCP pipelining without reading, slow TCP clients, a\n"
      "random-subdomain flood at a black-hole upstream beside legitimate traffic, an off-path spoofer\n"
      "racing the upstream, an all-miss fill, and worker CPU per hit. One row per target.");
  cmd->add_flag("--quick", *quick, "every figure small: under a minute in all (the ctest)");
  cmd->add_flag("--check", o->check, "exit 1 when a target that does not depend on timing is missed");
  cmd->add_option("--only", o->only, "run one scenario: tcp-pipeline, tcp-slow, flood, spoof, fill, cpu-per-hit");
  cmd->add_option("--baseline-binary", o->baseline_binary, "another dnsarena binary to compare CPU per hit with");
  cmd->add_option("--serve-config", g_serve_config, "a serve YAML config for every serve started (e.g. to compare a setting)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--pipeline-queries", o->pipeline_queries, "queries the non-reading TCP client pipelines")
      ->capture_default_str();
  cmd->add_option("--slow-clients", o->slow_clients, "slow TCP clients")->capture_default_str();
  cmd->add_option("--slow-seconds", o->slow_seconds, "seconds of normal TCP queries among them")->capture_default_str();
  cmd->add_option("--flood-rate", o->flood_rate, "random-subdomain queries per second")->capture_default_str();
  cmd->add_option("--flood-seconds", o->flood_seconds, "seconds of flood")->capture_default_str();
  cmd->add_option("--spoof-names", o->spoof_names, "names resolved during the spoof race")->capture_default_str();
  cmd->add_option("--spoof-forged", o->spoof_forged, "forged answers sent")->capture_default_str();
  cmd->add_option("--spoof-seconds", o->spoof_seconds, "the race lasts at least this long (names asked at most N/S per second)")->capture_default_str();
  cmd->add_option("--fill-names", o->fill_names, "names of the all-miss fill")->capture_default_str();
  cmd->add_option("--fill-rate", o->fill_rate, "queries per second of the fill")->capture_default_str();
  cmd->add_option("--hit-rate", o->hit_rate, "queries per second of the CPU-per-hit run")->capture_default_str();
  cmd->add_option("--hit-seconds", o->hit_seconds, "seconds of the CPU-per-hit run")->capture_default_str();
  cmd->add_option("--hit-rounds", o->hit_rounds, "interleaved runs of each binary with --baseline-binary")
      ->check(CLI::Range(1u, 20u))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o, quick, cmd] {
    AttackOptions run = *o;
    if (*quick) {
      run.make_quick();
      // Figures given explicitly still win over --quick's.
      AttackOptions explicit_ = *o;
      auto keep = [&](const char* flag, auto& field, const auto& given) {
        if (cmd->count(flag)) field = given;
      };
      keep("--pipeline-queries", run.pipeline_queries, explicit_.pipeline_queries);
      keep("--slow-clients", run.slow_clients, explicit_.slow_clients);
      keep("--slow-seconds", run.slow_seconds, explicit_.slow_seconds);
      keep("--flood-rate", run.flood_rate, explicit_.flood_rate);
      keep("--flood-seconds", run.flood_seconds, explicit_.flood_seconds);
      keep("--spoof-names", run.spoof_names, explicit_.spoof_names);
      keep("--spoof-forged", run.spoof_forged, explicit_.spoof_forged);
      keep("--spoof-seconds", run.spoof_seconds, explicit_.spoof_seconds);
      keep("--fill-names", run.fill_names, explicit_.fill_names);
      keep("--fill-rate", run.fill_rate, explicit_.fill_rate);
      keep("--hit-seconds", run.hit_seconds, explicit_.hit_seconds);
    }
    const int rc = run_attack(run);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::bench
