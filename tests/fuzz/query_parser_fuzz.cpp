// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the client query parser on arbitrary packets, then the error
// response written from whatever it parsed (what a worker sends for FORMERR, NOTIMP...).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "dns/client_query.hpp"

namespace {
namespace parser = dnsarena::dns;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> wire(data, data + size);  // the parser may modify its buffer
  parser::ClientQuery q;
  const parser::ParseVerdict verdict = parser::parse_query(wire.data(), wire.size(), q);
  if (verdict == parser::ParseVerdict::drop) return 0;
  if (q.qname_len > q.qname_storage.size()) std::abort();
  // The error response a worker would send (its REQUIRES: room for header, question,
  // OPT and ECS).
  std::uint8_t out[12 + 255 + 4 + 11 + 24 + 64];
  const std::size_t n = parser::write_error_response(q, 2 /* SERVFAIL */, out, sizeof out);
  if (n > sizeof out) std::abort();
  return 0;
}
