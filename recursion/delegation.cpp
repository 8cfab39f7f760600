// SPDX-License-Identifier: GPL-3.0-or-later
#include "recursion/delegation.hpp"

#include <arpa/inet.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "dnssec/rrset.hpp"

namespace dnsarena::recursion {

std::string ServerAddress::text() const {
  std::string s = std::to_string(v4[0]) + "." + std::to_string(v4[1]) + "." + std::to_string(v4[2]) + "." +
                  std::to_string(v4[3]);
  if (port != 53) s += ":" + std::to_string(port);
  return s;
}

sockaddr_in ServerAddress::to_sockaddr() const {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_port = htons(port);
  std::memcpy(&s.sin_addr, v4.data(), 4);
  return s;
}

std::optional<ServerAddress> ServerAddress::parse(const std::string& dotted, std::uint16_t port) {
  ServerAddress a;
  a.port = port;
  if (::inet_pton(AF_INET, dotted.c_str(), a.v4.data()) != 1) return std::nullopt;
  return a;
}

std::optional<Delegation> MemoryDelegations::closest(std::span<const std::uint8_t> name) const {
  const unsigned labels = dnssec::label_count(name);
  for (unsigned strip = 0; strip <= labels; ++strip) {
    const auto it = cuts_.find(dnssec::strip_labels(name, strip));
    if (it != cuts_.end()) return it->second;
  }
  return std::nullopt;
}

Delegation read_root_hints(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read root hints " + path);
  Delegation root;
  root.zone = Bytes(1, 0);
  std::vector<std::pair<Bytes, ServerAddress>> addresses;
  std::string line;
  for (unsigned n = 1; std::getline(in, line); ++n) {
    if (const auto semi = line.find(';'); semi != std::string::npos) line.resize(semi);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) continue;
    // owner [ttl] [class] type rdata
    std::size_t at = 1;
    while (at < w.size() && (std::isdigit(static_cast<unsigned char>(w[at][0])) || w[at] == "IN")) ++at;
    if (at + 1 >= w.size()) throw std::runtime_error(path + ":" + std::to_string(n) + ": cannot read \"" + line + "\"");
    const std::string& type = w[at];
    const std::string& rdata = w[at + 1];
    try {
      if (type == "NS") {
        if (w[0] != ".") throw std::runtime_error("NS not of the root");
        root.servers.push_back({dnssec::name_from_text(rdata), {}});
      } else if (type == "A") {
        const auto a = ServerAddress::parse(rdata);
        if (!a) throw std::runtime_error("bad address " + rdata);
        addresses.emplace_back(dnssec::name_from_text(w[0]), *a);
      } else if (type != "AAAA") {
        throw std::runtime_error("type " + type + " in root hints");
      }
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(n) + ": " + e.what());
    }
  }
  bool any = false;
  for (NameServer& s : root.servers)
    for (const auto& [name, a] : addresses)
      if (name == s.name) {
        s.addresses.push_back(a);
        any = true;
      }
  if (!any) throw std::runtime_error(path + ": no root server with an IPv4 address");
  root.ttl = 3600000;
  return root;
}

}  // namespace dnsarena::recursion
