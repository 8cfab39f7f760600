// A tiny authoritative responder for the serve tests, on a thread of the test process.
//
// It answers a fixed zone "test." over UDP on 127.0.0.1 (a free port) and counts the
// queries it receives, so a test can prove that an answer came from the cache. A mode
// switch makes it hostile: reply with a wrong ID, from another port, for another
// question, or not at all.
//
//   name            type   answer
//   a.test.         A      192.0.2.1, 192.0.2.2 (+ an out-of-bailiwick additional record)
//   aaaa.test.      AAAA   2001:db8::1
//   txt.test.       TXT    "hello upstream"
//   big.test.       TXT    4 strings of 200 bytes (does not fit 512 bytes)
//   cname.test.     A      CNAME target.test., target.test. A 192.0.2.9
//   nodata.test.    AAAA   NOERROR, no answer, SOA
//   ecs.test.       A      10.<b1>.<b2>.1 from the query's ECS address, scope /24
//   other names     any    NXDOMAIN, SOA (negative TTL 300 = SOA MINIMUM)
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>

namespace dnsarena::test {

enum class UpstreamMode { normal, wrong_id, wrong_port, wrong_question, silent };

class TestUpstream {
public:
  TestUpstream();
  ~TestUpstream();
  std::uint16_t port() const { return port_; }
  std::uint64_t queries() const { return queries_.load(); }
  void set_mode(UpstreamMode m) { mode_.store(m); }

private:
  void loop();
  int fd_ = -1;
  int other_fd_ = -1;  // a second socket, for replies "from the wrong port"
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> queries_{0};
  std::atomic<UpstreamMode> mode_{UpstreamMode::normal};
  std::thread thread_;
};

}  // namespace dnsarena::test
