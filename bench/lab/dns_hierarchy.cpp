// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/dns_hierarchy.hpp"

#include "bench/lab/hierarchy_signing.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/find_program.hpp"
#include "dns/message.hpp"
#include "dns/query_builder.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::bench {

using namespace std::chrono_literals;

const std::vector<HierarchyName> kHierarchyNames = {
    {"www.example.com.", wire::kTypeA, 0},      {"www.example.com.", wire::kTypeAaaa, 0},
    {"alias.example.com.", wire::kTypeA, 0},    {"chain.example.com.", wire::kTypeA, 0},
    {"x.dname.example.com.", wire::kTypeA, 0},  {"big.example.com.", wire::kTypeTxt, 0},
    {"a.b.c.d.example.com.", wire::kTypeA, 0},  {"f.example.com.", wire::kTypeA, 0},
    {"nx.example.com.", wire::kTypeA, 3},       {"example.com.", wire::kTypeNs, 0},
    {"www.sub.example.com.", wire::kTypeA, 0},  {"www.outside.com.", wire::kTypeA, 0},
    {"www.lame.com.", wire::kTypeA, 0},         {"www.broken.com.", wire::kTypeA, 2},
    {"www.silent.com.", wire::kTypeA, 0},       {"www.example.org.", wire::kTypeA, 0},
    {"www.hoster.org.", wire::kTypeA, 0},       {"c1.hoster.org.", wire::kTypeA, 0},
    {"nx.nosuchtld.", wire::kTypeA, 3},         {"www.example.com.", wire::kTypeMx, 0},
    {"www.slow.com.", wire::kTypeA, 0},
};

const std::vector<SignedHierarchyName> kSignedHierarchyNames = {
    {"www.example.com.", wire::kTypeA, 0, HierarchyVerdict::secure},
    {"www.example.com.", wire::kTypeMx, 0, HierarchyVerdict::secure},  // NODATA, NSEC
    {"nx.example.com.", wire::kTypeA, 3, HierarchyVerdict::secure},    // NXDOMAIN, NSEC
    {"alias.example.com.", wire::kTypeA, 0, HierarchyVerdict::secure},
    {"chain.example.com.", wire::kTypeA, 0, HierarchyVerdict::secure},  // com -> org, three signed zones
    {"a.b.c.d.example.com.", wire::kTypeA, 0, HierarchyVerdict::secure},
    {"example.com.", wire::kTypeNs, 0, HierarchyVerdict::secure},
    {"www.example.org.", wire::kTypeA, 0, HierarchyVerdict::secure},    // under an NSEC3 TLD
    {"nx.example.org.", wire::kTypeA, 3, HierarchyVerdict::secure},
    {"www.hoster.org.", wire::kTypeA, 0, HierarchyVerdict::secure},
    {"nx.nosuchtld.", wire::kTypeA, 3, HierarchyVerdict::secure},       // the root's NSEC
    {"www.outside.com.", wire::kTypeA, 0, HierarchyVerdict::insecure},  // no DS in com. (NSEC)
    {"www.sub.example.com.", wire::kTypeA, 0, HierarchyVerdict::insecure},
    {"www.lame.com.", wire::kTypeA, 0, HierarchyVerdict::insecure},
    {"nx.slow.com.", wire::kTypeA, 3, HierarchyVerdict::insecure},
    {"www.bogus.com.", wire::kTypeA, 2, HierarchyVerdict::bogus},       // DS matches no key
    {"nx.bogus.com.", wire::kTypeA, 2, HierarchyVerdict::bogus},
};

namespace {

constexpr const char* kLockFile = "/tmp/dnsarena-hierarchy.lock";
constexpr unsigned kFirstHost = 2, kLastHost = 10, kSilentHost = 9, kSlowHost = 10;

std::string knotd_program() { return common::find_daemon_program("knotd").value_or(""); }

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

sockaddr_in socket_address(const std::string& ip, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

// Whether UDP and TCP port 53 of `ip` can be bound now (nothing else serves there).
bool port53_free(const std::string& ip) {
  for (int type : {SOCK_DGRAM, SOCK_STREAM}) {
    const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in a = socket_address(ip, 53);
    const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (!ok) return false;
  }
  return true;
}

// The reply to `qtype` of `zone` (DO as given) asked of ip:53 over UDP, parsed; false
// without a reply in 200 ms or one that does not parse or echo the ID.
bool ask_server(const std::string& ip, const std::string& zone, std::uint16_t qtype, bool do_bit, dns::Message& m) {
  const auto name = wire::name_to_wire(zone);
  const common::Bytes q = dns::build_query({.id = 0x5a5a, .qname = name, .qtype = qtype, .do_bit = do_bit});
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const sockaddr_in a = socket_address(ip, 53);
  bool ok = false;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 && ::send(fd, q.data(), q.size(), 0) > 0) {
    pollfd p{fd, POLLIN, 0};
    std::uint8_t buf[4096];
    if (::poll(&p, 1, 200) == 1) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      ok = n > 0 && dns::parse_message({buf, static_cast<std::size_t>(n)}, m, true) == dns::ParseStatus::ok &&
           m.id == 0x5a5a;
    }
  }
  ::close(fd);
  return ok;
}

// The RCODE and AA of `qname` SOA asked of ip:53 over UDP, or -1 without a reply in 200 ms.
int soa_rcode(const std::string& ip, const std::string& zone, bool& aa) {
  dns::Message m;
  if (!ask_server(ip, zone, wire::kTypeSoa, false, m)) return -1;
  aa = m.aa;
  return m.rcode;
}

// Whether ip:53 answers `zone` DNSKEY (asked with DO) with its RRSIG: the zone is signed.
bool dnskey_signed(const std::string& ip, const std::string& zone) {
  constexpr std::uint16_t kTypeDnskey = 48, kTypeRrsig = 46;
  dns::Message m;
  if (!ask_server(ip, zone, kTypeDnskey, true, m) || m.rcode != 0) return false;
  for (const dns::Record& r : m.answer)
    if (r.type == kTypeRrsig) return true;
  return false;
}

struct ZoneText {
  std::string origin;  // "." or "com."
  std::string text;
};

// The zones, with "@N" standing for the address of host N until substituted; signed:
// bogus.com. too (hierarchy_signing.hpp).
std::vector<ZoneText> zone_templates(bool signed_zones) {
  const std::string soa = " SOA ns.invalid. hostmaster.invalid. 1 3600 600 86400 300\n";
  std::string big;
  for (int i = 0; i < 40; ++i)
    big += "big 3600 TXT \"record " + std::to_string(i) + " of a TXT set too large for one UDP answer of 1232 bytes\"\n";
  std::vector<ZoneText> zones = {
      {".", ". 86400" + soa +
                ". 86400 NS a.root-servers.net.\n. 86400 NS b.root-servers.net.\n"
                "net. 86400 NS a.gtld-servers.net.\ncom. 86400 NS a.gtld-servers.net.\norg. 86400 NS ns1.org.\n"
                "a.root-servers.net. 86400 A @2\nb.root-servers.net. 86400 A @3\n"
                "a.gtld-servers.net. 86400 A @4\nns1.org. 86400 A @5\n"},
      {"net.", "net. 3600" + soa +
                   "net. 3600 NS a.gtld-servers.net.\na.gtld-servers.net. 3600 A @4\n"
                   "a.root-servers.net. 3600 A @2\nb.root-servers.net. 3600 A @3\n"},
      {"com.", "com. 3600" + soa +
                   "com. 3600 NS a.gtld-servers.net.\n"
                   "example.com. 3600 NS ns1.example.com.\nexample.com. 3600 NS ns.hoster.org.\n"
                   "ns1.example.com. 3600 A @6\n"
                   "outside.com. 3600 NS ns.hoster.org.\n"
                   "lame.com. 3600 NS ns1.lame.com.\nlame.com. 3600 NS ns2.lame.com.\n"
                   "ns1.lame.com. 3600 A @8\nns2.lame.com. 3600 A @6\n"
                   "broken.com. 3600 NS ns.broken.com.\nns.broken.com. 3600 A @8\n"
                   "silent.com. 3600 NS ns1.silent.com.\nsilent.com. 3600 NS ns2.silent.com.\n"
                   "ns1.silent.com. 3600 A @9\nns2.silent.com. 3600 A @6\n"
                   "slow.com. 3600 NS ns1.slow.com.\nns1.slow.com. 3600 A @10\n"},
      {"org.", "org. 3600" + soa +
                   "org. 3600 NS ns1.org.\nns1.org. 3600 A @5\n"
                   "hoster.org. 3600 NS ns1.hoster.org.\nns1.hoster.org. 3600 A @7\n"
                   "example.org. 3600 NS ns.example.org.\nns.example.org. 3600 A @8\n"},
      {"example.com.", "$ORIGIN example.com.\n@ 3600" + soa +
                           "@ 3600 NS ns1.example.com.\n@ 3600 NS ns.hoster.org.\nns1 3600 A @6\n"
                           "www 3600 A 192.0.2.1\nwww 3600 AAAA 2001:db8::1\n"
                           "alias 3600 CNAME www\nchain 3600 CNAME c1.hoster.org.\n"
                           "dname 3600 DNAME example.org.\n"
                           "a.b.c.d 3600 A 192.0.2.11\ne.f 3600 A 192.0.2.12\n"
                           "sub 3600 NS ns.sub\nns.sub 3600 A @7\n" +
                           big},
      {"outside.com.", "outside.com. 3600" + soa + "outside.com. 3600 NS ns.hoster.org.\nwww.outside.com. 3600 A 192.0.2.3\n"},
      {"lame.com.", "lame.com. 3600" + soa +
                        "lame.com. 3600 NS ns1.lame.com.\nlame.com. 3600 NS ns2.lame.com.\n"
                        "ns1.lame.com. 3600 A @8\nns2.lame.com. 3600 A @6\nwww.lame.com. 3600 A 192.0.2.4\n"},
      {"silent.com.", "silent.com. 3600" + soa +
                          "silent.com. 3600 NS ns1.silent.com.\nsilent.com. 3600 NS ns2.silent.com.\n"
                          "ns1.silent.com. 3600 A @9\nns2.silent.com. 3600 A @6\nwww.silent.com. 3600 A 192.0.2.5\n"},
      {"slow.com.", "slow.com. 3600" + soa +
                        "slow.com. 3600 NS ns1.slow.com.\nns1.slow.com. 3600 A @10\nwww.slow.com. 3600 A 192.0.2.13\n"},
      {"hoster.org.", "hoster.org. 3600" + soa +
                          "hoster.org. 3600 NS ns1.hoster.org.\nns1.hoster.org. 3600 A @7\nns.hoster.org. 3600 A @6\n"
                          "www.hoster.org. 3600 A 192.0.2.7\nc1.hoster.org. 3600 CNAME www.example.org.\n"},
      {"sub.example.com.", "sub.example.com. 3600" + soa +
                               "sub.example.com. 3600 NS ns.sub.example.com.\nns.sub.example.com. 3600 A @7\n"
                               "www.sub.example.com. 3600 A 192.0.2.10\n"},
      {"example.org.", "example.org. 3600" + soa +
                           "example.org. 3600 NS ns.example.org.\nns.example.org. 3600 A @8\n"
                           "www.example.org. 3600 A 192.0.2.8\nx.example.org. 3600 A 192.0.2.9\n"},
  };
  if (signed_zones) {
    zones[2].text += "bogus.com. 3600 NS ns1.example.com.\n";
    zones.push_back({"bogus.com.", "bogus.com. 3600" + soa +
                                       "bogus.com. 3600 NS ns1.example.com.\nwww.bogus.com. 3600 A 192.0.2.14\n"});
  }
  return zones;
}

// Which zones each knotd serves (host part of the address -> origins); signed: bogus.com. on .6.
std::vector<std::pair<unsigned, std::vector<std::string>>> server_zones(bool signed_zones) {
  std::vector<std::pair<unsigned, std::vector<std::string>>> s = {
      {2, {"."}},
      {3, {"."}},
      {4, {"net.", "com."}},
      {5, {"org."}},
      {6, {"example.com.", "outside.com.", "lame.com.", "silent.com.", "slow.com."}},
      {7, {"hoster.org.", "sub.example.com."}},
      {8, {"example.org."}},
  };
  if (signed_zones) s[4].second.push_back("bogus.com.");
  return s;
}

}  // namespace

bool knotd_installed() { return !knotd_program().empty(); }

bool port53_permitted() {
  // knotd inherits what this process may do. A loopback address of a block no hierarchy
  // takes (K = 255) answers EACCES when binding low ports is not allowed.
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const sockaddr_in a = socket_address("127.53.255.1", 53);
  const bool denied = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 && errno == EACCES;
  ::close(fd);
  return !denied;
}

struct DnsHierarchy::Server {
  unsigned host = 0;
  std::string dir;
  common::ChildProcess knotd;
};

std::string DnsHierarchy::address(unsigned host) const {
  return "127.53." + std::to_string(block_) + "." + std::to_string(host);
}

DnsHierarchy::DnsHierarchy(HierarchyOptions options) : options_(options) {
  const std::string knotd = knotd_program();
  if (knotd.empty()) throw std::runtime_error("knotd not found (apt-get install knot)");
  // A block K of addresses 127.53.K.* no other hierarchy of this host holds: an
  // open-file-description lock on byte K of kLockFile (dropped by the kernel when this
  // process exits), then port 53 checked free on every address of the block.
  block_lock_fd_ = ::open(kLockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (block_lock_fd_ < 0) throw std::runtime_error(std::string("cannot open ") + kLockFile);
  for (unsigned k = 1; k < 255 && block_ == 0; ++k) {
    struct flock l{};
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET;
    l.l_start = k;
    l.l_len = 1;
    if (::fcntl(block_lock_fd_, F_OFD_SETLK, &l) != 0) continue;
    block_ = k;
    bool free = true;
    for (unsigned h = kFirstHost; h <= kLastHost && free; ++h) free = port53_free(address(h));
    if (free) break;
    l.l_type = F_UNLCK;
    ::fcntl(block_lock_fd_, F_OFD_SETLK, &l);
    block_ = 0;
  }
  if (block_ == 0) {
    ::close(block_lock_fd_);
    throw std::runtime_error("no block of loopback addresses 127.53.K.2-10 has port 53 free");
  }

  try {
    start(knotd);
  } catch (...) {
    release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

std::uint64_t DnsHierarchy::silent_queries() {
  std::uint8_t buf[512];
  while (silent_fd_ >= 0 && ::recv(silent_fd_, buf, sizeof buf, MSG_DONTWAIT) >= 0) ++silent_seen_;
  return silent_seen_;
}

void DnsHierarchy::start(const std::string& knotd) {
  char templ[] = "/tmp/dnsarena-hierarchy-XXXXXX";
  if (!::mkdtemp(templ)) throw std::runtime_error("mkdtemp failed");
  dir_ = templ;

  // The slow server: a relay to the knotd of .6, every query held options_.slow_delay.
  slow_ = std::make_unique<DelayingRelay>(address(kSlowHost), address(6), options_.slow_delay);

  // The silent server: bound, never read.
  silent_fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const sockaddr_in silent = socket_address(address(kSilentHost), 53);
  if (silent_fd_ < 0 || ::bind(silent_fd_, reinterpret_cast<const sockaddr*>(&silent), sizeof silent) != 0)
    throw std::runtime_error("cannot bind the silent server " + address(kSilentHost) + ":53");

  const bool signing = options_.signed_zones;
  std::vector<ZoneText> zones = zone_templates(signing);
  std::optional<HierarchyKeys> keys;
  if (signing) {  // the keys first: each parent zone carries its children's DS
    keys.emplace(dir_);
    anchor_path_ = keys->anchor_file();
    for (ZoneText& z : zones) z.text += keys->ds_lines(z.origin);
  }
  for (ZoneText& z : zones)
    for (unsigned h = kLastHost; h >= kFirstHost; --h) {  // "@10" before a "@1" could match it
      const std::string key = "@" + std::to_string(h);
      for (std::size_t at = z.text.find(key); at != std::string::npos; at = z.text.find(key, at))
        z.text.replace(at, key.size(), address(h));
    }

  const auto zones_of = server_zones(signing);
  for (const auto& [host, origins] : zones_of) {
    auto s = std::make_unique<Server>();
    s->host = host;
    s->dir = dir_ + "/knotd-" + std::to_string(host);
    std::filesystem::create_directories(s->dir + "/zones");
    std::filesystem::create_directories(s->dir + "/db");  // else every knotc run warns that it is missing
    std::ostringstream c;
    c << "server:\n    rundir: \"" << s->dir << "\"\n    listen: " << address(host) << "@53\n"
      << "    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n"
      << "database:\n    storage: \"" << s->dir << "/db\"\n"
      << "log:\n  - target: stderr\n    any: info\n"
      << "control:\n    listen: \"" << s->dir << "/knot.sock\"\n"
      << "mod-stats:\n  - id: count\n    request-protocol: on\n    query-type: on\n    server-operation: on\n"
      << "template:\n  - id: default\n    global-module: mod-stats/count\n    storage: \"" << s->dir << "/zones\"\n"
      << "    zonefile-sync: -1\n    journal-content: none\n";
    bool signs = false;
    for (const std::string& origin : origins) signs = signs || (signing && HierarchyKeys::is_signed(origin));
    if (signs) {  // its own copy of the keys (the knotd's default kasp-db: storage/keys)
      c << HierarchyKeys::policy_section();
      keys->install(s->dir + "/db/keys");
    }
    if (options_.root_transfers && origins.front() == ".")
      c << "acl:\n  - id: root_transfers\n    address: 127.0.0.0/8\n    action: transfer\n";
    c << "zone:\n";
    for (const std::string& origin : origins) {
      const std::string file = origin == "." ? "root.zone" : origin + "zone";
      for (const ZoneText& z : zones)
        if (z.origin == origin) write_file(s->dir + "/zones/" + file, z.text);  // zone_file() names it
      c << "  - domain: \"" << origin << "\"\n    file: \"" << file << "\"\n";
      if (origin == "." && options_.root_transfers) c << "    acl: root_transfers\n";
      if (signing && HierarchyKeys::is_signed(origin))
        c << "    dnssec-signing: on\n    dnssec-policy: " << HierarchyKeys::policy(origin) << "\n";
    }
    write_file(s->dir + "/knot.conf", c.str());
    s->knotd = common::ChildProcess({knotd, "-c", s->dir + "/knot.conf"},
                                    {.log_path = s->dir + "/knotd.log", .truncate_log = true, .die_with_parent = true});
    servers_.push_back(std::move(s));
  }

  hints_path_ = dir_ + "/root.hints";
  write_file(hints_path_, ".  3600000 NS a.root-servers.net.\n.  3600000 NS b.root-servers.net.\n"
                          "a.root-servers.net. 3600000 A " + address(2) + "\n"
                          "b.root-servers.net. 3600000 A " + address(3) + "\n");

  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (const auto& s : servers_) {
    const auto& origins = zones_of[static_cast<std::size_t>(&s - &servers_[0])].second;
    for (const std::string& origin : origins)
      for (;;) {
        bool aa = false;
        if (soa_rcode(address(s->host), origin, aa) == 0 && aa &&
            !(signing && HierarchyKeys::is_signed(origin) && !dnskey_signed(address(s->host), origin)))
          break;
        if (!s->knotd.running() || std::chrono::steady_clock::now() > deadline)
          throw std::runtime_error("knotd on " + address(s->host) + " does not serve " + origin + ":\n" +
                                   read_file(s->dir + "/knotd.log"));
        std::this_thread::sleep_for(20ms);
      }
  }
}

DnsHierarchy::~DnsHierarchy() { release(); }

void DnsHierarchy::release() {
  slow_.reset();
  servers_.clear();  // stops every knotd before its directory goes
  if (silent_fd_ >= 0) ::close(silent_fd_);
  if (block_lock_fd_ >= 0) ::close(block_lock_fd_);  // the block is free again
  silent_fd_ = block_lock_fd_ = -1;
  std::error_code ec;
  if (!dir_.empty() && !std::getenv("DNSARENA_HIERARCHY_KEEP")) std::filesystem::remove_all(dir_, ec);
  dir_.clear();
}

std::string DnsHierarchy::server_of(const std::string& zone) const {
  for (const auto& [host, origins] : server_zones(options_.signed_zones))
    for (const std::string& origin : origins)
      if (origin == zone) return address(host);
  throw std::invalid_argument("no server of the lab hierarchy serves " + zone);
}

std::uint64_t DnsHierarchy::authoritative_queries() const {
  std::uint64_t total = 0;
  for (const auto& s : servers_) total += authoritative_queries(s->host);
  return total;
}

std::uint64_t DnsHierarchy::authoritative_queries(unsigned host) const {
  std::uint64_t total = 0;
  for (const auto& s : servers_)
    if (s->host == host) total += counter_sum(*s, "mod-stats.request-protocol", "");
  return total;
}

std::uint64_t DnsHierarchy::authoritative_queries_of_type(const std::string& type) const {
  std::uint64_t total = 0;
  for (const auto& s : servers_) total += counter_sum(*s, "mod-stats.query-type", "[" + type + "]");
  return total;
}

std::uint64_t DnsHierarchy::authoritative_queries_of_type(const std::string& type, unsigned host) const {
  std::uint64_t total = 0;
  for (const auto& s : servers_)
    if (s->host == host) total += counter_sum(*s, "mod-stats.query-type", "[" + type + "]");
  return total;
}

std::uint64_t DnsHierarchy::zone_transfers(unsigned host) const {
  std::uint64_t total = 0;
  for (const auto& s : servers_)
    if (s->host == host)
      total += counter_sum(*s, "mod-stats.server-operation", "[axfr]") + counter_sum(*s, "mod-stats.server-operation", "[ixfr]");
  return total;
}

std::string DnsHierarchy::zone_file(unsigned host, const std::string& origin) const {
  return dir_ + "/knotd-" + std::to_string(host) + "/zones/" + (origin == "." ? "root.zone" : origin + "zone");
}

void DnsHierarchy::reload_zone(unsigned host, const std::string& origin) const {
  const auto knotc = common::find_daemon_program("knotc");
  if (!knotc) throw std::runtime_error("knotc not found (apt-get install knot)");
  for (const auto& s : servers_) {
    if (s->host != host) continue;
    int status = 0;
    const std::string out =
        common::run_and_capture({*knotc, "-c", s->dir + "/knot.conf", "-b", "zone-reload", origin}, status);
    if (status != 0) throw std::runtime_error("knotc zone-reload " + origin + " on " + address(host) + ": " + out);
    return;
  }
  throw std::runtime_error("no knotd of the lab hierarchy on host " + std::to_string(host));
}

std::uint64_t DnsHierarchy::counter_sum(const Server& s, const std::string& counter, const std::string& index) const {
  const auto knotc = common::find_daemon_program("knotc");
  if (!knotc) throw std::runtime_error("knotc not found (apt-get install knot)");
  int status = 0;
  const std::string out = common::run_and_capture({*knotc, "-c", s.dir + "/knot.conf", "stats", counter}, status);
  if (status != 0) throw std::runtime_error("knotc stats on " + address(s.host) + ": " + out);
  // Lines "mod-stats.request-protocol[udp4] = 12", "mod-stats.query-type[DS] = 3"; a
  // counter knotd has not counted yet is not printed.
  std::uint64_t total = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    if (!index.empty() && line.substr(0, eq).find(index) == std::string::npos) continue;
    total += std::stoull(line.substr(eq + 3));
  }
  return total;
}

std::string DnsHierarchy::logs() const {
  std::string out;
  for (const auto& s : servers_) out += "== knotd " + address(s->host) + "\n" + read_file(s->dir + "/knotd.log");
  return out;
}

}  // namespace dnsarena::bench
