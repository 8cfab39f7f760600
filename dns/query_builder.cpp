// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/query_builder.hpp"

#include <cstring>

#include "dns/opt_record.hpp"
#include "wire/constants.hpp"

namespace dnsarena::dns {

using namespace wire;  // the wire format's numbers and names

std::size_t write_query(const QuerySpec& spec, std::uint8_t* out, std::size_t capacity) {
  if (capacity < kHeaderBytes + spec.qname.size() + 4 + kOptRecordBytes + kMaxEcsOptionBytes + 4) return 0;
  const bool opt = spec.edns || spec.do_bit || spec.ecs.present || spec.tcp_keepalive;
  put16(out, spec.id);
  put16(out + 2, static_cast<std::uint16_t>(kFlagRd | (spec.cd ? kFlagCd : 0)));
  put16(out + 4, 1);
  put16(out + 6, 0);
  put16(out + 8, 0);
  put16(out + 10, opt ? 1 : 0);
  std::size_t pos = kHeaderBytes;
  std::memcpy(out + pos, spec.qname.data(), spec.qname.size());
  pos += spec.qname.size();
  put16(out + pos, spec.qtype);
  put16(out + pos + 2, kClassIn);
  pos += 4;
  if (!opt) return pos;
  const std::size_t opt_at = pos;
  pos += write_opt_record(kRcodeNoError, spec.do_bit, spec.ecs, 0, out + pos);
  if (spec.tcp_keepalive) {  // appended to the record's options: its rdlength grows by 4
    put16(out + pos, kOptionTcpKeepalive);
    put16(out + pos + 2, 0);
    pos += 4;
    put16(out + opt_at + 9, static_cast<std::uint16_t>(get16(out + opt_at + 9) + 4));
  }
  return pos;
}

common::Bytes build_query(const QuerySpec& spec) {
  common::Bytes out(kHeaderBytes + spec.qname.size() + 4 + kOptRecordBytes + kMaxEcsOptionBytes + 4, 0);
  out.resize(write_query(spec, out.data(), out.size()));
  return out;
}

}  // namespace dnsarena::dns
