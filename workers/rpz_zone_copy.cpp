// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/rpz_zone_copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>


#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "policy/rpz_copy_delta.hpp"
#include "policy/rpz_copy_file.hpp"
#include "policy/zone_scanner.hpp"
#include "dns/knot_packet.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::workers {

namespace {

void write_all(int fd, const std::vector<std::uint8_t>& bytes, const std::string& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw std::runtime_error("write " + path + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(w);
  }
}

}  // namespace

std::string RpzZoneCopy::key_of(const ZoneRecord& r) {
  std::string k(reinterpret_cast<const char*>(r.owner.data()), r.owner.size());
  k.push_back(static_cast<char>(r.type >> 8));
  k.push_back(static_cast<char>(r.type));
  k.append(reinterpret_cast<const char*>(r.rdata.data()), r.rdata.size());
  return k;
}

std::uint32_t RpzZoneCopy::serial() const { return has_ ? soa_serial(soa_.rdata) : 0; }

bool RpzZoneCopy::load(const std::string& file, std::string& error) {
  has_ = false;
  has_change_ = dirty_ = false;
  file_checksum_ = 0;
  records_.clear();
  error.clear();
  if (!std::filesystem::exists(file)) return false;
  try {
    if (policy::RpzCopyReader::is_copy(file)) {
      load_copy(file);
      return has_;
    }
    policy::ZoneScanner scanner(file, wire::wire_to_text(origin_));
    scanner.open_file(file);
    policy::ScannedRecord r;
    while (scanner.next(r)) {
      ZoneRecord z{r.owner, r.type, r.ttl, r.rdata};
      if (z.type == KNOT_RRTYPE_SOA && z.owner == origin_) {
        if (z.rdata.size() < 20) scanner.fail(r.line, "a SOA too short");
        soa_ = std::move(z);
        has_ = true;
      } else {
        records_[key_of(z)] = z.ttl;
      }
    }
    if (!has_) error = file + ": no SOA at the apex";
  } catch (const std::exception& e) {
    error = e.what();
    has_ = false;
  }
  if (!has_) records_.clear();
  return has_;
}

void RpzZoneCopy::load_copy(const std::string& file) {
  policy::RpzCopyReader copy(file);
  if (copy.origin() != origin_)
    throw policy::PolicyError(file + ": a copy of the zone " + wire::wire_to_text(copy.origin()) + ", not of " +
                              wire::wire_to_text(origin_));
  records_.reserve(copy.records());
  file_checksum_ = copy.checksum();
  policy::ScannedRecord r;
  while (copy.next(r)) {
    if (r.type == KNOT_RRTYPE_SOA && r.owner == origin_) {
      if (r.rdata.size() < 20) copy.fail(r.line, "a SOA too short");
      soa_ = {r.owner, r.type, r.ttl, r.rdata};
      has_ = true;
    } else {
      records_[key_of({r.owner, r.type, r.ttl, r.rdata})] = r.ttl;
    }
  }
  if (!has_) throw policy::PolicyError(file + ": no SOA at the apex");
}

void RpzZoneCopy::replace(TransferResult& axfr) {
  records_.clear();
  records_.reserve(axfr.records.size());
  for (ZoneRecord& r : axfr.records)
    if (!(r.type == KNOT_RRTYPE_SOA && r.owner == origin_)) records_[key_of(r)] = r.ttl;
  soa_ = axfr.soa;
  has_ = true;
  has_change_ = false;
  dirty_ = true;
}

void RpzZoneCopy::apply(const std::vector<IxfrDelta>& deltas, const ZoneRecord& soa) {
  // What was changed, to be undone when a later step fails: the key and its TTL before
  // (absent: 0 with `had` false).
  struct Undo {
    std::string key;
    bool had;
    std::uint32_t ttl;
  };
  std::vector<Undo> undo;
  auto roll_back = [&] {
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      if (it->had) records_[it->key] = it->ttl;
      else records_.erase(it->key);
    }
  };
  if (!has_ || deltas.empty() || deltas.front().from != serial())
    throw TransferError("the IXFR does not start at the copy's serial");
  for (const IxfrDelta& d : deltas) {
    for (const ZoneRecord& r : d.removed) {
      std::string k = key_of(r);
      const auto it = records_.find(k);
      if (it == records_.end()) {
        roll_back();
        throw TransferError("the IXFR to serial " + std::to_string(d.to) + " removes a record the copy lacks (" +
                            wire::wire_to_text(r.owner) + " type " + std::to_string(r.type) + ")");
      }
      undo.push_back({std::move(k), true, it->second});
      records_.erase(it);
    }
    for (const ZoneRecord& r : d.added) {
      std::string k = key_of(r);
      const auto it = records_.find(k);
      undo.push_back({k, it != records_.end(), it != records_.end() ? it->second : 0});
      records_[std::move(k)] = r.ttl;
    }
  }
  soa_ = soa;
  // The net change, each key against its state before the first step that touched it:
  // the file's state, unless an earlier change was not written.
  has_change_ = file_checksum_ != 0 && !dirty_;
  dirty_ = true;
  removed_.clear();
  added_.clear();
  std::unordered_map<std::string_view, const Undo*> first;
  for (const Undo& u : undo) first.emplace(u.key, &u);
  for (const auto& [key, before] : first) {
    const auto now = records_.find(std::string(key));
    const bool has_now = now != records_.end();
    if (before->had && has_now && now->second == before->ttl) continue;
    if (before->had) removed_.emplace_back(key);
    if (has_now) added_.emplace_back(key);
  }
}

void RpzZoneCopy::write(const std::string& file) {
  policy::RpzCopyWriter out(origin_, size());
  out.add(soa_.owner.data(), soa_.owner.size(), KNOT_RRTYPE_SOA, soa_.ttl, soa_.rdata.data(), soa_.rdata.size());
  for (const auto& [key, ttl] : records_) {
    const KeyParts p = parts_of(key);
    out.add(p.owner, p.owner_len, p.type, ttl, p.rdata, p.rdata_len);
  }
  const std::vector<std::uint8_t> bytes = out.finish();
  replace_file(file, bytes, true);
  file_checksum_ = out.checksum();
  has_change_ = dirty_ = false;
}

void RpzZoneCopy::write_delta(const std::string& file) const {
  policy::RpzDeltaWriter out(origin_, file_checksum_, soa_.ttl, soa_.rdata);
  for (const std::string& key : removed_) {
    const KeyParts p = parts_of(key);
    out.remove(p.owner, p.owner_len, p.type, p.rdata, p.rdata_len);
  }
  for (const std::string& key : added_) {
    const KeyParts p = parts_of(key);
    out.add(p.owner, p.owner_len, p.type, records_.at(key), p.rdata, p.rdata_len);
  }
  // Not fsynced (the 10 to 60 ms of a loaded host's fsync are on the way to the new
  // policy): after a crash of the host the delta may be the one before, or cut, or
  // empty; each is stale or refused by its checksums, and the copy alone is the zone.
  replace_file(policy::rpz_delta_path(file), out.finish(), false);
}

RpzZoneCopy::KeyParts RpzZoneCopy::parts_of(const std::string& key) {
  const auto* k = reinterpret_cast<const std::uint8_t*>(key.data());
  const std::size_t owner_len = knot_dname_size(k);
  return {k, owner_len, static_cast<std::uint16_t>(k[owner_len] << 8 | k[owner_len + 1]), k + owner_len + 2,
          key.size() - owner_len - 2};
}

// `bytes` as `file`, by a temporary in its directory renamed over it: a crash of the
// process leaves the old file or the new one, never half of one; `durable`: the temporary
// and the rename fsynced, so a crash of the host does too.
void RpzZoneCopy::replace_file(const std::string& file, const std::vector<std::uint8_t>& bytes, bool durable) {
  const std::string temp = file + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) throw std::runtime_error("cannot write " + temp + ": " + std::strerror(errno));
  try {
    write_all(fd, bytes, temp);
    if (durable && ::fsync(fd) != 0) throw std::runtime_error("fsync " + temp + ": " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot rename " + temp + " to " + file + ": " + std::strerror(e));
  }
  if (!durable) return;
  // The rename itself durable: fsync the directory.
  const std::string dir = std::filesystem::path(file).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace dnsarena::workers
