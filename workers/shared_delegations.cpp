// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/shared_delegations.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/entry_codec.hpp"
#include "dnssec/rrset.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::workers {

namespace {

constexpr std::uint16_t kTypeA = 1, kTypeNs = 2;

cache::CacheKey cut_key(std::span<const std::uint8_t> zone) {
  return cache::CacheKey(zone, kTypeNs);
}

}  // namespace

SharedDelegations::SharedDelegations(cache::Cache& cache, std::uint32_t max_ttl_s)
    : cache_(cache), max_ttl_s_(std::max<std::uint32_t>(max_ttl_s, 1)), copy_(std::make_unique<cache::EntryCopy>()) {}

std::optional<recursion::Delegation> SharedDelegations::closest(std::span<const std::uint8_t> name) const {
  const std::uint32_t now = cache::wall_clock_now();
  const unsigned labels = dnssec::label_count(name);
  for (unsigned strip = 0; strip <= labels; ++strip) {
    const common::Bytes zone = dnssec::strip_labels(name, strip);
    if (cache_.peek(cut_key(zone), now, *copy_) != cache::LookupStatus::hit) continue;
    cache::EntryReader entry(copy_->span());
    if (!entry.valid()) continue;
    recursion::Delegation d;
    d.zone = zone;
    d.ttl = entry.expire() > now ? entry.expire() - now : 0;
    cache::RecordView rec;
    std::vector<std::pair<common::Bytes, recursion::ServerAddress>> addresses;
    while (entry.next(rec)) {
      if (rec.type == kTypeNs && (rec.owner_is_qname || wire::wire_names_equal_ci(rec.owner, zone)) &&
          wire::wire_name_length(rec.rdata) == rec.rdata.size()) {
        d.servers.push_back({dnssec::lowercase_name(rec.rdata), {}});
      } else if (rec.type == kTypeA && rec.rdata.size() == 4) {
        recursion::ServerAddress a;
        std::copy(rec.rdata.begin(), rec.rdata.end(), a.v4.begin());
        addresses.emplace_back(dnssec::lowercase_name(rec.owner), a);
      }
    }
    if (!entry.records_valid() || d.servers.empty()) continue;
    for (auto& [owner, a] : addresses)
      for (recursion::NameServer& ns : d.servers)
        if (ns.name == owner) ns.addresses.push_back(a);
    return d;
  }
  return std::nullopt;
}

bool SharedDelegations::root_known() const {
  static constexpr std::uint8_t kRoot[1] = {0};
  const std::uint32_t now = cache::wall_clock_now();
  if (cache_.peek(cut_key(kRoot), now, *copy_) != cache::LookupStatus::hit) return false;
  cache::EntryReader entry(copy_->span());
  if (!entry.valid()) return false;
  cache::RecordView rec;
  bool ns = false;  // as closest(): a cut needs one NS record whose data is a name
  while (entry.next(rec))
    ns = ns || (rec.type == kTypeNs && (rec.owner_is_qname || wire::wire_names_equal_ci(rec.owner, kRoot)) &&
                wire::wire_name_length(rec.rdata) == rec.rdata.size());
  return ns && entry.records_valid();
}

void SharedDelegations::learn(const recursion::Delegation& d) {
  std::vector<cache::RecordData> ns, glue;
  const std::uint32_t ttl = std::clamp<std::uint32_t>(d.ttl, 1, max_ttl_s_);
  for (const recursion::NameServer& s : d.servers) {
    ns.push_back({{}, kTypeNs, 1, ttl, s.name});
    for (const recursion::ServerAddress& a : s.addresses)
      glue.push_back({s.name, kTypeA, 1, ttl, {a.v4.data(), a.v4.size()}});
  }
  if (ns.empty()) return;
  cache::Answer answer;
  answer.ttl = ttl;
  answer.sections[cache::kAnswer] = ns;
  answer.sections[cache::kAdditional] = glue;
  try {
    cache_.insert(cut_key(d.zone), answer, cache::wall_clock_now());
  } catch (const std::invalid_argument&) {  // a zone name the key refuses: not kept
  }
}

}  // namespace dnsarena::workers
