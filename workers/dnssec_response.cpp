// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's answers in the validator's form and back (dnssec_response.hpp).
#include "workers/dnssec_response.hpp"

#include <algorithm>

namespace dnsarena::workers {

namespace {

bool is_dnssec_record(std::uint16_t type) {
  return type == dnssec::kTypeRrsig || type == dnssec::kTypeNsec || type == dnssec::kTypeNsec3;
}

}  // namespace

dnssec::Response to_dnssec_response(const cache::Answer& answer, std::span<const std::uint8_t> qname,
                                    std::uint16_t qtype) {
  dnssec::Response r;
  r.rcode = answer.rcode;
  r.qname = dnssec::lowercase_name(qname);
  r.qtype = qtype;
  for (unsigned s = cache::kAnswer; s <= cache::kAuthority; ++s) {
    dnssec::SectionBuilder b;
    for (const cache::RecordData& rec : answer.sections[s])
      b.add(rec.owner.empty() ? qname : rec.owner, rec.type, rec.rclass, rec.ttl, rec.rdata);
    (s == cache::kAnswer ? r.answer : r.authority) = b.finish();
  }
  return r;
}

bool to_dnssec_response(cache::EntryReader& entry, dnssec::Response& out) {
  out = {};
  out.rcode = entry.rcode();
  out.qname = dnssec::lowercase_name(entry.qname());
  out.qtype = entry.qtype();
  dnssec::SectionBuilder sections[2];
  entry.rewind();
  cache::RecordView rec;
  for (std::uint32_t i = 0; entry.next(rec); ++i) {
    const bool answer = i < entry.count(cache::kAnswer);
    if (!answer && i >= std::uint32_t{entry.count(cache::kAnswer)} + entry.count(cache::kAuthority)) break;
    sections[answer ? 0 : 1].add(rec.owner_is_qname ? entry.qname() : rec.owner, rec.type, rec.rclass, rec.ttl,
                                 rec.rdata);
  }
  if (!entry.records_valid()) return false;
  out.answer = sections[0].finish();
  out.authority = sections[1].finish();
  return true;
}

cache::Answer strip_dnssec(const cache::Answer& answer, std::uint16_t qtype,
                           std::vector<cache::RecordData> (&storage)[3]) {
  cache::Answer out = answer;
  for (unsigned s = 0; s < 3; ++s) {
    storage[s].clear();
    for (const cache::RecordData& rec : answer.sections[s])
      if (!is_dnssec_record(rec.type) || rec.type == qtype) storage[s].push_back(rec);
    out.sections[s] = storage[s];
  }
  return out;
}

std::size_t with_verdict(std::span<const std::uint8_t> entry, const cache::CacheKey& key, dnssec::Verdict verdict,
                         std::uint32_t max_ttl, std::uint32_t now, std::vector<std::uint8_t>& out) {
  cache::EntryReader reader(entry);
  if (!reader.valid()) return 0;
  const cache::EntryVerdict v = verdict == dnssec::Verdict::secure     ? cache::EntryVerdict::secure
                                : verdict == dnssec::Verdict::insecure ? cache::EntryVerdict::insecure
                                                                       : cache::EntryVerdict::indeterminate;
  if (verdict != dnssec::Verdict::secure && reader.ttl() <= max_ttl) {  // FORMAT-DEPENDENT: the info byte's verdict bits
    out.assign(entry.begin(), entry.end());
    out[cache::kEntryInfoOffset] = static_cast<std::uint8_t>((out[cache::kEntryInfoOffset] & ~cache::kInfoVerdictMask) |
                                                             (static_cast<unsigned>(v) << cache::kInfoVerdictShift));
    return reader.length();
  }
  std::vector<cache::RecordData> records[3];
  cache::RecordView rec;
  for (std::uint32_t i = 0; reader.next(rec); ++i) {
    unsigned s = cache::kAnswer;
    if (i >= reader.count(cache::kAnswer)) s = cache::kAuthority;
    if (i >= std::uint32_t{reader.count(cache::kAnswer)} + reader.count(cache::kAuthority)) s = cache::kAdditional;
    records[s].push_back({rec.owner_is_qname ? std::span<const std::uint8_t>{} : rec.owner, rec.type, rec.rclass,
                          std::min(rec.ttl, max_ttl), rec.rdata});
  }
  if (!reader.records_valid()) return 0;
  cache::Answer a;
  a.rcode = reader.rcode();
  a.authentic_data = verdict == dnssec::Verdict::secure;
  a.verdict = v;
  a.ttl = std::min(reader.ttl(), max_ttl);
  for (unsigned s = 0; s < 3; ++s) a.sections[s] = records[s];
  // The entry keeps its insert time: `now` is when the answer came, not when it was judged.
  return cache::encode_entry(key, a, std::min(now, reader.inserted()), out);
}

}  // namespace dnsarena::workers
