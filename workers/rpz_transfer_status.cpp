// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/rpz_transfer_status.hpp"

#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <sstream>

#include "workers/snapshot_file.hpp"

namespace dnsarena::workers {

std::string rpz_snapshot_path(const std::string& segment) { return snapshot_path(segment, "rpz"); }

bool write_rpz_snapshot(const std::string& segment, const std::vector<RpzZoneStatus>& zones,
                        std::uint64_t notifies_over_rate) {
  nlohmann::json list = nlohmann::json::array();
  for (const RpzZoneStatus& z : zones)
    list.push_back({{"zone", z.zone},
                    {"primary", z.primary},
                    {"has_copy", z.has_copy},
                    {"serial", z.serial},
                    {"records", z.records},
                    {"last_kind", z.last_kind},
                    {"last_transfer_unix_ms", z.last_transfer_unix_ms},
                    {"last_attempt_unix_ms", z.last_attempt_unix_ms},
                    {"last_error", z.last_error},
                    {"transfers_ok", z.transfers_ok},
                    {"transfers_failed", z.transfers_failed},
                    {"fallbacks_to_axfr", z.fallbacks_to_axfr},
                    {"notifies_accepted", z.notifies_accepted},
                    {"notifies_refused", z.notifies_refused}});
  return write_snapshot(rpz_snapshot_path(segment), {{"rpz_zones", list}, {"notifies_over_rate", notifies_over_rate}});
}

void remove_rpz_snapshot(const std::string& segment) { ::unlink(rpz_snapshot_path(segment).c_str()); }

std::optional<nlohmann::json> read_rpz_snapshot(const std::string& segment) {
  return read_snapshot(rpz_snapshot_path(segment), "rpz_zones");
}

namespace {
double ago_s(std::uint64_t unix_ms) {
  const auto now = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  return now > unix_ms ? static_cast<double>(now - unix_ms) / 1000.0 : 0.0;
}
}  // namespace

std::string rpz_status_text(const nlohmann::json& snap) {
  std::ostringstream o;
  o << "RPZ by zone transfer:\n";
  for (const auto& z : snap["rpz_zones"]) {
    o << "  " << z.value("zone", "") << " from " << z.value("primary", "") << ": ";
    if (z.value("has_copy", false)) o << "serial " << z.value("serial", 0u) << ", " << z.value("records", 0u) << " records";
    else o << "no copy yet";
    const std::uint64_t last = z.value("last_transfer_unix_ms", std::uint64_t{0});
    if (last) o << ", last " << z.value("last_kind", "") << " " << ago_s(last) << " s ago";
    o << ", " << z.value("transfers_ok", 0u) << " ok / " << z.value("transfers_failed", 0u) << " failed";
    const std::string err = z.value("last_error", "");
    if (!err.empty()) o << "; last attempt failed: " << err;
    o << "\n";
  }
  return o.str();
}

std::string rpz_prometheus_text(const nlohmann::json& snap) {
  std::ostringstream o;
  auto label = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '\\' || c == '"') out += '\\';
      out += c == '\n' ? ' ' : c;
    }
    return out;
  };
  o << "# TYPE dnsarena_rpz_serial gauge\n# TYPE dnsarena_rpz_records gauge\n"
    << "# TYPE dnsarena_rpz_last_transfer_timestamp_seconds gauge\n# TYPE dnsarena_rpz_last_attempt_failed gauge\n"
    << "# TYPE dnsarena_rpz_transfers_total counter\n";
  for (const auto& z : snap["rpz_zones"]) {
    const std::string zone = label(z.value("zone", ""));
    if (z.value("has_copy", false)) {
      o << "dnsarena_rpz_serial{zone=\"" << zone << "\"} " << z.value("serial", 0u) << "\n";
      o << "dnsarena_rpz_records{zone=\"" << zone << "\"} " << z.value("records", 0u) << "\n";
    }
    if (const std::uint64_t last = z.value("last_transfer_unix_ms", std::uint64_t{0}))
      o << "dnsarena_rpz_last_transfer_timestamp_seconds{zone=\"" << zone << "\",kind=\"" << z.value("last_kind", "")
        << "\"} " << last / 1000 << "." << std::setw(3) << std::setfill('0') << last % 1000 << std::setfill(' ')
        << "\n";
    o << "dnsarena_rpz_last_attempt_failed{zone=\"" << zone << "\"} " << (z.value("last_error", "").empty() ? 0 : 1)
      << "\n";
    o << "dnsarena_rpz_transfers_total{zone=\"" << zone << "\",result=\"ok\"} " << z.value("transfers_ok", 0u) << "\n";
    o << "dnsarena_rpz_transfers_total{zone=\"" << zone << "\",result=\"failed\"} " << z.value("transfers_failed", 0u)
      << "\n";
  }
  return o.str();
}

}  // namespace dnsarena::workers
