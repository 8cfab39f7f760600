// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena serve` keeping its local root copy (RFC 8806) fresh by zone transfer
// (recursion.local_root_from, workers/local_root_updater.hpp) from the lab hierarchy's
// root servers (bench/lab/dns_hierarchy.hpp, HierarchyOptions::root_transfers): started
// without the file, it resolves from the roots until the first transfer lands, then every
// hierarchy name is answered as without a local root and no root server is asked (AXFR
// and SOA queries aside); a new serial on the primary is picked up at the next refresh
// and its changed record answered; a primary serving a zone that is not a root zone, and
// one that does not answer, change nothing and show in `dnsarena stats`.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/test_skip.hpp"

#include "bench/lab/dns_hierarchy.hpp"
#include "cache/segment.hpp"
#include "tests/recursion/answer_set.hpp"
#include "tests/workers/serve_harness.hpp"
#include "workers/local_root.hpp"

namespace {

using dnsarena::bench::kHierarchyNames;
using dnsarena::test::AnswerSet;

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_all(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

// serve with recursion from the hierarchy's hints; `recursion_keys`: more lines of the
// recursion section. The config file stays so that a test can rewrite it and SIGHUP.
struct Resolver {
  std::uint16_t port = dnsarena::test::free_port();
  std::string segment = dnsarena::test::unique_segment("local-root-xfr");
  std::string config;
  std::unique_ptr<dnsarena::test::ServeProcess> serve;
  Resolver(const dnsarena::bench::DnsHierarchy& h, const std::string& recursion_keys) : config(h.dir() + "/serve-" + segment + ".yaml") {
    write(h, recursion_keys);
    serve = std::make_unique<dnsarena::test::ServeProcess>(
        std::vector<std::string>{"-c", config, "--segment", segment, "--workers", "1", "--max-entries", "10000",
                                 "--arena-bytes", "8M", "--listen", "127.0.0.1:" + std::to_string(port), "--no-metrics"},
        port);
    if (!serve->wait_ready()) throw std::runtime_error("serve did not start: " + serve->log());
  }
  void write(const dnsarena::bench::DnsHierarchy& h, const std::string& recursion_keys) const {
    write_all(config, "log_level: info\nrecursion:\n  enabled: true\n  root_hints: " + h.root_hints() + "\n" + recursion_keys);
  }
  // The log's occurrences of `what`, waited for until there are at least `n`.
  bool logged(const std::string& what, std::size_t n = 1) const {
    return dnsarena::test::eventually([&] { return dnsarena::test::occurrences(serve->log(), what) >= n; });
  }
  nlohmann::json local_root_stats() const {
    return dnsarena::test::serve_stats(segment).value("local_root", nlohmann::json::object());
  }
  ~Resolver() {
    serve.reset();
    dnsarena::cache::Segment::remove(segment);
  }
};

}  // namespace

TEST_CASE("serve keeps its local root fresh by AXFR from a root server and then asks no root server",
          "[hierarchy][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  dnsarena::bench::DnsHierarchy h({.root_transfers = true});
  // The root zone with SOA refresh and retry 1 s (bounded by local_root_refresh_min_s: 1).
  const std::string original = read_all(h.root_zone());
  const std::string old_soa = " 1 3600 600 86400 300";
  REQUIRE(original.find(old_soa) != std::string::npos);
  auto root_zone = [&](unsigned serial) {
    std::string text = original;
    text.replace(text.find(old_soa), old_soa.size(), " " + std::to_string(serial) + " 1 1 86400 300");
    return text;
  };
  for (unsigned host : {2u, 3u}) {
    write_all(h.zone_file(host, "."), root_zone(2));
    h.reload_zone(host, ".");
  }
  // Queries the root servers received, the local root's SOA queries and transfers aside
  // (read until two readings agree: a refresh may ask between the counters' reads).
  auto root_queries = [&] {
    auto once = [&] {
      std::uint64_t n = 0;
      for (unsigned host : {2u, 3u})
        n += h.authoritative_queries(host) - h.authoritative_queries_of_type("SOA", host) - h.zone_transfers(host);
      return n;
    };
    for (std::uint64_t a = once();;) {
      const std::uint64_t b = once();
      if (a == b) return a;
      a = b;
    }
  };

  std::vector<AnswerSet> reference;
  {
    Resolver plain(h, "");
    for (const auto& n : kHierarchyNames) reference.push_back(dnsarena::test::ask_resolver(plain.port, n.name, n.qtype));
  }

  const std::string copy = h.dir() + "/local/root.zone";
  std::filesystem::create_directories(h.dir() + "/local");
  auto keys = [&](const std::string& primary) {
    return "  local_root: " + copy + "\n  local_root_from: [" + primary + "]\n  local_root_refresh_min_s: 1\n";
  };
  Resolver serve(h, keys(h.address(2)));
  // Started without the file; the first transfer writes it and the workers get it.
  REQUIRE(serve.logged("workers replaced with the copy of serial 2"));
  CHECK(dnsarena::workers::LocalRoot::load(copy)->serial() == 2);
  const std::uint64_t roots_before = root_queries();
  for (std::size_t i = 0; i < kHierarchyNames.size(); ++i) {
    const auto& n = kHierarchyNames[i];
    const AnswerSet ours = dnsarena::test::ask_resolver(serve.port, n.name, n.qtype);
    INFO(n.name << " type " << n.qtype << "\nlocal root: " << ours.text() << "root servers: " << reference[i].text());
    CHECK(ours == reference[i]);
  }
  CHECK(root_queries() == roots_before);
  nlohmann::json stats = serve.local_root_stats();
  INFO(stats.dump());
  CHECK(stats.value("transfers", 0) == 1);
  CHECK(stats.value("serial", 0) == 2);
  CHECK(stats.value("last_error", "?").empty());

  // A new serial with a new name on the primary: picked up at the next refresh.
  write_all(h.zone_file(2, "."), root_zone(3) + "changed. 86400 TXT \"serial 3\"\n");
  h.reload_zone(2, ".");
  REQUIRE(serve.logged("workers replaced with the copy of serial 3"));
  const AnswerSet changed = dnsarena::test::ask_resolver(serve.port, "changed.", 16);
  INFO(changed.text());
  CHECK(changed.rcode == 0);
  CHECK(changed.records.size() == 1);
  CHECK(root_queries() == roots_before);

  // A primary whose "." has a newer serial and no NS set: refused, the copy stays.
  std::string no_ns;
  std::istringstream lines(root_zone(10));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(". 86400 NS", 0) != 0) no_ns += line + "\n";
  write_all(h.zone_file(3, "."), no_ns);
  h.reload_zone(3, ".");
  serve.write(h, keys(h.address(3)));
  REQUIRE(::kill(serve.serve->pid(), SIGHUP) == 0);
  CHECK(dnsarena::test::eventually([&] {
    stats = serve.local_root_stats();
    return stats.value("last_error", "").find("no NS record") != std::string::npos;
  }));
  CHECK(stats.value("serial", 0) == 3);
  CHECK(dnsarena::workers::LocalRoot::load(copy)->serial() == 3);
  CHECK(dnsarena::test::ask_resolver(serve.port, "nosuchtld.", 1).rcode == 3);

  // A primary that does not answer: the copy stays, the error shows.
  const std::uint64_t failures = stats.value("failures", std::uint64_t{0});
  const std::string nobody = h.address(2) + "@" + std::to_string(dnsarena::test::free_port());
  serve.write(h, keys(nobody));
  REQUIRE(::kill(serve.serve->pid(), SIGHUP) == 0);
  CHECK(dnsarena::test::eventually([&] {
    stats = serve.local_root_stats();
    return stats.value("failures", std::uint64_t{0}) > failures && stats.value("last_error", "").find(nobody) != std::string::npos;
  }));
  CHECK(dnsarena::test::ask_resolver(serve.port, "nosuchtld2.", 1).rcode == 3);
  CHECK(dnsarena::test::ask_resolver(serve.port, "changed.", 16) == changed);
  CHECK(root_queries() == roots_before);
  CHECK(dnsarena::test::occurrences(dnsarena::test::run_command(std::string(DNSARENA_BINARY) + " stats --segment " +
                                                                serve.segment + " --interval 0"),
                                    "last attempt failed: " + nobody) == 1);

  // The copy is used for its SOA expire (4 s here) from its last refresh: while the
  // primary confirms the serial, the file's time moves and the workers get the copy
  // again once half of that has passed (about 3 s after it was installed: the copy's
  // time is the file's, in whole seconds).
  write_all(h.zone_file(2, "."), root_zone(4) + "changed. 86400 TXT \"serial 3\"\n");
  std::string text = read_all(h.zone_file(2, "."));
  text.replace(text.find(" 4 1 1 86400 300"), 16, " 4 1 1 4 300");
  write_all(h.zone_file(2, "."), text);
  h.reload_zone(2, ".");
  serve.write(h, keys(h.address(2)));
  REQUIRE(::kill(serve.serve->pid(), SIGHUP) == 0);
  // Installed, then installed again with the same serial.
  REQUIRE(serve.logged("workers replaced with the copy of serial 4", 2));
  CHECK(dnsarena::test::ask_resolver(serve.port, "nosuchtld3.", 1).rcode == 3);
  CHECK(dnsarena::test::occurrences(serve.serve->log(), "expired at Unix time") == 0);
  CHECK(root_queries() == roots_before);
}
