// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/hierarchy_signing.hpp"

#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "common/child_process.hpp"
#include "common/find_program.hpp"

namespace dnsarena::bench {

namespace {

struct SignedZone {
  const char* origin;
  const char* policy;
};

constexpr SignedZone kSigned[] = {
    {".", "lab"},           {"net.", "lab"},         {"com.", "lab"},         {"org.", "lab-nsec3"},
    {"example.com.", "lab"}, {"hoster.org.", "lab"}, {"example.org.", "lab"}, {"bogus.com.", "lab"},
};
constexpr const char* kBogus = "bogus.com.";

std::string parent_of(const std::string& origin) {
  const auto dot = origin.find('.');
  return dot + 1 >= origin.size() ? "." : origin.substr(dot + 1);
}

// keymgr's "NAME DS tag alg digest-type hex" lines of digest type 2, as zone-file lines with a TTL.
std::string sha256_ds(const std::string& keymgr_output) {
  std::string out;
  std::istringstream in(keymgr_output);
  for (std::string line; std::getline(in, line);) {
    const auto ds = line.find(" DS ");
    if (ds == std::string::npos) continue;
    std::istringstream fields(line.substr(ds + 4));
    std::string tag, alg, digest_type;
    fields >> tag >> alg >> digest_type;
    if (digest_type == "2") out += line.substr(0, ds) + " 3600 DS " + line.substr(ds + 4) + "\n";
  }
  return out;
}

}  // namespace

bool HierarchyKeys::is_signed(const std::string& origin) { return *policy(origin) != '\0'; }

const char* HierarchyKeys::policy(const std::string& origin) {
  for (const SignedZone& z : kSigned)
    if (origin == z.origin) return z.policy;
  return "";
}

const char* HierarchyKeys::policy_section() {
  return "policy:\n"
         "  - id: lab\n    algorithm: ecdsap256sha256\n    manual: on\n"
         "  - id: lab-nsec3\n    algorithm: ecdsap256sha256\n    manual: on\n    nsec3: on\n"
         "    nsec3-iterations: 0\n    nsec3-salt-length: 0\n";
}

std::string HierarchyKeys::keymgr(const std::vector<std::string>& args) const {
  const auto program = common::find_daemon_program("keymgr");
  if (!program) throw std::runtime_error("keymgr not found (apt-get install knot)");
  std::vector<std::string> argv{*program, "-c", dir_ + "/kasp/knot.conf"};
  argv.insert(argv.end(), args.begin(), args.end());
  int status = 0;
  std::string out = common::run_and_capture(argv, status);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("keymgr failed: " + out);
  return out;
}

HierarchyKeys::HierarchyKeys(const std::string& dir) : dir_(dir), anchor_file_(dir + "/root-anchor.ds") {
  std::filesystem::create_directories(dir_ + "/kasp/keys");
  std::ostringstream c;
  c << "database:\n    storage: \"" << dir_ << "/kasp\"\n" << policy_section() << "zone:\n";
  for (const SignedZone& z : kSigned) c << "  - domain: \"" << z.origin << "\"\n    dnssec-policy: " << z.policy << "\n";
  std::ofstream(dir_ + "/kasp/knot.conf", std::ios::trunc) << c.str();

  for (const SignedZone& z : kSigned) {
    keymgr({z.origin, "generate", "algorithm=13", "ksk=yes", "zsk=yes"});
    std::string ds = sha256_ds(keymgr({z.origin, "ds"}));
    if (ds.empty()) throw std::runtime_error(std::string("keymgr printed no SHA-256 DS for ") + z.origin);
    if (std::strcmp(z.origin, kBogus) == 0)  // a DS of the right algorithm that matches no key
      ds = std::string(kBogus) + " 3600 DS 1234 13 2 " + std::string(64, 'a') + "\n";
    ds_.emplace_back(z.origin, std::move(ds));
  }
  std::ofstream anchor(anchor_file_, std::ios::trunc);
  anchor << "; trust anchor of the lab hierarchy's root\n" << ds_.front().second;
  if (!anchor) throw std::runtime_error("cannot write " + anchor_file_);
}

std::string HierarchyKeys::ds_lines(const std::string& origin) const {
  std::string out;
  for (const auto& [child, ds] : ds_)
    if (child != "." && parent_of(child) == origin) out += ds;
  return out;
}

void HierarchyKeys::install(const std::string& kasp_dir) const {
  std::filesystem::create_directories(kasp_dir);
  for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/kasp/keys")) {
    if (entry.path().filename() == "lock.mdb") continue;  // LMDB's reader table: the knotd makes its own
    std::filesystem::copy(entry.path(), kasp_dir + "/" + entry.path().filename().string(),
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  }
}

}  // namespace dnsarena::bench
