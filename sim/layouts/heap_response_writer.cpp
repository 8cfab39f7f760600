// SPDX-License-Identifier: GPL-3.0-or-later
#include "heap_response_writer.hpp"

#include <cstring>
#include <limits>

#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::layouts {

namespace {
using wire::put16;
using wire::put32;
std::size_t opt_size(const cache::ResponseOptions& o) { return o.edns ? 11 + o.edns_options.size() : 0; }
}  // namespace

HeapResponseWriter::HeapResponseWriter(const cache::QueryInfo& query, const cache::ResponseOptions& options,
                                       std::uint8_t* out, std::size_t capacity)
    : q_(query), o_(options), out_(out), names_(out) {
  const std::size_t limit = capacity < o_.max_size ? capacity : o_.max_size;
  question_end_ = 12 + q_.qname.size() + 4;
  const std::size_t opt = opt_size(o_);
  if (question_end_ + opt > limit) return;
  started_ = true;
  std::memcpy(out_ + 12, q_.qname.data(), q_.qname.size());
  put16(out_ + 12 + q_.qname.size(), q_.qtype);
  put16(out_ + 14 + q_.qname.size(), q_.qclass);
  pos_ = last_record_end_ = question_end_;
  records_limit_ = limit - opt;
  records_capacity_ = capacity - opt;
  names_.add(12);
}

std::uint8_t* HeapResponseWriter::begin_record(bool owner_is_qname, std::span<const std::uint8_t> owner,
                                               std::uint16_t type, std::uint16_t rclass, std::uint32_t ttl,
                                               std::size_t rdlen) {
  const std::size_t owner_worst = owner_is_qname ? 2 : owner.size();
  if (pos_ + owner_worst + 10 + rdlen > records_capacity_) {
    fits_ = false;
    return nullptr;
  }
  if (owner_is_qname) {
    put16(out_ + pos_, static_cast<std::uint16_t>(0xC000 | 12));
    pos_ += 2;
  } else {
    pos_ += names_.write(owner, pos_);
  }
  put16(out_ + pos_, type);
  put16(out_ + pos_ + 2, rclass);
  put32(out_ + pos_ + 4, ttl);
  put16(out_ + pos_ + 8, static_cast<std::uint16_t>(rdlen));
  pos_ += 10;
  return out_ + pos_;
}

void HeapResponseWriter::end_record(std::uint16_t type, const std::uint8_t* rdata, std::size_t rdlen) {
  if (wire::compressible_rdata(type).names > 0) {
    rdata_copy_.assign(rdata, rdata + rdlen);
    const std::size_t written = names_.write_rdata(type, rdata_copy_, pos_);
    put16(out_ + pos_ - 2, static_cast<std::uint16_t>(written));
    pos_ += written;
  } else {
    pos_ += rdlen;
  }
  if (pos_ > records_limit_) {
    fits_ = false;
    return;
  }
  ++written_;
  last_record_end_ = pos_;
}

void HeapResponseWriter::add_bytes(bool owner_is_qname, std::span<const std::uint8_t> owner, std::uint16_t type,
                                   std::uint16_t rclass, std::uint32_t ttl, std::span<const std::uint8_t> rdata) {
  add(owner_is_qname, owner, type, rclass, ttl, rdata.size(), [&](std::uint8_t* dst) {
    if (!rdata.empty()) std::memcpy(dst, rdata.data(), rdata.size());
  });
}

cache::ResponseResult HeapResponseWriter::finish(std::uint8_t rcode, bool authentic_data, const std::uint16_t counts_in[3]) {
  cache::ResponseResult res;
  if (!started_) return res;
  std::uint16_t flags = static_cast<std::uint16_t>(wire::kFlagQr | wire::kFlagRa |
                                                   (q_.flags & (wire::kOpcodeMask | wire::kFlagRd | wire::kFlagCd)) |
                                                   (rcode & 0x0F));
  if (authentic_data && (o_.edns_do || (q_.flags & wire::kFlagAd))) flags |= wire::kFlagAd;
  std::uint16_t counts[3] = {counts_in[0], counts_in[1], counts_in[2]};
  const std::uint32_t answer_and_authority = std::uint32_t{counts[0]} + counts[1];
  if (!fits_ && written_ >= answer_and_authority) {
    pos_ = last_record_end_;  // only additional records were left out: no TC
    counts[2] = static_cast<std::uint16_t>(written_ - answer_and_authority);
  } else if (!fits_) {
    flags |= wire::kFlagTc;
    pos_ = question_end_;
    counts[0] = counts[1] = counts[2] = 0;
    res.truncated = true;
  }
  if (o_.edns) {
    std::uint8_t* p = out_ + pos_;
    p[0] = 0;
    put16(p + 1, 41);
    put16(p + 3, o_.edns_udp_size);
    p[5] = 0;
    p[6] = 0;
    put16(p + 7, o_.edns_do ? 0x8000 : 0);
    put16(p + 9, static_cast<std::uint16_t>(o_.edns_options.size()));
    if (!o_.edns_options.empty()) std::memcpy(p + 11, o_.edns_options.data(), o_.edns_options.size());
    pos_ += 11 + o_.edns_options.size();
    counts[2] = static_cast<std::uint16_t>(counts[2] + 1);
  }
  put16(out_, q_.id);
  put16(out_ + 2, flags);
  put16(out_ + 4, 1);
  put16(out_ + 6, counts[0]);
  put16(out_ + 8, counts[1]);
  put16(out_ + 10, counts[2]);
  res.size = pos_;
  return res;
}

std::uint32_t entry_ttl_of(const cache::Answer& answer) {
  if (answer.ttl != 0) return answer.ttl;
  std::uint32_t ttl = std::numeric_limits<std::uint32_t>::max();
  bool any = false;
  for (const auto& sec : answer.sections)
    for (const auto& r : sec) {
      ttl = r.ttl < ttl ? r.ttl : ttl;
      any = true;
    }
  return any ? ttl : 0;
}

}  // namespace dnsarena::sim::layouts
