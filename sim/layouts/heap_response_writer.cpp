#include "heap_response_writer.hpp"

#include <cstring>
#include <limits>

#include "cache/dns_name.hpp"

namespace dnsarena::sim::layouts {

namespace {
inline void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
inline void put32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}
bool rdata_is_one_name(std::uint16_t type) { return type == 5 || type == 2 || type == 12 || type == 39; }
std::size_t opt_size(const cache::ResponseOptions& o) { return o.edns ? 11 + o.edns_options.size() : 0; }
}  // namespace

HeapResponseWriter::HeapResponseWriter(const cache::QueryInfo& query, const cache::ResponseOptions& options,
                                       std::uint8_t* out, std::size_t capacity)
    : q_(query), o_(options), out_(out) {
  const std::size_t limit = capacity < o_.max_size ? capacity : o_.max_size;
  question_end_ = 12 + q_.qname.size() + 4;
  const std::size_t opt = opt_size(o_);
  if (question_end_ + opt > limit) return;
  started_ = true;
  std::memcpy(out_ + 12, q_.qname.data(), q_.qname.size());
  put16(out_ + 12 + q_.qname.size(), q_.qtype);
  put16(out_ + 14 + q_.qname.size(), q_.qclass);
  pos_ = question_end_;
  records_limit_ = limit - opt;
}

void HeapResponseWriter::mark(std::span<const std::uint8_t> name, std::size_t offset) {
  if (mark_count_ < kMaxMarks && offset < 0x3FFF) {
    mark_names_[mark_count_] = name;
    mark_offsets_[mark_count_++] = static_cast<std::uint16_t>(offset);
  }
}

int HeapResponseWriter::find_mark(std::span<const std::uint8_t> name) const {
  for (int i = 0; i < mark_count_; ++i)
    if (cache::wire_names_equal_ci(mark_names_[i], name)) return mark_offsets_[i];
  return -1;
}

std::uint8_t* HeapResponseWriter::begin_record(bool owner_is_qname, std::span<const std::uint8_t> owner,
                                               std::uint16_t type, std::uint16_t rclass, std::uint32_t ttl,
                                               std::size_t rdlen) {
  const int ptr = owner_is_qname ? 12 : find_mark(owner);
  const std::size_t owner_bytes = ptr >= 0 ? 2 : owner.size();
  if (pos_ + owner_bytes + 10 + rdlen > records_limit_) {
    fits_ = false;
    return nullptr;
  }
  if (ptr >= 0) {
    put16(out_ + pos_, static_cast<std::uint16_t>(0xC000 | ptr));
  } else {
    std::memcpy(out_ + pos_, owner.data(), owner.size());
    mark(owner, pos_);
  }
  pos_ += owner_bytes;
  put16(out_ + pos_, type);
  put16(out_ + pos_ + 2, rclass);
  put32(out_ + pos_ + 4, ttl);
  put16(out_ + pos_ + 8, static_cast<std::uint16_t>(rdlen));
  pos_ += 10;
  return out_ + pos_;
}

void HeapResponseWriter::end_record(std::uint16_t type, const std::uint8_t* rdata, std::size_t rdlen) {
  if (rdata_is_one_name(type)) mark({rdata, rdlen}, pos_);
  pos_ += rdlen;
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
  std::uint16_t flags = static_cast<std::uint16_t>(cache::kFlagQr | cache::kFlagRa |
                                                   (q_.flags & (cache::kOpcodeMask | cache::kFlagRd | cache::kFlagCd)) |
                                                   (rcode & 0x0F));
  if (authentic_data && (o_.edns_do || (q_.flags & cache::kFlagAd))) flags |= cache::kFlagAd;
  std::uint16_t counts[3] = {counts_in[0], counts_in[1], counts_in[2]};
  if (!fits_) {
    flags |= cache::kFlagTc;
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
