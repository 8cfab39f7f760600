// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/rpz_copy_text.hpp"

#include <cstdlib>
#include <string>

#include "dns/knot_packet.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {

void print_rpz_copy(RpzCopyReader& copy, std::FILE* out) {
  std::size_t buf_size = 1024;  // knot_rrset_txt_dump grows it (realloc) when a record needs more
  char* buf = static_cast<char*>(std::malloc(buf_size));
  if (!buf) throw PolicyError("out of memory");
  try {
    const std::string head = "; " + copy.source() + ": the copy of " + wire::wire_to_text(copy.origin()) +
                             " a zone transfer keeps, " + std::to_string(copy.records()) + " records\n";
    if (std::fputs(head.c_str(), out) < 0) throw PolicyError("cannot write the zone text");
    ScannedRecord r;
    while (copy.next(r)) {
      knot_rrset_t rr;
      knot_rrset_init(&rr, r.owner.data(), r.type, KNOT_CLASS_IN, r.ttl);
      if (knot_rrset_add_rdata(&rr, r.rdata.data(), static_cast<std::uint16_t>(r.rdata.size()), nullptr) != KNOT_EOK)
        throw PolicyError("out of memory");
      const int n = knot_rrset_txt_dump(&rr, &buf, &buf_size, &KNOT_DUMP_STYLE_DEFAULT);
      knot_rdataset_clear(&rr.rrs, nullptr);
      if (n < 0) copy.fail(r.line, std::string("cannot print the record: ") + knot_strerror(n));
      if (std::fwrite(buf, 1, static_cast<std::size_t>(n), out) != static_cast<std::size_t>(n))
        throw PolicyError("cannot write the zone text");
    }
  } catch (...) {
    std::free(buf);
    throw;
  }
  std::free(buf);
}

}  // namespace dnsarena::policy
