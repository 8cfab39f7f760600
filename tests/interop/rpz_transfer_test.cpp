// SPDX-License-Identifier: GPL-3.0-or-later
// RPZ by zone transfer (workers/rpz_transfer_process.hpp) against knotd as the primary:
// the first AXFR; a rule changed on knotd, its NOTIFY, the IXFR from knotd's journal and
// the new policy answering, with no query lost while the policy is swapped; TSIG on both
// sides and a wrong secret refused (the kept policy served, also after a restart before
// the primary answers); a transfer cut in the middle by a proxy, the old policy kept;
// a full zone in answer to IXFR taken as AXFR; the transfer process killed between the
// new policy and the kept copy's rewrite, and its restart catching up. Every wait is on serve's stats (the zone's
// serial, its counters) or an answer, never a fixed sleep.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "common/loopback.hpp"
#include "policy/rpz_copy_delta.hpp"
#include "tests/command_output.hpp"
#include "tests/interop/knot_server.hpp"
#include "tests/workers/service_fixture.hpp"
#include "wire/dns_name.hpp"
#include "workers/rpz_zone_copy.hpp"

using namespace dnsarena::test;
using dnsarena::interop::KnotOptions;
using dnsarena::interop::KnotServer;
using dnsarena::interop::RecordChange;
using dnsarena::interop::ZoneFile;

namespace {

const char* kSecret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ=";
const char* kWrongSecret = "d3Jvbmctd3Jvbmctd3Jvbmctd3Jvbmctd3JvbmctMTI=";

// The policy zone rpz.test. at `serial`: `extra` records and `rules` names r<i>.test, each
// CNAME . (NXDOMAIN). The test upstream answers a.test. and *.host.test. (test_upstream.hpp).
ZoneFile rpz_zone(std::uint32_t serial, unsigned rules, const std::string& extra = "") {
  std::ostringstream z;
  z << "$ORIGIN rpz.test.\n$TTL 60\n@ SOA ns.example. admin.example. " << serial << " 3600 600 86400 60\n"
    << "@ NS ns.example.\n"
    << extra;
  for (unsigned i = 0; i < rules; ++i) z << "r" << i << ".test CNAME .\n";
  return {"rpz.test.", z.str()};
}

// knotd as the primary of rpz.test.: transfers allowed from 127.0.0.1 (with the key when
// `secret` is given), NOTIFY to serve's notify port, changes kept in the journal (IXFR).
KnotOptions primary_options(std::uint16_t notify_port, const std::string& secret) {
  KnotOptions o;
  const std::string key = secret.empty() ? "" : "    key: k1.\n";
  if (!secret.empty()) o.sections += "key:\n  - id: k1.\n    algorithm: hmac-sha256\n    secret: " + secret + "\n";
  o.sections += "remote:\n  - id: dnsarena\n    address: 127.0.0.1@" + std::to_string(notify_port) + "\n" + key;
  o.sections += "acl:\n  - id: xfr\n    address: 127.0.0.1\n    action: transfer\n" + key;
  o.zone_lines = "    acl: xfr\n    notify: dnsarena\n";
  o.journal = true;
  return o;
}

std::string serve_config(const std::string& dir, std::uint16_t primary_port, std::uint16_t notify_port,
                         const std::string& secret) {
  std::ostringstream c;
  c << "log_level: info\npolicy:\n  watch_interval_ms: 0\n  notify_listen: 127.0.0.1@" << notify_port << "\n"
    << "  rpz:\n    - zone: rpz.test.\n      primary: 127.0.0.1@" << primary_port << "\n"
    << "      file: " << dir << "/rpz.test.zone\n";
  if (!secret.empty()) c << "      tsig: {name: k1., algorithm: hmac-sha256, secret: \"" << secret << "\"}\n";
  return write_config(c.str());
}

// The zone's row of `dnsarena stats --json` (null until the transfer process wrote one).
nlohmann::json zone_status(const std::string& segment) {
  const nlohmann::json j = serve_stats(segment);
  if (!j.contains("rpz_zones") || j["rpz_zones"].empty()) return nullptr;
  return j["rpz_zones"][0];
}

bool serial_is(const std::string& segment, std::uint32_t serial) {
  const nlohmann::json z = zone_status(segment);
  return !z.is_null() && z.value("has_copy", false) && z.value("serial", 0u) == serial;
}

// Until the zone's counter `key` (transfers_failed, notifies_refused, ...) reaches `n`.
bool counter_reaches(const std::string& segment, const char* key, unsigned n) {
  return eventually([&] {
    const nlohmann::json z = zone_status(segment);
    return !z.is_null() && z.value(key, 0u) >= n;
  });
}

unsigned rcode_of(std::uint16_t port, std::uint16_t id, const std::string& name) {
  const DnsReply r = udp_exchange(port, make_query(id, name, 1));
  return r.answered ? r.rcode() : 99;
}

// A private directory for the zone's kept copy, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/dnsarena-rpzxfr-XXXXXX";
    if (!::mkdtemp(t)) throw std::runtime_error("mkdtemp");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// A NOTIFY for rpz.test. as a primary sends it (opcode NOTIFY, AA), from this process.
std::vector<std::uint8_t> notify_message(std::uint16_t id) {
  std::vector<std::uint8_t> q = make_query(id, "rpz.test.", 6, 0);
  q[2] = 0x24;  // opcode 4 (NOTIFY), AA
  q[3] = 0;
  return q;
}

// A TCP proxy to a primary that forwards the whole reply, or (cut_after > 0) only its
// first cut_after bytes and then closes both ends: a transfer cut in the middle.
class CuttingProxy {
public:
  explicit CuttingProxy(std::uint16_t target) : target_(target) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    port_ = free_port();
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port_);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 8) != 0)
      throw std::runtime_error("proxy bind");
    thread_ = std::thread([this] { loop(); });
  }
  ~CuttingProxy() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }
  void set_target(std::uint16_t port) { target_ = port; }
  void set_cut_after(std::size_t bytes) { cut_after_ = bytes; }
  unsigned connections() const { return connections_; }

private:
  void loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++connections_;
      relay(c);
      ::close(c);
    }
  }
  void relay(int client) {
    const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(target_);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(up, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(up);
      return;
    }
    const std::size_t cut = cut_after_;
    std::size_t forwarded = 0;
    char buf[16384];
    while (!stop_) {
      pollfd p[2] = {{client, POLLIN, 0}, {up, POLLIN, 0}};
      if (::poll(p, 2, 100) <= 0) continue;
      if (p[0].revents) {
        const ssize_t n = ::recv(client, buf, sizeof buf, 0);
        if (n <= 0) break;
        ::send(up, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL);
      }
      if (p[1].revents) {
        ssize_t n = ::recv(up, buf, sizeof buf, 0);
        if (n <= 0) break;
        if (cut && forwarded + static_cast<std::size_t>(n) >= cut) n = static_cast<ssize_t>(cut - forwarded);
        ::send(client, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL);
        forwarded += static_cast<std::size_t>(n);
        if (cut && forwarded >= cut) break;
      }
    }
    ::close(up);
  }
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<std::uint16_t> target_;
  std::atomic<std::size_t> cut_after_{0};
  std::atomic<unsigned> connections_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("an RPZ from knotd by AXFR, then a changed rule by NOTIFY and IXFR, no query lost in the swap",
          "[serve][policy][rpz-xfr]") {
  TempDir dir;
  const std::uint16_t notify_port = free_port();
  KnotServer knot({rpz_zone(1, 20, "blocked.test CNAME .\n")}, primary_options(notify_port, ""));
  REQUIRE(knot.wait_ready());
  Service s({"--config", serve_config(dir.path, knot.port(), notify_port, "")});
  REQUIRE(eventually([&] { return serial_is(s.segment, 1); }));
  CHECK(zone_status(s.segment)["last_kind"] == "AXFR");
  CHECK(eventually([&] { return rcode_of(s.port, 1, "blocked.test.") == 3; }));
  CHECK(rcode_of(s.port, 2, "r7.test.") == 3);
  CHECK(rcode_of(s.port, 3, "a.test.") == 0);
  CHECK(std::filesystem::exists(dir.path + "/rpz.test.zone"));  // the kept copy
  {  // a binary copy (policy/rpz_copy_file.hpp); `dnsarena policy export` prints it as text
    int status = -1;
    const std::string text =
        dnsarena::test::command_output(std::string(DNSARENA_BINARY) + " policy export " + dir.path + "/rpz.test.zone", &status);
    CHECK(status == 0);
    CHECK(text.find("blocked.test.rpz.test.") != std::string::npos);
    CHECK(dnsarena::test::command_output("head -c 8 " + dir.path + "/rpz.test.zone") == "DNSARPZC");
  }

  std::atomic<bool> stop{false};
  std::atomic<unsigned> sent{0}, lost{0};
  std::thread client([&] {
    for (std::uint16_t id = 100; !stop; ++id) {
      const DnsReply r = udp_exchange(s.port, make_query(id, id % 2 ? "blocked.test." : "c.test.", 1), std::chrono::milliseconds(3000));
      ++sent;
      if (!r.answered) ++lost;
    }
  });
  JoinOnExit join_client{stop, client};
  REQUIRE(eventually([&] { return sent >= 5; }));

  // One rule added on knotd: it increments the serial, keeps the change in its journal
  // and sends NOTIFY; serve asks for the IXFR from serial 1.
  std::string error;
  REQUIRE(knot.replace_records("rpz.test.", {{"a.test.rpz.test.", 60, "CNAME", "."}}, error));
  const bool transferred = eventually([&] { return serial_is(s.segment, 2); });
  INFO("knotd: " << knot.log() << "\nserve: " << s.serve->log());
  REQUIRE(transferred);
  const nlohmann::json z = zone_status(s.segment);
  CHECK(z["last_kind"] == "IXFR");
  CHECK(z["notifies_accepted"].get<unsigned>() >= 1);
  CHECK(z["last_error"] == "");
  CHECK(eventually([&] { return rcode_of(s.port, 4, "a.test.") == 3; }));
  for (std::uint16_t id = 10; id < 20; ++id) CHECK(rcode_of(s.port, id, "a.test.") == 3);  // every worker
  const unsigned before = sent;
  REQUIRE(eventually([&] { return sent >= before + 5; }));
  stop = true;
  client.join();
  INFO("sent " << sent << ", lost " << lost);
  CHECK(lost == 0);
  CHECK(s.serve->log().find("IXFR to serial 2") != std::string::npos);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("RPZ transfers and NOTIFY with TSIG, a wrong secret refused and the kept policy served",
          "[serve][policy][rpz-xfr][tsig]") {
  TempDir dir;
  const std::uint16_t notify_port = free_port();
  // 3,000 rules: an AXFR of several messages, each signed and checked against the last.
  KnotServer knot({rpz_zone(1, 3000, "blocked.test CNAME .\n")}, primary_options(notify_port, kSecret));
  REQUIRE(knot.wait_ready());
  {
    Service s({"--config", serve_config(dir.path, knot.port(), notify_port, kSecret)});
    REQUIRE(eventually([&] { return serial_is(s.segment, 1); }));
    CHECK(eventually([&] { return rcode_of(s.port, 1, "blocked.test.") == 3; }));
    CHECK(s.serve->log().find("AXFR to serial 1 (3003 records, ") != std::string::npos);
    CHECK(s.serve->log().find("AXFR to serial 1 (3003 records, 1 messages") == std::string::npos);
    std::string error;
    REQUIRE(knot.replace_records("rpz.test.", {{"a.test.rpz.test.", 60, "CNAME", "."}}, error));
    REQUIRE(eventually([&] { return serial_is(s.segment, 2); }));  // a signed NOTIFY, a signed IXFR
    CHECK(zone_status(s.segment)["last_kind"] == "IXFR");
    CHECK(zone_status(s.segment)["notifies_accepted"].get<unsigned>() >= 1);
    CHECK(eventually([&] { return rcode_of(s.port, 2, "a.test.") == 3; }));
  }
  // The same zone with a wrong secret: the kept copy (serial 2) answers from the start,
  // the primary refuses the transfer, and knotd's NOTIFY (signed with the right key) is
  // refused; the policy stays at serial 2.
  Service s({"--config", serve_config(dir.path, knot.port(), notify_port, kWrongSecret)});
  CHECK(rcode_of(s.port, 3, "a.test.") == 3);
  CHECK(rcode_of(s.port, 4, "blocked.test.") == 3);
  REQUIRE(counter_reaches(s.segment, "transfers_failed", 1));
  nlohmann::json z = zone_status(s.segment);
  INFO(z.dump());
  CHECK(z["last_error"].get<std::string>().find("NOTAUTH") != std::string::npos);
  CHECK(z["serial"] == 2);
  std::string error;
  REQUIRE(knot.replace_records("rpz.test.", {{"b.host.test.rpz.test.", 60, "CNAME", "."}}, error));
  REQUIRE(counter_reaches(s.segment, "notifies_refused", 1));
  CHECK(zone_status(s.segment)["serial"] == 2);
  CHECK(rcode_of(s.port, 5, "b.host.test.") == 0);
  CHECK(rcode_of(s.port, 6, "a.test.") == 3);
  CHECK(s.serve->log().find("TSIG") != std::string::npos);
  CHECK(s.serve->stop() == 0);
}

TEST_CASE("an RPZ transfer cut in the middle keeps the old policy, a full zone in answer to IXFR is taken whole",
          "[serve][policy][rpz-xfr]") {
  TempDir dir;
  const std::uint16_t notify_port = free_port();
  KnotServer first({rpz_zone(1, 4000, "blocked.host.test CNAME .\n")}, primary_options(notify_port, ""));
  REQUIRE(first.wait_ready());
  CuttingProxy proxy(first.port());
  Service s({"--config", serve_config(dir.path, proxy.port(), notify_port, "")});
  REQUIRE(eventually([&] { return serial_is(s.segment, 1); }));
  CHECK(eventually([&] { return rcode_of(s.port, 1, "blocked.host.test.") == 3; }));

  // A second primary at serial 2 with no journal of serial 1: its answer to IXFR is the
  // whole zone (RFC 1995 section 4), over 100 KB; the proxy cuts it after 30,000 bytes.
  KnotServer second({rpz_zone(2, 4000, "other.host.test CNAME .\n")}, primary_options(free_port(), ""));
  REQUIRE(second.wait_ready());
  proxy.set_target(second.port());
  proxy.set_cut_after(30'000);
  const unsigned connections = proxy.connections();
  REQUIRE(udp_exchange(notify_port, notify_message(77)).answered);  // a NOTIFY from 127.0.0.1, the primary
  REQUIRE(counter_reaches(s.segment, "transfers_failed", 1));
  CHECK(proxy.connections() > connections);
  nlohmann::json z = zone_status(s.segment);
  INFO(z.dump());
  CHECK(z["last_error"].get<std::string>().find("closed the connection") != std::string::npos);
  CHECK(z["serial"] == 1);
  CHECK(rcode_of(s.port, 2, "blocked.host.test.") == 3);
  CHECK(rcode_of(s.port, 3, "other.host.test.") == 0);
  CHECK(s.serve->log().find("keeping serial 1") != std::string::npos);

  // Whole this time: the full zone taken as AXFR.
  proxy.set_cut_after(0);
  REQUIRE(udp_exchange(notify_port, notify_message(78)).answered);
  REQUIRE(eventually([&] { return serial_is(s.segment, 2); }));
  z = zone_status(s.segment);
  CHECK(z["last_kind"] == "AXFR");
  CHECK(z["records"].get<unsigned>() == 4003);  // SOA, NS, other.host.test, 4000 rules
  CHECK(eventually([&] { return rcode_of(s.port, 4, "other.host.test.") == 3; }));
  CHECK(rcode_of(s.port, 5, "blocked.host.test.") == 0);
  CHECK(s.serve->stop() == 0);
}

namespace {

// The pid of the last RPZ transfer process serve's log names ("rpz transfers: process pid N"); 0: none.
pid_t transfer_pid(const std::string& log) {
  const std::string tag = "rpz transfers: process pid ";
  const std::size_t at = log.rfind(tag);
  return at == std::string::npos ? 0 : static_cast<pid_t>(std::stol(log.substr(at + tag.size())));
}

// The serial and record count of the kept copy in `file` (0, 0: none).
std::pair<std::uint32_t, std::size_t> kept_copy(const std::string& file) {
  dnsarena::workers::RpzZoneCopy copy(dnsarena::wire::name_to_wire("rpz.test."));
  std::string error;
  if (!copy.load(file, error)) return {0, 0};
  return {copy.serial(), copy.size()};
}

}  // namespace

// The transfer process tells the supervisor of an IXFR by a delta beside the kept copy
// and rewrites the copy after (policy/rpz_copy_delta.hpp). Here the rewrite is held: a
// FIFO in place of the copy's temporary file blocks its open() until a reader comes, so
// the process is caught between the new policy answering and the copy written, and
// killed there (SIGKILL). The copy must still be the old serial, whole; the restarted
// process must take the IXFR from that serial again and leave the copy and the policy
// at the new one.
TEST_CASE("an RPZ transfer process killed between the new policy and the copy's rewrite catches up when restarted",
          "[serve][policy][rpz-xfr][rpz-delta]") {
  TempDir dir;
  const std::string file = dir.path + "/rpz.test.zone";
  const std::uint16_t notify_port = free_port();
  KnotServer knot({rpz_zone(1, 20, "blocked.test CNAME .\n")}, primary_options(notify_port, ""));
  REQUIRE(knot.wait_ready());
  Service s({"--config", serve_config(dir.path, knot.port(), notify_port, "")});
  REQUIRE(eventually([&] { return serial_is(s.segment, 1); }));
  CHECK(kept_copy(file) == std::make_pair(1u, std::size_t{23}));  // SOA, NS, blocked.test, 20 rules
  const pid_t first = transfer_pid(s.serve->log());
  REQUIRE(first > 0);
  const std::string hold = file + ".tmp." + std::to_string(first);  // RpzZoneCopy's temporary
  REQUIRE(::mkfifo(hold.c_str(), 0600) == 0);

  std::string error;
  REQUIRE(knot.replace_records("rpz.test.", {{"a.test.rpz.test.", 60, "CNAME", "."}}, error));
  const bool answered = eventually([&] { return rcode_of(s.port, 1, "a.test.") == 3; });
  INFO("serve: " << s.serve->log());
  REQUIRE(answered);  // the new policy, from the old copy and the delta
  CHECK(kept_copy(file) == std::make_pair(1u, std::size_t{23}));  // the rewrite is held
  CHECK(std::filesystem::exists(dnsarena::policy::rpz_delta_path(file)));
  // `dnsarena policy check` reads the copy as serve does: with its delta.
  CHECK_THAT(dnsarena::test::command_output(std::string(DNSARENA_BINARY) + " policy check " + file),
             Catch::Contains("22 rules from 24 records"));
  CHECK(s.serve->log().find("IXFR to serial 2") == std::string::npos);  // logged once the copy is written
  CHECK(eventually([&] { return serial_is(s.segment, 2); }));  // `stats`: the serial the policy is at

  REQUIRE(::kill(first, SIGKILL) == 0);
  std::filesystem::remove(hold);
  CHECK(rcode_of(s.port, 2, "a.test.") == 3);  // the running policy stays
  REQUIRE(eventually([&] {
    const pid_t p = transfer_pid(s.serve->log());
    return p != 0 && p != first;
  }));
  REQUIRE(eventually([&] { return kept_copy(file).first == 2; }));  // rewritten by the restarted process
  CHECK(kept_copy(file) == std::make_pair(2u, std::size_t{24}));
  CHECK(eventually([&] { return serial_is(s.segment, 2); }));
  CHECK(zone_status(s.segment)["last_kind"] == "IXFR");  // from serial 1, the copy's
  CHECK(s.serve->log().find("IXFR to serial 2 (24 records") != std::string::npos);
  CHECK(rcode_of(s.port, 3, "a.test.") == 3);
  CHECK(rcode_of(s.port, 4, "blocked.test.") == 3);
  CHECK(rcode_of(s.port, 5, "r7.test.") == 3);
  CHECK(rcode_of(s.port, 6, "b.host.test.") == 0);

  // A restart of serve on those files: the copy alone is the zone (the delta is stale).
  CHECK(s.serve->stop() == 0);
  Service again({"--config", serve_config(dir.path, knot.port(), notify_port, "")});
  CHECK(rcode_of(again.port, 7, "a.test.") == 3);
  CHECK(rcode_of(again.port, 8, "b.host.test.") == 0);
  CHECK(again.serve->stop() == 0);
}
