// SPDX-License-Identifier: GPL-3.0-or-later
// What became of the PROXY v2 headers (proxy_protocol.hpp) a worker saw: the outcomes
// counted per worker in the answer metrics' rows (answer_metrics.hpp), summed for
// /metrics (dnsarena_proxy_headers_total{outcome}) and `dnsarena stats` ("proxy").
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dnsarena::workers {

enum class ProxyOutcome : std::uint8_t {
  accepted,   // a valid PROXY header from a listed source: its client address used
  local,      // a valid LOCAL header from a listed source: the connection's own address used
  no_header,  // dropped: a listed source's query without a header
  malformed,  // dropped: a listed source's header that parse_proxy_v2 refused
  unlisted,   // dropped: a header from a source not in proxy_protocol_from
};
inline constexpr std::size_t kProxyOutcomes = 5;
inline constexpr std::array<std::string_view, kProxyOutcomes> kProxyOutcomeNames = {"accepted", "local", "no_header",
                                                                                    "malformed", "unlisted"};

}  // namespace dnsarena::workers
