// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/dns64_synthesis.hpp"

#include <algorithm>

#include "wire/constants.hpp"

namespace dnsarena::workers {

using namespace wire;

namespace {
bool dnssec_type(std::uint16_t t) { return t == kTypeRrsig || t == kTypeNsec || t == kTypeNsec3; }
}  // namespace

std::size_t Dns64Synthesizer::build(Kind kind, const Dns64Prefix& prefix, const dns::ClientQuery& asked,
                                    const std::uint8_t* msg, std::size_t n, std::uint32_t ttl_cap,
                                    const cache::CacheKey& key, std::uint32_t now, const TtlPolicy& ttl) {
  cacheable_ = false;
  entry_.clear();
  if (n < kHeaderBytes || (get16(msg + 2) & kFlagTc)) return 0;
  UpstreamQuestion q;
  q.id = asked.id;
  q.qname = asked.qname();
  q.qtype = asked.qtype;
  q.do_bit = asked.do_bit;
  q.trust_ad = kind == Kind::as_is;  // written by this pipeline, its AD cut applied
  if (parsed_.parse(msg, n, q, ttl) != UpstreamAnswer::Verdict::accept) return 0;
  const cache::Answer& in = parsed_.answer();
  cache::Answer out = in;
  if (kind != Kind::as_is) out = rewritten(kind, prefix, in, ttl_cap);
  const std::size_t len = cache::encode_entry(key, out, now, entry_);
  cacheable_ = len > 0 && parsed_.cacheable();
  return len;
}

cache::Answer Dns64Synthesizer::rewritten(Kind kind, const Dns64Prefix& prefix, const cache::Answer& in,
                                          std::uint32_t ttl_cap) {
  cache::Answer out;
  out.rcode = in.rcode;
  out.authentic_data = false;
  out.ttl = in.ttl;
  addresses_.clear();
  addresses_.reserve(in.sections[cache::kAnswer].size());  // spans into it stay valid
  for (unsigned s = 0; s < 3; ++s) {
    records_[s].clear();
    if (s == cache::kAdditional) break;  // glue for the A question's NS: nothing of the client's
    for (cache::RecordData r : in.sections[s]) {
      if (dnssec_type(r.type)) continue;
      if (kind == Kind::aaaa_from_a && s == cache::kAnswer && r.type == kTypeA) {
        if (r.rdata.size() != 4) continue;
        addresses_.push_back(embed_ipv4(prefix, r.rdata.data()));
        r.type = kTypeAaaa;
        r.rdata = addresses_.back();
        r.ttl = std::min(r.ttl, ttl_cap);
      }
      records_[s].push_back(r);
    }
    out.sections[s] = records_[s];
  }
  if (kind == Kind::aaaa_from_a && !addresses_.empty()) out.ttl = out.ttl ? std::min(out.ttl, ttl_cap) : 0;
  return out;
}

}  // namespace dnsarena::workers
