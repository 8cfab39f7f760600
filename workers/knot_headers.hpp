// libknot's C headers, which carry no extern "C" guards (see ../shared/DEPS.md), plus a
// smart pointer that frees a parsed packet.
#pragma once
#include <cstring>  // libknot/xdp headers use memset without including it
#include <memory>

extern "C" {
#include <libknot/libknot.h>
}

namespace dnsarena::workers {

struct KnotPktFree {
  void operator()(knot_pkt_t* p) const { knot_pkt_free(p); }
};
using KnotPkt = std::unique_ptr<knot_pkt_t, KnotPktFree>;

}  // namespace dnsarena::workers
