// SPDX-License-Identifier: GPL-3.0-or-later
// dnstap from a real serve (workers/dnstap_writer.hpp), read by the dnstap tools
// themselves: fstrm_capture collects the frames from the unix socket into a file,
// dnstap-ldns decodes it. Every query of a run must be there with its name, the answers
// too, and one forwarder query per miss; a reader that stops reading costs frames
// (counted), never answers; a restarted reader is found again; off, nothing runs.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/child_process.hpp"
#include "sim/fit/dnstap_reader.hpp"
#include "tests/workers/doh_test_client.hpp"
#include "tests/workers/service_fixture.hpp"
#include "tests/workers/tls_test_support.hpp"

using namespace dnsarena::test;
using dnsarena::common::ChildProcess;

namespace {

std::string temp_dir(const std::string& tag) {
  static int n = 0;
  const std::string dir = "/tmp/dnsarena-dnstap-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// fstrm_capture reading the socket `sock` into `file` (SIGTERM closes the file).
ChildProcess start_capture(const std::string& sock, const std::string& file) {
  std::filesystem::remove(sock);
  ChildProcess p({"fstrm_capture", "-t", "protobuf:dnstap.Dnstap", "-u", sock, "-w", file},
                 {.log_path = file + ".log", .search_path = true});
  const bool listening = eventually([&] { return std::filesystem::exists(sock); });
  if (!listening) throw std::runtime_error("fstrm_capture (package fstrm-bin) did not listen on " + sock);
  return p;
}

// One message as `dnstap-ldns -q` prints it: "TIME KIND ADDRESS PROTOCOL SIZEb "NAME" CLASS TYPE".
struct TapLine {
  std::string kind;      // CQ, CR, FQ, FR
  std::string protocol;  // UDP, TCP
  std::string qname;     // as in the question, dotted
};

std::vector<TapLine> read_tap(const std::string& file) {
  int status = 0;
  const std::string out = dnsarena::common::run_and_capture({"dnstap-ldns", "-q", "-r", file}, status);
  REQUIRE(status == 0);
  std::vector<TapLine> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string date, time, address, size;
    TapLine t;
    if (!(f >> date >> time >> t.kind >> address >> t.protocol >> size)) continue;
    const auto q0 = line.find('"');
    const auto q1 = line.find('"', q0 + 1);
    if (q0 != std::string::npos && q1 != std::string::npos) t.qname = line.substr(q0 + 1, q1 - q0 - 1);
    lines.push_back(t);
  }
  return lines;
}

std::size_t count_kind(const std::vector<TapLine>& lines, const std::string& kind, const std::string& protocol = "") {
  return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const TapLine& t) {
    return t.kind == kind && (protocol.empty() || t.protocol == protocol);
  }));
}

// How many times each name appears as `kind`, lowercased (0x20 randomises upstream case).
std::map<std::string, int> names_of(const std::vector<TapLine>& lines, const std::string& kind) {
  std::map<std::string, int> m;
  for (const TapLine& t : lines) {
    if (t.kind != kind) continue;
    std::string n = t.qname;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    ++m[n];
  }
  return m;
}

// The frames of `dnstap-ldns -y` output, each one YAML document (separated by "---").
std::vector<std::string> yaml_frames(const std::string& yaml) {
  std::vector<std::string> frames;
  for (std::size_t at = 0; at != std::string::npos;) {
    const std::size_t next = yaml.find("---", at + 3);
    frames.push_back(yaml.substr(at, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  return frames;
}

std::size_t threads_of(pid_t pid) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) ++n;
  return n;
}


// Every message of a worker's dnstap file, as the fit's reader decodes them (protoc-c).
struct ReadBack {
  dnsarena::sim::fit::TapType type;
  std::uint8_t protocol;
  std::uint32_t response_port;
  std::string qname;  // lowercase, dotted
  bool has_policy;
  std::string policy_type;
  std::uint8_t policy_action;
  std::vector<std::uint8_t> policy_rule, policy_value;
};

std::vector<ReadBack> read_back(const std::string& file) {
  std::vector<ReadBack> out;
  dnsarena::sim::fit::read_dnstap_file(file, [&](const dnsarena::sim::fit::TapMessage& m) {
    std::string name;
    for (std::size_t at = 12; at < m.wire.size() && m.wire[at] != 0; at += m.wire[at] + 1u) {
      for (unsigned i = 1; i <= m.wire[at] && at + i < m.wire.size(); ++i)
        name.push_back(static_cast<char>(std::tolower(m.wire[at + i])));
      name.push_back('.');
    }
    out.push_back({m.type, m.socket_protocol, m.response_port, name, m.has_policy, std::string(m.policy_type), m.policy_action,
                   {m.policy_rule.begin(), m.policy_rule.end()}, {m.policy_value.begin(), m.policy_value.end()}});
  });
  return out;
}

std::size_t count_of(const std::vector<ReadBack>& tap, dnsarena::sim::fit::TapType type, std::uint8_t protocol) {
  return static_cast<std::size_t>(std::count_if(tap.begin(), tap.end(), [&](const ReadBack& r) {
    return r.type == type && r.protocol == protocol;
  }));
}

const ReadBack* response_for(const std::vector<ReadBack>& tap, const std::string& qname, std::size_t nth = 0) {
  for (const ReadBack& r : tap)
    if (r.type == dnsarena::sim::fit::TapType::client_response && r.qname == qname && nth-- == 0) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("dnstap to a unix socket: every client query and answer, one forwarder query per miss", "[serve][dnstap]") {
  const std::string dir = temp_dir("socket");
  const std::string sock = dir + "/tap.sock";
  ChildProcess capture = start_capture(sock, dir + "/tap.fstrm");
  Service s({"--config", write_config("dnstap: {socket: " + sock + ", identity: arena-test}\n")});

  constexpr int kMisses = 20;
  auto name = [](int i) { return "q" + std::to_string(i) + ".test"; };
  for (int i = 0; i < kMisses; ++i) {  // misses (NXDOMAIN from the upstream), then hits
    REQUIRE(udp_exchange(s.port, make_query(static_cast<std::uint16_t>(i), name(i), 1)).rcode() == 3);
  }
  for (int i = 0; i < kMisses; ++i) REQUIRE(udp_exchange(s.port, make_query(100, name(i), 1)).answered);
  for (int i = 0; i < 10; ++i) REQUIRE(tcp_exchange(s.port, make_query(200, name(i), 1)).answered);
  for (int i = 0; i < 5; ++i) REQUIRE(!kdig_records(s.port, name(i), "A").empty());
  const std::size_t queries = kMisses + kMisses + 10 + 5;
  REQUIRE(s.upstream.queries() == kMisses);
  const std::uint64_t frames = 2 * queries + 2 * kMisses;
  CHECK(eventually([&] { return s.total("dnstap_sent") == frames; }));
  CHECK(s.total("dnstap_dropped") == 0);

  // Worker exit flushes its queue to the reader; then the reader closes its file.
  REQUIRE(s.serve->stop() == 0);
  capture.stop();
  const std::vector<TapLine> tap = read_tap(dir + "/tap.fstrm");
  CHECK(count_kind(tap, "CQ") == queries);
  CHECK(count_kind(tap, "CR") == queries);
  CHECK(count_kind(tap, "CQ", "TCP") == 10);
  CHECK(count_kind(tap, "CR", "TCP") == 10);
  CHECK(count_kind(tap, "FQ") == kMisses);
  CHECK(count_kind(tap, "FR") == kMisses);
  const std::map<std::string, int> asked = names_of(tap, "CQ");
  const std::map<std::string, int> forwarded = names_of(tap, "FQ");
  for (int i = 0; i < kMisses; ++i) {
    const std::string n = name(i) + ".";
    CHECK(asked.count(n) == 1);
    if (asked.count(n)) CHECK(asked.at(n) == 2 + (i < 10 ? 1 : 0) + (i < 5 ? 1 : 0));
    CHECK(forwarded.count(n) == 1);
    if (forwarded.count(n)) CHECK(forwarded.at(n) == 1);
  }
  // The YAML form names the server and the messages' addresses.
  int status = 0;
  const std::string yaml = dnsarena::common::run_and_capture({"dnstap-ldns", "-y", "-r", dir + "/tap.fstrm"}, status);
  INFO(yaml.substr(0, 1500));
  CHECK(yaml.find("identity: \"arena-test\"") != std::string::npos);
  CHECK(yaml.find("query_address: \"127.0.0.1\"") != std::string::npos);
  CHECK(yaml.find("response_port: " + std::to_string(s.upstream.port())) != std::string::npos);
  // Every forwarder response carries the time its query was sent, as well as its own.
  std::size_t responses = 0, with_query_time = 0;
  for (const std::string& frame : yaml_frames(yaml)) {
    if (frame.find("type: FORWARDER_RESPONSE") == std::string::npos) continue;
    ++responses;
    if (frame.find("query_time:") != std::string::npos && frame.find("response_time:") != std::string::npos)
      ++with_query_time;
  }
  CHECK(responses == kMisses);
  CHECK(with_query_time == kMisses);
  std::filesystem::remove_all(dir);
}

TEST_CASE("dnstap: DoH queries and answers are client messages over DOH, a miss one forwarder query",
          "[serve][dnstap][doh]") {
  const std::string dir = temp_dir("doh");
  const std::string sock = dir + "/tap.sock";
  ChildProcess capture = start_capture(sock, dir + "/tap.fstrm");
  TestCertificate cert("tap.test");
  const std::uint16_t doh_port = free_port();
  Service s({"--config", write_config("dnstap: {socket: " + sock + "}\ntls: {certificate: " + cert.cert_path() +
                                      ", key: " + cert.key_path() + "}\nhttps: {listen: [127.0.0.1:" +
                                      std::to_string(doh_port) + "]}\n")});
  DohClient c(doh_port);
  REQUIRE(c.connected());
  constexpr int kNames = 5;
  for (int pass = 0; pass < 2; ++pass)  // misses, then hits
    for (int i = 0; i < kNames; ++i) {
      const std::int32_t id = c.get(make_query(0, "doh" + std::to_string(i) + ".test", 1));
      REQUIRE(c.wait(id));
      REQUIRE(c.response(id).status == 200);
    }
  CHECK(eventually([&] { return s.total("dnstap_sent") == 2 * 2 * kNames + 2 * kNames; }));
  REQUIRE(s.serve->stop() == 0);
  capture.stop();
  // Read with protoc-c's decoder (sim/fit's reader): dnstap-ldns 0.2 (Debian 12) cannot
  // print frames of the DOH and DOT protocols.
  const std::vector<ReadBack> tap = read_back(dir + "/tap.fstrm");
  using dnsarena::sim::fit::TapType;
  CHECK(count_of(tap, TapType::client_query, 4) == 2 * kNames);  // DOH
  CHECK(count_of(tap, TapType::client_response, 4) == 2 * kNames);
  CHECK(count_of(tap, TapType::forwarder_query, 1) == kNames);
  std::map<std::string, int> asked;
  for (const ReadBack& r : tap)
    if (r.type == TapType::client_query) ++asked[r.qname];
  for (int i = 0; i < kNames; ++i) CHECK(asked.count("doh" + std::to_string(i) + ".test.") == 1);
  // The address each client message was sent to is the DoH listener's, port included
  // (the connection's own local address, not the plain DNS listen address).
  std::size_t client_messages = 0, at_doh_port = 0;
  for (const ReadBack& r : tap) {
    if (r.type != TapType::client_query && r.type != TapType::client_response) continue;
    ++client_messages;
    if (r.response_port == doh_port) ++at_doh_port;
  }
  CHECK(client_messages == 4 * kNames);
  CHECK(at_doh_port == client_messages);
  std::filesystem::remove_all(dir);
}

TEST_CASE("dnstap to files: one per worker, together every query", "[serve][dnstap]") {
  const std::string dir = temp_dir("file");
  Service s({"--config", write_config("dnstap: {file: " + dir + "/tap, forwarder_query: false, "
                                      "forwarder_response: false}\n")},
            2);
  for (int i = 0; i < 30; ++i) REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).answered);
  REQUIRE(s.serve->stop() == 0);
  std::size_t cq = 0, cr = 0, fq = 0;
  for (const char* suffix : {".0", ".1"}) {
    REQUIRE(std::filesystem::exists(dir + "/tap" + suffix));
    const std::vector<TapLine> tap = read_tap(dir + "/tap" + suffix);
    cq += count_kind(tap, "CQ");
    cr += count_kind(tap, "CR");
    fq += count_kind(tap, "FQ") + count_kind(tap, "FR");
  }
  CHECK(cq == 30);
  CHECK(cr == 30);
  CHECK(fq == 0);  // switched off

  // The next run's workers open new files; the first run's are kept beside them.
  s.start({"--config", write_config("dnstap: {file: " + dir + "/tap}\n")}, 2);
  for (int i = 0; i < 5; ++i) REQUIRE(udp_exchange(s.port, make_query(2, "a.test", 1)).answered);
  REQUIRE(s.serve->stop() == 0);
  std::size_t files = 0, all_cq = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".log") continue;
    ++files;
    all_cq += count_kind(read_tap(e.path().string()), "CQ");
  }
  CHECK(files == 4);
  CHECK(all_cq == 35);
  std::filesystem::remove_all(dir);
}

// Sockets open in process `pid` (per /proc/PID/fd).
static int sockets_of(pid_t pid) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const std::string target = std::filesystem::read_symlink(e.path(), ec).string();
    if (!ec && target.rfind("socket:", 0) == 0) ++n;
  }
  return n;
}

TEST_CASE("dnstap: a reader that stops reading costs frames, never answers, and a restarted one is found again",
          "[serve][dnstap]") {
  const std::string dir = temp_dir("stall");
  const std::string sock = dir + "/tap.sock";
  ChildProcess capture = start_capture(sock, dir + "/first.fstrm");
  Service s({"--config", write_config("dnstap: {socket: " + sock + ", queue: 16}\n")}, 1);
  REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).answered);  // cached from here on

  ::kill(capture.pid(), SIGSTOP);  // the reader stops reading: its socket buffers fill
  constexpr int kQueries = 4000;
  int answered = 0;
  for (int i = 0; i < kQueries; ++i)
    answered += udp_exchange(s.port, make_query(static_cast<std::uint16_t>(i), "a.test", 1)).answered ? 1 : 0;
  CHECK(answered == kQueries);
  const std::uint64_t dropped = s.total("dnstap_dropped");
  CHECK(dropped > 0);
  CHECK(eventually([&] { return s.total("dnstap_sent") + s.total("dnstap_dropped") == 2 * (kQueries + 1) + 2; }));
  ::kill(capture.pid(), SIGCONT);

  // The reader restarts (a new process, the same socket path). The writer learns that the
  // old one is gone when a write to it fails: its next flush, at 8 KiB of frames (fstrm's
  // buffer hint; 200 frames here) or after 1 s without frames. Those frames are lost. It
  // then reconnects at its next wakeup (reopen interval 1 s, whole seconds; flush timeout
  // 1 s): what comes after arrives.
  // The test waits for that reconnection (the capture process holding a second socket:
  // the accepted one) while frames flow, rather than for a fixed time.
  capture.kill();
  capture = start_capture(sock, dir + "/second.fstrm");
  bool reconnected = false;
  std::uint64_t frames = 2 * (kQueries + 1) + 2;
  for (int round = 0; round < 100 && !reconnected; ++round) {
    for (int i = 0; i < 20; ++i) REQUIRE(udp_exchange(s.port, make_query(3, "a.test", 1)).answered);
    frames += 2 * 20;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    reconnected = sockets_of(capture.pid()) >= 2;
  }
  REQUIRE(reconnected);
  // Every frame so far is accounted for (sent or dropped) before the last queries, so a drop
  // counted from here on belongs to them. They are paced so that the writer thread, woken at
  // 8 waiting frames, keeps the 16-frame queue from filling even on a loaded machine; should
  // it fill anyway, a frame is dropped by design, and counted: the count says how many of
  // its frames may be missing, no more.
  REQUIRE(eventually([&] { return s.total("dnstap_sent") + s.total("dnstap_dropped") == frames; }));
  const std::uint64_t dropped_before = s.total("dnstap_dropped");
  for (int i = 0; i < 10; ++i) {
    REQUIRE(udp_exchange(s.port, make_query(7, "aaaa.test", 28)).answered);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // 2 frames a query, and the first is a miss: a forwarder query and response more.
  REQUIRE(eventually([&] { return s.total("dnstap_sent") + s.total("dnstap_dropped") == frames + 22; }));
  const std::uint64_t dropped_last = s.total("dnstap_dropped") - dropped_before;
  REQUIRE(s.serve->stop() == 0);
  capture.stop();
  const std::vector<TapLine> tap = read_tap(dir + "/second.fstrm");
  const int cq = names_of(tap, "CQ")["aaaa.test."], cr = names_of(tap, "CR")["aaaa.test."];
  const int forwarded = names_of(tap, "FQ")["aaaa.test."] + names_of(tap, "FR")["aaaa.test."];
  INFO("client queries " << cq << ", responses " << cr << ", forwarder frames " << forwarded << ", dropped "
                         << dropped_last);
  CHECK(dropped_last <= 2);  // paced: at most a stray one, never the bulk
  CHECK(cq + cr + forwarded + static_cast<int>(dropped_last) == 22);
  CHECK(cq >= 9);
  std::filesystem::remove_all(dir);
}

TEST_CASE("dnstap is off by default: no writer thread, no frames", "[serve][dnstap]") {
  Service s({}, 1);
  REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).answered);
  const std::vector<pid_t> workers = s.serve->children();
  REQUIRE(workers.size() == 1);
  CHECK(threads_of(workers[0]) == 1);
  CHECK(s.total("dnstap_sent") == 0);
  CHECK(s.total("dnstap_dropped") == 0);

  // With dnstap on, the worker has its writer thread: the check above can tell.
  const std::string dir = temp_dir("threads");
  Service on({"--config", write_config("dnstap: {file: " + dir + "/tap}\n")}, 1);
  REQUIRE(udp_exchange(on.port, make_query(1, "a.test", 1)).answered);
  const std::vector<pid_t> on_workers = on.serve->children();
  REQUIRE(on_workers.size() == 1);
  CHECK(threads_of(on_workers[0]) == 2);
  CHECK(on.total("dnstap_sent") == 4);
  std::filesystem::remove_all(dir);
}


TEST_CASE("dnstap: DoT, DoH and TLS upstream messages carry DOT and DOH, policy and stale answers a Policy",
          "[serve][dnstap][tls][policy]") {
  using dnsarena::sim::fit::TapType;
  constexpr std::uint8_t kUdp = 1, kTcp = 2, kDot = 3, kDoh = 4;
  const std::string dir = temp_dir("protocols");
  TestCertificate cert("dot.test");
  const std::uint16_t dot_port = free_port(), doh_port = free_port();
  // The back serve: DoT and DoH listeners, answer_first stale answers of 1 s entries.
  Service back({"--config", write_config("dnstap: {file: " + dir + "/back}\ntls: {listen: [127.0.0.1:" +
                                         std::to_string(dot_port) + "], certificate: " + cert.cert_path() +
                                         ", key: " + cert.key_path() + "}\nhttps: {listen: [127.0.0.1:" +
                                         std::to_string(doh_port) + "]}\nttl: {ceiling: 1}\n" +
                                         "stale: {answer_first: true}\n")},
               1);
  // The front serve asks the back one over TLS.
  Service front({"--config", write_config("dnstap: {file: " + dir + "/front}\nforward_zones:\n  - {zone: \".\", "
                                          "upstreams: [127.0.0.1:" + std::to_string(dot_port) +
                                          "], transport: tls, tls_auth_name: dot.test, tls_ca_file: " +
                                          cert.cert_path() + "}\n")},
                1);
  REQUIRE(udp_exchange(front.port, make_query(1, "a.test", 1)).rcode() == 0);  // front -> back over DoT
  TlsClient dot(dot_port);
  REQUIRE(dot.connected());
  REQUIRE(dot.send(make_query(2, "aaaa.test", 28)));
  REQUIRE_FALSE(dot.receive().empty());
  DohClient doh(doh_port);
  REQUIRE(doh.connected());
  const std::int32_t stream = doh.get(make_query(0, "txt.test", 16));
  REQUIRE(doh.wait(stream));
  REQUIRE(doh.response(stream).status == 200);
  // Policy answers of the default local zones, over UDP: NXDOMAIN and local data.
  REQUIRE(udp_exchange(back.port, make_query(3, "Hidden.Onion", 1)).rcode() == 3);
  REQUIRE(udp_exchange(back.port, make_query(4, "localhost", 1)).answers.size() == 1);
  // A stale answer: every entry expired, then asked again (answered stale at once).
  REQUIRE(eventually([&] { return live_cache_entries(back.segment) == 0; }));
  const DnsReply stale = udp_exchange(back.port, make_query(5, "aaaa.test", 28));
  REQUIRE(stale.answered);
  CHECK(stale.ede == 3);
  REQUIRE(front.serve->stop() == 0);
  REQUIRE(back.serve->stop() == 0);

  const std::vector<ReadBack> b = read_back(dir + "/back.0");
  const std::vector<ReadBack> f = read_back(dir + "/front.0");
  // The front's queries to the back and their replies: DOT.
  CHECK(count_of(f, TapType::forwarder_query, kDot) == 1);
  CHECK(count_of(f, TapType::forwarder_response, kDot) == 1);
  CHECK(count_of(f, TapType::forwarder_query, kTcp) + count_of(f, TapType::forwarder_query, kUdp) == 0);
  CHECK(count_of(f, TapType::client_query, kUdp) == 1);
  // The back: the front's query and the DoT client's (DOT), the DoH client's (DOH).
  CHECK(count_of(b, TapType::client_query, kDot) == 2);
  CHECK(count_of(b, TapType::client_response, kDot) == 2);
  CHECK(count_of(b, TapType::client_query, kDoh) == 1);
  CHECK(count_of(b, TapType::client_response, kDoh) == 1);
  CHECK(count_of(b, TapType::client_query, kTcp) == 0);
  // Policy answers: the zone, the action, the trigger and the name asked.
  const ReadBack* onion = response_for(b, "hidden.onion.");
  REQUIRE(onion);
  REQUIRE(onion->has_policy);
  CHECK(onion->policy_type == "policy zone 1");  // 0: the config's local zone (the harness's test. nodefault)
  CHECK(onion->policy_action == 1);              // NXDOMAIN
  CHECK(onion->policy_rule == std::vector<std::uint8_t>{1, '*', 5, 'o', 'n', 'i', 'o', 'n', 0});
  CHECK(onion->policy_value == std::vector<std::uint8_t>{6, 'H', 'i', 'd', 'd', 'e', 'n', 5, 'O', 'n', 'i', 'o', 'n', 0});
  const ReadBack* localhost = response_for(b, "localhost.");
  REQUIRE(localhost);
  REQUIRE(localhost->has_policy);
  CHECK(localhost->policy_action == 6);  // LOCAL_DATA
  // The stale answer says so; the fresh answers before it carry no Policy.
  const ReadBack* first = response_for(b, "aaaa.test.", 0);
  const ReadBack* later = response_for(b, "aaaa.test.", 1);
  REQUIRE(first);
  REQUIRE(later);
  CHECK_FALSE(first->has_policy);
  REQUIRE(later->has_policy);
  CHECK(later->policy_type == "serve-stale");
  CHECK(later->policy_action == 0);
  const ReadBack* fresh = response_for(b, "a.test.");
  REQUIRE(fresh);
  CHECK_FALSE(fresh->has_policy);
  std::filesystem::remove_all(dir);
}
