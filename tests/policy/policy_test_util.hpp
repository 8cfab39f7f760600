// SPDX-License-Identifier: GPL-3.0-or-later
// Compiling RPZ text in memory and asking the image, for the policy tests.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "policy/local_zone.hpp"
#include "policy/policy_compiler.hpp"
#include "policy/policy_view.hpp"
#include "policy/rpz_reader.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy::test {

struct Zone {
  std::string origin;
  std::string text;
};

// The image of several RPZ zones (in order) and an optional local config zone first.
struct Compiled {
  RuleSet rules;
  std::vector<std::uint8_t> image;
  PolicyView view;
  Match find(const std::string& name) const {
    const auto w = wire::name_to_wire(name);
    return view.find({w.data(), w.size()});
  }
};

inline std::unique_ptr<Compiled> compile_zones(const std::vector<Zone>& zones,
                                               const std::vector<std::string>& local_zones = {},
                                               const std::vector<std::string>& local_data = {}) {
  auto c = std::make_unique<Compiled>();
  if (!local_zones.empty() || !local_data.empty()) read_local_config("local", "config", local_zones, local_data, c->rules);
  for (std::size_t i = 0; i < zones.size(); ++i)
    read_rpz_text(zones[i].text, "zone" + std::to_string(i), zones[i].origin, c->rules);
  c->image = compile_policy(c->rules);
  c->view = PolicyView(c->image);
  return c;
}

}  // namespace dnsarena::policy::test
