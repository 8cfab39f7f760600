// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/opt_record.hpp"

#include "wire/constants.hpp"

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

}  // namespace dnsarena::dns
