// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench recursive`: serve resolving from the root (recursion.enabled) beside
// Unbound and Knot Resolver on the lab hierarchy (dns_hierarchy.hpp: knotd instances on
// 127.53.K.x port 53, so it runs as root), in one run:
//
//   for each of --runs rounds, each resolver started fresh (empty cache; then one name
//   under a TLD the root denies, so each starts with the root primed), one worker or
//   thread each, QNAME minimisation on for all three (serve's default, Unbound's
//   `qname-minimisation: yes`, Knot Resolver's default), asked --names cold names over UDP,
//   one at a time or --in-flight at once (NXDOMAIN under three zones of two TLDs: after
//   the first name of each zone, one authoritative query per name); measured:
//     authoritative queries  the knotds' own counters (mod-stats) before and after
//     CPU                    the resolver's threads' time on a CPU (/proc/PID/task/*/schedstat,
//                            nanoseconds: user + system, no 10 ms ticks)
//     answers                how many came back NXDOMAIN (any other outcome is an error)
//   then the same names again, now hits: CPU per hit.
// One at a time, each resolution pays its own two wakeups (the client's query, the
// authoritative's reply), on an idle VM most of its cost; with --in-flight N the resolver
// runs near saturation and one wakeup serves several events: the cost per resolution of
// its own work and system calls, the figure a loaded resolver pays.
//
// Beside them each round, the floor (floor_resolver.hpp): a relay that sends each name to
// its zone's server with the system calls and wakeups of a cold resolution and nothing
// else, in a process of its own; its "hits" are resolved again (it keeps nothing).
//
// Printed: per resolver the medians over the rounds, per 1,000 cold resolutions and per
// hit, serve's ratios to each peer (the target: CPU per cold resolution <= 0.7x
// Unbound's; authoritative queries <= Unbound's), and each resolver's CPU per cold
// resolution over the floor's. --json: one object.
// A peer that is not installed is left out with a line saying so (--no-unbound,
// --no-kresd leave them out on purpose); serve is always measured.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/lab/commands.hpp"
#include "bench/lab/dns_hierarchy.hpp"
#include "bench/lab/floor_resolver.hpp"
#include "bench/lab/kresd_config.hpp"
#include "bench/lab/serve_process.hpp"
#include "bench/lab/unbound_process.hpp"
#include "common/add_command.hpp"
#include "common/find_program.hpp"
#include "common/loopback.hpp"
#include "common/median.hpp"
#include "common/proc_stats.hpp"
#include "common/sibling_program.hpp"
#include "dns/query_builder.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::bench {

namespace {

struct RecursiveBenchOptions {
  unsigned names = 3000;
  unsigned runs = 3;
  bool json = false;
  bool no_unbound = false;
  bool no_kresd = false;
  unsigned in_flight = 1;
  std::string serve_binary;
};

// One question over UDP from `fd` (connected to the resolver), up to two tries of 3 s:
// the reply's RCODE, or -1 when none came.
int ask(int fd, std::uint16_t id, const std::string& name) {
  const std::basic_string<std::uint8_t> qname = wire::name_to_wire(name);
  dns::QuerySpec spec;
  spec.id = id;
  spec.qname = qname;
  spec.qtype = 1;
  const common::Bytes q = dns::build_query(spec);
  std::uint8_t buf[4096];
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (::send(fd, q.data(), q.size(), 0) != static_cast<ssize_t>(q.size())) return -1;
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0) break;  // the receive timeout: ask again
      if (n >= 12 && buf[0] == q[0] && buf[1] == q[1]) return buf[3] & 0x0F;
    }
  }
  return -1;
}

struct Round {
  std::uint64_t authoritative_queries = 0;
  double cold_cpu_ms = 0;
  double hit_cpu_us = 0;  // per hit
  std::uint64_t hit_authoritative_queries = 0;  // during the hits: 0 when every answer was cached
  std::uint64_t nxdomain = 0;
};

// serve's cache after a round's cold names and hits: its entries, how many of them are zone
// cuts (NS entries: the shared delegations, with their glue), and the arena bytes per entry
// (`dnsarena stats`: the entries' own bytes, delegation data included).
struct ServeCacheFigures {
  std::uint64_t entries = 0;
  std::uint64_t ns_entries = 0;
  double arena_bytes_per_entry = 0;
};

ServeCacheFigures serve_cache_figures(const ServeProcess& serve, const std::string& binary, const std::string& dir) {
  ServeCacheFigures f;
  const nlohmann::json st = serve.stats();
  if (!st.is_object() || !st.contains("entries")) throw std::runtime_error("dnsarena stats did not read serve's segment");
  f.entries = st["entries"].get<std::uint64_t>();
  f.arena_bytes_per_entry = st.value("arena_bytes_per_entry", 0.0);
  const std::string dump = dir + "/serve-dump.txt";
  common::ChildProcess d({binary, "dump", serve.segment(), "--out", dump}, {.log_path = dump + ".log", .truncate_log = true});
  if (!d.wait_exit(std::chrono::seconds(30))) throw std::runtime_error("dnsarena dump did not finish");
  std::ifstream in(dump);
  std::string line;
  while (std::getline(in, line)) {
    // "$ENTRY <owner> <type> ...": the shared cuts are the NS entries.
    if (line.rfind("$ENTRY ", 0) != 0) continue;
    std::istringstream words(line);
    std::string tag, owner, type;
    words >> tag >> owner >> type;
    f.ns_entries += type == "NS";
  }
  return f;
}

// The names of a round: cold<i>.<zone>, three zones of two TLDs.
std::vector<std::string> cold_names(unsigned n) {
  static const char* const kZones[] = {"example.com.", "example.org.", "hoster.org."};
  std::vector<std::string> names;
  names.reserve(n);
  for (unsigned i = 0; i < n; ++i) names.push_back("cold" + std::to_string(i) + "." + kZones[i % 3]);
  return names;
}

// Asks every name of `names` over `fd`, with up to `in_flight` questions out at once (1:
// one at a time, each sent when the last was answered), each reply matched by its ID; a
// question unanswered for 3 s is asked again once, then given up. `id` runs on across
// calls (an ID still out is not reused). Returns how many came back NXDOMAIN.
std::uint64_t ask_all(int fd, std::uint16_t& id, const std::vector<std::string>& names, unsigned in_flight) {
  std::vector<common::Bytes> queries;
  queries.reserve(names.size());
  for (const std::string& n : names) {
    const std::basic_string<std::uint8_t> qname = wire::name_to_wire(n);  // QuerySpec only points at it
    dns::QuerySpec spec;
    spec.qname = qname;
    spec.qtype = 1;
    queries.push_back(dns::build_query(spec));
  }
  std::vector<int> out_by_id(65536, -1);  // the name index a question with this ID is out for
  std::vector<std::uint16_t> id_of(names.size());
  std::vector<std::uint8_t> tries(names.size(), 0);
  std::size_t next = 0, out = 0, done = 0;
  std::uint64_t nxdomain = 0;
  auto send_one = [&](std::size_t i) {
    if (tries[i] == 0) {
      while (out_by_id[id] != -1) ++id;
      id_of[i] = id++;
      out_by_id[id_of[i]] = static_cast<int>(i);
    }
    common::Bytes& q = queries[i];
    q[0] = static_cast<std::uint8_t>(id_of[i] >> 8);
    q[1] = static_cast<std::uint8_t>(id_of[i]);
    ++tries[i];
    (void)::send(fd, q.data(), q.size(), 0);  // a lost send is asked again at the timeout
  };
  std::uint8_t buf[4096];
  while (done < names.size()) {
    while (out < in_flight && next < names.size()) {
      send_one(next++);
      ++out;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 3000) <= 0) {  // 3 s without a reply: every question out asked again once
      for (int& i : out_by_id) {
        if (i < 0) continue;
        const auto k = static_cast<std::size_t>(i);
        if (tries[k] < 2) {
          send_one(k);
        } else {
          i = -1;  // given up
          --out;
          ++done;
        }
      }
      continue;
    }
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 12) continue;
    const std::uint16_t rid = static_cast<std::uint16_t>(buf[0] << 8 | buf[1]);
    if (out_by_id[rid] < 0) continue;  // a late reply to a question given up or answered
    out_by_id[rid] = -1;
    --out;
    ++done;
    nxdomain += (buf[3] & 0x0F) == 3;
  }
  return nxdomain;
}

Round measure(const DnsHierarchy& h, std::uint16_t port, pid_t pid, const std::vector<std::string>& names,
              unsigned in_flight) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const sockaddr_in to = common::loopback_v4(port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot open a UDP socket to 127.0.0.1:" + std::to_string(port));
  }
  const timeval tv{3, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  Round r;
  std::uint16_t id = 1;
  // The same start for every resolver: the root primed by one name under a TLD the root
  // denies (kresd's start-up check, wait_udp_answer, asks this one too).
  ask(fd, id++, "probe.zone.");
  const std::uint64_t queries0 = h.authoritative_queries();
  const std::uint64_t cpu0 = common::cpu_ns(pid);
  r.nxdomain = ask_all(fd, id, names, in_flight);
  const std::uint64_t cpu1 = common::cpu_ns(pid);
  r.authoritative_queries = h.authoritative_queries() - queries0;
  ask_all(fd, id, names, in_flight);
  const std::uint64_t cpu2 = common::cpu_ns(pid);
  r.hit_authoritative_queries = h.authoritative_queries() - queries0 - r.authoritative_queries;
  ::close(fd);
  r.cold_cpu_ms = static_cast<double>(cpu1 - cpu0) / 1e6;
  r.hit_cpu_us = static_cast<double>(cpu2 - cpu1) / 1e3 / static_cast<double>(names.size());
  return r;
}

struct Summary {
  std::vector<Round> rounds;
  nlohmann::json json(std::size_t names) const {
    std::vector<double> q, cold, hit;
    std::uint64_t nx = 0, hit_queries = 0;
    for (const Round& r : rounds) {
      hit_queries += r.hit_authoritative_queries;
      q.push_back(static_cast<double>(r.authoritative_queries));
      cold.push_back(r.cold_cpu_ms);
      hit.push_back(r.hit_cpu_us);
      nx += r.nxdomain;
    }
    const double per_1000 = 1000.0 / static_cast<double>(names);
    return {{"authoritative_queries_per_1000", common::median(q) * per_1000},
            {"cold_cpu_ms_per_1000", common::median(cold) * per_1000},
            {"cold_cpu_us_per_resolution", common::median(cold) * 1000.0 / static_cast<double>(names)},
            {"hit_cpu_us", common::median(hit)},
            {"nxdomain_answers", nx},
            {"authoritative_queries_during_hits", hit_queries},
            {"questions", names * rounds.size()},
            {"rounds_cold_cpu_ms", cold},
            {"rounds_authoritative_queries", q}};
  }
};

// The floor (floor_resolver.hpp) in a child process of its own, so that its CPU is its
// own: the three zones of the cold names and their TLDs routed to their knotds, any other
// name to a root server.
class FloorProcess {
public:
  explicit FloorProcess(const DnsHierarchy& h) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = common::loopback_v4(0);
    socklen_t len = sizeof a;
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      if (fd >= 0) ::close(fd);
      throw std::runtime_error("the floor resolver cannot bind a UDP port on 127.0.0.1");
    }
    port_ = ntohs(a.sin_port);
    auto server = [&](const std::string& zone) {
      sockaddr_in s{};
      s.sin_family = AF_INET;
      s.sin_port = htons(53);
      ::inet_pton(AF_INET, h.server_of(zone).c_str(), &s.sin_addr);
      return s;
    };
    std::vector<FloorRoute> routes;
    for (const char* zone : {"example.com.", "example.org.", "hoster.org.", "com.", "org."})
      routes.push_back({zone, server(zone)});
    const sockaddr_in root = server(".");
    pid_ = ::fork();
    if (pid_ == 0) {
      run_floor_resolver(fd, routes, root);
      ::_exit(1);
    }
    ::close(fd);
    if (pid_ < 0) throw std::runtime_error("cannot fork the floor resolver");
  }
  ~FloorProcess() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  FloorProcess(const FloorProcess&) = delete;
  FloorProcess& operator=(const FloorProcess&) = delete;
  pid_t pid() const { return pid_; }
  std::uint16_t port() const { return port_; }

private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
  return path;
}

int run_recursive_bench(const RecursiveBenchOptions& o) {
  try {
    if (!knotd_installed()) throw std::runtime_error("knotd is not installed (apt-get install knot)");
    if (!port53_permitted()) throw std::runtime_error("the lab hierarchy binds port 53 on 127.53.K.x: run as root");
    const std::string serve_bin = o.serve_binary.empty() ? common::daemon_program() : o.serve_binary;
    const bool with_unbound = !o.no_unbound && unbound_installed();
    const bool with_kresd = !o.no_kresd && common::find_program("kresd").has_value();
    if (!o.no_unbound && !with_unbound) std::cerr << "bench recursive: unbound not installed: left out\n";
    if (!o.no_kresd && !with_kresd) std::cerr << "bench recursive: kresd not installed: left out\n";

    DnsHierarchy h;
    const std::vector<std::string> names = cold_names(o.names);
    const std::string serve_config = write_file(
        h.dir() + "/serve-recursive.yaml", "recursion:\n  enabled: true\n  root_hints: " + h.root_hints() + "\n");
    std::map<std::string, Summary> results;
    std::vector<ServeCacheFigures> cache_figures;  // serve's, per round
    for (unsigned round = 0; round < o.runs; ++round) {
      {
        ServeProcess serve({.binary = serve_bin, .dir = h.dir(), .tag = "recursive-" + std::to_string(round),
                            .workers = 1, .max_entries = std::max<std::uint64_t>(4 * o.names, 10000),
                            .args = {"-c", serve_config, "--no-metrics"}});
        if (serve.workers().size() != 1) throw std::runtime_error("serve did not start its worker: " + slurp(serve.log()));
        results["dnsarena"].rounds.push_back(measure(h, serve.port(), serve.workers()[0], names, o.in_flight));
        cache_figures.push_back(serve_cache_figures(serve, serve_bin, h.dir()));
      }
      {
        FloorProcess floor(h);
        results["floor"].rounds.push_back(measure(h, floor.port(), floor.pid(), names, o.in_flight));
      }
      if (with_unbound) {
        UnboundProcess u({.dir = h.dir(), .tag = "recursive-" + std::to_string(round), .threads = 1,
                          .root_hints = h.root_hints(), .server_lines = {"qname-minimisation: yes"}});
        results["unbound"].rounds.push_back(measure(h, u.port(), u.pid(), names, o.in_flight));
      }
      if (with_kresd) {
        const std::uint16_t port = common::free_loopback_port();
        const std::string rundir = h.dir() + "/kresd-" + std::to_string(round);
        std::filesystem::create_directories(rundir);
        const std::string conf = write_file(
            rundir + ".conf", kresd_config_text({.dir = rundir, .dns_port = port, .root_hints = h.root_hints()}));
        common::ChildProcess k = spawn_logged({*common::find_program("kresd"), "-n", "-c", conf, rundir}, rundir + ".log");
        if (!wait_tcp(port, k) || !wait_udp_answer(port, k, 10'000)) {
          k.stop();
          throw std::runtime_error("kresd did not start: " + slurp(rundir + ".log"));
        }
        results["kresd"].rounds.push_back(measure(h, port, k.pid(), names, o.in_flight));
        k.stop();
      }
    }

    nlohmann::json j;
    j["names"] = o.names;
    j["runs"] = o.runs;
    j["in_flight"] = o.in_flight;
    for (const auto& [server, s] : results) j[server] = s.json(names.size());
    if (!cache_figures.empty()) {
      const ServeCacheFigures& last = cache_figures.back();
      j["dnsarena"]["cache_entries"] = last.entries;
      j["dnsarena"]["cache_ns_entries"] = last.ns_entries;
      j["dnsarena"]["cache_arena_bytes_per_entry"] = last.arena_bytes_per_entry;
    }
    const double ours = j["dnsarena"]["cold_cpu_ms_per_1000"].get<double>();
    for (const char* peer : {"unbound", "kresd"}) {
      if (!j.contains(peer)) continue;
      const double theirs = j[peer]["cold_cpu_ms_per_1000"].get<double>();
      j[std::string("cold_cpu_ratio_vs_") + peer] = theirs > 0 ? nlohmann::json(ours / theirs) : nlohmann::json(nullptr);
      j[std::string("authoritative_queries_ratio_vs_") + peer] =
          j[peer]["authoritative_queries_per_1000"].get<double>() > 0
              ? nlohmann::json(j["dnsarena"]["authoritative_queries_per_1000"].get<double>() /
                               j[peer]["authoritative_queries_per_1000"].get<double>())
              : nlohmann::json(nullptr);
    }
    const double floor_ms = j["floor"]["cold_cpu_ms_per_1000"].get<double>();
    for (const auto& [server, s] : results)
      if (server != "floor" && floor_ms > 0)
        j["cold_cpu_over_floor_" + server] = j[server]["cold_cpu_ms_per_1000"].get<double>() / floor_ms;
    std::uint64_t wrong = 0;
    for (const auto& [server, s] : results)
      wrong += s.rounds.size() * names.size() - j[server]["nxdomain_answers"].get<std::uint64_t>();
    if (o.json) {
      std::cout << j.dump() << "\n";
    } else {
      std::printf("bench recursive: %u cold names (NXDOMAIN under 3 zones), %u rounds, one worker/thread each,\n"
                  "%u question(s) out at a time, medians over the rounds; CPU = the resolver's threads on a CPU\n"
                  "(schedstat, ns)\n\n",
                  o.names, o.runs, o.in_flight);
      std::printf("%-10s %24s %22s %18s %10s\n", "resolver", "auth queries per 1,000", "CPU ms per 1,000 cold",
                  "CPU us per hit", "NXDOMAIN");
      for (const auto& [server, s] : results) {
        const nlohmann::json& r = j[server];
        std::printf("%-10s %24.1f %22.1f %18.2f %5llu/%llu\n", server.c_str(),
                    r["authoritative_queries_per_1000"].get<double>(), r["cold_cpu_ms_per_1000"].get<double>(),
                    r["hit_cpu_us"].get<double>(),
                    static_cast<unsigned long long>(r["nxdomain_answers"].get<std::uint64_t>()),
                    static_cast<unsigned long long>(r["questions"].get<std::uint64_t>()));
      }
      for (const char* peer : {"unbound", "kresd"})
        if (j.contains(std::string("cold_cpu_ratio_vs_") + peer) && !j[std::string("cold_cpu_ratio_vs_") + peer].is_null())
          std::printf("serve / %s: CPU per cold resolution %.2fx, authoritative queries %.3fx\n", peer,
                      j[std::string("cold_cpu_ratio_vs_") + peer].get<double>(),
                      j[std::string("authoritative_queries_ratio_vs_") + peer].get<double>());
      std::printf("floor: a relay doing only a cold resolution's system calls and wakeups (floor_resolver.hpp);\n"
                  "CPU per cold resolution over the floor:");
      for (const auto& [server, s] : results)
        if (server != "floor" && j.contains("cold_cpu_over_floor_" + server))
          std::printf(" %s %.2fx", server.c_str(), j["cold_cpu_over_floor_" + server].get<double>());
      std::printf("\n");
      if (!cache_figures.empty())
        std::printf("serve's cache after a round: %llu entries, %llu of them zone cuts (NS with glue), %.1f arena "
                    "bytes per entry\n",
                    static_cast<unsigned long long>(cache_figures.back().entries),
                    static_cast<unsigned long long>(cache_figures.back().ns_entries),
                    cache_figures.back().arena_bytes_per_entry);
      std::printf("target: CPU per cold resolution <= 0.7x Unbound's; authoritative queries <= Unbound's\n");
    }
    if (wrong) {
      std::cerr << "bench recursive: " << wrong << " answers were not NXDOMAIN (see the logs in " << h.dir() << ")\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dnsarena-lab bench recursive: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

void add_bench_recursive_command(CLI::App& bench) {
  auto [cmd, o] = common::add_command<RecursiveBenchOptions>(
      bench, "recursive",
      "serve resolving from the root (recursion.enabled) beside Unbound and Knot Resolver on the lab\n"
      "hierarchy (knotd on 127.53.K.x port 53: run as root): per resolver, started fresh each round with one\n"
      "worker or thread, --names cold names (NXDOMAIN under three zones) asked one at a time (or\n"
      "--in-flight at once), then again as hits. Prints authoritative queries per 1,000 cold resolutions\n"
      "(the knotds' counters), CPU per 1,000 cold resolutions and per hit (schedstat, ns), medians over\n"
      "--runs rounds, serve's ratios to each peer and each one's CPU over the floor's.",
      run_recursive_bench);
  cmd->add_option("--names", o->names, "cold names per round (default 3000)")->check(CLI::Range(10u, 100000u));
  cmd->add_option("--runs", o->runs, "rounds; the medians are printed (default 3)")->check(CLI::Range(1u, 50u));
  cmd->add_option("--in-flight", o->in_flight,
                  "questions out at once (default 1: one at a time, every resolution pays its own wakeups; more: "
                  "the resolver near saturation, where wakeups serve several)")
      ->check(CLI::Range(1u, 512u));
  cmd->add_flag("--json", o->json, "print one JSON object instead of the table");
  cmd->add_flag("--no-unbound", o->no_unbound, "leave Unbound out");
  cmd->add_flag("--no-kresd", o->no_kresd, "leave Knot Resolver out");
  cmd->add_option("--serve-binary", o->serve_binary,
                  "the dnsarena program whose serve is measured (default: the dnsarena beside this program, else on PATH)");
}

}  // namespace dnsarena::bench
