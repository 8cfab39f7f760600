// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena dnssec nta add|remove|list`: negative trust anchors (RFC 7646) at run time,
// in the host's table beside the segment (common/nta_table.hpp) that every worker of the
// serve on that segment reads when a validation starts (workers/runtime_ntas.hpp), as
// `unbound-control insecure_add / insecure_remove / list_insecure` and Knot Resolver's
// trust_anchors.set_insecure() do, but with an expiry (RFC 7646 section 2: an NTA
// should end by itself; at most kMaxLifetime here).
//
// add and remove both flush NAME's subtree from the cache (name_flush.hpp): after add,
// the next query for a name below is validated again (a bogus verdict left no entry, and
// the workers ignore a bogus failure-cache window for a name an NTA now covers:
// upstream_client.cpp); after remove, nothing cached insecure under the NTA outlives it.
// Answers cached insecure under an NTA carry at most its remaining lifetime as TTL, so
// an NTA that expires by itself leaves nothing behind either (validation_jobs.cpp).
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <thread>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/commands.hpp"
#include "admin/name_flush.hpp"
#include "admin/run_reporting.hpp"
#include "cache/cache.hpp"
#include "cache/segment.hpp"
#include "common/add_command.hpp"
#include "common/nta_table.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::admin {

namespace {

constexpr std::uint64_t kMaxLifetime = 7 * 86400;  // RFC 7646 section 2: a week at most

struct NtaRequest {
  std::string name;
  std::string lifetime = "1h";
  std::string segment = "dnsarena";
  bool json = false;
};

std::uint64_t unix_now() { return static_cast<std::uint64_t>(std::time(nullptr)); }

// A lowercase wire name; the root is refused (an NTA there switches validation off).
std::vector<std::uint8_t> nta_name(const std::string& text) {
  std::basic_string<std::uint8_t> wire;
  try {
    wire = wire::name_to_wire(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("not a domain name: '" + text + "' (" + e.what() + ")");
  }
  if (wire.size() < 2)
    throw std::invalid_argument("'" + text + "': the root cannot be a negative trust anchor (it would switch "
                                "validation off for every name); name the broken zone");
  wire::lowercase_copy(wire.data(), wire);
  return {wire.begin(), wire.end()};
}

// "90", "90s", "30m", "2h", "7d", "1w": seconds, 1 .. kMaxLifetime.
std::uint64_t lifetime_seconds(const std::string& text) {
  std::size_t used = 0;
  unsigned long long n = 0;
  try {
    if (text.empty() || text[0] < '0' || text[0] > '9') throw std::invalid_argument("");
    n = std::stoull(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("--lifetime '" + text + "': expected a number with s, m, h, d or w (e.g. 30m, 2h)");
  }
  const std::string unit = text.substr(used);
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "m") scale = 60;
  else if (unit == "h") scale = 3600;
  else if (unit == "d") scale = 86400;
  else if (unit == "w") scale = 7 * 86400;
  else throw std::invalid_argument("--lifetime '" + text + "': unknown unit '" + unit + "' (s, m, h, d or w)");
  if (n == 0) throw std::invalid_argument("--lifetime '" + text + "': must be at least 1 s");
  if (n > kMaxLifetime / scale || n * scale > kMaxLifetime)
    throw std::invalid_argument("--lifetime '" + text + "': at most 7 days (604800 s; RFC 7646 section 2)");
  return n * scale;
}

std::string utc_text(std::uint64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The subtree's cached entries removed; nonzero when some could not be.
int flush_subtree(const std::string& segment, const std::vector<std::uint8_t>& name, const char* command) {
  cache::Segment seg = cache::Segment::attach(segment);
  cache::Cache cache(seg, cache::SlotRole::tool);
  const NameFlush r = flush_name(cache, name, -1, true);
  std::cout << "flushed " << r.removed << " entries (" << wire::wire_to_text({name.data(), name.size()})
            << ", subtree)\n";
  if (r.skipped) {
    std::cerr << "dnsarena dnssec nta " << command << ": the writer lock was unavailable for " << r.skipped
              << " entries, which were not removed (`dnsarena check " << segment << "` says why)\n";
    return 1;
  }
  return 0;
}

int run_add(const NtaRequest& req) {
  const std::vector<std::uint8_t> name = nta_name(req.name);
  const std::uint64_t lifetime = lifetime_seconds(req.lifetime);
  cache::Segment::attach(req.segment);  // a live cache: else nothing would read the anchor
  // Made by a validating serve at start: without one, nothing would read the anchor.
  common::NtaTable table = common::NtaTable::open(req.segment, false);
  const std::uint64_t now = unix_now();
  const common::NtaTable::AddResult r = table.add(name, now + lifetime, now);
  const std::string text = wire::wire_to_text({name.data(), name.size()});
  if (r == common::NtaTable::AddResult::full) {
    std::cerr << "dnsarena dnssec nta add: the table is full (" << common::NtaTable::kCapacity
              << " negative trust anchors): " << text << " not added; remove one first\n";
    return 1;
  }
  std::cout << text << " insecure until " << utc_text(now + lifetime) << " (" << lifetime << " s"
            << (r == common::NtaTable::AddResult::updated ? ", lifetime renewed" : "") << ")\n";
  return flush_subtree(req.segment, name, "add");
}

int run_remove(const NtaRequest& req) {
  const std::vector<std::uint8_t> name = nta_name(req.name);
  common::NtaTable table = common::NtaTable::open(req.segment, false);
  const std::string text = wire::wire_to_text({name.data(), name.size()});
  if (!table.remove(name, unix_now())) {
    std::cerr << "dnsarena dnssec nta remove: " << text << " is no run-time negative trust anchor "
              << "(`dnsarena dnssec nta list` shows them)\n";
    return 1;
  }
  std::cout << text << " removed\n";
  return flush_subtree(req.segment, name, "remove");
}

int run_list(const NtaRequest& req) {
  cache::Segment::attach(req.segment);  // a clear error for a segment that is not there
  const std::uint64_t now = unix_now();
  std::optional<common::NtaTable::Snapshot> snap;
  bool no_table = false;
  try {
    const common::NtaTable table = common::NtaTable::open(req.segment, false);
    for (int i = 0; i < 100 && !snap; ++i) {
      snap = table.read(now);
      if (!snap) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a command's write takes microseconds
    }
    if (!snap) throw std::runtime_error(table.path() + ": being written (or left mid-write by a killed command); "
                                        "`dnsarena dnssec nta add|remove` repairs it");
  } catch (const common::NtaTableError&) {
    if (!std::filesystem::exists(common::NtaTable::path_for(req.segment))) {  // none yet
      snap.emplace();
      no_table = true;
    } else {
      throw;
    }
  }
  if (req.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& e : snap->entries)
      list.push_back({{"name", wire::wire_to_text({e.name.data(), e.name.size()})},
                      {"expires_unix", e.expires},
                      {"expires", utc_text(e.expires)},
                      {"remaining_s", e.expires - now}});
    std::cout << nlohmann::json{{"negative_trust_anchors", list}}.dump(2) << "\n";
    return 0;
  }
  if (snap->entries.empty())
    std::cout << "no run-time negative trust anchors in force on " << req.segment
              << (no_table ? " (no validating serve has run on it)" : "") << "\n";
  for (const auto& e : snap->entries)
    std::cout << wire::wire_to_text({e.name.data(), e.name.size()}) << " until " << utc_text(e.expires) << " ("
              << e.expires - now << " s)\n";
  return 0;
}

}  // namespace

void add_nta_command(CLI::App& dnssec_group) {
  CLI::App* group = dnssec_group.add_subcommand(
      "nta",
      "Negative trust anchors (RFC 7646) at run time: make a zone with broken DNSSEC insecure on every worker of "
      "a live serve, without a reload, for a limited time");
  group->require_subcommand(1);
  {
    auto [cmd, req] = common::add_command<NtaRequest>(
        *group, "add",
        "Treat NAME and every name below it as insecure (no validation, no AD) until the lifetime ends, and flush "
        "their cached entries so the next query is validated again (unbound-control insecure_add). Adding a name "
        "again renews its lifetime. Exit 1: the table is full; 2: bad input or no live segment",
        reporting("dnssec nta add", run_add));
    cmd->add_option("name", req->name, "Zone to make insecure, e.g. broken.example")->required();
    cmd->add_option("--lifetime", req->lifetime,
                    "How long: seconds, or a number with s, m, h, d or w (default 1h, at most 7d)")
        ->capture_default_str();
    cmd->add_option("--segment", req->segment, "segment name (default dnsarena)");
  }
  {
    auto [cmd, req] = common::add_command<NtaRequest>(
        *group, "remove",
        "End a run-time negative trust anchor now and flush NAME's subtree, so nothing cached insecure under it "
        "is served again (unbound-control insecure_remove). Exit 1: NAME is no run-time NTA",
        reporting("dnssec nta remove", run_remove));
    cmd->add_option("name", req->name, "The anchor's name, as added")->required();
    cmd->add_option("--segment", req->segment, "segment name (default dnsarena)");
  }
  {
    auto [cmd, req] = common::add_command<NtaRequest>(
        *group, "list",
        "Print the run-time negative trust anchors in force and when each expires (unbound-control "
        "list_insecure); the config's negative_trust_anchors are in the config",
        reporting("dnssec nta list", run_list));
    cmd->add_flag("--json", req->json, "Machine-readable output");
    cmd->add_option("--segment", req->segment, "segment name (default dnsarena)");
  }
}

}  // namespace dnsarena::admin
