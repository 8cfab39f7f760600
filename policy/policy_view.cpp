// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/policy_view.hpp"

#include <bit>
#include <cstring>
#include <string>

#include "policy/name_hash.hpp"
#include "policy/rule_set.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {

PolicyView::PolicyView(std::span<const std::uint8_t> image) {
  auto bad = [&](const std::string& what) { throw PolicyError("policy image: " + what); };
  if (image.size() < sizeof(ImageHeader)) bad("shorter than its header");
  const auto* h = reinterpret_cast<const ImageHeader*>(image.data());
  if (h->magic != kImageMagic) bad("not a policy image (bad magic)");
  if (h->format_version != kImageFormatVersion)
    bad("format " + std::to_string(h->format_version) + ", expected " + std::to_string(kImageFormatVersion));
  if (h->header_bytes != sizeof(ImageHeader) || h->slots_offset != sizeof(ImageHeader)) bad("bad header size");
  if (h->image_bytes > image.size()) bad("truncated: " + std::to_string(image.size()) + " of " +
                                         std::to_string(h->image_bytes) + " bytes");
  if (!std::has_single_bit(h->slot_count) || !std::has_single_bit(h->filter_words) ||
      h->records_offset != sizeof(ImageHeader) + 8ull * h->slot_count + 8ull * h->filter_words ||
      h->records_offset > h->image_bytes)
    bad("bad slot table geometry");
  if (h->zones_offset < h->records_offset || h->zones_offset + 4ull * h->zone_count > h->image_bytes)
    bad("bad zone table");
  for (std::uint32_t z = 0; z < h->zone_count; ++z) {
    std::uint32_t at;
    std::memcpy(&at, image.data() + h->zones_offset + 4ull * z, 4);
    ZoneInfoHead head;
    if (at % kRecordAlign || at + sizeof head > h->image_bytes) bad("bad zone table");
    std::memcpy(&head, image.data() + at, sizeof head);
    if (at + sizeof head + head.origin_len + head.soa_len > h->image_bytes) bad("bad zone table");
  }
  base_ = image.data();
  header_ = h;
  slots_ = reinterpret_cast<const std::uint64_t*>(base_ + h->slots_offset);
  mask_ = h->slot_count - 1;
  filter_ = slots_ + h->slot_count;
  filter_words_ = h->filter_words;
  collect_top_labels();
}

void PolicyView::collect_top_labels() {
  top_count_ = 0;
  top_bits_ = 0;
  top_any_ = false;
  for (std::uint64_t i = 0; i <= mask_ && !top_any_; ++i) {
    const std::uint64_t slot = slots_[i];
    if (slot == 0) continue;
    const std::uint8_t* rec = base_ + (slot >> 32) * kRecordAlign;
    // Address triggers (rpz-ip, rpz-client-ip) hold an address, not a name: find() never
    // looks for them.
    if ((rec[1] >> kKindShift & kKindMask) != static_cast<unsigned>(TriggerKind::qname)) continue;
    const std::uint8_t* name = rec + sizeof(RuleRecordHead);
    const std::size_t len = rec[0];
    // The last label before the root (records hold lowercase names).
    std::size_t at = 0, last = len;
    while (at < len && name[at] != 0) {
      last = at;
      at += name[at] + 1u;
    }
    if (last == len) {  // the root itself: every name is below it
      top_any_ = true;
      break;
    }
    const std::uint8_t l = name[last];
    bool known = false;
    for (unsigned t = 0; t < top_count_ && !known; ++t)
      known = top_[t].len == l && std::memcmp(top_[t].text, name + last + 1, l) == 0;
    if (known) continue;
    if (top_count_ == kMaxTopLabels) {
      top_any_ = true;
      break;
    }
    top_[top_count_].len = l;
    std::memcpy(top_[top_count_].text, name + last + 1, l);
    top_bits_ |= std::uint64_t{1} << top_label_bit(l, l ? name[last + 1] : 0);
    ++top_count_;
  }
}

bool PolicyView::may_match(std::span<const std::uint8_t> qname) const {
  if (top_any_) return true;
  std::size_t at = 0, last = qname.size();
  while (at < qname.size() && qname[at] != 0) {
    last = at;
    at += qname[at] + 1u;
  }
  if (last >= qname.size()) return false;  // the root: no trigger is there
  const std::uint8_t l = qname[last];
  if (last + 1u + l > qname.size()) return true;  // malformed: let the full lookup decide
  if (!(top_bits_ >> top_label_bit(l, l ? wire::ascii_lower(qname[last + 1]) : 0) & 1)) return false;
  for (unsigned t = 0; t < top_count_; ++t) {
    if (top_[t].len != l) continue;
    unsigned k = 0;
    while (k < l && wire::ascii_lower(qname[last + 1 + k]) == top_[t].text[k]) ++k;
    if (k == l) return true;
  }
  return false;
}

ZoneApex PolicyView::zone(std::uint8_t zone) const {
  std::uint32_t at;
  std::memcpy(&at, base_ + header_->zones_offset + 4ull * zone, 4);
  ZoneInfoHead head;
  std::memcpy(&head, base_ + at, sizeof head);
  const std::uint8_t* p = base_ + at + sizeof head;
  return {{p, head.origin_len}, (head.flags & kZoneHasSoa) != 0, head.soa_ttl, {p + head.origin_len, head.soa_len}};
}

// `kind_bits`: the flags' wildcard and kind bits the record must have.
const std::uint8_t* PolicyView::find_trigger(std::uint64_t hash, const std::uint8_t* name, std::size_t len,
                                             std::uint8_t kind_bits) const {
  std::uint32_t tag = static_cast<std::uint32_t>(hash >> 32);
  if (tag == 0) tag = 1;
  for (std::uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
    const std::uint64_t slot = slots_[i];
    if (slot == 0) return nullptr;
    if (static_cast<std::uint32_t>(slot) != tag) continue;
    const std::uint8_t* rec = base_ + (slot >> 32) * kRecordAlign;
    if (rec[0] == len && (rec[1] & (kFlagWildcard | kKindMask << kKindShift)) == kind_bits &&
        std::memcmp(rec + sizeof(RuleRecordHead), name, len) == 0)
      return rec;
  }
}

Match PolicyView::find(std::span<const std::uint8_t> qname) const {
  if (!header_ || header_->rule_count == 0 || qname.empty() || !may_match(qname)) return {};
  std::uint8_t name[wire::kMaxNameWire + 8];
  std::memset(name + qname.size(), 0, 8);
  wire::lowercase_copy(name, qname);
  NameSuffixes s;
  split_suffixes(name, qname.size(), s);
  const unsigned labels = s.labels;
  // Candidates: 0 = the exact name, i >= 1 = `*.` at the suffix from label i (labels: the root).
  struct Candidate {
    std::uint64_t hash;
    unsigned suffix;
  };
  Candidate cand[kMaxLabels + 2];
  unsigned n = 0;
  if (header_->exact_labels & label_bit(labels)) cand[n++] = {trigger_hash(s.state[0], false), 0};
  const std::uint64_t wild = header_->wildcard_labels;
  if (wild)
    for (unsigned i = 1; i <= labels; ++i)
      if (wild & label_bit(labels - i)) cand[n++] = {trigger_hash(s.state[i], true), i};
  for (unsigned c = 0; c < n; ++c) __builtin_prefetch(&filter_[filter_word(cand[c].hash, filter_words_)]);
  unsigned passed = 0;
  for (unsigned c = 0; c < n; ++c) {
    const std::uint64_t bits = filter_bits(cand[c].hash);
    if ((filter_[filter_word(cand[c].hash, filter_words_)] & bits) == bits) cand[passed++] = cand[c];
  }
  for (unsigned c = 0; c < passed; ++c) __builtin_prefetch(&slots_[cand[c].hash & mask_]);
  Match best;
  for (unsigned c = 0; c < passed; ++c) {
    const unsigned i = cand[c].suffix;
    const std::size_t off = i == labels ? qname.size() - 1 : s.offset[i];
    const std::uint8_t* rec = find_trigger(cand[c].hash, name + off, qname.size() - off, i != 0 ? kFlagWildcard : 0);
    if (!rec || (best && rec[2] >= best.zone)) continue;
    best.record = rec;
    best.zone = rec[2];
    best.wildcard = i != 0;
    best.action = static_cast<Action>((rec[1] >> kActionShift) & kActionMask);
    if (best.zone == 0) break;  // nothing later can win: candidates go exact, then longest parent
  }
  return best;
}

}  // namespace dnsarena::policy

namespace dnsarena::policy {

Match PolicyView::find_address(TriggerKind kind, const std::uint8_t* address16) const {
  if (!has_address_triggers(kind)) return {};
  const std::uint64_t* lens = kind == TriggerKind::client_ip ? header_->client_ip_lens : header_->response_ip_lens;
  const std::uint8_t kind_bits = static_cast<std::uint8_t>(static_cast<unsigned>(kind) << kKindShift);
  Match best;
  for (int len = 128; len >= 0; --len) {
    if (!(lens[len / 64] >> (len % 64) & 1)) continue;
    std::uint8_t key[kAddressKeyBytes] = {};
    key[0] = static_cast<std::uint8_t>(len);
    std::memcpy(key + 1, address16, static_cast<std::size_t>(len) / 8);
    if (len % 8) key[1 + len / 8] = static_cast<std::uint8_t>(address16[len / 8] & (0xFF00 >> (len % 8)));
    const std::uint64_t hash = address_trigger_hash(key, kind == TriggerKind::client_ip);
    const std::uint64_t bits = filter_bits(hash);
    if ((filter_[filter_word(hash, filter_words_)] & bits) != bits) continue;
    const std::uint8_t* rec = find_trigger(hash, key, sizeof key, kind_bits);
    if (!rec || (best && rec[2] >= best.zone)) continue;  // a longer prefix of the same zone came first
    best.record = rec;
    best.zone = rec[2];
    best.action = static_cast<Action>((rec[1] >> kActionShift) & kActionMask);
  }
  return best;
}

}  // namespace dnsarena::policy
