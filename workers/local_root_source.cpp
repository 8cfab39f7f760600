// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/local_root_source.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "common/yaml_reader.hpp"
#include "workers/recursion_config.hpp"

namespace dnsarena::workers {

void read_local_root_from(common::MapReader& s, RecursionConfig& c) {
  c.local_root_refresh_min_s =
      static_cast<unsigned>(s.integer_or("local_root_refresh_min_s", c.local_root_refresh_min_s, 1, 86'400));
  c.local_root_from.clear();
  if (!s.has("local_root_from")) return;
  const YAML::Node list = s.sequence("local_root_from");
  if (list.size() == 0) s.fail("local_root_from", "an empty list (leave the key out to keep the file by hand)");
  if (list.size() > RecursionConfig::kMaxLocalRootPrimaries)
    s.fail("local_root_from", "more than " + std::to_string(RecursionConfig::kMaxLocalRootPrimaries) + " primaries");
  for (const YAML::Node& entry : list) {
    if (!entry.IsScalar()) s.fail_at(entry, "local_root_from", "expected ADDRESS[@PORT]");
    try {
      XfrAddress a = XfrAddress::parse(entry.Scalar(), 53);
      if (std::find(c.local_root_from.begin(), c.local_root_from.end(), a) != c.local_root_from.end())
        s.fail_at(entry, "local_root_from", "'" + a.text + "' is listed twice");
      c.local_root_from.push_back(std::move(a));
    } catch (const std::invalid_argument& e) {
      s.fail_at(entry, "local_root_from", e.what());
    }
  }
}

bool local_root_missing(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) != 0 && errno == ENOENT;
}

}  // namespace dnsarena::workers
