// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/traffic/query_stream.hpp"

#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::traffic {

QueryStream::QueryStream(const TrafficProfile& profile, std::uint64_t name_seed, std::uint64_t stream_seed,
                         std::string_view zone)
    : profile_(profile),
      gen_(profile, name_seed),
      stream_seed_(stream_seed),
      zone_(wire::name_to_wire(zone)),
      zipf_(profile.names, profile.zipf) {
  for (auto& c : zone_) c = wire::ascii_lower(c);
}

void QueryStream::query(std::uint64_t k, StreamQuery& out) const {
  SplitMix64 rng(stream_seed_ * 0xD6E8FEB86659FD93ULL ^ (k + 1) * 0x9E3779B97F4A7C15ULL);
  rng.next();
  const std::uint64_t rank = zipf_.sample([&] { return rng.unit(); });
  out.name_index = rank - 1;
  const double u = rng.unit();
  const TrafficProfile& m = profile_;
  out.ecs = dns::EcsOption{};
  if (profile_.ecs_subnets > 0) {
    const auto c = static_cast<std::uint32_t>(rng.range(0, profile_.ecs_subnets - 1));
    out.ecs.present = true;
    out.ecs.family = 1;
    out.ecs.source_prefix = 24;
    out.ecs.address = {10, static_cast<std::uint8_t>(c >> 8), static_cast<std::uint8_t>(c), 0};
  }
  if (u < profile_.stray_nxdomain_share) {
    out.kind = StreamQuery::Kind::nxdomain;
    const std::string label = "nx" + std::to_string(rank);
    out.qname.clear();
    out.qname.push_back(static_cast<std::uint8_t>(label.size()));
    out.qname.append(label.begin(), label.end());
    out.qname += zone_;
    const double t = rng.unit() * (m.share_a + m.share_aaaa + m.share_other);
    out.qtype = t < m.share_a ? wire::kTypeA : t < m.share_a + m.share_aaaa ? wire::kTypeAaaa : wire::kTypeTxt;
    return;
  }
  GeneratedEntry e;
  gen_.generate(out.name_index, e);
  out.qname.assign(e.qname.begin(), e.qname.end() - 1);  // drop the root
  out.qname += zone_;
  out.qtype = e.qtype;
  out.kind = StreamQuery::Kind::name;
  if (u < profile_.stray_nxdomain_share + profile_.stray_nodata_share) {
    out.kind = StreamQuery::Kind::nodata;
    static constexpr std::uint16_t kOthers[3][2] = {
        {wire::kTypeAaaa, wire::kTypeTxt}, {wire::kTypeA, wire::kTypeTxt}, {wire::kTypeA, wire::kTypeAaaa}};
    const int row = e.qtype == wire::kTypeA ? 0 : e.qtype == wire::kTypeAaaa ? 1 : 2;
    out.qtype = kOthers[row][rng.next() % 2];
  }
}

}  // namespace dnsarena::sim::traffic
