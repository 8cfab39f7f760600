// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/recursion/hints_kresd.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "bench/lab/kresd_config.hpp"
#include "common/find_program.hpp"
#include "common/loopback.hpp"
#include "tests/workers/serve_harness.hpp"

namespace dnsarena::test {

HintsKresd::HintsKresd(const bench::DnsHierarchy& h) : port_(common::free_loopback_port()) {
  const auto kresd = common::find_program("kresd");
  if (!kresd) throw std::runtime_error("kresd not found (apt-get install knot-resolver)");
  const std::string conf = h.dir() + "/kresd.conf";
  std::ofstream(conf) << bench::kresd_config_text({.dir = h.dir(), .dns_port = port_, .root_hints = h.root_hints()});
  std::filesystem::create_directories(h.dir() + "/kresd-run");
  child_ = common::ChildProcess({*kresd, "-n", "-c", conf, h.dir() + "/kresd-run"},
                                {.log_path = h.dir() + "/kresd.log", .truncate_log = true, .die_with_parent = true});
  if (!eventually([&] { return common::accepts_tcp(port_) || !child_.running(); }) || !child_.running())
    throw std::runtime_error("kresd did not start; see " + h.dir() + "/kresd.log");
}

}  // namespace dnsarena::test
