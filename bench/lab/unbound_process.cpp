// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/unbound_process.hpp"


#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bench/lab/serve_process.hpp"
#include "common/find_program.hpp"
#include "common/loopback.hpp"

namespace dnsarena::bench {

using namespace std::chrono_literals;

namespace {

std::string program(const std::string& name) { return common::find_daemon_program(name).value_or(""); }

}  // namespace

bool unbound_installed() { return !program("unbound").empty() && !program("unbound-control").empty(); }

std::string unbound_version() {
  const std::string unbound = program("unbound");
  if (unbound.empty()) return "";
  int status = 0;
  const std::string out = common::run_and_capture({unbound, "-V"}, status);
  std::smatch m;
  static const std::regex version("Version ([0-9.]+)");
  return std::regex_search(out, m, version) ? m[1].str() : "";
}

UnboundProcess::UnboundProcess(const UnboundSpec& spec)
    : port_(common::free_loopback_port()),
      conf_path_(spec.dir + "/unbound-" + spec.tag + ".conf"),
      log_(spec.dir + "/unbound-" + spec.tag + ".log") {
  std::ostringstream c;
  c << "server:\n  interface: 127.0.0.1\n  port: " << port_ << "\n  num-threads: " << spec.threads
    << "\n  so-reuseport: yes\n  do-not-query-localhost: no\n  chroot: \"\"\n  username: \"\"\n"
    << "  directory: \"" << spec.dir << "\"\n  pidfile: \"\"\n  use-syslog: no\n  logfile: \"\"\n  verbosity: 1\n"
    << "  do-ip6: no\n  module-config: \"iterator\"\n  qname-minimisation: no\n"
    << "  access-control: 127.0.0.0/8 allow\n";
  if (!spec.root_hints.empty()) c << "  root-hints: \"" << spec.root_hints << "\"\n";
  for (const std::string& line : spec.server_lines) c << "  " << line << "\n";
  c << "remote-control:\n  control-enable: yes\n  control-use-cert: no\n  control-interface: \"" << spec.dir
    << "/unbound-" << spec.tag << ".ctl\"\n";
  if (spec.root_hints.empty()) {
    c << "forward-zone:\n  name: \".\"\n";
    for (const std::string& a : spec.forward_addrs) c << "  forward-addr: " << a << "\n";
  }
  config_ = c.str();
  std::ofstream(conf_path_, std::ios::trunc) << config_;
  child_ = common::ChildProcess({program("unbound"), "-d", "-c", conf_path_},
                                {.log_path = log_, .truncate_log = true, .die_with_parent = true});
  for (int i = 0; i < 500 && !common::accepts_tcp(port_); ++i) {
    if (!child_.running()) throw std::runtime_error("unbound did not start: " + slurp(log_));
    std::this_thread::sleep_for(20ms);
  }
  if (!common::accepts_tcp(port_)) throw std::runtime_error("unbound did not listen within 10 s: " + slurp(log_));
}

nlohmann::json UnboundProcess::counters() const {
  int status = 0;
  const std::string out = common::run_and_capture({program("unbound-control"), "-c", conf_path_, "stats_noreset"}, status);
  nlohmann::json j = nlohmann::json::object();
  if (status != 0) return j;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos || line.rfind("total.", 0) != 0) continue;
    try {
      j[line.substr(0, eq)] = std::stod(line.substr(eq + 1));
    } catch (const std::exception&) {
    }
  }
  return j;
}

}  // namespace dnsarena::bench
