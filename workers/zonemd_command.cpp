// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena zonemd FILE [--origin NAME] [--json]`: checks a zone file's ZONEMD (RFC 8976,
// dnssec/zone_digest.hpp) as recursion.local_root does at load, and says what it cost:
// the zone read (libzscanner, canonical form) and the digest (sort, hash) each in CPU
// seconds of this process (CLOCK_PROCESS_CPUTIME_ID). Exit code 0: a ZONEMD verified;
// 2: nothing to verify (no ZONEMD, or only unknown algorithms); 1: it does not verify,
// or the file does not read.
#include <time.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "dnssec/rrset.hpp"
#include "dnssec/zone_digest.hpp"
#include "policy/rule_set.hpp"
#include "policy/zone_scanner.hpp"
#include "workers/commands.hpp"

namespace dnsarena::workers {

namespace {

double cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

int run_zonemd(const std::string& path, const std::string& origin, bool json) {
  const common::Bytes apex = dnssec::name_from_text(origin);
  dnssec::ZoneDigest zone(apex);
  const double start = cpu_seconds();
  try {
    policy::ZoneScanner scanner(path, origin);
    scanner.open_file(path);
    for (policy::ScannedRecord r; scanner.next(r);) zone.add(r.owner, r.type, 1, r.ttl, r.rdata);
  } catch (const policy::PolicyError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  const std::optional<std::uint32_t> serial = zone.soa_serial();
  if (!serial) {
    std::fprintf(stderr, "%s: no SOA record at the apex %s\n", path.c_str(), origin.c_str());
    return 1;
  }
  const double read = cpu_seconds();
  const dnssec::ZonemdVerdict v = zone.verify(*serial);
  const double digest = cpu_seconds() - read;
  if (json) {
    const nlohmann::json j = {{"file", path},          {"origin", origin},
                              {"serial", *serial},     {"records", zone.records()},
                              {"status", dnssec::zonemd_status_name(v.status)},
                              {"detail", v.detail},    {"read_cpu_s", read - start},
                              {"digest_cpu_s", digest}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: zone %s, serial %u, %zu records digested\n", path.c_str(), origin.c_str(), *serial, zone.records());
    std::printf("ZONEMD %s%s%s\n", dnssec::zonemd_status_name(v.status), v.detail.empty() ? "" : ": ", v.detail.c_str());
    std::printf("CPU: read %.1f ms, digest %.1f ms\n", (read - start) * 1e3, digest * 1e3);
  }
  switch (v.status) {
    case dnssec::ZonemdStatus::verified: return 0;
    case dnssec::ZonemdStatus::failed: return 1;
    default: return 2;
  }
}

}  // namespace

void add_zonemd_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("zonemd", "Verify a zone file's ZONEMD (RFC 8976) as recursion.local_root does, and "
                                           "time it (exit 0 verified, 2 nothing to verify, 1 mismatch or error)");
  auto file = std::make_shared<std::string>();
  auto origin = std::make_shared<std::string>(".");
  auto json = std::make_shared<bool>(false);
  cmd->add_option("FILE", *file, "zone file in master format")->required();
  cmd->add_option("--origin", *origin, "the zone's apex (default: the root, \".\")");
  cmd->add_flag("--json", *json, "print one JSON object");
  cmd->callback([file, origin, json] {
    int rc = 1;
    try {
      rc = run_zonemd(*file, *origin, *json);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "--origin %s: %s\n", origin->c_str(), e.what());
    }
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::workers
