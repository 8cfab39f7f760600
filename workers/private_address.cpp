// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/private_address.hpp"

#include <sys/socket.h>

#include <stdexcept>

#include "wire/constants.hpp"
#include "wire/dns_name.hpp"
#include "workers/upstream_answer.hpp"

namespace dnsarena::workers {

PrivateAddresses::PrivateAddresses(const std::vector<std::string>& subnets, const std::vector<std::string>& domains)
    : subnet_texts_(subnets), domain_texts_(domains) {
  for (std::size_t i = 0; i < subnets.size(); ++i) try {
      subnets_.push_back(Subnet::parse(subnets[i]));
    } catch (const std::invalid_argument& e) {
      throw Error(false, "'" + subnets[i] + "': " + e.what());
    }
  for (std::size_t i = 0; i < domains.size(); ++i) try {
      const auto w = wire::name_to_wire(domains[i]);
      std::vector<std::uint8_t> name(w.begin(), w.end());
      wire::lowercase_copy(name.data(), {name.data(), name.size()});
      domains_.push_back(std::move(name));
    } catch (const std::exception& e) {
      throw Error(true, "'" + domains[i] + "': " + e.what());
    }
  if (subnets_.empty() && !domains_.empty())
    throw Error(true, "exempts names from private_address, which lists no subnet (the filter is off)");
}

bool PrivateAddresses::is_private(std::uint16_t type, std::span<const std::uint8_t> rdata) const {
  int family;
  if (type == wire::kTypeA && rdata.size() == 4) family = AF_INET;
  else if (type == wire::kTypeAaaa && rdata.size() == 16) family = AF_INET6;
  else return false;
  for (const Subnet& s : subnets_)
    if (s.contains(family, rdata.data())) return true;
  return false;
}

bool PrivateAddresses::exempt(const std::uint8_t* owner) const {
  for (const auto& d : domains_)
    if (name_is_at_or_below(owner, d.data())) return true;
  return false;
}

}  // namespace dnsarena::workers
