// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/upstream_snapshot.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

namespace {
std::uint64_t unix_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}
}  // namespace

std::string upstream_snapshot_path(const std::string& segment) { return "/dev/shm/." + segment + ".upstreams.json"; }

nlohmann::json upstream_health_json(const UpstreamHealth& health, std::uint64_t now_us) {
  nlohmann::json rows = nlohmann::json::array();
  for (unsigned i = 0; i < health.size(); ++i) {
    const UpstreamHealth::Snapshot s = health.snapshot(i, now_us);
    nlohmann::json r{{"upstream", s.endpoint},
                     {"state", s.down ? "down" : "up"},
                     {"srtt_ms", s.sampled ? nlohmann::json(s.srtt_ms) : nlohmann::json()},
                     {"rttvar_ms", s.sampled ? nlohmann::json(s.rttvar_ms) : nlohmann::json()},
                     {"rto_ms", s.rto_ms},
                     {"queries", s.queries},
                     {"timeouts", s.timeouts},
                     {"refusals", s.refusals},
                     {"probes", s.probes},
                     {"downs", s.downs},
                     {"consecutive_failures", s.consecutive}};
    if (s.down) {
      r["down_for_s"] = s.down_for_s;
      r["next_probe_in_ms"] = s.next_probe_in_ms;
      r["backoff_ms"] = s.backoff_ms;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

bool write_upstream_snapshot(const std::string& segment, const UpstreamHealth& health) {
  const nlohmann::json j{{"supervisor_pid", ::getpid()},
                         {"written_unix_ms", unix_ms()},
                         {"upstreams", upstream_health_json(health, monotonic_us())}};
  const std::string text = j.dump() + "\n";
  const std::string path = upstream_snapshot_path(segment);
  const std::string temp = path + "." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int e = errno;
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = ok ? errno : e;
    ::unlink(temp.c_str());
    errno = err;
    return false;
  }
  return true;
}

void remove_upstream_snapshot(const std::string& segment) { ::unlink(upstream_snapshot_path(segment).c_str()); }

std::optional<nlohmann::json> read_upstream_snapshot(const std::string& segment) {
  std::ifstream f(upstream_snapshot_path(segment));
  if (!f) return std::nullopt;
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("upstreams")) return std::nullopt;
  const std::uint64_t written = j.value("written_unix_ms", std::uint64_t{0});
  const std::uint64_t now = unix_ms();
  j["age_s"] = now > written ? static_cast<double>(now - written) / 1000.0 : 0.0;
  const long pid = j.value("supervisor_pid", 0L);
  j["supervisor_running"] = pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
  return j;
}

}  // namespace dnsarena::workers
