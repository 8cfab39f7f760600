// SPDX-License-Identifier: GPL-3.0-or-later
// DNS over TLS (RFC 7858) on `dnsarena serve`: real serve processes on loopback, kdig
// +tls and a GnuTLS client of our own (tls_test_support.hpp), certificates made by
// certtool at test time. Each case fails without what it covers: the shared cache, the
// padding, the handshake bounds, the per-client limit, the shared ticket key, the
// certificate reload and the start-up checks.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "tests/workers/hostile_clients.hpp"
#include "tests/workers/service_fixture.hpp"
#include "tests/workers/tls_test_support.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;

namespace {

// A serve with DoT on its own port and the certificate `cert`; `tls_extra` adds keys to the
// tls: map (", handshake_timeout_ms: 1000"), `extra` adds YAML lines.
struct DotService {
  TestCertificate cert;
  std::uint16_t tls_port = free_port();
  std::unique_ptr<TempConfig> config;
  std::unique_ptr<Service> service;

  explicit DotService(const std::string& tls_extra = "", const std::string& extra = "", unsigned workers = 2) {
    config = std::make_unique<TempConfig>("tls: {listen: [127.0.0.1:" + std::to_string(tls_port) + "], certificate: " +
                                          cert.cert_path() + ", key: " + cert.key_path() + tls_extra + "}\n" + extra);
    service = std::make_unique<Service>(std::vector<std::string>{"--config", config->path()}, workers);
  }
  Service& s() { return *service; }
};

bool has_padding(const std::vector<std::uint8_t>& wire) {
  for (const auto& [code, len] : opt_options(wire))
    if (code == 12) return true;
  return false;
}

}  // namespace

TEST_CASE("DoT: kdig +tls is answered from the same cache entry as UDP (one upstream query)", "[serve][tls]") {
  DotService d;
  const std::string dot = kdig_records(d.tls_port, "a.test.", "A", "+tls");
  INFO(dot);
  CHECK(dot.find("192.0.2.1") != std::string::npos);
  CHECK(dot.find("192.0.2.2") != std::string::npos);
  CHECK(d.s().upstream.queries() == 1);  // the miss
  CHECK(kdig_records(d.s().port, "a.test.", "A") == dot);  // a UDP hit: the same entry
  CHECK(kdig_records(d.tls_port, "a.test.", "A", "+tls") == dot);
  CHECK(d.s().upstream.queries() == 1);
  // kdig pads its query (+padding: the query's Padding option is accepted).
  CHECK(kdig_records(d.tls_port, "a.test.", "A", "+tls +padding") == dot);
  TlsClient c(d.tls_port);
  REQUIRE(c.connected());
  CHECK(c.alpn() == "dot");
  CHECK(c.peer_fingerprint() == d.cert.fingerprint());
}

TEST_CASE("DoT: pipelined queries on one connection all answered, EDNS answers padded to 468, plain ones never",
          "[serve][tls]") {
  DotService d;
  TlsClient c(d.tls_port);
  REQUIRE(c.connected());
  const std::vector<std::string> names{"a.test.", "aaaa.test.", "txt.test.", "big.test.", "huge.test.", "nx1.test."};
  std::set<std::uint16_t> sent;
  for (std::uint16_t i = 0; i < 60; ++i) {
    const std::uint16_t id = static_cast<std::uint16_t>(1000 + i);
    const std::string& name = names[i % names.size()];
    const std::uint16_t type = name == "aaaa.test." ? 28 : name.rfind("txt", 0) == 0 || name.rfind("big", 0) == 0 ||
                                                                  name.rfind("huge", 0) == 0
                                                              ? 16
                                                              : 1;
    REQUIRE(c.send(make_query(id, name, type, i == 59 ? 0 : 1232)));  // the last one without EDNS
    sent.insert(id);
  }
  std::set<std::uint16_t> got;
  for (int i = 0; i < 60; ++i) {
    const std::vector<std::uint8_t> r = c.receive();
    REQUIRE(!r.empty());
    const std::uint16_t id = message_id(r);
    got.insert(id);
    if (id == 1059) {  // no EDNS in the query: no OPT, no padding
      CHECK(opt_options(r).empty());
      CHECK_FALSE(has_padding(r));
      continue;
    }
    INFO("id " << id << " size " << r.size());
    CHECK(r.size() % 468 == 0);
    CHECK(has_padding(r));
    CHECK(parse_reply(r).answered);
  }
  CHECK(got == sent);
  // The same answer over plain TCP and UDP is not padded.
  const DnsReply tcp = tcp_exchange(d.s().port, make_query(7, "a.test.", 1));
  REQUIRE(tcp.answered);
  CHECK_FALSE(has_padding(tcp.wire));
  const DnsReply udp = udp_exchange(d.s().port, make_query(8, "a.test.", 1));
  REQUIRE(udp.answered);
  CHECK_FALSE(has_padding(udp.wire));
}

TEST_CASE("DoT: the hits of one read are written together, in one TLS record, not one record each", "[serve][tls]") {
  DotService d;
  TlsClient c(d.tls_port);
  REQUIRE(c.connected());
  REQUIRE(c.send(make_query(1, "a.test.", 1, 1232)));
  REQUIRE(!c.receive().empty());  // cached now
  // Twenty queries in one TLS record: the server reads them in one go.
  constexpr int kQueries = 20;
  std::vector<std::uint8_t> batch;
  for (int i = 0; i < kQueries; ++i) {
    const std::vector<std::uint8_t> q = make_query(static_cast<std::uint16_t>(100 + i), "a.test.", 1, 1232);
    batch.push_back(static_cast<std::uint8_t>(q.size() >> 8));
    batch.push_back(static_cast<std::uint8_t>(q.size()));
    batch.insert(batch.end(), q.begin(), q.end());
  }
  REQUIRE(c.send_raw(batch.data(), batch.size()));
  // Each answer is padded to 468 bytes: 20 x 470 framed bytes fit one 16 KiB record.
  std::vector<std::uint8_t> got;
  int records = 0;
  std::uint8_t buf[65536];
  while (got.size() < kQueries * 470u) {
    const long n = c.receive_raw(buf, sizeof buf, std::chrono::milliseconds(2000));
    REQUIRE(n > 0);
    got.insert(got.end(), buf, buf + n);
    ++records;
  }
  CHECK(got.size() == kQueries * 470u);
  CHECK(records <= 2);  // one, or two if the read was cut; one each before
  std::set<std::uint16_t> ids;
  for (std::size_t at = 0; at + 2 <= got.size(); at += 2 + ((got[at] << 8) | got[at + 1]))
    ids.insert(static_cast<std::uint16_t>((got[at + 2] << 8) | got[at + 3]));
  CHECK(ids.size() == kQueries);
}

TEST_CASE("DoT: a silent handshake is closed by handshake_timeout_ms, garbage is closed, others unharmed",
          "[serve][tls][hostile][timing]") {
  DotService d(", handshake_timeout_ms: 1000", "tcp: {idle_timeout_ms: 30000}\n", 1);
  TlsClient good(d.tls_port);
  REQUIRE(good.connected());
  REQUIRE(good.send(make_query(1, "a.test.", 1)));
  REQUIRE(!good.receive().empty());

  // Opens TCP, never says a word: closed by the handshake timeout, long before the idle one.
  const int silent = connect_tcp(d.tls_port);
  REQUIRE(silent >= 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK(closed_by_peer(silent, 5000ms));
  const std::uint64_t took = elapsed_ms(start);
  CHECK(took >= 900);
  CHECK(took < 4000);  // timeout 1000 ms, swept about once a second
  ::close(silent);

  // Half a ClientHello (a TLS record header promising more): the same.
  const int half = connect_tcp(d.tls_port);
  REQUIRE(half >= 0);
  const std::uint8_t header[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
  REQUIRE(::send(half, header, sizeof header, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof header));
  CHECK(closed_by_peer(half, 5000ms));
  ::close(half);

  // Not TLS at all: closed at once.
  const int garbage = connect_tcp(d.tls_port);
  REQUIRE(garbage >= 0);
  const std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  REQUIRE(::send(garbage, http.data(), http.size(), MSG_NOSIGNAL) > 0);
  const auto g_start = std::chrono::steady_clock::now();
  CHECK(closed_by_peer(garbage, 2000ms));
  CHECK(elapsed_ms(g_start) < 900);
  ::close(garbage);

  // The established client was never disturbed.
  REQUIRE(good.send(make_query(2, "aaaa.test.", 28)));
  const std::vector<std::uint8_t> r = good.receive();
  REQUIRE(!r.empty());
  CHECK(message_id(r) == 2);
  CHECK(kdig_records(d.tls_port, "a.test.", "A", "+tls").find("192.0.2.1") != std::string::npos);
}

TEST_CASE("DoT: at most max_handshakes in progress: a new one closes the oldest", "[serve][tls][hostile]") {
  DotService d(", handshake_timeout_ms: 30000, max_handshakes: 4", "tcp: {idle_timeout_ms: 30000}\n", 1);
  const pid_t worker = d.s().serve->children().at(0);
  const unsigned fds_before = open_fds(worker);
  std::vector<int> silent;
  for (int i = 0; i < 4; ++i) silent.push_back(connect_tcp(d.tls_port));
  REQUIRE(eventually([&] { return open_fds(worker) == fds_before + 4; }));  // all four accepted and handshaking
  for (int fd : silent) CHECK_FALSE(closed_by_peer(fd, 50ms));
  const int fifth = connect_tcp(d.tls_port);
  CHECK(closed_by_peer(silent[0], 2000ms));  // the oldest made room
  for (std::size_t i = 1; i < silent.size(); ++i) CHECK_FALSE(closed_by_peer(silent[i], 50ms));
  // A real client still gets through (it closes the oldest silent one in turn).
  TlsClient c(d.tls_port);
  CHECK(c.connected());
  for (int fd : silent) ::close(fd);
  ::close(fifth);
}

TEST_CASE("DoT: the per-client connection limit holds over TLS", "[serve][tls][hostile]") {
  DotService d("", "tcp: {max_connections_per_client: 3, idle_timeout_ms: 30000}\n", 1);
  std::vector<std::unique_ptr<TlsClient>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<TlsClient>(d.tls_port));
    REQUIRE(held.back()->connected());
  }
  TlsClient over(d.tls_port, {}, 2000ms);
  CHECK_FALSE(over.connected());  // closed at accept
  for (auto& c : held) {  // the three still answer
    REQUIRE(c->send(make_query(5, "a.test.", 1)));
    CHECK(!c->receive().empty());
  }
  held.pop_back();
  CHECK(eventually([&] { return TlsClient(d.tls_port).connected(); }));
}

TEST_CASE("DoT: tls.max_connections bounds DoT apart from plain TCP's tcp.max_connections", "[serve][tls][hostile]") {
  DotService d(", max_connections: 3",
               "tcp: {max_connections: 8, max_connections_per_client: 0, idle_timeout_ms: 30000}\n", 1);
  // Six plain TCP connections: more than DoT's bound, within TCP's.
  std::vector<int> plain;
  for (int i = 0; i < 6; ++i) plain.push_back(connect_tcp(d.s().port));
  std::vector<std::unique_ptr<TlsClient>> dot;
  for (int i = 0; i < 3; ++i) {
    dot.push_back(std::make_unique<TlsClient>(d.tls_port));
    REQUIRE(dot.back()->connected());
    REQUIRE(dot.back()->send(make_query(static_cast<std::uint16_t>(i), "a.test.", 1)));
    REQUIRE(!dot.back()->receive().empty());
  }
  for (int fd : plain) CHECK_FALSE(closed_by_peer(fd, 50ms));
  // A fourth DoT connection closes the least recently used DoT one, no plain one.
  TlsClient fourth(d.tls_port);
  REQUIRE(fourth.connected());
  REQUIRE(fourth.send(make_query(9, "a.test.", 1)));
  CHECK(!fourth.receive().empty());
  CHECK(closed_by_peer(dot[0]->fd(), 2000ms));
  for (std::size_t i = 1; i < dot.size(); ++i) {
    REQUIRE(dot[i]->send(make_query(10, "a.test.", 1)));
    CHECK(!dot[i]->receive().empty());
  }
  for (int fd : plain) CHECK_FALSE(closed_by_peer(fd, 50ms));
  // Plain TCP has its own 8: three more make nine, the oldest plain one is closed.
  for (int i = 0; i < 3; ++i) plain.push_back(connect_tcp(d.s().port));
  CHECK(closed_by_peer(plain[0], 2000ms));
  for (std::size_t i = 1; i < plain.size(); ++i) CHECK_FALSE(closed_by_peer(plain[i], 50ms));
  for (int fd : plain) ::close(fd);
}

TEST_CASE("DoT: a session ticket from one worker resumes on any worker", "[serve][tls]") {
  DotService d;
  std::vector<std::uint8_t> ticket;
  {
    TlsClient first(d.tls_port);
    REQUIRE(first.connected());
    CHECK_FALSE(first.resumed());
    REQUIRE(first.send(make_query(1, "a.test.", 1)));
    REQUIRE(!first.receive().empty());  // the NewSessionTicket came before the answer
    ticket = first.session_data();
  }
  REQUIRE(!ticket.empty());
  std::set<pid_t> workers;
  int resumed = 0;
  for (int i = 0; i < 12; ++i) {
    TlsClient c(d.tls_port, ticket);
    REQUIRE(c.connected());
    if (c.resumed()) ++resumed;
  }
  CHECK(resumed == 12);  // two workers share the accept queue: both resumed some
}

TEST_CASE("DoT: SIGHUP serves a new certificate to new handshakes, keeps the cache, a bad one keeps the old",
          "[serve][tls][reload]") {
  TestCertificate next("dot2.test");
  DotService d;
  // The files the config names, now under the operator's control.
  const std::string cert = d.cert.cert_path(), key = d.cert.key_path();
  const std::string old_fp = d.cert.fingerprint();
  {
    TlsClient c(d.tls_port);
    REQUIRE(c.connected());
    CHECK(c.peer_fingerprint() == old_fp);
    REQUIRE(c.send(make_query(1, "a.test.", 1)));
    REQUIRE(!c.receive().empty());
  }
  const std::uint64_t upstream = d.s().upstream.queries();
  // Established before the reload: a DoT and a plain TCP connection, one on each worker
  // at least by count (the kernel picks), both must still be answered after it.
  std::vector<std::unique_ptr<TlsClient>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<TlsClient>(d.tls_port));
    REQUIRE(held.back()->connected());
  }
  const int plain = tcp_connect_from("127.0.0.1", d.s().port);
  REQUIRE(plain >= 0);
  next.install(cert, key);
  REQUIRE(::kill(d.s().serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return d.s().serve->log().find("reload: tls: certificate") != std::string::npos; }));
  CHECK(eventually([&] { return TlsClient(d.tls_port).peer_fingerprint() == next.fingerprint(); }));
  for (int i = 0; i < 6; ++i) CHECK(TlsClient(d.tls_port).peer_fingerprint() == next.fingerprint());  // every worker
  CHECK(kdig_records(d.tls_port, "a.test.", "A", "+tls").find("192.0.2.1") != std::string::npos);
  CHECK(d.s().upstream.queries() == upstream);  // answered from the cache
  std::uint16_t id = 100;
  for (auto& c : held) {  // old certificate, old worker: still answered
    CHECK(c->peer_fingerprint() == old_fp);
    REQUIRE(c->send(make_query(++id, "a.test.", 1)));
    const std::vector<std::uint8_t> r = c->receive();
    CHECK(message_id(r) == id);
  }
  const std::vector<std::uint8_t> q = tcp_framed(make_query(200, "a.test.", 1));
  REQUIRE(::send(plain, q.data(), q.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(q.size()));
  pollfd p{plain, POLLIN, 0};
  CHECK(::poll(&p, 1, 2000) == 1);
  std::uint8_t buf[512];
  CHECK(::recv(plain, buf, sizeof buf, 0) > 14);
  CHECK(((buf[2] << 8) | buf[3]) == 200);
  ::close(plain);
  held.clear();

  std::ofstream(cert) << "not a certificate\n";
  REQUIRE(::kill(d.s().serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return d.s().serve->log().find("keeping the running certificate") != std::string::npos; }));
  CHECK(eventually([&] { return d.s().serve->log().find("reloaded: 2 workers replaced", d.s().serve->log().find("keeping the running certificate")) != std::string::npos; }));
  for (int i = 0; i < 6; ++i) CHECK(TlsClient(d.tls_port).peer_fingerprint() == next.fingerprint());

  // A file without the tls section: DoT's sockets need a restart, so it keeps serving.
  std::ofstream(d.config->path()) << "log_level: info\n";
  REQUIRE(::kill(d.s().serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return d.s().serve->log().find("tls.listen changed; it needs a restart") != std::string::npos; }));
  CHECK(eventually([&] { return d.s().serve->log().rfind("reloaded: 2 workers replaced") > d.s().serve->log().find("tls.listen changed"); }));
  CHECK(TlsClient(d.tls_port).connected());
}

TEST_CASE("DoT: a missing, unreadable or mismatched certificate or key stops the start with the reason",
          "[serve][tls]") {
  TestCertificate a("a.test"), b("b.test");
  const std::string port = std::to_string(free_port()), tls = std::to_string(free_port());
  auto serve = [&](const std::string& cert, const std::string& key, int* status) {
    TempConfig cfg("listen: 127.0.0.1:" + port + "\nupstreams: [127.0.0.1:9]\nstats: {metrics_listen: \"\"}\n"
                   "tls: {listen: [127.0.0.1:" + tls + "], certificate: " + cert + ", key: " + key + "}\n");
    return run_command("timeout 20 " + dnsarena_binary() + " serve --segment " + unique_segment("dot-bad") +
                           " --config " + cfg.path() + " 2>&1",
                       status);
  };
  int status = 0;
  std::string out = serve(a.cert_path(), "/nonexistent/key.pem", &status);
  INFO(out);
  CHECK(status != 0);
  CHECK(out.find("tls.key '/nonexistent/key.pem': No such file or directory") != std::string::npos);
  out = serve(a.cert_path(), b.key_path(), &status);  // b's key with a's certificate
  INFO(out);
  CHECK(status != 0);
  CHECK(out.find("cannot serve DNS over TLS") != std::string::npos);
  CHECK(out.find("not match") != std::string::npos);
  const std::string pem = write_config("garbage\n");
  out = serve(pem, a.key_path(), &status);
  INFO(out);
  CHECK(status != 0);
  CHECK(out.find("cannot serve DNS over TLS") != std::string::npos);
  // --check-config reads the files as the start would.
  auto check = [&](const std::string& cert, const std::string& key, int* st) {
    TempConfig cfg("listen: 127.0.0.1:" + port + "\nupstreams: [127.0.0.1:9]\n"
                   "tls: {listen: [127.0.0.1:" + tls + "], certificate: " + cert + ", key: " + key + "}\n");
    return run_command(dnsarena_binary() + " serve --check-config " + cfg.path() + " 2>&1", st);
  };
  out = check(a.cert_path(), a.key_path(), &status);
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("DoT 127.0.0.1:" + tls + " (certificate sha256 " + a.fingerprint() + ")") != std::string::npos);
  out = check(a.cert_path(), b.key_path(), &status);
  INFO(out);
  CHECK(status == 1);
  CHECK(out.find("invalid") != std::string::npos);
}
