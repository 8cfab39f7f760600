// SPDX-License-Identifier: GPL-3.0-or-later
// Zone cuts as the iterative resolver knows them: a zone, its name servers and the
// addresses known for each, and the store that holds the cuts learned so far.
//
// A Delegation is what a referral taught (the child's NS set from the parent, glue
// accepted in the referring server's bailiwick) or what priming taught (the root's own NS
// set). The store is an interface: the tests and the lab use MemoryDelegations (one map,
// one process); the serving resolver keeps cuts in the shared cache so a cut one worker
// learns serves every worker.
//
// Names are uncompressed lowercase wire names (dnssec/rrset.hpp's name helpers). Only
// IPv4 addresses are kept: the lab hierarchy and the hosts this runs on reach the
// authoritatives over IPv4 (AAAA glue is read and dropped).
#pragma once
#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/bytes.hpp"

namespace dnsarena::recursion {

using common::Bytes;

struct ServerAddress {
  std::array<std::uint8_t, 4> v4{};
  std::uint16_t port = 53;
  auto operator<=>(const ServerAddress&) const = default;
  std::string text() const;  // "192.0.2.1" (":port" when not 53)
  sockaddr_in to_sockaddr() const;  // AF_INET, port in network order
  // "192.0.2.1" -> address on port 53; nullopt when not a dotted IPv4 address.
  static std::optional<ServerAddress> parse(const std::string& dotted, std::uint16_t port = 53);
};

struct NameServer {
  Bytes name;                            // wire, lowercase
  std::vector<ServerAddress> addresses;  // empty: glueless, resolved when needed
};

struct Delegation {
  Bytes zone;  // wire, lowercase ("\0" for the root)
  std::vector<NameServer> servers;
  std::uint32_t ttl = 0;
};

// Where known cuts are looked up and recorded.
class DelegationStore {
public:
  virtual ~DelegationStore() = default;
  // The deepest known cut at or above `name` (the root once primed), or nullopt.
  virtual std::optional<Delegation> closest(std::span<const std::uint8_t> name) const = 0;
  // Whether the root's cut is known (primed): closest(".") without building the cut.
  virtual bool root_known() const {
    static constexpr std::uint8_t kRoot[1] = {0};
    return closest(kRoot).has_value();
  }
  // Records (or replaces) the cut of d.zone.
  virtual void learn(const Delegation& d) = 0;
};

// The cuts of one process in a map; no expiry (a resolution's or a test's lifetime).
class MemoryDelegations final : public DelegationStore {
public:
  std::optional<Delegation> closest(std::span<const std::uint8_t> name) const override;
  void learn(const Delegation& d) override { cuts_[d.zone] = d; }
  std::size_t size() const { return cuts_.size(); }

private:
  std::map<Bytes, Delegation> cuts_;
};

// Root hints: the root's NS names and addresses from a hints file in zone-file syntax
// (". NS a.root-servers.net." and "a.root-servers.net. A 198.41.0.4" lines; AAAA lines and
// comments ignored). Throws std::runtime_error naming the file and line on a line it
// cannot read, or when no root server has an address.
Delegation read_root_hints(const std::string& path);

}  // namespace dnsarena::recursion
