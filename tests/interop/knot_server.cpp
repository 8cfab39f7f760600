// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/interop/knot_server.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/child_process.hpp"
#include "tests/interop/dns_compare.hpp"
#include "tests/interop/wire_query.hpp"
#include "tests/workers/serve_harness.hpp"

namespace dnsarena::interop {

namespace {

std::string config_text(const std::string& dir, std::uint16_t port, const std::vector<ZoneFile>& zones,
                        const KnotOptions& options) {
  std::ostringstream c;
  c << "server:\n"
    << "    rundir: \"" << dir << "\"\n"
    << "    listen: 127.0.0.1@" << port << "\n"
    << "    udp-max-payload: 4096\n"
    << "    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n"
    << "database:\n    storage: \"" << dir << "/db\"\n"
    << "control:\n    listen: \"" << dir << "/knot.sock\"\n"
    << "log:\n  - target: stderr\n    any: info\n"
    << "policy:\n  - id: nsec3\n    nsec3: on\n    nsec3-iterations: 0\n    nsec3-salt-length: 0\n"
    << options.sections
    << "template:\n  - id: default\n    storage: \"" << dir << "/zones\"\n    file: \"%s.zone\"\n"
    << "    zonefile-sync: -1\n    journal-content: " << (options.journal ? "changes" : "none") << "\n"
    << "zone:\n";
  for (const ZoneFile& z : zones) {
    c << "  - domain: " << z.origin << "\n" << options.zone_lines;
    if (z.dnssec) c << "    dnssec-signing: on\n";
    if (z.nsec3) c << "    dnssec-policy: nsec3\n";
  }
  return c.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

KnotServer::KnotServer(const std::vector<ZoneFile>& zones, const KnotOptions& options) : zones_(zones) {
  char templ[] = "/tmp/dnsarena-interop-XXXXXX";
  if (!::mkdtemp(templ)) throw std::runtime_error("mkdtemp failed");
  dir_ = templ;
  // knotd does not create the KASP database's key directory itself.
  std::filesystem::create_directories(dir_ + "/db/keys");
  std::filesystem::create_directories(dir_ + "/zones");
  for (const ZoneFile& z : zones) write_file(dir_ + "/zones/" + z.origin + "zone", z.text);
  port_ = test::free_port();
  write_file(conf(), config_text(dir_, port_, zones, options));
  knotd_ = common::ChildProcess({KNOTD_PROGRAM, "-c", conf()},
                                {.log_path = dir_ + "/knotd.log", .truncate_log = true, .die_with_parent = true});
}

KnotServer::~KnotServer() {
  knotd_.stop();  // before its directory goes
  std::error_code ec;  // DNSARENA_INTEROP_KEEP=1 keeps the directory (config, zones, knotd.log)
  if (!std::getenv("DNSARENA_INTEROP_KEEP")) std::filesystem::remove_all(dir_, ec);
}

bool KnotServer::wait_ready(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t ready = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!knotd_.running()) return false;
    for (; ready < zones_.size(); ++ready) {
      const ZoneFile& z = zones_[ready];
      const QueryShape shape{true, 1232, true};
      const Reply r = parse_reply(test::udp_exchange(port_, build_query(1, z.origin, 6 /*SOA*/, shape),
                                                     std::chrono::milliseconds(200)).wire);
      const bool signed_ok = !z.dnssec || std::any_of(r.answer.begin(), r.answer.end(),
                                                      [](const Record& x) { return x.type == 46; });
      if (!r.parsed || r.rcode != 0 || r.answer.empty() || !signed_ok) break;
    }
    if (ready == zones_.size()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

bool KnotServer::knotc(const std::vector<std::string>& args, std::string& output) const {
  std::vector<std::string> argv{KNOTC_PROGRAM, "-c", conf()};
  argv.insert(argv.end(), args.begin(), args.end());
  int status = 0;
  output = common::run_and_capture(argv, status);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool KnotServer::replace_records(const std::string& zone, const std::vector<RecordChange>& changes,
                                 std::string& error) {
  if (!knotc({"zone-begin", zone}, error)) return false;
  for (const RecordChange& c : changes) {
    knotc({"zone-unset", zone, c.owner, c.type}, error);  // absent is fine
    if (!knotc({"zone-set", zone, c.owner, std::to_string(c.ttl), c.type, c.rdata}, error)) {
      std::string ignored;
      knotc({"zone-abort", zone}, ignored);
      return false;
    }
  }
  return knotc({"zone-commit", zone}, error);
}

std::string KnotServer::log() const {
  std::ifstream f(dir_ + "/knotd.log");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace dnsarena::interop
