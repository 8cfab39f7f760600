// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/policy_answer.hpp"

#include <cstring>

#include "wire/constants.hpp"

namespace dnsarena::policy {

using namespace wire;

namespace {

constexpr std::size_t kAnswerFixed = 12;  // pointer to the question name, type, class, ttl, rdlength

bool answers(const LocalRr& rr, std::uint16_t qtype, bool has_cname) {
  if (has_cname) return rr.type == kTypeCname;
  return qtype == kTypeAny || rr.type == qtype;
}

std::size_t write_local_data(const Match& m, const dns::ClientQuery& q, std::size_t limit, std::uint8_t* out,
                             std::size_t cap) {
  const std::size_t base = dns::write_error_response(q, kRcodeNoError, out, cap, dns::ExtendedError::filtered);
  if (base == 0 || q.qname_len == 0) return base;
  bool has_cname = false;
  PolicyView::for_each_record(m, [&](const LocalRr& rr) { has_cname |= rr.type == kTypeCname; });
  std::size_t bytes = 0;
  unsigned count = 0;
  PolicyView::for_each_record(m, [&](const LocalRr& rr) {
    if (!answers(rr, q.qtype, has_cname)) return;
    bytes += kAnswerFixed + rr.rdata.size();
    ++count;
  });
  if (count == 0) return base;  // NODATA: the name has data, not of this type
  if (base + bytes > limit || base + bytes > cap || count > 0xFFFF) {
    put16(out + 2, static_cast<std::uint16_t>(get16(out + 2) | kFlagTc));
    return base;
  }
  const std::size_t question_end = kHeaderBytes + q.qname_len + 4;
  std::memmove(out + question_end + bytes, out + question_end, base - question_end);  // the OPT record, if any
  std::uint8_t* p = out + question_end;
  PolicyView::for_each_record(m, [&](const LocalRr& rr) {
    if (!answers(rr, q.qtype, has_cname)) return;
    put16(p, 0xC000 | kHeaderBytes);  // the question's name
    put16(p + 2, rr.type);
    put16(p + 4, kClassIn);
    put16(p + 6, static_cast<std::uint16_t>(rr.ttl >> 16));
    put16(p + 8, static_cast<std::uint16_t>(rr.ttl));
    put16(p + 10, static_cast<std::uint16_t>(rr.rdata.size()));
    std::memcpy(p + kAnswerFixed, rr.rdata.data(), rr.rdata.size());
    p += kAnswerFixed + rr.rdata.size();
  });
  put16(out + 6, static_cast<std::uint16_t>(count));
  return base + bytes;
}

}  // namespace

PolicyAnswer write_policy_answer(const Match& m, const dns::ClientQuery& q, std::size_t limit, std::uint8_t* out,
                                 std::size_t cap) {
  switch (m.action) {
    case Action::passthru: return {};
    case Action::drop: return {true, 0};
    case Action::nxdomain:
      return {true, dns::write_error_response(q, kRcodeNxDomain, out, cap, dns::ExtendedError::blocked)};
    case Action::nodata: return {true, dns::write_error_response(q, kRcodeNoError, out, cap, dns::ExtendedError::blocked)};
    case Action::refuse:
      return {true, dns::write_error_response(q, kRcodeRefused, out, cap, dns::ExtendedError::prohibited)};
    case Action::local_data: return {true, write_local_data(m, q, limit, out, cap)};
  }
  return {};
}

}  // namespace dnsarena::policy
