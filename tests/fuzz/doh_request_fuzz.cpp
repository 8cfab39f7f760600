// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: DNS-over-HTTPS request decisions (workers/doh_request.hpp) on
// arbitrary requests. The input is "METHOD\nPATH\nCONTENT-TYPE\nBODY". Checked: a 200
// carries a DNS query (check_dns_query) that is the body (POST) or the one dns= value
// decoded (GET), and base64url has one encoding per message (what decodes re-encodes to
// the same text); min_ttl reads any bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "workers/doh_request.hpp"

namespace {

namespace doh = dnsarena::workers;

std::string_view next_line(std::string_view& rest) {
  const std::size_t nl = rest.find('\n');
  const std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const std::string_view method = next_line(rest), path = next_line(rest), type = next_line(rest);
  const std::span<const std::uint8_t> body(reinterpret_cast<const std::uint8_t*>(rest.data()), rest.size());
  std::vector<std::uint8_t> msg;
  const doh::DohStatus status = doh::check_request({method, path, type, body, false}, "/dns-query", msg);
  if (status == doh::DohStatus::ok) {
    if (!doh::check_dns_query(msg)) std::abort();
    if (method == "POST" && !std::equal(msg.begin(), msg.end(), body.begin(), body.end())) std::abort();
    if (method == "GET") {
      const std::string text = doh::encode_base64url(msg);
      if (path.find("dns=" + text) == std::string_view::npos) std::abort();
    }
  } else if (!msg.empty() && status != doh::DohStatus::bad_request) {
    std::abort();  // a refused request hands no message on
  }
  std::vector<std::uint8_t> decoded;
  if (doh::decode_base64url(path, decoded) && doh::encode_base64url(decoded) != path) std::abort();
  (void)doh::min_ttl(body);
  return 0;
}
