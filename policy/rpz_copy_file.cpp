// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/rpz_copy_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "wire/dns_name.hpp"

namespace dnsarena::policy {

namespace {

// [RPZ-COPY-FORMAT] header offsets.
constexpr std::size_t kOffVersion = 8, kOffHeaderBytes = 12, kOffRecords = 16, kOffBodyBytes = 24,
                      kOffChecksum = 32, kOffOriginBytes = 40;
static_assert(kOffOriginBytes + 8 == kRpzCopyHeaderBytes, "the header's fields end where the body starts");
constexpr std::size_t kRecordFixedBytes = 1 + 2 + 4 + 2;  // owner length, type, TTL, rdata length

// True when `n` bytes at `p` are exactly one wire name (labels of 1..63 bytes, then root).
bool wire_name(const std::uint8_t* p, std::size_t n) {
  std::size_t pos = 0;
  while (pos < n && p[pos] != 0) {
    if (p[pos] > 63) return false;
    pos += p[pos] + 1u;
  }
  return pos + 1 == n;
}

}  // namespace

std::uint64_t rpz_copy_checksum(const std::uint8_t* p, std::size_t n) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  std::uint64_t h = 0x243F6A8885A308D3ull ^ n;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) h = std::rotl((h ^ rpz_get_le<std::uint64_t>(p + i)) * kMul, 29);
  std::uint64_t tail = 0;
  for (std::size_t k = 0; i + k < n; ++k) tail |= std::uint64_t{p[i + k]} << (8 * k);
  h = std::rotl((h ^ tail) * kMul, 29);
  h ^= h >> 32;
  return h * kMul;
}

RpzCopyWriter::RpzCopyWriter(const WireName& origin, std::size_t records_hint) {
  bytes_.reserve(kRpzCopyHeaderBytes + origin.size() + records_hint * 40);
  bytes_.resize(kRpzCopyHeaderBytes);
  bytes_.insert(bytes_.end(), origin.begin(), origin.end());
  rpz_put_le<std::uint32_t>(bytes_.data() + kOffOriginBytes, static_cast<std::uint32_t>(origin.size()));
}

void RpzCopyWriter::add(const std::uint8_t* owner, std::size_t owner_len, std::uint16_t type, std::uint32_t ttl,
                        const std::uint8_t* rdata, std::size_t rdata_len) {
  if (owner_len == 0 || owner_len > 255) throw PolicyError("rpz copy: an owner of " + std::to_string(owner_len) + " bytes");
  if (rdata_len > 0xFFFF) throw PolicyError("rpz copy: an rdata of " + std::to_string(rdata_len) + " bytes");
  const std::size_t at = bytes_.size();
  bytes_.resize(at + kRecordFixedBytes + owner_len + rdata_len);
  std::uint8_t* p = bytes_.data() + at;
  *p++ = static_cast<std::uint8_t>(owner_len);
  std::memcpy(p, owner, owner_len);
  p += owner_len;
  rpz_put_le<std::uint16_t>(p, type);
  rpz_put_le<std::uint32_t>(p + 2, ttl);
  rpz_put_le<std::uint16_t>(p + 6, static_cast<std::uint16_t>(rdata_len));
  if (rdata_len) std::memcpy(p + 8, rdata, rdata_len);
  ++records_;
}

std::vector<std::uint8_t> RpzCopyWriter::finish() {
  std::uint8_t* h = bytes_.data();
  std::memcpy(h, kRpzCopyMagic.data(), kRpzCopyMagic.size());
  rpz_put_le<std::uint32_t>(h + kOffVersion, kRpzCopyVersion);
  rpz_put_le<std::uint32_t>(h + kOffHeaderBytes, static_cast<std::uint32_t>(kRpzCopyHeaderBytes));
  rpz_put_le<std::uint64_t>(h + kOffRecords, records_);
  const std::size_t body = bytes_.size() - kRpzCopyHeaderBytes;
  rpz_put_le<std::uint64_t>(h + kOffBodyBytes, body);
  checksum_ = rpz_copy_checksum(h + kRpzCopyHeaderBytes, body);
  rpz_put_le<std::uint64_t>(h + kOffChecksum, checksum_);
  return std::move(bytes_);
}

bool RpzCopyReader::is_copy(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char magic[8];
  const ssize_t n = ::pread(fd, magic, sizeof magic, 0);
  ::close(fd);
  return n == static_cast<ssize_t>(sizeof magic) && std::string_view(magic, sizeof magic) == kRpzCopyMagic;
}

std::vector<std::uint8_t> read_rpz_bytes(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw PolicyError(path + ": cannot read: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw PolicyError(path + ": not a regular file");
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t r = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int e = errno;
      ::close(fd);
      throw PolicyError(path + ": cannot read: " + (r < 0 ? std::strerror(e) : "the file shrank while read"));
    }
    done += static_cast<std::size_t>(r);
  }
  ::close(fd);
  return bytes;
}

RpzCopyReader::RpzCopyReader(const std::string& path) : RpzCopyReader(read_rpz_bytes(path), path) {}

RpzCopyReader::RpzCopyReader(std::vector<std::uint8_t> bytes, std::string source)
    : bytes_(std::move(bytes)), source_(std::move(source)) {
  check();
}

void RpzCopyReader::check() {
  const std::uint8_t* h = bytes_.data();
  const std::size_t size = bytes_.size();
  if (size < kRpzCopyMagic.size() || std::memcmp(h, kRpzCopyMagic.data(), kRpzCopyMagic.size()) != 0)
    throw PolicyError(source_ + ": not an RPZ copy written by dnsarena (no magic \"DNSARPZC\")");
  if (size < kRpzCopyHeaderBytes)
    throw PolicyError(source_ + ": RPZ copy truncated: " + std::to_string(size) + " bytes, shorter than its header");
  const auto version = rpz_get_le<std::uint32_t>(h + kOffVersion);
  if (version != kRpzCopyVersion)
    throw PolicyError(source_ + ": RPZ copy format version " + std::to_string(version) + ", this build reads version " +
                      std::to_string(kRpzCopyVersion) + " (a new transfer rewrites it)");
  const auto header = rpz_get_le<std::uint32_t>(h + kOffHeaderBytes);
  if (header != kRpzCopyHeaderBytes)
    throw PolicyError(source_ + ": RPZ copy header of " + std::to_string(header) + " bytes, expected " +
                      std::to_string(kRpzCopyHeaderBytes));
  const auto body = rpz_get_le<std::uint64_t>(h + kOffBodyBytes);
  if (body != size - kRpzCopyHeaderBytes)
    throw PolicyError(source_ + ": RPZ copy " + (body > size - kRpzCopyHeaderBytes ? "truncated" : "with trailing bytes") +
                      ": the header says " + std::to_string(body + kRpzCopyHeaderBytes) + " bytes, the file has " +
                      std::to_string(size));
  checksum_ = rpz_get_le<std::uint64_t>(h + kOffChecksum);
  if (checksum_ != rpz_copy_checksum(h + kRpzCopyHeaderBytes, size - kRpzCopyHeaderBytes))
    throw PolicyError(source_ + ": RPZ copy damaged: the checksum does not match its contents");
  if (rpz_get_le<std::uint32_t>(h + kOffOriginBytes + 4) != 0)
    throw PolicyError(source_ + ": RPZ copy damaged: its header's last word is not 0");
  const auto origin_len = rpz_get_le<std::uint32_t>(h + kOffOriginBytes);
  if (origin_len > 255 || origin_len > body || !wire_name(h + kRpzCopyHeaderBytes, origin_len))
    throw PolicyError(source_ + ": RPZ copy with a malformed origin");
  origin_.assign(h + kRpzCopyHeaderBytes, origin_len);
  records_ = rpz_get_le<std::uint64_t>(h + kOffRecords);
  // Every record in bounds and well formed, before the first is handed out.
  std::size_t pos = kRpzCopyHeaderBytes + origin_len;
  std::uint64_t n = 0;
  for (; pos < size; ++n) {
    const std::size_t owner_len = h[pos];
    if (size - pos < kRecordFixedBytes + owner_len) fail(static_cast<unsigned>(n + 1), "the record runs past the end");
    if (!wire_name(h + pos + 1, owner_len)) fail(static_cast<unsigned>(n + 1), "a malformed owner name");
    const std::size_t rdlen = rpz_get_le<std::uint16_t>(h + pos + 1 + owner_len + 6);
    pos += kRecordFixedBytes + owner_len;
    if (size - pos < rdlen) fail(static_cast<unsigned>(n + 1), "the rdata runs past the end");
    pos += rdlen;
  }
  if (n != records_)
    throw PolicyError(source_ + ": RPZ copy holds " + std::to_string(n) + " records, its header says " +
                      std::to_string(records_));
  pos_ = kRpzCopyHeaderBytes + origin_len;
}

bool RpzCopyReader::next(ScannedRecord& r) {
  if (pos_ >= bytes_.size()) return false;
  const std::uint8_t* p = bytes_.data() + pos_;
  const std::size_t owner_len = p[0];
  r.owner.resize(owner_len);
  wire::lowercase_copy(r.owner.data(), {p + 1, owner_len});
  p += 1 + owner_len;
  r.type = rpz_get_le<std::uint16_t>(p);
  r.ttl = rpz_get_le<std::uint32_t>(p + 2);
  const std::size_t rdlen = rpz_get_le<std::uint16_t>(p + 6);
  r.rdata.assign(p + 8, p + 8 + rdlen);
  r.line = static_cast<unsigned>(++read_);
  pos_ += kRecordFixedBytes + owner_len + rdlen;
  return true;
}

void RpzCopyReader::fail(unsigned record, const std::string& what) const {
  throw PolicyError(source_ + ":record " + std::to_string(record) + ": " + what);
}

}  // namespace dnsarena::policy
