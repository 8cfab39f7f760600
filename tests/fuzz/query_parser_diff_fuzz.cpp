// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the differential check of the two client query parsers on arbitrary
// packets (tests/dns/query_parser_diff.hpp): the hand-written fast path and libknot's must
// agree on the verdict, every field, the cache key bytes and the error response; a
// mismatch aborts with both descriptions.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/dns/query_parser_diff.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dnsarena::dns::testing::DiffResult r = dnsarena::dns::testing::diff_parsers(data, size);
  if (!r.mismatch.empty()) {
    std::fprintf(stderr, "parsers disagree:\n%s\n", r.mismatch.c_str());
    std::abort();
  }
  return 0;
}
