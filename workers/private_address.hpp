// SPDX-License-Identifier: GPL-3.0-or-later
// DNS rebinding protection, as Unbound's private-address and private-domain: the
// addresses of the operator's own networks are not accepted from the public DNS. A web
// page's script that asks for rebind.attacker.example and gets 192.168.1.1 would
// otherwise reach the local network through the browser.
//
//   private_address: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 169.254.0.0/16,
//                     fd00::/8, fe80::/10, 127.0.0.0/8, ::1, ::ffff:0:0/96]
//                    (none by default: off)
//   private_domain:  [corp.example]   names at or below these may have such addresses
//
// Applied to every upstream answer before it is cached or sent (upstream_answer.hpp):
// an A or AAAA record owned by a name outside the private domains whose address lies in
// one of the subnets is removed, in the answer and the additional section alike; an
// RRset that loses every record is removed whole (a query for it then gets NOERROR with
// no such record, or the CNAME chain up to it), as Unbound's scrubber does. An answer
// that lost a record is not passed on with AD: it is no longer what was signed.
// ::ffff:0:0/96 stops IPv4-mapped IPv6 addresses from carrying a private IPv4 address
// past an IPv4-only list.
//
// Local data (policy/) is never filtered: it is the operator's own.
//
// Costs: nothing when off; else per A/AAAA record a walk of the subnets (a masked compare
// of at most 16 bytes each: operators list a handful) and per such RRset a suffix compare
// with each private domain.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "workers/subnet.hpp"

namespace dnsarena::workers {

class PrivateAddresses {
public:
  PrivateAddresses() = default;  // off
  // A bad entry: `domain` says which list ("'10.0.0.0/33': prefix '33' is not 0..32").
  struct Error : std::invalid_argument {
    Error(bool in_domains, const std::string& what) : std::invalid_argument(what), domain(in_domains) {}
    bool domain;
  };
  // `subnets` as "10.0.0.0/8", `domains` as names ("corp.example"). Throws Error; domains
  // without subnets are one too (they would exempt names from a filter that is off).
  PrivateAddresses(const std::vector<std::string>& subnets, const std::vector<std::string>& domains);

  bool enabled() const { return !subnets_.empty(); }
  // Whether an A (4-byte) or AAAA (16-byte) rdata is an address of the subnets; false for
  // any other type or length.
  bool is_private(std::uint16_t type, std::span<const std::uint8_t> rdata) const;
  // Whether `owner` (an uncompressed wire name, any case) may have private addresses: it
  // is at or below a private domain.
  bool exempt(const std::uint8_t* owner) const;

  const std::vector<std::string>& subnet_texts() const { return subnet_texts_; }
  const std::vector<std::string>& domain_texts() const { return domain_texts_; }
  bool operator==(const PrivateAddresses& o) const {
    return subnet_texts_ == o.subnet_texts_ && domain_texts_ == o.domain_texts_;
  }

private:
  std::vector<Subnet> subnets_;
  std::vector<std::vector<std::uint8_t>> domains_;  // lowercase wire form
  std::vector<std::string> subnet_texts_, domain_texts_;
};

}  // namespace dnsarena::workers
