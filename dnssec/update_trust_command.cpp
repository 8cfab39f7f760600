// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena dnssec update-trust`: one RFC 5011 probe of a trust point (autotrust.hpp),
// the file written back atomically when it changed, as Unbound's unbound-anchor and its
// auto-trust-anchor-file do. Run it from a timer (systemd, cron) at the file's
// next_probe_time or more often: an early run probes anyway (--if-due skips it).
#include <netinet/in.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "common/ip_address.hpp"
#include "dns/blocking_exchange.hpp"
#include "dns/query_builder.hpp"
#include "dnssec/autotrust.hpp"
#include "dnssec/commands.hpp"
#include "dnssec/trust_anchors.hpp"

namespace dnsarena::dnssec {

namespace {

struct UpdateTrustOptions {
  std::string file;
  std::string server = "127.0.0.1:53";
  unsigned timeout_ms = 2000;
  bool if_due = false;
  bool dry_run = false;
  bool json = false;
};

// "ADDR:PORT", "[V6]:PORT" or "ADDR" (port 53).
socklen_t server_address(const std::string& text, sockaddr_storage& ss) {
  std::string host = text;
  unsigned long port = 53;
  if (!text.empty() && text[0] == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string::npos) return 0;
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return 0;
      port = std::stoul(text.substr(close + 2));
    }
  } else if (const std::size_t colon = text.rfind(':'); colon != std::string::npos && text.find(':') == colon) {
    host = text.substr(0, colon);
    port = std::stoul(text.substr(colon + 1));
  }
  if (port == 0 || port > 65535) return 0;
  return common::ip_socket_address(host, static_cast<std::uint16_t>(port), ss);
}

int run_update_trust(const UpdateTrustOptions& o) {
  TrustPoint tp;
  try {
    tp = read_trust_point(o.file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dnsarena dnssec update-trust: %s\n", e.what());
    return 1;
  }
  sockaddr_storage ss{};
  socklen_t len = 0;
  try {
    len = server_address(o.server, ss);
  } catch (const std::exception&) {
    len = 0;
  }
  if (len == 0) {
    std::fprintf(stderr, "dnsarena dnssec update-trust: --server '%s': expected ADDR, ADDR:PORT or [V6]:PORT\n",
                 o.server.c_str());
    return 1;
  }
  const auto now = static_cast<std::uint32_t>(std::time(nullptr));
  if (o.if_due && tp.next_probe && static_cast<std::int32_t>(tp.next_probe - now) > 0) {
    std::printf("%s: next probe due at %u, in %u s: nothing done\n", o.file.c_str(), tp.next_probe,
                tp.next_probe - now);
    return 0;
  }

  std::random_device rd;
  dns::QuerySpec q;
  q.id = static_cast<std::uint16_t>(rd());
  q.qname = tp.zone;
  q.qtype = kTypeDnskey;
  q.cd = true;
  q.do_bit = true;
  const common::Bytes query = dns::build_query(q);
  const dns::Exchange x = dns::exchange_blocking(ss, len, query, std::chrono::milliseconds(o.timeout_ms));
  ProbeReport report;
  std::string why;
  if (x.reply.empty()) {
    why = o.server + ": " + x.error;
    report = observe_failure(tp, now, "no reply");
  } else {
    Response r;
    std::string error;
    if (!parse_response(x.reply, r, error)) {
      why = o.server + ": the reply does not parse: " + error;
      report = observe_failure(tp, now, "malformed reply");
    } else {
      report = observe(tp, r, now, Limits{});
      if (!report.accepted) why = std::string("the DNSKEY set does not verify with a trusted key: ") +
                                  std::string(report.outcome.why);
    }
  }
  if (!o.dry_run) {
    try {
      write_file_atomically(o.file, format_trust_point(tp));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dnsarena dnssec update-trust: %s\n", e.what());
      return 1;
    }
  }
  if (o.json) {
    nlohmann::json j;
    j["file"] = o.file;
    j["zone"] = name_text(tp.zone);
    j["accepted"] = report.accepted;
    j["error"] = why;
    j["changes"] = report.changes;
    j["next_probe"] = report.next_probe;
    j["query_failed"] = tp.query_failed;
    nlohmann::json keys = nlohmann::json::array();
    for (const AutotrustKey& k : tp.keys) {
      keys.push_back({{"tag", dnskey_tag(k.dnskey)}, {"algorithm", k.dnskey.size() > 3 ? k.dnskey[3] : 0},
                      {"state", std::string(key_state_name(k.state))}, {"last_change", k.last_change}});
    }
    j["keys"] = keys;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s (%s): %s\n", o.file.c_str(), name_text(tp.zone).c_str(),
                report.accepted ? "DNSKEY set verified" : ("probe failed: " + why).c_str());
    for (const std::string& c : report.changes) std::printf("  %s\n", c.c_str());
    for (const AutotrustKey& k : tp.keys) {
      std::printf("  key %5u algorithm %3u %-8s since %u\n", dnskey_tag(k.dnskey), k.dnskey.size() > 3 ? k.dnskey[3] : 0,
                  std::string(key_state_name(k.state)).c_str(), k.last_change);
    }
    std::printf("  next probe in %u s%s\n", report.next_probe - now, o.dry_run ? " (dry run: file not written)" : "");
  }
  return report.accepted ? 0 : 2;
}

}  // namespace

void add_update_trust(CLI::App& group) {
  auto o = std::make_shared<UpdateTrustOptions>();
  CLI::App* cmd = group.add_subcommand(
      "update-trust",
      "One RFC 5011 probe of a trust anchor file: ask SERVER for the zone's DNSKEY set (DO, CD), verify it with "
      "the trusted keys, update each key's state and write the file back atomically (Unbound's autotrust format). "
      "Exit 0: verified; 2: the probe failed (no reply, or no trusted key signed the set; the file records the "
      "failure, no key changes); 1: bad input");
  cmd->add_option("file", o->file, "Trust anchor file (autotrust, DNSKEY or DS records of one zone)")->required();
  cmd->add_option("--server", o->server, "Resolver or authoritative to ask: ADDR, ADDR:PORT or [V6]:PORT")
      ->capture_default_str();
  cmd->add_option("--timeout-ms", o->timeout_ms, "Per UDP attempt (3 attempts), and per TCP step")
      ->capture_default_str()
      ->check(CLI::Range(1u, 60000u));
  cmd->add_flag("--if-due", o->if_due, "Do nothing before the file's next_probe_time");
  cmd->add_flag("--dry-run", o->dry_run, "Print what would change; leave the file as it is");
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] {
    const int rc = run_update_trust(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::dnssec
