// SPDX-License-Identifier: GPL-3.0-or-later
// The local root's ZONEMD check (workers/local_root_zonemd.hpp) against Knot DNS, which
// nobody here wrote: knotd signs a generated root zone and adds its ZONEMD
// (zonemd-generate: zonemd-sha384); the zone taken by AXFR (kdig) loads with the digest
// verified, and with one glue address changed it is refused (`dnsarena zonemd` says the
// same, by its exit code). The other way: the copy
// our verifier accepts is loaded by a knotd with zonemd-verify: on, and the changed one
// is refused by it (its log says which). Signed: the ZONEMD RRSIG validates from the
// copy's KSK as trust anchor, a changed one is refused though the digest matches. Then
// `dnsarena serve`: a tampered copy stops the start (stderr, exit code), a reload to one
// keeps the running copy.
// Hidden "[perf]": a root-sized zone (1,500 TLDs, ~24,000 records signed) verified,
// CPU time of the read and of the digest (docs/operator-guide.md, Local root).
#include <sys/stat.h>
#include <sys/wait.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "common/child_process.hpp"
#include "common/find_program.hpp"
#include "tests/interop/knot_server.hpp"
#include "tests/workers/serve_harness.hpp"
#include "dnssec/trust_anchors.hpp"
#include "workers/local_root.hpp"
#include "workers/serve_config.hpp"

namespace {

using dnsarena::dnssec::ZonemdStatus;
using dnsarena::interop::KnotOptions;
using dnsarena::interop::KnotServer;
using dnsarena::interop::ZoneFile;
using dnsarena::workers::LocalRoot;
using dnsarena::workers::ZonemdCheck;

// A root zone of `tlds` delegations shaped like the real one: four NS per TLD, named
// below it, each with an A and an AAAA glue record, and a DS set.
std::string root_zone_text(unsigned tlds) {
  std::ostringstream z;
  z << "$ORIGIN .\n"
    << ". 86400 IN SOA a.root-servers.net. nstld.verisign-grs.com. 2026120700 1800 900 604800 86400\n";
  for (char c : std::string("abcd")) {
    z << ". 518400 IN NS " << c << ".root-servers.net.\n"
      << c << ".root-servers.net. 518400 IN A 198.41.0." << int(c - 'a' + 4) << "\n"
      << c << ".root-servers.net. 518400 IN AAAA 2001:503:ba3e::2:" << int(c - 'a' + 30) << "\n";
  }
  for (unsigned t = 0; t < tlds; ++t) {
    const std::string tld = "tld" + std::to_string(t) + ".";
    for (unsigned n = 1; n <= 4; ++n) {
      const std::string ns = "ns" + std::to_string(n) + ".nic." + tld;
      z << tld << " 172800 IN NS " << ns << "\n"
        << ns << " 172800 IN A 10." << (t >> 8) << "." << (t & 255) << "." << n << "\n"
        << ns << " 172800 IN AAAA fd00::" << std::hex << t << ":" << n << std::dec << "\n";
    }
    char digest[65];
    std::snprintf(digest, sizeof digest, "%064x", t * 2654435761u);
    z << tld << " 86400 IN DS " << (t % 65536) << " 13 2 " << digest << "\n";
  }
  return z.str();
}

// knotd signing `text` as the root and adding its ZONEMD, allowing AXFR from loopback.
KnotOptions zonemd_generating() {
  return {.sections = "acl:\n  - id: xfr\n    address: 127.0.0.1\n    action: transfer\n",
          .zone_lines = "    acl: xfr\n    zonemd-generate: zonemd-sha384\n"};
}

// Until knotd's log has `what` (it logs the load's verdict once), or 60 s.
bool wait_log(const KnotServer& k, const std::string& what) {
  for (int i = 0; i < 6000; ++i) {
    if (k.log().find(what) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Until knotd has loaded (signed, digested) the root and listens, as its log says.
bool wait_loaded(const KnotServer& k) {
  return wait_log(k, "[.] loaded, serial") && wait_log(k, "server started");
}

// The root zone by AXFR, as master format (kdig's text; its ";;" lines are comments).
std::string axfr_root(std::uint16_t port) {
  int status = 0;
  const std::string text = dnsarena::common::run_and_capture(
      {dnsarena::common::require_program("kdig", "install knot-dnsutils (.ci/install-deps)"), "@127.0.0.1", "-p",
       std::to_string(port), ".", "AXFR", "+nostats", "+time=5", "+retry=0"},
      status);
  REQUIRE(status == 0);
  return text;
}

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

// The copy with the first glue A record of tld1. pointing elsewhere.
std::string with_changed_glue(std::string text) {
  const std::string from = "10.0.1.1\n", to = "10.0.1.9\n";
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// The copy's lines of `type` (kdig's tab-separated text) whose RDATA starts with `start`.
std::string lines_of(const std::string& text, const std::string& type, const std::string& start) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.find("\t" + type + "\t" + start) != std::string::npos) out += line + "\n";
  return out;
}

// The copy with one character of the signature of the RRSIG over ZONEMD changed.
std::string with_bad_zonemd_signature(std::string text) {
  const std::string line = lines_of(text, "RRSIG", "ZONEMD ");
  REQUIRE(!line.empty());
  std::string bad = line;
  char& c = bad[bad.size() - 20];  // inside the base64 signature
  c = c == 'A' ? 'B' : 'A';
  return text.replace(text.find(line), line.size(), bad);
}

}  // namespace

TEST_CASE("a signed root's ZONEMD RRSIG validates from the trust anchor, and a bad one is refused though the digest "
          "matches",
          "[zonemd][knot][dnssec]") {
  KnotServer knot({ZoneFile{".", root_zone_text(50), true, false}}, zonemd_generating());
  REQUIRE(wait_loaded(knot));
  const std::string copy = axfr_root(knot.port());
  const std::string ksk = lines_of(copy, "DNSKEY", "257 ");
  REQUIRE(!ksk.empty());
  dnsarena::dnssec::TrustAnchors anchors;
  anchors.add_text(ksk, "the copy's KSK");
  const std::string good = write_file(knot.dir() + "/copy.zone", copy);
  const auto root = LocalRoot::load(good, ZonemdCheck::verify, &anchors);
  CHECK(root->zonemd().signature_validated);
  CHECK_THAT(root->zonemd().summary(), Catch::Contains("its RRSIG validated from the trust anchor"));

  // The RRSIG over ZONEMD is not part of the digest: the changed one still matches it,
  // and only the signature check refuses the copy.
  const std::string bad_sig = write_file(knot.dir() + "/bad-signature.zone", with_bad_zonemd_signature(copy));
  CHECK(LocalRoot::load(bad_sig)->zonemd().status == ZonemdStatus::verified);
  CHECK_THROWS_WITH(LocalRoot::load(bad_sig, ZonemdCheck::verify, &anchors),
                    Catch::Contains(bad_sig + ": the ZONEMD matches but does not validate") &&
                        Catch::Contains("the ZONEMD set's RRSIG"));
  // An anchor that is not the copy's key: its DNSKEY set does not validate.
  dnsarena::dnssec::TrustAnchors other;
  other.add_text(". 3600 IN DS 4242 13 2 " + std::string(64, 'a') + "\n", "another anchor");
  CHECK_THROWS_WITH(LocalRoot::load(good, ZonemdCheck::verify, &other),
                    Catch::Contains("the DNSKEY set does not validate from the trust anchor"));
  // off: neither the digest nor the signature.
  CHECK_FALSE(LocalRoot::load(bad_sig, ZonemdCheck::off, &anchors)->zonemd().signature_validated);

  // Through serve's config: the dnssec section's anchor reaches the local root's load.
  const std::string anchor_file = write_file(knot.dir() + "/root.key", ksk);
  const std::string hints = write_file(knot.dir() + "/root.hints", ". 3600000 NS a.root-servers.net.\n"
                                                                   "a.root-servers.net. 3600000 A 127.0.0.1\n");
  auto config = [&](const std::string& zone) {
    return dnsarena::test::write_config("dnssec:\n  trust_anchor_file: " + anchor_file +
                                        "\nrecursion:\n  enabled: true\n  root_hints: " + hints +
                                        "\n  local_root: " + zone + "\n");
  };
  const auto loaded = dnsarena::workers::load_serve_config(config(good));
  REQUIRE(loaded.recursion.local_root_zone);
  CHECK(loaded.recursion.local_root_zone->zonemd().signature_validated);
  CHECK_THROWS_WITH(dnsarena::workers::load_serve_config(config(bad_sig)),
                    Catch::Contains("recursion.local_root") && Catch::Contains("the ZONEMD set's RRSIG"));
}

TEST_CASE("a root zone knotd signs and digests loads verified, and with one glue address changed is refused",
          "[zonemd][knot]") {
  KnotServer knot({ZoneFile{".", root_zone_text(300), true, false}}, zonemd_generating());
  REQUIRE(wait_loaded(knot));
  const std::string copy = axfr_root(knot.port());
  REQUIRE(copy.find("ZONEMD") != std::string::npos);
  const std::string good = write_file(knot.dir() + "/copy.zone", copy);
  const auto root = LocalRoot::load(good, ZonemdCheck::require);
  CHECK(root->zonemd().status == ZonemdStatus::verified);
  CHECK_THAT(root->zonemd().summary(), Catch::Contains("ZONEMD verified (SHA-384 digest"));

  const std::string bad = write_file(knot.dir() + "/tampered.zone", with_changed_glue(copy));
  CHECK_THROWS_WITH(LocalRoot::load(bad), Catch::Contains(bad + ": ZONEMD does not verify") &&
                                              Catch::Contains("the zone's SHA-384 digest is"));

  // `dnsarena zonemd`: exit 0 verified, 1 mismatch, 2 nothing to verify.
  auto zonemd_command = [](const std::string& path, int& code) {
    int status = 0;
    const std::string out = dnsarena::common::run_and_capture({dnsarena::test::dnsarena_binary(), "zonemd", path}, status);
    code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
  };
  int code = -1;
  CHECK_THAT(zonemd_command(good, code), Catch::Contains("ZONEMD verified: SHA-384 digest"));
  CHECK(code == 0);
  CHECK_THAT(zonemd_command(bad, code), Catch::Contains("ZONEMD failed: ZONEMD 1 1: the zone's SHA-384 digest is"));
  CHECK(code == 1);
  const std::string plain = write_file(knot.dir() + "/plain.zone", root_zone_text(3));
  CHECK_THAT(zonemd_command(plain, code), Catch::Contains("ZONEMD absent"));
  CHECK(code == 2);

  // The other way: knotd with zonemd-verify loads the copy our verifier accepted, and
  // refuses the changed one.
  const KnotOptions verifying{.zone_lines = "    zonemd-verify: on\n"};
  KnotServer checks_good({ZoneFile{".", copy, false, false}}, verifying);
  CHECK(wait_log(checks_good, "ZONEMD, verification successful"));
  KnotServer checks_bad({ZoneFile{".", with_changed_glue(copy), false, false}}, verifying);
  CHECK(wait_log(checks_bad, "ZONEMD, verification failed"));
  CHECK(checks_bad.log().find("verification successful") == std::string::npos);
}

TEST_CASE("serve: a tampered local root stops the start, and a reload to one keeps the running copy", "[zonemd][serve]") {
  KnotServer knot({ZoneFile{".", root_zone_text(20), true, false}}, zonemd_generating());
  REQUIRE(wait_loaded(knot));
  const std::string copy_text = axfr_root(knot.port());
  const std::string copy = write_file(knot.dir() + "/local-root.zone", copy_text);
  const std::string hints = write_file(knot.dir() + "/root.hints", ". 3600000 NS a.root-servers.net.\n"
                                                                   "a.root-servers.net. 3600000 A 127.0.0.1\n");
  const std::string config = dnsarena::test::write_config("recursion:\n  enabled: true\n  root_hints: " + hints +
                                                          "\n  local_root: " + copy + "\n");
  {
    const std::uint16_t port = dnsarena::test::free_port();
    dnsarena::test::ServeProcess serve({"-c", config, "--segment", dnsarena::test::unique_segment("zonemd-reload"),
                                        "--listen", "127.0.0.1:" + std::to_string(port), "--no-metrics"},
                                       port);
    REQUIRE(serve.wait_ready());
    CHECK(dnsarena::test::occurrences(serve.log(), "ZONEMD verified (SHA-384 digest") == 1);
    write_file(copy, with_changed_glue(copy_text));
    REQUIRE(::kill(serve.pid(), SIGHUP) == 0);
    REQUIRE(dnsarena::test::eventually(
        [&] { return dnsarena::test::occurrences(serve.log(), "keeping the running config") > 0; }));
    CHECK(dnsarena::test::occurrences(serve.log(), "keeping the running config") == 1);
    CHECK(dnsarena::test::occurrences(serve.log(), "ZONEMD does not verify") == 1);
    CHECK(serve.wait_ready(std::chrono::seconds(2)));  // still serving
    CHECK(serve.stop() == 0);
  }
  // The tampered file at start: a configuration error naming the key, the file and why.
  const std::uint16_t port = dnsarena::test::free_port();
  dnsarena::test::ServeProcess bad({"-c", config, "--segment", dnsarena::test::unique_segment("zonemd-bad"), "--listen",
                                    "127.0.0.1:" + std::to_string(port), "--no-metrics"},
                                   port);
  REQUIRE(bad.wait_exit(std::chrono::seconds(10)));
  CHECK(bad.stop() != 0);
  CHECK(dnsarena::test::occurrences(bad.log(), "recursion.local_root") >= 1);
  CHECK(dnsarena::test::occurrences(bad.log(), copy + ": ZONEMD does not verify") == 1);
}

TEST_CASE("ZONEMD of a root-sized zone: CPU time to read and to verify", "[.][perf][zonemd]") {
  KnotServer knot({ZoneFile{".", root_zone_text(1500), true, false}}, zonemd_generating());
  REQUIRE(wait_loaded(knot));
  const std::string path = write_file(knot.dir() + "/root.zone", axfr_root(knot.port()));
  // `dnsarena zonemd` prints the CPU time of the read and of the digest.
  int status = 0;
  const std::string out = dnsarena::common::run_and_capture({dnsarena::test::dnsarena_binary(), "zonemd", path}, status);
  WARN(out);
  CHECK(status == 0);
  // What verification adds to a load of the local root: CPU time of load() with and
  // without it, the best of three each (the file is in the page cache after the first).
  auto load_cpu_ms = [&](ZonemdCheck check) {
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      timespec a{}, b{};
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
      CHECK(LocalRoot::load(path, check)->records() > 24000);
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
      best = std::min(best, (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
    }
    return best;
  };
  const double off = load_cpu_ms(ZonemdCheck::off), verify = load_cpu_ms(ZonemdCheck::verify);
  WARN("LocalRoot::load CPU: " << off << " ms without ZONEMD, " << verify << " ms with (+" << verify - off << " ms)");
}
