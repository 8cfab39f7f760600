// SPDX-License-Identifier: GPL-3.0-or-later
// One refresh of the local root copy (local_root_refresh.hpp).
#include "workers/local_root_refresh.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "dns/blocking_exchange.hpp"
#include "dns/knot_packet.hpp"
#include "dns/message.hpp"
#include "dns/query_builder.hpp"
#include "policy/rule_set.hpp"
#include "policy/zone_scanner.hpp"
#include "wire/constants.hpp"
#include "workers/local_root.hpp"

namespace dnsarena::workers {

namespace {

constexpr std::chrono::milliseconds kRootSoaTimeout{2000};

struct SoaTimers {
  std::uint32_t serial = 0, refresh = 0, retry = 0, expire = 0;
};

// The timers of a SOA's rdata (two names, then five 32-bit fields); nullopt when short.
std::optional<SoaTimers> soa_timers(const std::uint8_t* rd, std::size_t len) {
  if (len < 22) return std::nullopt;
  auto u32 = [&](std::size_t at) {
    return (std::uint32_t{rd[at]} << 24) | (std::uint32_t{rd[at + 1]} << 16) | (std::uint32_t{rd[at + 2]} << 8) | rd[at + 3];
  };
  return SoaTimers{u32(len - 20), u32(len - 16), u32(len - 12), u32(len - 8)};
}

bool serial_newer(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) > 0; }  // RFC 1982

struct FileCopy {
  SoaTimers soa;
  std::int64_t mtime_s = 0;
};

// The file's SOA at "." and its modification time; nullopt when missing or unreadable.
std::optional<FileCopy> read_file_copy(const std::string& file) {
  struct stat st{};
  if (::stat(file.c_str(), &st) != 0) return std::nullopt;
  try {
    policy::ZoneScanner scanner(file, ".");
    scanner.open_file(file);
    for (policy::ScannedRecord r; scanner.next(r);)
      if (r.type == wire::kTypeSoa && r.owner.size() == 1)
        if (auto t = soa_timers(r.rdata.data(), r.rdata.size())) return FileCopy{*t, st.st_mtim.tv_sec};
  } catch (const std::exception& e) {
    spdlog::warn("recursion.local_root_from: {}: its SOA cannot be read ({}): transferring a new copy", file, e.what());
  }
  return std::nullopt;
}

std::int64_t refresh_bounded(std::uint32_t interval_s, const LocalRootRefreshSettings& s) {
  return std::clamp<std::int64_t>(interval_s, s.min_interval_s, LocalRootRefreshSettings::kMaxIntervalS);
}

// The primary's serial of "." (an authoritative NOERROR SOA answer). Throws std::runtime_error.
std::uint32_t ask_serial(const XfrAddress& primary) {
  std::uint16_t id = 0;
  ::arc4random_buf(&id, sizeof id);
  const common::Bytes root(1, 0);
  const common::Bytes query = dns::build_query({.id = id, .qname = root, .qtype = wire::kTypeSoa});
  // One UDP attempt: a primary that does not answer in time is passed for the next one.
  const dns::Exchange x = dns::exchange_blocking(primary.addr, primary.len, query, kRootSoaTimeout, 1);
  if (x.reply.empty()) throw std::runtime_error("SOA query: " + x.error);
  dns::Message m;
  if (dns::parse_message(x.reply, m, true) != dns::ParseStatus::ok || m.id != id || !m.qr)
    throw std::runtime_error("SOA query: the reply does not parse or is not ours");
  if (m.rcode != 0) throw std::runtime_error("SOA query: rcode " + std::to_string(m.rcode));
  if (!m.aa) throw std::runtime_error("SOA query: not authoritative for the root");
  for (const dns::Record& r : m.answer)
    if (r.type == wire::kTypeSoa && r.owner == ".")
      if (auto t = soa_timers(r.rdata.data(), r.rdata.size())) return t->serial;
  throw std::runtime_error("SOA query: no SOA of the root in the answer");
}

// The zone as master-format text, one record a line (libknot's printer).
std::string root_zone_text(const TransferResult& axfr) {
  std::string out = "; the root zone, serial " + std::to_string(axfr.serial) + ", by AXFR (recursion.local_root_from)\n";
  std::size_t size = 1024;  // knot_rrset_txt_dump grows it (realloc) when a record needs more
  char* buf = static_cast<char*>(std::malloc(size));
  if (buf == nullptr) throw std::runtime_error("out of memory");
  for (const ZoneRecord& r : axfr.records) {
    knot_rrset_t rr;
    knot_rrset_init(&rr, const_cast<std::uint8_t*>(r.owner.data()), r.type, KNOT_CLASS_IN, r.ttl);
    int n = knot_rrset_add_rdata(&rr, r.rdata.data(), static_cast<std::uint16_t>(r.rdata.size()), nullptr);
    if (n == KNOT_EOK) n = knot_rrset_txt_dump(&rr, &buf, &size, &KNOT_DUMP_STYLE_DEFAULT);
    knot_rdataset_clear(&rr.rrs, nullptr);
    if (n < 0) {
      std::free(buf);
      throw std::runtime_error(std::string("a record cannot be printed: ") + knot_strerror(n));
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  std::free(buf);
  return out;
}

// Writes `text` to `path` and fsyncs it. Throws std::runtime_error naming the path.
void write_durably(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw std::runtime_error(path + ": " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const std::string why = std::strerror(errno);
  ::close(fd);
  if (!synced) throw std::runtime_error(path + ": fsync: " + why);
}

void sync_directory_of(const std::string& file) {
  const std::size_t slash = file.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

const char* to_string(LocalRootOutcome o) {
  switch (o) {
    case LocalRootOutcome::not_due: return "not due";
    case LocalRootOutcome::unchanged: return "unchanged";
    case LocalRootOutcome::installed: return "installed";
    case LocalRootOutcome::failed: return "failed";
  }
  return "?";
}

LocalRootRefreshReport refresh_local_root(const LocalRootRefreshSettings& s, std::int64_t now_s, bool force) {
  LocalRootRefreshReport rep;
  const std::optional<FileCopy> have = read_file_copy(s.file);
  if (have) {
    rep.has_copy = true;
    rep.serial = have->soa.serial;
    rep.expire_s = have->soa.expire;
    const std::int64_t due = have->mtime_s + refresh_bounded(have->soa.refresh, s);
    if (!force && due > now_s) {
      rep.outcome = LocalRootOutcome::not_due;
      rep.next_unix_s = due;
      return rep;
    }
  }
  const common::Bytes root_name(1, 0);
  const XfrBytes root(root_name.begin(), root_name.end());
  const std::string temp = s.file + ".axfr";
  for (const XfrAddress& primary : s.primaries) {
    try {
      const std::uint32_t serial = ask_serial(primary);
      if (have && !serial_newer(serial, have->soa.serial)) {
        if (::utimensat(AT_FDCWD, s.file.c_str(), nullptr, 0) != 0)
          throw std::runtime_error(s.file + ": cannot set its time: " + std::strerror(errno));
        rep.outcome = LocalRootOutcome::unchanged;
        rep.primary = primary.text;
        rep.next_unix_s = now_s + refresh_bounded(have->soa.refresh, s);
        return rep;
      }
      const TransferResult axfr = transfer_zone(reinterpret_cast<const sockaddr*>(&primary.addr), primary.len, root,
                                                std::nullopt, nullptr, s.limits);
      if (have && !serial_newer(axfr.serial, have->soa.serial))
        throw std::runtime_error("AXFR: serial " + std::to_string(axfr.serial) + " is not newer than the copy's " +
                                 std::to_string(have->soa.serial));
      write_durably(temp, root_zone_text(axfr));
      std::shared_ptr<const LocalRoot> checked;
      try {
        checked = LocalRoot::load(temp, s.zonemd, s.anchors.get());
      } catch (const std::exception& e) {
        ::unlink(temp.c_str());
        throw std::runtime_error(std::string("AXFR: the zone is refused: ") + e.what());
      }
      if (::rename(temp.c_str(), s.file.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(temp.c_str());
        throw std::runtime_error(s.file + ": cannot rename the new copy into place: " + why);
      }
      sync_directory_of(s.file);
      const std::optional<SoaTimers> t = soa_timers(axfr.soa.rdata.data(), axfr.soa.rdata.size());
      rep.outcome = LocalRootOutcome::installed;
      rep.has_copy = true;
      rep.serial = checked->serial();
      rep.expire_s = t ? t->expire : 0;
      rep.records = checked->records();
      rep.primary = primary.text;
      rep.next_unix_s = now_s + refresh_bounded(t ? t->refresh : 0, s);
      return rep;
    } catch (const std::exception& e) {  // TransferError, std::runtime_error: the next primary
      rep.error += (rep.error.empty() ? "" : "; ") + primary.text + ": " + e.what();
    }
  }
  rep.outcome = LocalRootOutcome::failed;
  rep.next_unix_s = now_s + refresh_bounded(have ? have->soa.retry : 0, s);
  return rep;
}

}  // namespace dnsarena::workers
