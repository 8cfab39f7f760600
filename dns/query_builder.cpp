// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/query_builder.hpp"

#include <cstring>

#include "dns/opt_record.hpp"
#include "wire/constants.hpp"

namespace dnsarena::dns {

using namespace wire;  // the wire format's numbers and names

std::size_t write_query(const QuerySpec& spec, std::uint8_t* out, std::size_t capacity) {
  if (capacity < kHeaderBytes + spec.qname.size() + 4 + kOptRecordBytes + kMaxEcsOptionBytes) return 0;
  const bool opt = spec.edns || spec.do_bit || spec.ecs.present;
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
  if (opt) pos += write_opt_record(kRcodeNoError, spec.do_bit, spec.ecs, 0, out + pos);
  return pos;
}

common::Bytes build_query(const QuerySpec& spec) {
  common::Bytes out(kHeaderBytes + spec.qname.size() + 4 + kOptRecordBytes + kMaxEcsOptionBytes, 0);
  out.resize(write_query(spec, out.data(), out.size()));
  return out;
}

}  // namespace dnsarena::dns
