// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: every YAML loader on arbitrary text. Input: 1 selector byte, then the
// file's text. Selector % 5:
//   0 serve config (workers/serve_config: load_serve_config + validate)
//   1 traffic profile (sim/workload: parse_traffic_profile, which validates as it reads)
//   2 fleet config (sim/fleet: load_fleet; `from:` entries resolve to the datacenter
//     files of configs/datacenters/, linked next to the input)
//   3 datacenter file (a fleet whose one datacenter comes `from:` the input)
//   4 rollout plan (sim/fleet: load_plan against configs/fleet/example.yaml)
// The files are written into a private temporary directory. Every outcome must be a
// loaded config or an error with a message (ConfigError, invalid_argument): no crash,
// no hang, no other exception type escaping.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "common/yaml_reader.hpp"
#include "sim/fleet/fleet_config.hpp"
#include "sim/workload/traffic_profile.hpp"
#include "workers/serve_config.hpp"

namespace fs = std::filesystem;
using namespace dnsarena;

namespace {

fs::path g_dir;  // <tmp>/fleet is where inputs go; <tmp>/datacenters links to the repo's
const sim::fleet::FleetConfig* g_fleet = nullptr;

void remove_dir() {
  std::error_code ec;
  fs::remove_all(g_dir, ec);
}

std::string write_input(const char* file, std::string_view text) {
  const fs::path p = g_dir / "fleet" / file;
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
  return p.string();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A `from:` naming /dev/stdin must not wait for input.
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, 0);
  char tmpl[] = "/tmp/dnsarena-fuzz-yaml.XXXXXX";
  if (!::mkdtemp(tmpl)) std::abort();
  g_dir = tmpl;
  std::atexit(remove_dir);
  fs::create_directory(g_dir / "fleet");
  const fs::path source = DNSARENA_SOURCE_DIR;
  fs::create_directory_symlink(source / "configs" / "datacenters", g_dir / "datacenters");
  static const sim::fleet::FleetConfig fleet = sim::fleet::load_fleet((source / "configs" / "fleet" / "example.yaml").string());
  g_fleet = &fleet;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 5) {
      case 0: {
        const workers::ServeConfig c = workers::load_serve_config(write_input("serve.yaml", text));
        c.validate();
        break;
      }
      case 1: {
        (void)sim::parse_traffic_profile(text, "profile.yaml");
        break;
      }
      case 2:
        (void)sim::fleet::load_fleet(write_input("fleet.yaml", text));
        break;
      case 3: {
        write_input("dc.yaml", text);
        (void)sim::fleet::load_fleet(write_input("one-dc.yaml", "name: f\ndatacenters:\n  - from: dc.yaml\n"));
        break;
      }
      default:
        (void)sim::fleet::load_plan(write_input("plan.yaml", text), *g_fleet);
        break;
    }
  } catch (const common::ConfigError&) {
  } catch (const workers::ConfigError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
