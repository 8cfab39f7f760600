// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the PROXY v2 header parser (dns/proxy_v2.hpp) on arbitrary bytes. The
// first input byte picks the transport (bit 0: stream) and the rest is what arrived.
// Checked: an accepted header lies within the input and the 512-byte bound, carries an
// IPv4 or IPv6 source unless LOCAL, and parses the same from exactly its own bytes; a
// stream's verdict on any prefix of the bytes is incomplete or the whole bytes' own; a
// datagram's ok is a stream's ok; a PROXY header rebuilt from what was read parses to
// the same client address.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "dns/proxy_v2.hpp"

namespace {

namespace dns = dnsarena::dns;
using Verdict = dns::ProxyV2::Verdict;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const dns::ProxyV2Transport t = (data[0] & 1) ? dns::ProxyV2Transport::stream : dns::ProxyV2Transport::dgram;
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  const dns::ProxyV2 whole = dns::parse_proxy_v2(bytes, t, true);
  const dns::ProxyV2 stream = dns::parse_proxy_v2(bytes, t, false);
  if (whole.verdict == Verdict::incomplete) std::abort();  // a datagram is never waited on
  if (whole.verdict == Verdict::ok && (stream.verdict != Verdict::ok || stream.length != whole.length)) std::abort();
  if (stream.verdict == Verdict::ok) {
    if (stream.length > bytes.size() || stream.length > dns::kProxyV2MaxHeader || stream.length < dns::kProxyV2Prefix)
      std::abort();
    if (!stream.local && stream.family != AF_INET && stream.family != AF_INET6) std::abort();
    const dns::ProxyV2 own = dns::parse_proxy_v2(bytes.first(stream.length), t, true);
    if (own.verdict != Verdict::ok || own.length != stream.length || own.local != stream.local) std::abort();
    if (!stream.local) {
      sockaddr_storage source{}, destination{}, rebuilt_source{};
      const socklen_t len = stream.source(source);
      stream.destination(destination);
      const std::vector<std::uint8_t> again = dns::build_proxy_v2(&source, &destination, t);
      const dns::ProxyV2 rebuilt = dns::parse_proxy_v2(again, t, true);
      if (rebuilt.verdict != Verdict::ok || rebuilt.source(rebuilt_source) != len ||
          std::memcmp(&rebuilt_source, &source, len) != 0)
        std::abort();
    }
  }
  // Every prefix of the bytes: incomplete, or already the whole bytes' verdict.
  for (std::size_t n = 0; n < bytes.size() && n <= dns::kProxyV2MaxHeader; ++n) {
    const dns::ProxyV2 p = dns::parse_proxy_v2(bytes.first(n), t, false);
    if (p.verdict == Verdict::incomplete) continue;
    if (p.verdict != stream.verdict && !(n == 0 && p.verdict == Verdict::not_proxy)) std::abort();
    if (p.verdict == Verdict::ok) break;
  }
  return 0;
}
