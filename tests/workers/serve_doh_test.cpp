// SPDX-License-Identifier: GPL-3.0-or-later
// DNS over HTTPS (RFC 8484) on `dnsarena serve`: real serve processes on loopback, kdig
// +https / +https-get, and an nghttp2 client of our own (doh_test_client.hpp) for what
// kdig does not send: many streams, wrong methods, paths and media types, streams that
// never end, huge headers and bodies, garbage. Certificates are made by certtool at test
// time (tls_test_support.hpp).
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "tests/workers/doh_test_client.hpp"
#include "tests/workers/hostile_clients.hpp"
#include "tests/workers/service_fixture.hpp"
#include "tests/workers/tls_test_support.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;

namespace {

// `start()` (which starts a serve) with ASan's quarantine off for that child: the
// quarantine keeps every freed block, so the worker's RSS would grow with the bytes
// allocated per request rather than with what it holds (as in serve_tcp_limits_test).
template <typename Start>
auto without_asan_quarantine(Start start) {
#if defined(__SANITIZE_ADDRESS__)
  const char* inherited = std::getenv("ASAN_OPTIONS");
  const std::string saved = inherited ? inherited : "";
  ::setenv("ASAN_OPTIONS", (saved + (saved.empty() ? "" : ":") + "quarantine_size_mb=0").c_str(), 1);
  auto started = start();
  if (inherited) ::setenv("ASAN_OPTIONS", saved.c_str(), 1);
  else ::unsetenv("ASAN_OPTIONS");
  return started;
#else
  return start();
#endif
}

// A serve with DoH on its own port (the tls: section names the certificate only);
// `https_extra` adds keys to the https: map, `extra` adds YAML lines.
struct DohService {
  TestCertificate cert{"doh.test"};
  std::uint16_t doh_port = free_port();
  std::unique_ptr<TempConfig> config;
  std::unique_ptr<Service> service;

  explicit DohService(const std::string& https_extra = "", const std::string& extra = "", unsigned workers = 2) {
    config = std::make_unique<TempConfig>("tls: {certificate: " + cert.cert_path() + ", key: " + cert.key_path() +
                                          "}\nhttps: {listen: [127.0.0.1:" + std::to_string(doh_port) + "]" +
                                          https_extra + "}\n" + extra);
    service = without_asan_quarantine(
        [&] { return std::make_unique<Service>(std::vector<std::string>{"--config", config->path()}, workers); });
  }
  Service& s() { return *service; }
};

// The answer's question name as the harness spells it ("a.test.").
std::string first_answer_owner(const DnsReply& r) { return r.records.empty() ? "" : r.records.front().owner; }

std::uint32_t least_ttl(const DnsReply& r) {
  std::uint32_t least = UINT32_MAX;
  for (const ReplyRecord& rr : r.records) least = std::min(least, rr.ttl);
  return least == UINT32_MAX ? 0 : least;
}

}  // namespace

TEST_CASE("DoH: kdig +https and +https-get are answered from the same cache entry as UDP", "[serve][doh]") {
  DohService d;
  // A UDP miss first, then DoH hits of the same entry: one upstream query in all.
  const std::string udp = kdig_records(d.s().port, "a.test.", "A");
  INFO(udp);
  REQUIRE(udp.find("192.0.2.1") != std::string::npos);
  CHECK(d.s().upstream.queries() == 1);
  const std::uint64_t hits = d.s().total("hits");
  CHECK(kdig_records(d.doh_port, "a.test.", "A", "+https") == udp);
  CHECK(kdig_records(d.doh_port, "a.test.", "A", "+https-get") == udp);
  CHECK(kdig_records(d.doh_port, "a.test.", "A", "+https=/dns-query") == udp);
  CHECK(d.s().upstream.queries() == 1);
  CHECK(d.s().total("hits") == hits + 3);
  // And the other way: a DoH miss, then a UDP hit.
  const std::string doh = kdig_records(d.doh_port, "aaaa.test.", "AAAA", "+https");
  CHECK(doh.find("2001:db8::1") != std::string::npos);
  CHECK(kdig_records(d.s().port, "aaaa.test.", "AAAA") == doh);
  CHECK(d.s().upstream.queries() == 2);
  DohClient c(d.doh_port);
  REQUIRE(c.connected());
  CHECK(c.tls().alpn() == "h2");
  CHECK(c.tls().peer_fingerprint() == d.cert.fingerprint());
}

TEST_CASE("DoH: a miss is answered once the upstream replies: 200, media type, max-age, ID as sent, padding",
          "[serve][doh]") {
  DohService d;
  d.s().upstream.set_delay(150ms);  // under the upstream timeout (300 ms): one query
  DohClient c(d.doh_port);
  REQUIRE(c.connected());
  const auto start = std::chrono::steady_clock::now();
  const std::int32_t miss = c.get(make_query(0, "txt.test.", 16));  // ID 0, as RFC 8484 4.1 asks
  REQUIRE(c.wait(miss));
  CHECK(std::chrono::steady_clock::now() - start >= 140ms);
  const DohResponse& r = c.response(miss);
  REQUIRE(r.status == 200);
  CHECK(r.headers.at("content-type") == "application/dns-message");
  const DnsReply reply = parse_reply(r.body);
  REQUIRE(reply.answered);
  CHECK(reply.id == 0);
  CHECK(first_answer_owner(reply) == "txt.test.");
  CHECK(r.headers.at("cache-control") == "max-age=" + std::to_string(least_ttl(reply)));
  CHECK(least_ttl(reply) > 0);
  CHECK(r.body.size() % 468 == 0);  // EDNS in the query: padded as over DoT
  CHECK(d.s().upstream.queries() == 1);
  // A hit, by POST, with an ID that is not 0: answered with it as is.
  const std::int32_t hit = c.post(make_query(4321, "txt.test.", 16));
  REQUIRE(c.wait(hit));
  REQUIRE(c.response(hit).status == 200);
  CHECK(message_id(c.response(hit).body) == 4321);
  CHECK(d.s().upstream.queries() == 1);
  // No EDNS: no OPT, no padding.
  const std::int32_t plain = c.get(make_query(0, "txt.test.", 16, 0));
  REQUIRE(c.wait(plain));
  REQUIRE(c.response(plain).status == 200);
  CHECK(opt_options(c.response(plain).body).empty());
  // A negative answer's max-age is its SOA's TTL (the only record).
  const std::int32_t nx = c.get(make_query(0, "nothere.test.", 1));
  REQUIRE(c.wait(nx));
  REQUIRE(c.response(nx).status == 200);
  const DnsReply nxr = parse_reply(c.response(nx).body);
  CHECK(nxr.rcode() == 3);
  CHECK(c.response(nx).headers.at("cache-control") == "max-age=" + std::to_string(least_ttl(nxr)));
}

TEST_CASE("DoH: concurrent streams on one connection, GET and POST mixed, each gets its own answer", "[serve][doh]") {
  DohService d;
  d.s().upstream.set_delay(50ms);  // misses and hits interleave
  DohClient c(d.doh_port);
  REQUIRE(c.connected());
  const std::vector<std::pair<std::string, std::uint16_t>> questions{
      {"a.test.", 1}, {"aaaa.test.", 28}, {"txt.test.", 16}, {"big.test.", 16}, {"huge.test.", 16}, {"cname.test.", 1}};
  std::uint64_t after_first = 0;
  for (int pass = 0; pass < 2; ++pass) {  // misses, then hits
    std::map<std::int32_t, std::pair<std::string, std::uint16_t>> asked;
    for (int i = 0; i < 60; ++i) {
      const auto& q = questions[static_cast<std::size_t>(i) % questions.size()];
      const std::vector<std::uint8_t> query = make_query(static_cast<std::uint16_t>(i), q.first, q.second);
      asked[i % 2 ? c.get(query) : c.post(query)] = q;
    }
    REQUIRE(c.pump_until(
        [&] {
          for (const auto& [id, q] : asked)
            if (!c.response(id).closed) return false;
          return true;
        },
        5000ms));
    for (const auto& [id, q] : asked) {
      const DohResponse& r = c.response(id);
      INFO("pass " << pass << " stream " << id << " " << q.first);
      REQUIRE(r.status == 200);
      const DnsReply reply = parse_reply(r.body);
      REQUIRE(reply.answered);
      CHECK(reply.rcode() == 0);
      CHECK(first_answer_owner(reply) == q.first);
      CHECK(r.body.size() % 468 == 0);
    }
    if (pass == 0) after_first = d.s().upstream.queries();
  }
  CHECK(after_first >= questions.size());
  CHECK(d.s().upstream.queries() == after_first);  // the second pass: all hits
}

// dnsperf's DoH client (2.10) sends the WINDOW_UPDATE frames nghttp2 queues for it only
// with its next request: with all its queries outstanding on a connection it sends none,
// and the 64 KiB connection window (RFC 9113 6.9.2) holds about 140 padded answers. The
// server must stop there (no answer split around the window) and send the rest as soon
// as the window comes back.
TEST_CASE("DoH: answers past the client's flow-control window wait for its WINDOW_UPDATE, then all go out",
          "[serve][doh]") {
  DohService d(", max_streams: 300");
  DohClient warm(d.doh_port);
  REQUIRE(warm.connected());
  REQUIRE(warm.wait(warm.get(make_query(1, "a.test.", 1))));  // every request below is a hit
  DohClient c(d.doh_port, 3000ms, DohWindow::held);
  REQUIRE(c.connected());
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 200; ++i) ids.push_back(c.get(make_query(static_cast<std::uint16_t>(i), "a.test.", 1)));
  auto closed = [&] {
    return static_cast<std::size_t>(std::count_if(ids.begin(), ids.end(), [&](std::int32_t id) { return c.response(id).closed; }));
  };
  // Answers are padded to 468 bytes, each in one DATA frame: 140 fit the 65,535-byte
  // connection window, the 141st does not, and nothing more comes without WINDOW_UPDATE.
  const std::size_t fit = 65535 / 468;
  REQUIRE(c.pump_until([&] { return closed() >= fit; }, 5000ms));
  CHECK_FALSE(c.pump_until([&] { return closed() > fit; }, 500ms));
  INFO(closed() << " answered within the window, " << c.held_window_bytes() << " DATA bytes");
  CHECK(closed() == fit);
  CHECK(c.held_window_bytes() == fit * 468);
  for (const std::int32_t id : ids)  // nothing half sent: a stream has its whole answer or none of it
    if (!c.response(id).closed) CHECK(c.response(id).body.empty());
  c.release_window();
  REQUIRE(c.pump_until([&] { return closed() == ids.size(); }, 3000ms));
  for (const std::int32_t id : ids) {
    const DohResponse& r = c.response(id);
    REQUIRE(r.status == 200);
    CHECK(r.body.size() == 468);
    CHECK(parse_reply(r.body).answered);
  }
  // The 60 that waited went out together, each ending its own TLS record.
  CHECK(c.max_answers_per_record() == 1);
}

// dnsperf -m doh (2.10) assembles one answer per TLS record it reads: a second answer in a
// record reaches it empty, and so does every later one on the connection (doh_server.hpp).
// Requests that arrive together (here 30 in one record) are answered one per record.
TEST_CASE("DoH: every answer ends its TLS record, also for requests that came in one record", "[serve][doh]") {
  DohService d("", "", 1);
  DohClient c(d.doh_port);
  REQUIRE(c.connected());
  REQUIRE(c.wait(c.get(make_query(1, "a.test.", 1))));  // the entry: every request below is a hit
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 30; ++i) ids.push_back(c.get(make_query(static_cast<std::uint16_t>(100 + i), "a.test.", 1)));
  REQUIRE(c.pump_until([&] { return std::all_of(ids.begin(), ids.end(), [&](std::int32_t id) { return c.response(id).closed; }); },
                       3000ms));
  for (const std::int32_t id : ids) CHECK(c.response(id).status == 200);
  CHECK(c.max_answers_per_record() == 1);
}

// The real client at saturation with more queries outstanding than the 64 KiB window holds
// padded answers (200 against 140): before every answer ended its record, the answers that
// waited for the window went out in one record and dnsperf lost them and all that followed
// (141 answered, 200 lost, in 5 s).
TEST_CASE("DoH: dnsperf -m doh with 200 queries outstanding on one connection loses none", "[serve][doh]") {
  DohService d("", "", 1);
  const std::string queries = "/tmp/serve_doh_dnsperf_" + std::to_string(::getpid()) + ".txt";
  {
    std::ofstream out(queries);
    for (int i = 0; i < 100; ++i) out << "a.test A\n";
  }
  DohClient warm(d.doh_port);
  REQUIRE(warm.connected());
  REQUIRE(warm.wait(warm.get(make_query(1, "a.test.", 1))));
  int status = 0;
  const std::string out = run_command("dnsperf -s 127.0.0.1 -p " + std::to_string(d.doh_port) + " -m doh -e -c 1 -q 200 -l 2 -t 2 -d " +
                                          queries + " 2>&1",
                                      &status);
  std::remove(queries.c_str());
  INFO(out);
  REQUIRE(status == 0);
  auto count = [&](const std::string& label) {
    const std::size_t at = out.find(label);
    return at == std::string::npos ? -1L : std::stol(out.substr(at + label.size()));
  };
  const long sent = count("Queries sent:"), completed = count("Queries completed:"), lost = count("Queries lost:");
  REQUIRE(sent > 0);
  CHECK(completed >= 1000);
  CHECK(lost * 100 <= sent);  // at most 1%: dnsperf's own timing, not a stall
}

TEST_CASE("DoH: error statuses 400, 404, 405, 413, 415, and the connection goes on", "[serve][doh]") {
  DohService d("", "", 1);
  DohClient c(d.doh_port);
  REQUIRE(c.connected());
  const std::vector<std::uint8_t> q = make_query(0, "a.test.", 1);
  auto status = [&](std::int32_t id) {
    REQUIRE(c.wait(id));
    return c.response(id).status;
  };
  CHECK(status(c.get(q, "/other")) == 404);
  CHECK(status(c.get(q, "/dns-query/x")) == 404);
  CHECK(status(c.request("PUT", "/dns-query", {{"content-type", "application/dns-message"}}, q)) == 405);
  CHECK(status(c.request("DELETE", "/dns-query?dns=" + base64url(q))) == 405);
  CHECK(status(c.request("GET", "/dns-query")) == 400);                        // no dns=
  CHECK(status(c.request("GET", "/dns-query?ct=x")) == 400);                   // no dns=
  CHECK(status(c.request("GET", "/dns-query?dns=" + base64url(q) + "=")) == 400);  // padding
  CHECK(status(c.request("GET", "/dns-query?dns=AAEC+w")) == 400);              // '+' is base64, not base64url
  CHECK(status(c.request("GET", "/dns-query?dns=AAAA&dns=" + base64url(q))) == 400);  // twice
  CHECK(status(c.get({0, 1, 2, 3, 4, 5})) == 400);                             // shorter than a header
  std::vector<std::uint8_t> response_bit = q;
  response_bit[2] |= 0x80;
  CHECK(status(c.post(response_bit)) == 400);                                  // QR set
  CHECK(status(c.post(q, "/dns-query", "text/plain")) == 415);
  CHECK(status(c.request("POST", "/dns-query", {}, q)) == 415);                // no content-type
  CHECK(status(c.post(std::vector<std::uint8_t>(70000, 0))) == 413);
  // dns= among other parameters, and the media type's case and parameters: accepted.
  const std::int32_t ok = c.request("GET", "/dns-query?ct&dns=" + base64url(q) + "&x=1");
  CHECK(status(ok) == 200);
  CHECK(status(c.post(q, "/dns-query", "Application/DNS-Message; charset=x")) == 200);
  // A message that is a DNS query but a bad one: a DNS answer (FORMERR), status 200.
  std::vector<std::uint8_t> two = q;
  two[5] = 2;
  const std::int32_t formerr = c.post(two);
  CHECK(status(formerr) == 200);
  CHECK(parse_reply(c.response(formerr).body).rcode() == 1);
  CHECK_FALSE(c.eof());
  const std::int32_t last = c.get(q);
  CHECK(status(last) == 200);
  CHECK(parse_reply(c.response(last).body).answered);
}

TEST_CASE("DoH: streams over max_streams are refused, huge headers reset, garbage closed, others unharmed",
          "[serve][doh][hostile]") {
  DohService d(", max_streams: 4", "tcp: {idle_timeout_ms: 30000}\n", 1);
  DohClient good(d.doh_port);
  REQUIRE(good.connected());
  REQUIRE(good.wait(good.get(make_query(0, "a.test.", 1))));

  // Four streams that never send their body hold the four slots; the rest are refused.
  DohClient holder(d.doh_port);
  REQUIRE(holder.connected());
  std::vector<std::int32_t> open, over;
  for (int i = 0; i < 4; ++i)
    open.push_back(holder.request("POST", "/dns-query", {{"content-type", "application/dns-message"}}, {}, false));
  for (int i = 0; i < 6; ++i) over.push_back(holder.get(make_query(0, "a.test.", 1)));
  CHECK(holder.pump_until([&] { return holder.response(over.back()).closed; }, 3000ms));
  CHECK(holder.server_max_streams() == 4);
  for (std::int32_t id : over) {
    CHECK(holder.response(id).closed);
    CHECK(holder.response(id).status == 0);
    CHECK(holder.response(id).reset_code == NGHTTP2_REFUSED_STREAM);
  }
  for (std::int32_t id : open) CHECK_FALSE(holder.response(id).closed);

  // A 20 KiB header: that stream is reset, the connection and the others go on.
  DohClient big(d.doh_port);
  REQUIRE(big.connected());
  const std::int32_t huge = big.request("GET", "/dns-query?dns=" + base64url(make_query(0, "a.test.", 1)),
                                        {{"x-filler", std::string(20000, 'x')}});
  REQUIRE(big.wait(huge));
  CHECK(big.response(huge).status == 0);
  CHECK(big.response(huge).reset_code != 0);
  const std::int32_t after = big.get(make_query(0, "a.test.", 1));
  REQUIRE(big.wait(after));
  CHECK(big.response(after).status == 200);

  // Garbage instead of the HTTP/2 preface: closed at once.
  TlsClient garbage(d.doh_port, {}, 3000ms, "h2");
  REQUIRE(garbage.connected());
  const std::string http1 = "GET /dns-query HTTP/1.1\r\nHost: x\r\n\r\n";
  REQUIRE(garbage.send_raw(reinterpret_cast<const std::uint8_t*>(http1.data()), http1.size()));
  std::uint8_t buf[4096];
  long r = 0;
  const auto start = std::chrono::steady_clock::now();
  while ((r = garbage.receive_raw(buf, sizeof buf, 2000ms)) > 0) {}
  CHECK(r < 0);  // EOF, not a timeout
  CHECK(std::chrono::steady_clock::now() - start < 1500ms);

  // The first client was never disturbed.
  const std::int32_t again = good.post(make_query(9, "aaaa.test.", 28));
  REQUIRE(good.wait(again));
  CHECK(good.response(again).status == 200);
  CHECK(message_id(good.response(again).body) == 9);
  CHECK(kdig_records(d.doh_port, "a.test.", "A", "+https").find("192.0.2.1") != std::string::npos);
}

TEST_CASE("DoH: streams that never send a body are closed by the idle timeout", "[serve][doh][hostile][timing]") {
  DohService d("", "tcp: {idle_timeout_ms: 1000}\n", 1);
  DohClient holder(d.doh_port);
  REQUIRE(holder.connected());
  for (int i = 0; i < 10; ++i)
    holder.request("POST", "/dns-query", {{"content-type", "application/dns-message"}}, {}, false);
  const auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(holder.pump_until([] { return false; }, 5000ms));
  CHECK(holder.eof());
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= 900ms);
  CHECK(took < 4000ms);  // timeout 1000 ms, swept about once a second
}

TEST_CASE("DoH: a client that never reads holds bounded output, others are answered", "[serve][doh][hostile]") {
  DohService d("", "tcp: {idle_timeout_ms: 30000}\n", 1);
  DohClient good(d.doh_port);
  REQUIRE(good.connected());
  REQUIRE(good.wait(good.get(make_query(0, "huge.test.", 16))));  // in the cache now
  const pid_t worker = d.s().serve->children().at(0);
  const std::uint64_t rss_before = vm_rss_kib(worker);

  // PINGs, sent and never read: the server owes a PING ACK for each. Its answers fill the
  // socket, then the transport stops reading this connection (its output over
  // kTcpOutputPause), and our sends stall.
  DohClient slow(d.doh_port);
  REQUIRE(slow.connected());
  REQUIRE(slow.wait(slow.get(make_query(0, "huge.test.", 16))));  // preface and SETTINGS exchanged
  const timeval tv{2, 0};
  ::setsockopt(slow.tls().fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const int small = 4096;
  ::setsockopt(slow.tls().fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  std::vector<std::uint8_t> pings;
  for (int i = 0; i < 960; ++i) {
    const std::uint8_t ping[17] = {0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, static_cast<std::uint8_t>(i)};
    pings.insert(pings.end(), ping, ping + sizeof ping);
  }
  const auto until = std::chrono::steady_clock::now() + 20s;
  bool stalled = false;
  std::size_t sent = 0;
  while (!stalled && std::chrono::steady_clock::now() < until) {
    stalled = !slow.tls().send_raw(pings.data(), pings.size());
    if (!stalled) sent += pings.size();
  }
  INFO("sent " << sent << " bytes of PINGs before the server stopped reading");
  CHECK(stalled);
  const std::uint64_t rss_after = vm_rss_kib(worker);
  INFO("worker RSS " << rss_before << " KiB -> " << rss_after << " KiB");
  CHECK(rss_after < rss_before + 16 * 1024);
  const std::int32_t id = good.get(make_query(0, "huge.test.", 16));
  REQUIRE(good.wait(id));
  CHECK(good.response(id).status == 200);
}

TEST_CASE("DoH: SIGHUP keeps established connections answering, new ones reach the new workers",
          "[serve][doh][reload]") {
  DohService d;
  std::vector<std::unique_ptr<DohClient>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<DohClient>(d.doh_port));
    REQUIRE(held.back()->connected());
    REQUIRE(held.back()->wait(held.back()->get(make_query(0, "a.test.", 1))));
  }
  const std::uint64_t upstream = d.s().upstream.queries();
  REQUIRE(::kill(d.s().serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return d.s().serve->log().find("reloaded: 2 workers replaced") != std::string::npos; }));
  std::uint16_t qid = 100;
  for (auto& c : held) {  // the retired workers still answer their connections
    const std::int32_t id = c->get(make_query(++qid, "a.test.", 1));
    REQUIRE(c->wait(id));
    CHECK(c->response(id).status == 200);
    CHECK(message_id(c->response(id).body) == qid);
    // and told each client, gracefully, to open its next connection (the GOAWAY went out
    // when the worker was retired, before the reload was logged; the client may read it
    // after the answer)
    CHECK(c->pump_until([&] { return c->goaway(); }, std::chrono::milliseconds(3000)));
    CHECK_FALSE(c->eof());
  }
  CHECK(kdig_records(d.doh_port, "a.test.", "A", "+https").find("192.0.2.1") != std::string::npos);
  CHECK(d.s().upstream.queries() == upstream);  // from the cache
  held.clear();
  // A file without the https section: its sockets need a restart, so it keeps serving.
  std::ofstream(d.config->path()) << "tls: {certificate: " << d.cert.cert_path() << ", key: " << d.cert.key_path()
                                  << "}\n";
  REQUIRE(::kill(d.s().serve->pid(), SIGHUP) == 0);
  CHECK(eventually([&] { return d.s().serve->log().find("https.listen changed; it needs a restart") != std::string::npos; }));
  DohClient after(d.doh_port);
  REQUIRE(after.connected());
  const std::int32_t id = after.get(make_query(0, "a.test.", 1));
  REQUIRE(after.wait(id));
  CHECK(after.response(id).status == 200);
}

TEST_CASE("DoH: no certificate, a shared address or a bad path stop the start with the reason", "[serve][doh]") {
  TestCertificate a("a.test");
  const std::string port = std::to_string(free_port()), doh = std::to_string(free_port());
  auto check = [&](const std::string& yaml, int* st) {
    TempConfig cfg("listen: 127.0.0.1:" + port + "\nupstreams: [127.0.0.1:9]\n" + yaml);
    return run_command(dnsarena_binary() + " serve --check-config " + cfg.path() + " 2>&1", st);
  };
  int status = 0;
  const std::string files = "tls: {certificate: " + a.cert_path() + ", key: " + a.key_path() + "}\n";
  std::string out = check(files + "https: {listen: [127.0.0.1:" + doh + "]}\n", &status);
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("DoH 127.0.0.1:" + doh + "/dns-query (certificate sha256 " + a.fingerprint() + ")") !=
        std::string::npos);
  out = check("https: {listen: [127.0.0.1:" + doh + "]}\n", &status);
  CHECK(status == 1);
  CHECK(out.find("https.listen needs a certificate: set tls.certificate and tls.key") != std::string::npos);
  out = check(files + "https: {listen: [127.0.0.1:" + port + "]}\n", &status);
  CHECK(status == 1);
  CHECK(out.find("is also a plain listen address") != std::string::npos);
  out = check("tls: {listen: [127.0.0.1:" + doh + "], certificate: " + a.cert_path() + ", key: " + a.key_path() +
                  "}\nhttps: {listen: [127.0.0.1:" + doh + "]}\n",
              &status);
  CHECK(status == 1);
  CHECK(out.find("is also a tls.listen address") != std::string::npos);
  out = check(files + "https: {listen: [127.0.0.1:" + doh + "], path: dns-query}\n", &status);
  CHECK(status == 1);
  CHECK(out.find("https.path: 'dns-query' is not an absolute path") != std::string::npos);
  out = check(files + "https: {listen: [127.0.0.1:" + doh + "], path: \"/q?x=1\"}\n", &status);
  CHECK(status == 1);
  CHECK(out.find("https.path") != std::string::npos);
  out = check(files + "https: {listen: [127.0.0.1:" + doh + "], max_streams: 0}\n", &status);
  CHECK(status == 1);
  CHECK(out.find("https.max_streams must be > 0") != std::string::npos);
  out = check(files + "https: {listen: [127.0.0.1:" + doh + "], max_stream: 5}\n", &status);
  CHECK(status == 1);
  CHECK(out.find("max_stream") != std::string::npos);
}

namespace {
// The worker's private memory (RssAnon), KiB.
std::uint64_t rss_anon_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("RssAnon:", 0) == 0) return std::stoull(line.substr(8));
  return 0;
}
}  // namespace

TEST_CASE("DoH: an idle connection (one request answered) costs the worker a bounded few KiB, beside DoT's",
          "[serve][doh]") {
  constexpr int kConnections = 200;
  TestCertificate cert("mem.test");
  const std::uint16_t dot_port = free_port(), doh_port = free_port();
  TempConfig config("tls: {listen: [127.0.0.1:" + std::to_string(dot_port) + "], certificate: " + cert.cert_path() +
                    ", key: " + cert.key_path() + "}\nhttps: {listen: [127.0.0.1:" + std::to_string(doh_port) +
                    "]}\ntcp: {max_connections: 1000, max_connections_per_client: 0, idle_timeout_ms: 60000}\n");
  const auto service = without_asan_quarantine(
      [&] { return std::make_unique<Service>(std::vector<std::string>{"--config", config.path()}, 1); });
  Service& s = *service;
  const pid_t worker = s.serve->children().at(0);
  {  // the first connection of each kind (GnuTLS and nghttp2 set-up, the cache entry) not counted
    DohClient warm(doh_port);
    REQUIRE(warm.wait(warm.get(make_query(0, "a.test.", 1))));
    TlsClient dot(dot_port);
    REQUIRE(dot.send(make_query(1, "a.test.", 1)));
    REQUIRE(!dot.receive().empty());
  }
  std::this_thread::sleep_for(200ms);
  const std::uint64_t base = rss_anon_kib(worker);
  std::vector<std::unique_ptr<DohClient>> doh;
  for (int i = 0; i < kConnections; ++i) {
    doh.push_back(std::make_unique<DohClient>(doh_port));
    REQUIRE(doh.back()->wait(doh.back()->get(make_query(0, "a.test.", 1))));
  }
  std::this_thread::sleep_for(200ms);
  const std::uint64_t with_doh = rss_anon_kib(worker);
  std::vector<std::unique_ptr<TlsClient>> dot;
  for (int i = 0; i < kConnections; ++i) {
    dot.push_back(std::make_unique<TlsClient>(dot_port));
    REQUIRE(dot.back()->send(make_query(1, "a.test.", 1)));
    REQUIRE(!dot.back()->receive().empty());
  }
  std::this_thread::sleep_for(200ms);
  const std::uint64_t with_dot = rss_anon_kib(worker);
  const double doh_kib = static_cast<double>(with_doh - base) / kConnections;
  const double dot_kib = static_cast<double>(with_dot - with_doh) / kConnections;
  WARN("worker RssAnon per idle connection: DoH " << doh_kib << " KiB, DoT " << dot_kib << " KiB (" << kConnections
                                                  << " each)");
  CHECK(with_doh > base);
#if !defined(__SANITIZE_ADDRESS__)  // redzones and shadow memory: printed, not judged
  CHECK(doh_kib < 96);
#endif
}
