// SPDX-License-Identifier: GPL-3.0-or-later
// FORMAT-DEPENDENT: writes and reads the entry layout of entry_format.hpp.
#include "entry_codec.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace dnsarena::cache {

namespace {

inline std::uint8_t* put_u16be(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
  return p + 2;
}
inline std::uint8_t* put_u32be(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
  return p + 4;
}
void store_u16le(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}
void store_u32le(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint32_t load_u32le(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}
std::uint16_t load_u16be(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }
std::uint32_t load_u32be(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

std::size_t implied_rdlength(std::uint16_t type) {
  return type == wire::kTypeA ? 4 : type == wire::kTypeAaaa ? 16 : 0;
}

// Largest encoding of one record: descriptor, owner, type, class, TTL, u16 length, rdata.
constexpr std::size_t kMaxRecordOverhead = 1 + 2 + 2 + 4 + 2;

}  // namespace

// The buffer is sized once for the worst case and written through a pointer, not
// appended to byte by byte.
std::size_t encode_entry(const CacheKey& key, const Answer& answer, std::uint32_t now,
                         std::vector<std::uint8_t>& out) {
  std::size_t padded = 0;
  const std::size_t len = encode_entry_into(key, answer, now, out, &padded);
  out.resize(padded);  // 0 when it cannot be represented
  return len;
}

// The buffer only grows: resizing it to the worst case and back would zero-fill the
// difference on every insert.
std::size_t encode_entry_into(const CacheKey& key, const Answer& answer, std::uint32_t now,
                              std::vector<std::uint8_t>& buf, std::size_t* padded_size) {
  *padded_size = 0;
  if (key.blob().size() < kKeyFixedBytes) return 0;  // an empty key: no entry can hold it
  std::uint32_t entry_ttl = answer.ttl;
  std::size_t worst = kEntryHeaderBytes + key.blob().size() + 6 + 8;
  bool any = false;
  std::uint32_t min_ttl = std::numeric_limits<std::uint32_t>::max();
  for (const auto& sec : answer.sections) {
    if (sec.size() > 65535) return 0;
    for (const auto& r : sec) {
      min_ttl = std::min(min_ttl, r.ttl);
      any = true;
      if (r.rdata.size() > 65535) return 0;
      worst += kMaxRecordOverhead + r.owner.size() + r.rdata.size();
    }
  }
  if (entry_ttl == 0) entry_ttl = any ? min_ttl : 0;
  const bool wide = answer.sections[0].size() > 255 || answer.sections[1].size() > 255 || answer.sections[2].size() > 255;
  if (buf.size() < worst) buf.resize(worst);
  std::uint8_t* const base = buf.data();
  base[kEntryInfoOffset] = static_cast<std::uint8_t>((answer.rcode & kInfoRcodeMask) | (wide ? kInfoWideCounts : 0) |
                                                     (answer.authentic_data ? kInfoAuthenticData : 0) |
                                                     (static_cast<unsigned>(answer.verdict) << kInfoVerdictShift));
  base[3] = 0;
  const std::uint64_t expire64 = std::uint64_t{now} + entry_ttl;
  const std::uint32_t expire = expire64 > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<std::uint32_t>(expire64);
  store_u32le(base + kEntryExpireOffset, expire);
  store_u32le(base + kEntryTtlOffset, expire - now);
  const auto blob = key.blob();
  std::memcpy(base + kEntryKeyOffset, blob.data(), blob.size());
  std::uint8_t* p = base + kEntryKeyOffset + blob.size();
  for (const auto& sec : answer.sections) {
    if (wide) p = put_u16be(p, static_cast<std::uint16_t>(sec.size()));
    else *p++ = static_cast<std::uint8_t>(sec.size());
  }
  // The qname is the blob's tail, its length in the blob's byte 4 (cache_key.hpp).
  const std::span<const std::uint8_t> qname = blob.last(blob[4]);
  const std::uint16_t qtype = key.qtype();
  const std::size_t qtype_rdlen = implied_rdlength(qtype);
  for (const auto& sec : answer.sections) {
    for (const RecordData& r : sec) {
      // The common record (an A or AAAA of the qname, class IN, the entry's TTL) is one
      // descriptor byte and its rdata.
      if (qtype_rdlen != 0 && r.owner.empty() && r.type == qtype && r.rclass == 1 && r.ttl == entry_ttl &&
          r.rdata.size() == qtype_rdlen) {
        *p++ = kDescOwnerIsQname | kDescTypeIsQtype | kDescTtlIsEntryTtl | kDescClassIn | kDescRdlenImplied;
        if (qtype_rdlen == 4) std::memcpy(p, r.rdata.data(), 4);
        else std::memcpy(p, r.rdata.data(), 16);
        p += qtype_rdlen;
        continue;
      }
      const bool owner_q =
          r.owner.empty() || (r.owner.size() == qname.size() && wire::wire_names_equal_ci(r.owner, qname));
      if (!owner_q && wire::wire_name_length(r.owner) != r.owner.size()) return 0;
      std::uint8_t desc = 0;
      if (owner_q) desc |= kDescOwnerIsQname;
      if (r.type == qtype) desc |= kDescTypeIsQtype;
      if (r.ttl == entry_ttl) desc |= kDescTtlIsEntryTtl;
      if (r.rclass == 1) desc |= kDescClassIn;
      const std::size_t imp = implied_rdlength(r.type);
      if (imp != 0 && r.rdata.size() == imp) desc |= kDescRdlenImplied;
      else if (r.rdata.size() < 256) desc |= kDescRdlenU8;
      *p++ = desc;
      if (!owner_q) {
        wire::lowercase_copy(p, r.owner);
        p += r.owner.size();
      }
      if (!(desc & kDescTypeIsQtype)) p = put_u16be(p, r.type);
      if (!(desc & kDescClassIn)) p = put_u16be(p, r.rclass);
      if (!(desc & kDescTtlIsEntryTtl)) p = put_u32be(p, r.ttl);
      if (!(desc & kDescRdlenImplied)) {
        if (desc & kDescRdlenU8) *p++ = static_cast<std::uint8_t>(r.rdata.size());
        else p = put_u16be(p, static_cast<std::uint16_t>(r.rdata.size()));
      }
      // A and AAAA (most records): fixed-size copies the compiler inlines.
      if (r.rdata.size() == 4) std::memcpy(p, r.rdata.data(), 4);
      else if (r.rdata.size() == 16) std::memcpy(p, r.rdata.data(), 16);
      else if (!r.rdata.empty()) std::memcpy(p, r.rdata.data(), r.rdata.size());
      p += r.rdata.size();
    }
  }
  const std::size_t len = static_cast<std::size_t>(p - base);
  if (len > kMaxEntryBytes) return 0;
  store_u16le(base + kEntryLenOffset, static_cast<std::uint16_t>(len));
  const std::size_t padded = padded_entry_size(len);
  // Zero padding: one 8-byte store covers [len, padded); worst includes 8 bytes of slack.
  std::memset(base + len, 0, 8);
  *padded_size = padded;
  return len;
}

EntryReader::EntryReader(std::span<const std::uint8_t> entry) { parse(entry, 0); }
EntryReader::EntryReader(std::span<const std::uint8_t> entry, std::size_t key_length) { parse(entry, key_length); }

void EntryReader::parse(std::span<const std::uint8_t> entry, std::size_t key_length) {
  bytes_ = entry;
  if (entry.size() < kEntryHeaderBytes + kKeyFixedBytes) return;
  len_ = std::size_t{entry[0]} | (std::size_t{entry[1]} << 8);
  if (len_ < kEntryHeaderBytes + kKeyFixedBytes || len_ > entry.size()) return;
  bytes_ = entry.first(len_);
  info_ = entry[kEntryInfoOffset];
  if (entry[3] != 0) return;
  expire_ = load_u32le(&entry[kEntryExpireOffset]);
  ttl_ = load_u32le(&entry[kEntryTtlOffset]);
  const std::size_t klen = key_length != 0 && kEntryKeyOffset + key_length <= len_
                               ? key_length
                               : CacheKey::blob_length(bytes_.subspan(kEntryKeyOffset));
  if (klen == 0) return;
  key_ = bytes_.subspan(kEntryKeyOffset, klen);
  qname_ = key_.last(key_[4]);
  std::size_t pos = kEntryKeyOffset + klen;
  const bool wide = (info_ & kInfoWideCounts) != 0;
  const std::size_t cbytes = wide ? 6 : 3;
  if (pos + cbytes > len_) return;
  for (int i = 0; i < 3; ++i) {
    counts_[i] = wide ? load_u16be(&bytes_[pos + 2 * i]) : bytes_[pos + i];
  }
  pos += cbytes;
  records_start_ = pos_ = pos;
  valid_ = records_valid_ = true;
}

bool EntryReader::next(RecordView& rec) {
  if (!records_valid_ || pos_ >= len_) return false;
  auto need = [&](std::size_t n) { return pos_ + n <= len_; };
  const std::uint8_t desc = bytes_[pos_++];
  if (desc & kDescReservedMask) return records_valid_ = false;
  rec.owner_is_qname = (desc & kDescOwnerIsQname) != 0;
  if (rec.owner_is_qname) {
    rec.owner = qname_;
  } else {
    const std::size_t n = wire::wire_name_length(bytes_.subspan(pos_));
    if (n == 0) return records_valid_ = false;
    rec.owner = bytes_.subspan(pos_, n);
    pos_ += n;
  }
  if (desc & kDescTypeIsQtype) {
    rec.type = qtype();
  } else {
    if (!need(2)) return records_valid_ = false;
    rec.type = load_u16be(&bytes_[pos_]);
    pos_ += 2;
  }
  if (desc & kDescClassIn) {
    rec.rclass = 1;
  } else {
    if (!need(2)) return records_valid_ = false;
    rec.rclass = load_u16be(&bytes_[pos_]);
    pos_ += 2;
  }
  if (desc & kDescTtlIsEntryTtl) {
    rec.ttl = ttl_;
  } else {
    if (!need(4)) return records_valid_ = false;
    rec.ttl = load_u32be(&bytes_[pos_]);
    pos_ += 4;
  }
  std::size_t rdlen;
  if (desc & kDescRdlenImplied) {
    rdlen = implied_rdlength(rec.type);
    if (rdlen == 0) return records_valid_ = false;
  } else if (desc & kDescRdlenU8) {
    if (!need(1)) return records_valid_ = false;
    rdlen = bytes_[pos_++];
  } else {
    if (!need(2)) return records_valid_ = false;
    rdlen = load_u16be(&bytes_[pos_]);
    pos_ += 2;
  }
  if (!need(rdlen)) return records_valid_ = false;
  rec.rdata = bytes_.subspan(pos_, rdlen);
  pos_ += rdlen;
  return true;
}

bool EntryReader::validate_all() {
  if (!valid_) return false;
  rewind();
  RecordView r;
  std::uint32_t n = 0;
  while (next(r)) ++n;
  const bool ok = records_valid_ && n == record_count() && pos_ == len_;
  rewind();
  return ok;
}

}  // namespace dnsarena::cache
