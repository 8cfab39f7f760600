// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/local_alias.hpp"

#include <cstring>

#include "wire/constants.hpp"
#include "wire/dns_name.hpp"
#include "wire/name_compressor.hpp"

namespace dnsarena::workers {

using namespace wire;

namespace {

constexpr std::size_t kRecordFixed = 10;  // type, class, ttl, rdlength

std::uint32_t get32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// Reads the name at `at` of msg[0, n), following pointers (each strictly backwards, so the
// walk ends), into name[0, 255); `at` moves past it as written. False: not a valid name.
bool read_name(const std::uint8_t* msg, std::size_t n, std::size_t& at, std::uint8_t* name, std::size_t& len) {
  std::size_t p = at;
  std::size_t end = 0;  // where the name as written ends (0: not known yet)
  len = 0;
  while (p < n) {
    const std::uint8_t l = msg[p];
    if ((l & 0xC0) == 0xC0) {
      if (p + 2 > n) return false;
      const std::size_t to = static_cast<std::size_t>(get16(msg + p) & 0x3FFF);
      if (to >= p) return false;
      if (end == 0) end = p + 2;
      p = to;
      continue;
    }
    if (l & 0xC0) return false;
    if (p + 1 + l > n || len + 1 + l > kMaxNameWire) return false;
    std::memcpy(name + len, msg + p, 1 + l);
    len += 1 + l;
    p += 1 + l;
    if (l == 0) {
      at = end ? end : p;
      return true;
    }
  }
  return false;
}

}  // namespace

void LocalAlias::add(std::span<const std::uint8_t> owner, std::uint32_t ttl, std::span<const std::uint8_t> target) {
  std::uint8_t fixed[kRecordFixed];
  put16(fixed, kTypeCname);
  put16(fixed + 2, kClassIn);
  put32(fixed + 4, ttl);
  put16(fixed + 8, static_cast<std::uint16_t>(target.size()));
  records.insert(records.end(), owner.begin(), owner.end());
  records.insert(records.end(), fixed, fixed + kRecordFixed);
  records.insert(records.end(), target.begin(), target.end());
  ++count;
}

bool follows_local_cname(const dns::ClientQuery& q) {
  return q.qname_len > 1 && q.qtype != kTypeCname && q.qtype != kTypeAny;
}

LocalCname first_local_cname(const std::uint8_t* msg, std::size_t n) {
  LocalCname c;
  if (n < kHeaderBytes || get16(msg + 4) != 1 || get16(msg + 6) == 0) return c;
  std::size_t at = skip_wire_name({msg, n}, kHeaderBytes);
  if (at == 0 || at + 4 > n) return c;
  at = skip_wire_name({msg, n}, at + 4);  // the first answer record's owner
  if (at == 0 || at + kRecordFixed > n || get16(msg + at) != kTypeCname) return c;
  const std::uint32_t ttl = get32(msg + at + 4);
  const std::size_t rdata = at + kRecordFixed;
  const std::size_t rdend = rdata + get16(msg + at + 8);
  if (rdend > n) return c;
  std::size_t p = rdata;
  if (!read_name(msg, rdend, p, c.target, c.target_len) || p != rdend) return c;
  c.found = true;
  c.ttl = ttl;
  return c;
}

std::size_t write_alias_answer(const LocalAlias& alias, const std::uint8_t* src, std::size_t sn, std::uint8_t* dst,
                               std::size_t limit, std::size_t cap) {
  if (sn < kHeaderBytes || get16(src + 4) != 1) return 0;
  std::size_t at = skip_wire_name({src, sn}, kHeaderBytes);
  if (at == 0 || at + 4 > sn) return 0;
  at += 4;
  const dns::ClientQuery& q = alias.client;
  const std::size_t question_end = kHeaderBytes + q.qname_len + 4;
  if (question_end + alias.records.size() > cap) return 0;
  // The header: the client's ID, the target's flags and rcode; not authoritative, and not
  // authenticated (the local records are not validated data).
  put16(dst, q.id);
  put16(dst + 2, static_cast<std::uint16_t>(get16(src + 2) & ~(kFlagAa | kFlagAd)));
  put16(dst + 4, 1);
  std::memcpy(dst + kHeaderBytes, q.qname_storage.data(), q.qname_len);
  put16(dst + kHeaderBytes + q.qname_len, q.qtype);
  put16(dst + kHeaderBytes + q.qname_len + 2, q.qclass);
  NameCompressor names(dst);
  names.add(kHeaderBytes);
  std::size_t p = question_end;
  // The local CNAME records (each owner and target at most 255 bytes, checked above).
  for (std::size_t r = 0; r < alias.records.size();) {
    std::size_t owner_len = 0;
    while (alias.records[r + owner_len] != 0) owner_len += 1u + alias.records[r + owner_len];
    ++owner_len;
    const std::uint8_t* fixed = alias.records.data() + r + owner_len;
    const std::size_t target_len = get16(fixed + 8);
    p += names.write({alias.records.data() + r, owner_len}, p);
    std::memcpy(dst + p, fixed, 8);
    const std::size_t rdlen = names.write_rdata(kTypeCname, {fixed + kRecordFixed, target_len}, p + kRecordFixed);
    put16(dst + p + 8, static_cast<std::uint16_t>(rdlen));
    p += kRecordFixed + rdlen;
    r += owner_len + kRecordFixed + target_len;
  }
  // The target's records, each name read back whole and written again.
  const unsigned counts[3] = {get16(src + 6), get16(src + 8), get16(src + 10)};
  std::size_t opt_at = 0, opt_len = 0;
  std::uint8_t owner[kMaxNameWire];
  std::uint8_t rdata[2 * kMaxNameWire + 32];  // a compressible type's rdata, names whole
  for (unsigned section = 0; section < 3; ++section)
    for (unsigned i = 0; i < counts[section]; ++i) {
      std::size_t owner_len = 0;
      if (!read_name(src, sn, at, owner, owner_len) || at + kRecordFixed > sn) return 0;
      const std::uint16_t type = get16(src + at);
      const std::size_t rd = at + kRecordFixed;
      const std::size_t rdend = rd + get16(src + at + 8);
      if (rdend > sn) return 0;
      const CompressibleRdata shape = compressible_rdata(type);
      std::size_t rdata_len = rdend - rd;
      const std::uint8_t* rdata_in = src + rd;
      if (shape.names) {
        if (shape.prefix > rdata_len) return 0;
        std::memcpy(rdata, src + rd, shape.prefix);
        std::size_t r = rd + shape.prefix, len = shape.prefix;
        for (unsigned k = 0; k < shape.names; ++k) {
          std::size_t name_len = 0;
          if (!read_name(src, rdend, r, rdata + len, name_len)) return 0;
          len += name_len;
        }
        if (rdend - r > sizeof rdata - len) return 0;
        std::memcpy(rdata + len, src + r, rdend - r);
        rdata_len = len + (rdend - r);
        rdata_in = rdata;
      }
      if (p + owner_len + kRecordFixed + rdata_len > cap) return 0;
      if (type == kTypeOpt) {  // the root, then its options as they are
        opt_at = p;
        opt_len = 1 + kRecordFixed + rdata_len;
        dst[p] = 0;
        std::memcpy(dst + p + 1, src + at, kRecordFixed + rdata_len);
        p += opt_len;
        at = rdend;
        continue;
      }
      p += names.write({owner, owner_len}, p);
      std::memcpy(dst + p, src + at, 8);
      const std::size_t written = names.write_rdata(type, {rdata_in, rdata_len}, p + kRecordFixed);
      put16(dst + p + 8, static_cast<std::uint16_t>(written));
      p += kRecordFixed + written;
      at = rdend;
    }
  put16(dst + 6, static_cast<std::uint16_t>(alias.count + counts[0]));
  put16(dst + 8, static_cast<std::uint16_t>(counts[1]));
  put16(dst + 10, static_cast<std::uint16_t>(counts[2]));
  if (p <= limit && !(get16(src + 2) & kFlagTc)) return p;
  // Over the client's limit, or the target's answer was: no records, TC, the OPT kept (as
  // the cache's writer sends it: the client asks again over TCP).
  put16(dst + 2, static_cast<std::uint16_t>(get16(dst + 2) | kFlagTc));
  put16(dst + 6, 0);
  put16(dst + 8, 0);
  put16(dst + 10, opt_len ? 1 : 0);
  if (opt_len) std::memmove(dst + question_end, dst + opt_at, opt_len);
  return question_end + opt_len;
}

}  // namespace dnsarena::workers
