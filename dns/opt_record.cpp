// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/opt_record.hpp"

#include "dns/query_builder.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::dns {

using namespace wire;  // the wire format's numbers and names

std::size_t write_opt_record(std::uint16_t rcode, bool do_bit, const EcsOption& ecs, std::uint8_t ecs_scope,
                             std::uint8_t* out) {
  out[0] = 0;
  put16(out + 1, kTypeOpt);
  put16(out + 3, kEdnsPayload);
  out[5] = static_cast<std::uint8_t>(rcode >> 4);
  out[6] = 0;
  put16(out + 7, do_bit ? kEdnsFlagDo : 0);
  const std::size_t olen = ecs.present ? write_ecs_option(ecs, ecs_scope, out + kOptRecordBytes) : 0;
  put16(out + 9, static_cast<std::uint16_t>(olen));
  return kOptRecordBytes + olen;
}

bool find_edns_option(std::span<const std::uint8_t> m, std::uint16_t code, std::span<const std::uint8_t>* data) {
  if (m.size() < kHeaderBytes) return false;
  const unsigned questions = get16(m.data() + 4);
  const unsigned records = get16(m.data() + 6) + get16(m.data() + 8) + get16(m.data() + 10);
  const unsigned additional_from = get16(m.data() + 6) + get16(m.data() + 8);
  std::size_t pos = kHeaderBytes;
  for (unsigned q = 0; q < questions; ++q) {
    pos = skip_wire_name(m, pos);
    if (pos == 0 || pos + 4 > m.size()) return false;
    pos += 4;
  }
  for (unsigned r = 0; r < records; ++r) {
    pos = skip_wire_name(m, pos);
    if (pos == 0 || pos + 10 > m.size()) return false;
    const std::uint16_t type = get16(m.data() + pos);
    const std::size_t rdlength = get16(m.data() + pos + 8);
    pos += 10;
    if (pos + rdlength > m.size()) return false;
    if (r >= additional_from && type == kTypeOpt) {
      for (std::size_t o = pos; o + 4 <= pos + rdlength;) {
        const std::uint16_t c = get16(m.data() + o), len = get16(m.data() + o + 2);
        if (o + 4 + len > pos + rdlength) return false;
        if (c == code) {
          if (data) *data = m.subspan(o + 4, len);
          return true;
        }
        o += 4u + len;
      }
      return false;
    }
    pos += rdlength;
  }
  return false;
}

int read_tcp_keepalive(std::span<const std::uint8_t> m) {
  std::span<const std::uint8_t> timeout;
  if (!find_edns_option(m, kOptionTcpKeepalive, &timeout) || timeout.size() != 2) return -1;
  return get16(timeout.data());
}

}  // namespace dnsarena::dns
