// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/local_root_status.hpp"

#include <unistd.h>

#include <chrono>
#include <sstream>
#include <stdexcept>

#include "workers/snapshot_file.hpp"

namespace dnsarena::workers {

namespace {
std::string local_root_snapshot_file(const std::string& segment) { return snapshot_path(segment, "local_root"); }

std::uint64_t status_wall_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}
}  // namespace

void LocalRootStatus::record(const LocalRootRefreshReport& r, std::uint64_t now_unix_ms) {
  last_outcome = to_string(r.outcome);
  last_attempt_unix_ms = now_unix_ms;
  has_copy = r.has_copy;
  serial = r.serial;
  next_refresh_unix_ms = static_cast<std::uint64_t>(r.next_unix_s) * 1000;
  switch (r.outcome) {
    case LocalRootOutcome::not_due:
      break;
    case LocalRootOutcome::installed:
      ++transfers;
      records = r.records;
      last_transfer_unix_ms = now_unix_ms;
      [[fallthrough]];
    case LocalRootOutcome::unchanged:
      if (r.outcome == LocalRootOutcome::unchanged) ++unchanged;
      last_success_unix_ms = now_unix_ms;
      last_primary = r.primary;
      last_error.clear();
      break;
    case LocalRootOutcome::failed:
      ++failures;
      last_error = r.error;
      break;
  }
}

nlohmann::json report_json(const LocalRootRefreshReport& r) {
  return {{"outcome", static_cast<int>(r.outcome)}, {"has_copy", r.has_copy}, {"serial", r.serial},
          {"expire_s", r.expire_s},                 {"records", r.records},   {"primary", r.primary},
          {"error", r.error},                       {"next_unix_s", r.next_unix_s}};
}

LocalRootRefreshReport report_from_json(const nlohmann::json& j) {
  LocalRootRefreshReport r;
  const int outcome = j.at("outcome").get<int>();
  if (outcome < 0 || outcome > static_cast<int>(LocalRootOutcome::failed))
    throw std::runtime_error("outcome " + std::to_string(outcome) + " out of range");
  r.outcome = static_cast<LocalRootOutcome>(outcome);
  r.has_copy = j.at("has_copy").get<bool>();
  r.serial = j.at("serial").get<std::uint32_t>();
  r.expire_s = j.at("expire_s").get<std::uint32_t>();
  r.records = j.at("records").get<std::uint64_t>();
  r.primary = j.at("primary").get<std::string>();
  r.error = j.at("error").get<std::string>();
  r.next_unix_s = j.at("next_unix_s").get<std::int64_t>();
  return r;
}

bool write_local_root_snapshot(const std::string& segment, const LocalRootStatus& s) {
  return write_snapshot(local_root_snapshot_file(segment),
                        {{"local_root",
                          {{"file", s.file},
                           {"primaries", s.primaries},
                           {"has_copy", s.has_copy},
                           {"serial", s.serial},
                           {"records", s.records},
                           {"last_outcome", s.last_outcome},
                           {"last_primary", s.last_primary},
                           {"last_attempt_unix_ms", s.last_attempt_unix_ms},
                           {"last_success_unix_ms", s.last_success_unix_ms},
                           {"last_transfer_unix_ms", s.last_transfer_unix_ms},
                           {"last_error", s.last_error},
                           {"transfers", s.transfers},
                           {"unchanged", s.unchanged},
                           {"failures", s.failures},
                           {"next_refresh_unix_ms", s.next_refresh_unix_ms}}}});
}

void remove_local_root_snapshot(const std::string& segment) { ::unlink(local_root_snapshot_file(segment).c_str()); }

std::optional<nlohmann::json> read_local_root_snapshot(const std::string& segment) {
  return read_snapshot(local_root_snapshot_file(segment), "local_root");
}

std::string local_root_status_text(const nlohmann::json& snap) {
  const nlohmann::json& z = snap["local_root"];
  const std::uint64_t now = status_wall_ms();
  auto ago = [&](std::uint64_t ms) { return std::to_string(now > ms ? (now - ms) / 1000 : 0) + " s ago"; };
  std::ostringstream o;
  o << "local root " << z.value("file", "") << " by transfer: ";
  if (z.value("has_copy", false)) o << "serial " << z.value("serial", 0u);
  else o << "no copy yet";
  if (const std::uint64_t ok = z.value("last_success_unix_ms", std::uint64_t{0})) o << ", last refreshed " << ago(ok);
  o << ", " << z.value("transfers", 0u) << " transfers / " << z.value("unchanged", 0u) << " unchanged / "
    << z.value("failures", 0u) << " failed";
  const std::uint64_t next = z.value("next_refresh_unix_ms", std::uint64_t{0});
  if (next > now) o << ", next in " << (next - now) / 1000 << " s";
  o << "\n";
  if (const std::string err = z.value("last_error", ""); !err.empty()) o << "  last attempt failed: " << err << "\n";
  return o.str();
}

}  // namespace dnsarena::workers
