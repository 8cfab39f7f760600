// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the entry decoder and the response writer on arbitrary entry bytes.
// Input: 4 control bytes (query flags, size limit, EDNS options), then the entry. A
// worker builds a response from a copy that passed EntryReader::valid(); records are
// walked and written whatever they hold, so the writer must never read past the entry
// or write past its buffer, and must say truncated when records did not fit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "cache/entry_codec.hpp"
#include "cache/response_writer.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::uint8_t c0 = data[0], c1 = data[1], c2 = data[2], c3 = data[3];
  // The entry in a buffer of its own size, so ASan sees any read past it.
  const std::vector<std::uint8_t> bytes(data + 4, data + size);
  EntryReader reader(std::span<const std::uint8_t>(bytes.data(), bytes.size()));
  if (!reader.valid()) return 0;
  if (reader.length() > bytes.size()) std::abort();
  (void)reader.validate_all();
  reader.rewind();
  QueryInfo q;
  q.id = static_cast<std::uint16_t>(c0 << 8 | c1);
  q.flags = (c0 & 1) ? kFlagRd | kFlagCd : kFlagRd;
  q.qname = reader.qname();
  q.qtype = reader.qtype();
  ResponseOptions opt;
  opt.max_size = (c1 & 1) ? 512 : 512 + std::size_t{c2} * 64;
  opt.edns = (c0 & 2) != 0;
  opt.edns_do = (c0 & 4) != 0;
  opt.one_answer_rrset = (c0 & 8) != 0;
  const std::uint8_t ecs_reply[] = {0, 8, 0, 7, 0, 1, 24, 0, 192, 0, 2};
  if (c0 & 16) opt.edns_options = ecs_reply;
  const std::uint32_t now = reader.inserted() + c3 * 97u;
  std::vector<std::uint8_t> out(opt.max_size);
  const ResponseResult r = write_response(reader, q, now, opt, out.data(), out.size());
  if (r.size > out.size()) std::abort();
  return 0;
}
