// An upstream server's response, checked and turned into a cache::Answer.
//
// Purpose: the only place where untrusted upstream bytes become something we cache. The
// response is parsed with libknot (names decompressed to wire form), matched against the
// query we sent, scrubbed to the answer's bailiwick, and given a TTL:
//
//   match       QR set, opcode QUERY, the ID we sent, exactly one question equal (case
//               aside) to ours, and, when we sent ECS, an ECS reply for the same family,
//               source prefix and address (RFC 7871 7.3). Else: ignored (keep waiting).
//   scrub       answer section: records owned by the qname or by a CNAME target reached
//               from it (the chain), of the asked type, CNAME, DNAME or RRSIG. Authority:
//               records owned by the chain's last name or one of its ancestors (the zone
//               that answered). Additional: address records of NS targets kept in
//               authority that are inside that zone (glue). OPT and TSIG never.
//   positive    entry TTL = smallest kept answer TTL; every TTL clamped to [floor, ceiling].
//   negative    NXDOMAIN, or NOERROR without a record of the asked type at the chain's
//               end, with an SOA in authority: TTL = min(SOA TTL, SOA MINIMUM), capped by
//               the negative ceiling (RFC 2308 section 5). Without an SOA: not cached.
//   other rcode SERVFAIL, REFUSED, NOTIMP, FORMERR...: a failed attempt (next upstream).
//
// Costs: one knot_pkt_parse, then linear passes over the records (the chain pass repeats
// at most 8 times for out-of-order chains). Spans in answer() point into the parsed
// packet, which lives as long as this object.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "cache/entry_codec.hpp"
#include "workers/dns_message.hpp"
#include "workers/knot_headers.hpp"

namespace dnsarena::workers {

struct TtlPolicy {
  std::uint32_t floor = 0;
  std::uint32_t ceiling = 86400;
  std::uint32_t negative_ceiling = 3600;
};

// What we asked, to match the reply against.
struct UpstreamQuestion {
  std::uint16_t id = 0;
  std::span<const std::uint8_t> qname;  // lowercase wire form
  std::uint16_t qtype = 0;
  EcsOption ecs;                        // as sent (present = false: none sent)
};

class UpstreamAnswer {
public:
  enum class Verdict {
    accept,  // a usable answer (see cacheable())
    ignore,  // not the reply to our question (or unparsable): keep waiting
    fail,    // the server answered, but with an error: try the next upstream
  };

  Verdict parse(const std::uint8_t* wire, std::size_t len, const UpstreamQuestion& asked, const TtlPolicy& ttl);

  const cache::Answer& answer() const { return answer_; }
  bool cacheable() const { return cacheable_; }
  bool truncated() const { return truncated_; }
  bool negative() const { return negative_; }
  // The ECS scope the answer is valid for (0: for every client).
  std::uint8_t ecs_scope() const { return ecs_scope_; }
  std::uint16_t rcode() const { return rcode_; }

private:
  std::vector<std::uint8_t> wire_;  // libknot parses in place
  KnotPkt pkt_;
  std::vector<cache::RecordData> records_[3];
  cache::Answer answer_{};
  bool cacheable_ = false;
  bool truncated_ = false;
  bool negative_ = false;
  std::uint8_t ecs_scope_ = 0;
  std::uint16_t rcode_ = 0;
};

// Case-insensitive helpers over uncompressed wire names.
bool names_equal(const std::uint8_t* a, const std::uint8_t* b);
bool name_is_at_or_below(const std::uint8_t* name, const std::uint8_t* parent);

}  // namespace dnsarena::workers
