// SPDX-License-Identifier: GPL-3.0-or-later
#include "response_writer.hpp"

#include <cstring>

#include "../wire/dns_name.hpp"
#include "../wire/name_compressor.hpp"
#include "response_direct.hpp"

namespace dnsarena::cache {

namespace {

using wire::put32;

// The first RRset of the answer section (its owner and type; RRSIGs covering it go with
// it), for ResponseOptions::one_answer_rrset.
struct AnswerRrset {
  bool found = false;
  std::span<const std::uint8_t> owner;
  std::uint16_t type = 0;
  bool holds(const RecordView& r) const {
    if (r.owner.size() != owner.size() || !wire::wire_names_equal_ci(r.owner, owner)) return false;
    if (r.type == type) return true;
    return r.type == 46 && r.rdata.size() >= 2 && ((r.rdata[0] << 8) | r.rdata[1]) == type;  // its RRSIG
  }
};

AnswerRrset first_answer_rrset(EntryReader& entry) {
  AnswerRrset first;
  entry.rewind();
  RecordView r;
  for (std::uint16_t i = 0; i < entry.count(kAnswer) && entry.next(r); ++i) {
    if (r.type == 46) continue;
    first.found = true;
    first.owner = r.owner;
    first.type = r.type;
    break;
  }
  return first;
}

}  // namespace

std::size_t opt_record_size(const ResponseOptions& o) { return o.edns ? 11 + o.edns_options.size() : 0; }

std::size_t write_opt_record(const ResponseOptions& o, std::uint8_t* p) {
  p[0] = 0;                 // root owner
  wire::put16(p + 1, 41);         // OPT
  wire::put16(p + 3, o.edns_udp_size);
  p[5] = 0;                 // extended rcode
  p[6] = 0;                 // version
  wire::put16(p + 7, o.edns_do ? 0x8000 : 0);
  wire::put16(p + 9, static_cast<std::uint16_t>(o.edns_options.size()));
  if (!o.edns_options.empty()) std::memcpy(p + 11, o.edns_options.data(), o.edns_options.size());
  return 11 + o.edns_options.size();
}

ResponseResult write_response(EntryReader& entry, const QueryInfo& q, std::uint32_t now, const ResponseOptions& o,
                              std::uint8_t* out, std::size_t capacity) {
  ResponseResult res;
  const std::size_t limit = capacity < o.max_size ? capacity : o.max_size;
  const std::size_t question_end = 12 + q.qname.size() + 4;
  const std::size_t opt = opt_record_size(o);
  if (question_end + opt > limit) return res;

  const std::uint16_t from_query = q.flags & (wire::kOpcodeMask | wire::kFlagRd | wire::kFlagCd);
  std::uint16_t flags = static_cast<std::uint16_t>(wire::kFlagQr | wire::kFlagRa | from_query | entry.rcode());
  if (entry.authentic_data() && entry.inserted() > o.ad_trusted_after && (o.edns_do || (q.flags & wire::kFlagAd)))
    flags |= wire::kFlagAd;
  wire::put16(out, q.id);
  std::memcpy(out + 12, q.qname.data(), q.qname.size());
  wire::put16(out + 12 + q.qname.size(), q.qtype);
  wire::put16(out + 14 + q.qname.size(), q.qclass);

  std::size_t pos = question_end;
  // Records are written while their uncompressed size surely fits the buffer; whether
  // they fit the client's limit is judged on the compressed size.
  const std::size_t records_limit = limit - opt;
  const std::size_t records_capacity = capacity - opt;
  wire::NameCompressor names(out);
  names.add(12);
  const std::uint32_t inserted = entry.inserted();
  const std::uint16_t answer_count = entry.count(kAnswer);
  AnswerRrset keep;
  if (o.one_answer_rrset) keep = first_answer_rrset(entry);
  entry.rewind();
  RecordView r;
  std::uint32_t written = 0, skipped = 0, index = 0;
  bool referral = answer_count == 0;  // and NS in authority: then the additional records are glue
  bool authority_ns = false;
  bool fits = true;
  std::size_t last_record_end = pos;
  while (entry.next(r)) {
    if (index++ < answer_count && keep.found && !keep.holds(r)) {
      ++skipped;  // RFC 8482: one RRset of an ANY answer
      continue;
    }
    if (index > answer_count && index <= answer_count + entry.count(kAuthority) && r.type == 2) authority_ns = true;
    const std::size_t owner_worst = r.owner_is_qname ? 2 : r.owner.size();
    if (pos + owner_worst + 10 + r.rdata.size() > records_capacity) {
      fits = false;
      break;
    }
    if (r.owner_is_qname) {
      wire::put16(out + pos, static_cast<std::uint16_t>(0xC000 | 12));
      pos += 2;
    } else {
      pos += names.write(r.owner, pos);
    }
    wire::put16(out + pos, r.type);
    wire::put16(out + pos + 2, r.rclass);
    put32(out + pos + 4, o.stale_ttl ? o.stale_ttl : remaining_ttl(r.ttl, inserted, now));
    const std::size_t rdlen = names.write_rdata(r.type, r.rdata, pos + 10);
    wire::put16(out + pos + 8, static_cast<std::uint16_t>(rdlen));
    pos += 10 + rdlen;
    if (pos > records_limit) {
      fits = false;
      break;
    }
    ++written;
    last_record_end = pos;
  }
  if (fits && !entry.records_valid()) return res;  // damaged entry: never emit half of it
  std::uint16_t counts[3] = {static_cast<std::uint16_t>(answer_count - skipped), entry.count(kAuthority),
                             entry.count(kAdditional)};
  const std::uint32_t answer_and_authority = std::uint32_t{counts[0]} + counts[1];
  if (!fits && written >= answer_and_authority) {
    // Only additional records are left out: no TC (RFC 2181 section 9), unless they are
    // a referral's glue, which a resolver needs: then TC with what fitted (RFC 9471).
    pos = last_record_end;
    counts[2] = static_cast<std::uint16_t>(written - answer_and_authority);
    if (referral && authority_ns) {
      flags |= wire::kFlagTc;
      res.truncated = true;
    }
  } else if (!fits || written + skipped != entry.record_count()) {
    if (fits) return res;
    flags |= wire::kFlagTc;
    pos = question_end;
    counts[0] = counts[1] = counts[2] = 0;
    res.truncated = true;
  }
  if (o.edns) {
    pos += write_opt_record(o, out + pos);
    counts[2] = static_cast<std::uint16_t>(counts[2] + 1);
  }
  wire::put16(out + 2, flags);
  wire::put16(out + 4, 1);
  wire::put16(out + 6, counts[0]);
  wire::put16(out + 8, counts[1]);
  wire::put16(out + 10, counts[2]);
  res.size = pos;
  res.expire = entry.expire();
  res.ttl = entry.ttl();
  return res;
}

}  // namespace dnsarena::cache
