// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the upstream answer parser (matching, bailiwick scrub, negative TTLs,
// ECS scope), then what a worker does with an accepted answer: encode the cache entry
// and decode it again. Input: 3 control bytes, then the response packet. The question
// we "asked" is taken from the packet itself (ID, qname, qtype), so mutations reach the
// scrub and TTL code instead of stopping at the match:
//   byte 0: bit0 DO asked, bit1 ECS sent (IPv4 192.0.2.0/24), bit2 ECS IPv6 instead,
//           bit3 forward zone = the qname's parent (else the root), bit4 ask the qname
//           with its case flipped (a 0x20 mismatch: must be ignored)
//   byte 1: TTL floor (0-255 s); byte 2: negative ceiling (x 60 s)
// Every reply also goes through dns::read_tcp_keepalive (in bounds, -1 or a 16-bit value).
// Every accepted, cacheable answer must encode into an entry that decodes and walks
// completely, or be refused by the encoder (too big): never a malformed entry.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/entry_codec.hpp"
#include "dns/opt_record.hpp"
#include "workers/upstream_answer.hpp"

using namespace dnsarena;

namespace {

// Length of the uncompressed wire name at p (at most `avail` bytes), or 0.
std::size_t wire_name_length(const std::uint8_t* p, std::size_t avail) {
  std::size_t n = 0;
  while (n < avail) {
    const std::uint8_t l = p[n];
    if (l == 0) return n + 1 <= 255 ? n + 1 : 0;
    if (l > 63) return 0;
    n += 1 + l;
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size >= 3) {  // a kept tcp/tls connection reads every reply's keepalive option first
    const int keepalive = dns::read_tcp_keepalive({data + 3, size - 3});
    if (keepalive < -1 || keepalive > 0xFFFF) std::abort();
  }
  if (size < 3 + 12 + 1 + 4) return 0;
  const std::uint8_t ctl = data[0];
  const std::uint8_t* wire = data + 3;
  const std::size_t len = size - 3;
  const std::size_t qlen = wire_name_length(wire + 12, len - 12);
  if (qlen == 0 || 12 + qlen + 4 > len) return 0;
  std::vector<std::uint8_t> qname(wire + 12, wire + 12 + qlen);
  if ((ctl & 16) && qlen > 1) qname[1] ^= 0x20;
  workers::UpstreamQuestion asked;
  asked.id = static_cast<std::uint16_t>(wire[0] << 8 | wire[1]);
  asked.qname = qname;
  asked.qtype = static_cast<std::uint16_t>(wire[12 + qlen] << 8 | wire[12 + qlen + 1]);
  asked.do_bit = (ctl & 1) != 0;
  if (ctl & 2) {
    asked.ecs.present = true;
    if (ctl & 4) {
      asked.ecs.family = 2;
      asked.ecs.source_prefix = 56;
      asked.ecs.address = {0x20, 0x01, 0x0d, 0xb8, 1, 2, 3};
    } else {
      asked.ecs.family = 1;
      asked.ecs.source_prefix = 24;
      asked.ecs.address = {192, 0, 2};
    }
  }
  if ((ctl & 8) && qlen > 1) asked.zone = {qname.data() + 1 + qname[0], qlen - 1 - qname[0]};
  workers::TtlPolicy ttl;
  ttl.floor = data[1];
  ttl.negative_ceiling = std::uint32_t{data[2]} * 60;

  workers::UpstreamAnswer a;
  if (a.parse(wire, len, asked, ttl) != workers::UpstreamAnswer::Verdict::accept || !a.cacheable()) return 0;
  cache::EcsTag ecs;
  if (asked.ecs.present) {
    ecs.family = asked.ecs.family == 1 ? cache::EcsFamily::ipv4 : cache::EcsFamily::ipv6;
    ecs.prefix = std::min<std::uint8_t>(a.ecs_scope(), asked.ecs.family == 1 ? 32 : 128);
    ecs.address = asked.ecs.address;
  }
  const cache::CacheKey key(qname, asked.qtype, asked.do_bit ? cache::kKeyDo : 0, ecs);
  std::vector<std::uint8_t> entry;
  const std::size_t n = cache::encode_entry(key, a.answer(), 1'000'000, entry);
  if (n == 0) return 0;  // refused (too large): the answer is served, not cached
  cache::EntryReader reader(std::span<const std::uint8_t>(entry.data(), n));
  if (!reader.valid() || !reader.validate_all()) std::abort();  // the cache would hold a bad entry
  return 0;
}
