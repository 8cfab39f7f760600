// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/answer_chain.hpp"

#include <algorithm>
#include <cstring>

#include "dns/extended_error.hpp"
#include "policy/policy_answer.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {

using namespace wire;

namespace {

constexpr std::size_t kRrFixed = 10;   // type, class, ttl, rdlength
constexpr std::size_t kMaxOptBytes = 512;  // an OPT kept through a rewrite (ours: ECS, COOKIE, EDE)
constexpr std::size_t kPointerLimit = 0x4000;

struct Name {
  std::uint8_t bytes[kMaxNameWire];
  std::size_t len = 0;
  std::span<const std::uint8_t> span() const { return {bytes, len}; }
  bool operator==(const Name& o) const { return len == o.len && std::memcmp(bytes, o.bytes, len) == 0; }
};

// The (possibly compressed) name at `at` in m[0, size), lowercased into `n`. False when
// malformed: past the end, over 255 bytes, a reserved label type, or a pointer that does
// not go further back than every pointer before it (so the walk ends).
bool read_name(const std::uint8_t* m, std::size_t size, std::size_t at, Name& n) {
  n.len = 0;
  std::size_t floor = at;
  while (at < size) {
    const std::uint8_t l = m[at];
    if ((l & 0xC0) == 0xC0) {
      if (at + 1 >= size) return false;
      const std::size_t to = ((l & 0x3Fu) << 8) | m[at + 1];
      if (to >= floor) return false;
      floor = at = to;
      continue;
    }
    if (l & 0xC0 || n.len + l + 1u > kMaxNameWire || at + 1u + l > size) return false;
    n.bytes[n.len] = l;
    for (unsigned i = 1; i <= l; ++i) n.bytes[n.len + i] = ascii_lower(m[at + i]);
    n.len += l + 1u;
    if (l == 0) return true;
    at += l + 1u;
  }
  return false;
}

// `chain` with its suffix `owner` replaced by `target` (a DNAME's substitution). False
// when `owner` is not a proper suffix of `chain` at a label boundary, or the result is
// over 255 bytes.
bool substitute(const Name& chain, const Name& owner, const Name& target, Name& out) {
  for (std::size_t pos = 0; pos < chain.len && chain.bytes[pos] != 0; pos += chain.bytes[pos] + 1u) {
    const std::size_t next = pos + chain.bytes[pos] + 1u;
    if (chain.len - next != owner.len || std::memcmp(chain.bytes + next, owner.bytes, owner.len) != 0) continue;
    if (next + target.len > kMaxNameWire) return false;
    std::memcpy(out.bytes, chain.bytes, next);
    std::memcpy(out.bytes + next, target.bytes, target.len);
    out.len = next + target.len;
    return true;
  }
  return false;
}

// Where a match leaves the answer: the records before `cut` stay (`kept` of them), and
// the matched name is at `name_at` in them (0: not in them, written in full).
struct Cut {
  std::size_t cut = 0;
  unsigned kept = 0;
  std::size_t name_at = 0;
};

// The OPT record of the message (the writer puts it last): its offset, or 0.
std::size_t find_opt(const std::uint8_t* m, std::size_t size, std::size_t pos, unsigned records) {
  const std::span<const std::uint8_t> msg(m, size);
  for (unsigned i = 0; i < records; ++i) {
    const std::size_t start = pos;
    pos = skip_wire_name(msg, pos);
    if (pos == 0 || pos + kRrFixed > size) return 0;
    const std::size_t end = pos + kRrFixed + get16(m + pos + 8);
    if (end > size) return 0;
    if (get16(m + pos) == kTypeOpt && m[start] == 0) return start;
    pos = end;
  }
  return 0;
}

ChainVerdict rewrite(const PolicyView& view, const Match& match, const Cut& c, const Name& name, std::uint16_t qtype,
                     std::size_t question_end, std::size_t limit, std::uint8_t* out, std::size_t size,
                     std::size_t cap) {
  ChainVerdict v{match, true, 0};
  if (match.action == Action::drop) return v;
  std::uint8_t opt[kMaxOptBytes + dns::kEdeOptionBytes];
  std::size_t opt_len = 0;
  const unsigned records = get16(out + 6) + get16(out + 8) + get16(out + 10);
  if (const std::size_t at = find_opt(out, size, question_end, records)) {
    opt_len = kOptRecordBytes + get16(out + at + 9);
    if (opt_len > kMaxOptBytes) opt_len = 0;  // not one of ours: the answer goes without EDNS
    else std::memcpy(opt, out + at, opt_len);
  }
  std::uint16_t rcode = kRcodeNoError;
  dns::ExtendedError ede = dns::ExtendedError::blocked;
  Cut keep = c;
  if (match.action == Action::nxdomain) rcode = kRcodeNxDomain;
  if (match.action == Action::local_data) ede = dns::ExtendedError::filtered;
  if (match.action == Action::refuse) {
    rcode = kRcodeRefused;
    ede = dns::ExtendedError::prohibited;
    keep = {question_end, 0, 0};
  }
  if (opt_len) {
    opt_len += dns::write_ede_option(ede, opt + opt_len);
    put16(opt + 9, static_cast<std::uint16_t>(opt_len - kOptRecordBytes));
  }
  std::uint16_t flags = get16(out + 2) & ~(kFlagAd | kFlagTc | 0xF);
  if (keep.cut + opt_len > std::min(limit, cap)) {  // the EDE made it too long: TC, no records
    keep = {question_end, 0, 0};
    flags |= kFlagTc;
  }
  const bool truncated = flags & kFlagTc;
  put16(out + 2, static_cast<std::uint16_t>(flags | rcode));
  put16(out + 6, static_cast<std::uint16_t>(keep.kept));
  put16(out + 8, 0);
  put16(out + 10, opt_len ? 1 : 0);
  std::memcpy(out + keep.cut, opt, opt_len);
  v.size = keep.cut + opt_len;
  if (match.action == Action::refuse || truncated) return v;
  const std::size_t name_at = keep.name_at < kPointerLimit ? keep.name_at : 0;
  v.size = add_rule_records(view, match, qtype, name_at, name.span(), out, v.size, keep.cut, limit, cap);
  return v;
}

// The walk over an answer that has a name other than the query's or an address to check
// (check_answer_chain's fast path found one). Out of line: the common answer does not
// pay for its frame.
[[gnu::noinline]] ChainVerdict walk_chain(const PolicyView& view, std::uint16_t qtype, std::size_t limit,
                                          std::uint8_t* out, std::size_t size, std::size_t cap,
                                          std::size_t question_end) {
  ChainVerdict none{{}, false, size};
  const unsigned answers = get16(out + 6);
  const std::span<const std::uint8_t> msg(out, size);
  std::size_t pos = question_end;
  // The chain's current name: the query name until a CNAME or DNAME leads on. `chain_at`:
  // where it is written (the question, or a CNAME's rdata); `chain` holds it once read.
  std::size_t chain_at = kHeaderBytes;
  Name chain, name, other;
  bool chain_read = false;
  bool pending = false;  // a DNAME's substituted name waits for its CNAME in `pending_name`
  Name pending_name;
  Cut pending_cut;
  // Checks `n`; a match that decides rewrites the answer. True: stop (decided or PASSTHRU).
  ChainVerdict v = none;
  // Applies `m` (a match for `n`, to cut the answer at `c`). True: stop.
  auto apply = [&](const Match& m, const Name& n, const Cut& c) {
    if (!m) return false;
    v.match = m;
    if (m.action == Action::passthru) return true;
    // A PASSTHRU on the query name exempts its whole answer (looked up only now: rare).
    const Match q = view.find({out + kHeaderBytes, question_end - 4 - kHeaderBytes});
    if (q && q.action == Action::passthru) {
      v.match = q;
      return true;
    }
    v = rewrite(view, m, c, n, qtype, question_end, limit, out, size, cap);
    return true;
  };
  auto check = [&](const Name& n, const Cut& c) { return apply(view.find(n.span()), n, c); };
  // rpz-ip: the best rule over the answer's addresses (the lowest zone), applied after the
  // names of the chain, which take precedence.
  const bool addresses = view.has_address_triggers(TriggerKind::response_ip);
  Match address_match;
  auto read_chain = [&]() {
    if (!chain_read) chain_read = read_name(out, size, chain_at, chain);
    return chain_read;
  };
  for (unsigned i = 0; i < answers; ++i) {
    const std::size_t start = pos;
    if (pos + 2 > size) return none;
    const bool owner_is_qname = out[pos] == 0xC0 && out[pos + 1] == kHeaderBytes;
    const std::size_t owner_end = owner_is_qname ? pos + 2 : skip_wire_name(msg, pos);
    if (owner_end == 0 || owner_end + kRrFixed > size) return none;
    const std::uint16_t type = get16(out + owner_end);
    const std::size_t rdata = owner_end + kRrFixed;
    const std::size_t end = rdata + get16(out + owner_end + 8);
    if (end > size) return none;
    pos = end;
    if (type == kTypeRrsig) continue;  // covers a record of the chain: its owner is one
    if (pending) {  // the DNAME's CNAME, or the DNAME stands alone
      pending = false;
      if (type != kTypeCname || !read_name(out, size, rdata, name) || !(name == pending_name))
        if (check(pending_name, pending_cut)) return v;
    }
    // An owner other than the query name or the chain's name (a pointer to where it is
    // written, as the writer compresses it) is read and compared.
    const bool owner_at_chain = (out[start] & 0xC0) == 0xC0 && ((out[start] & 0x3Fu) << 8 | out[start + 1]) == chain_at;
    if (type != kTypeDname && !owner_is_qname && !owner_at_chain) {
      if (!read_name(out, size, start, other) || !read_chain()) return none;
      if (!(other == chain) && check(other, {start, i, 0})) return v;
    }
    if (addresses && ((type == kTypeA && end - rdata == 4) || (type == kTypeAaaa && end - rdata == 16))) {
      std::uint8_t a16[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};  // IPv4 as ::ffff:a.b.c.d
      std::memcpy(a16 + 16 - (end - rdata), out + rdata, end - rdata);
      const Match m = view.find_address(TriggerKind::response_ip, a16);
      if (m && (!address_match || m.zone < address_match.zone)) address_match = m;
    }
    if (type == kTypeCname && qtype != kTypeCname) {  // asked for the CNAME itself: not followed, not a chain
      if (!read_name(out, size, rdata, name)) return none;
      if (check(name, {end, i + 1, rdata})) return v;
      chain_at = rdata;
      chain = name;
      chain_read = true;
    } else if (type == kTypeDname) {
      Name owner;
      if (!read_name(out, size, start, owner) || !read_name(out, size, rdata, name) || !read_chain()) return none;
      if (substitute(chain, owner, name, pending_name)) {
        pending = true;
        pending_cut = {end, i + 1, 0};
      }
    }
  }
  if (pending && check(pending_name, pending_cut)) return v;
  // An address matched: the whole answer is the rule's, owned by the query name.
  if (address_match) apply(address_match, chain, {question_end, 0, kHeaderBytes});
  return v;
}

}  // namespace

ChainVerdict check_answer_chain(const PolicyView& view, std::uint16_t qtype, std::size_t qname_len,
                                std::size_t limit, std::uint8_t* out, std::size_t size, std::size_t cap) {
  const ChainVerdict none{{}, false, size};
  if (size < kHeaderBytes || view.rules() == 0) return none;
  const unsigned answers = get16(out + 6);
  const unsigned rcode = get16(out + 2) & 0xF;
  if (answers == 0 || get16(out + 4) != 1 || (rcode != kRcodeNoError && rcode != kRcodeNxDomain)) return none;
  // The question is the client's, as it wrote it: `qname_len` bytes, the root label last.
  const std::size_t question_end = kHeaderBytes + qname_len + 4;
  if (qname_len == 0 || question_end > size || out[question_end - 5] != 0) return none;
  if (!answer_needs_check(view, out, size, qname_len)) return none;  // the common answer
  return walk_chain(view, qtype, limit, out, size, cap, question_end);
}

}  // namespace dnsarena::policy
