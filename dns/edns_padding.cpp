// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/edns_padding.hpp"

#include <cstring>

#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::dns {

namespace {

std::uint16_t read16(std::span<const std::uint8_t> m, std::size_t at) {
  return static_cast<std::uint16_t>((m[at] << 8) | m[at + 1]);
}

}  // namespace

std::size_t pad_response(std::span<const std::uint8_t> msg, std::size_t block, std::uint8_t* out, std::size_t cap) {
  if (msg.size() < 12 || block == 0) return 0;
  const unsigned qd = read16(msg, 4);
  const unsigned rrs = read16(msg, 6) + read16(msg, 8) + read16(msg, 10);
  std::size_t at = 12;
  for (unsigned i = 0; i < qd; ++i) {
    at = wire::skip_wire_name(msg, at);
    if (at == 0 || at + 4 > msg.size()) return 0;
    at += 4;
  }
  std::size_t rdlen_at = 0;  // of the OPT record
  for (unsigned i = 0; i < rrs; ++i) {
    at = wire::skip_wire_name(msg, at);
    if (at == 0 || at + 10 > msg.size()) return 0;
    const std::uint16_t type = read16(msg, at);
    const std::size_t rdlen = read16(msg, at + 8);
    if (type == wire::kTypeOpt) rdlen_at = at + 8;
    at += 10 + rdlen;
    if (at > msg.size()) return 0;
  }
  if (rdlen_at == 0) return 0;
  // The option's 4-byte header always goes in; its data fills up to the next block.
  const std::size_t bare = msg.size() + 4;
  const std::size_t padded = (bare + block - 1) / block * block;
  if (padded > cap || padded > 65535) return 0;
  const std::size_t pad = padded - bare;
  const std::size_t opt_end = rdlen_at + 2 + read16(msg, rdlen_at);
  std::memcpy(out, msg.data(), opt_end);
  const std::size_t rdlen = read16(msg, rdlen_at) + 4 + pad;
  if (rdlen > 65535) return 0;
  out[rdlen_at] = static_cast<std::uint8_t>(rdlen >> 8);
  out[rdlen_at + 1] = static_cast<std::uint8_t>(rdlen);
  std::uint8_t* p = out + opt_end;
  *p++ = 0;
  *p++ = kEdnsPaddingOption;
  *p++ = static_cast<std::uint8_t>(pad >> 8);
  *p++ = static_cast<std::uint8_t>(pad);
  std::memset(p, 0, pad);
  p += pad;
  std::memcpy(p, msg.data() + opt_end, msg.size() - opt_end);
  return padded;
}

}  // namespace dnsarena::dns
