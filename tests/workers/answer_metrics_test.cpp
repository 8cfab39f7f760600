// SPDX-License-Identifier: GPL-3.0-or-later
// Latency histograms and answer counts (workers/latency_histogram.hpp,
// workers/answer_metrics.hpp, the RTT histograms of workers/upstream_health.hpp): bucket
// placement at every bound, quantile estimates, the layout offsets, forked processes
// writing at once (sums exact), and /metrics' histogram text read by a strict parser.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <vector>

#include "tests/workers/prometheus_text.hpp"
#include "workers/answer_metrics.hpp"
#include "workers/metrics_server.hpp"
#include "workers/upstream_health.hpp"

using namespace dnsarena::workers;

namespace {

// Runs `body(i)` in `n` forked children at once; true when every child exited 0.
template <typename Body>
bool in_children(int n, Body body) {
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      body(i);
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  for (const pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

// A DNS message: header with `rcode` and one question of `qtype` for a.example.
std::vector<std::uint8_t> message(std::uint16_t qtype, std::uint8_t rcode) {
  std::vector<std::uint8_t> m = {0x12, 0x34, 0x81, rcode, 0, 1, 0, 0, 0, 0, 0, 0,
                                 1,    'a',  7,    'e',   'x', 'a', 'm', 'p', 'l', 'e', 0};
  m.push_back(static_cast<std::uint8_t>(qtype >> 8));
  m.push_back(static_cast<std::uint8_t>(qtype));
  m.insert(m.end(), {0, 1});
  return m;
}

}  // namespace

TEST_CASE("latency histogram: a sample on a bound is in that bound's bucket (le is inclusive)", "[histograms]") {
  CHECK(latency_bucket(0) == 0);
  for (std::size_t i = 0; i < kLatencyBoundsNs.size(); ++i) {
    INFO("bound " << kLatencyBoundsNs[i] << " ns");
    CHECK(latency_bucket(kLatencyBoundsNs[i]) == i);
    CHECK(latency_bucket(kLatencyBoundsNs[i] + 1) == i + 1);
    if (i > 0) CHECK(latency_bucket(kLatencyBoundsNs[i - 1] + 1) == i);
  }
  CHECK(latency_bucket(~std::uint64_t{0}) == kLatencyBuckets - 1);
  // The constant-time placement against the definition (the first bound >= ns), at every
  // power of two and its neighbours and on a spread of values.
  auto reference = [](std::uint64_t ns) {
    unsigned i = 0;
    while (i < kLatencyBoundsNs.size() && ns > kLatencyBoundsNs[i]) ++i;
    return i;
  };
  for (unsigned b = 0; b < 64; ++b)
    for (const std::uint64_t ns : {(std::uint64_t{1} << b) - 1, std::uint64_t{1} << b, (std::uint64_t{1} << b) + 1}) {
      INFO(ns);
      CHECK(latency_bucket(ns) == reference(ns));
    }
  std::uint64_t x = 88172645463325252ull;
  for (int k = 0; k < 100000; ++k) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const std::uint64_t ns = x >> (x & 63);
    if (latency_bucket(ns) != reference(ns)) FAIL("bucket of " << ns);
  }
  CHECK(std::string(latency_le_text(0)) == "0.0001");
  CHECK(std::string(latency_le_text(12)) == "1");
  CHECK(std::string(latency_le_text(kLatencyBuckets - 1)) == "+Inf");
}

TEST_CASE("latency histogram: counts, sum and quantiles as Prometheus estimates them", "[histograms]") {
  LatencyHistogram h{};
  h.add(50'000, 10);         // 10 x 0.05 ms: bucket (0, 0.1]
  h.add_owned(3'000'000);    // 3 ms: (2.5, 5]
  h.add(7'000'000'000, 2);   // 7 s: +Inf
  const LatencyCounts c = read_latency(h);
  CHECK(c.count() == 13);
  CHECK(c.counts[0] == 10);
  CHECK(c.counts[5] == 1);
  CHECK(c.counts[kLatencyBuckets - 1] == 2);
  CHECK(c.sum_ns == 10 * 50'000ull + 3'000'000ull + 14'000'000'000ull);
  // Rank 6.5 of 13 is in (0, 0.1] (10 samples): 0.065 ms; rank 10.4 is the 3 ms sample's
  // bucket (2.5, 5], 40% in; rank 11.7 is in +Inf: the last finite bound.
  CHECK(c.quantile_ms(0.5) == Approx(0.065));
  CHECK(c.quantile_ms(0.8) == Approx(2.5 + 2.5 * 0.4));
  CHECK(c.quantile_ms(0.9) == Approx(5000));
  CHECK(LatencyCounts{}.quantile_ms(0.5) == -1);
  const nlohmann::json j = latency_json(c);
  CHECK(j["count"] == 13);
  CHECK(j["buckets"].size() == kLatencyBuckets);
  CHECK(latency_json(LatencyCounts{})["p50_ms"].is_null());
}

TEST_CASE("answer metrics: RCODE and question type are read from the answer sent", "[histograms]") {
  CHECK(rcode_kind(0) == 0);
  CHECK(rcode_kind(3) == 3);
  CHECK(rcode_kind(5) == 5);
  CHECK(rcode_kind(9) == kRcodeKinds - 1);
  CHECK(kQtypeNames[qtype_kind(28)] == "AAAA");
  CHECK(kQtypeNames[qtype_kind(65)] == "HTTPS");
  CHECK(kQtypeNames[qtype_kind(48)] == "DNSKEY");
  CHECK(kQtypeNames[qtype_kind(99)] == "other");
  const auto m = message(28, 3);
  CHECK(message_qtype(m.data(), m.size()) == 28);
  CHECK(message_qtype(m.data(), m.size() - 3) == -1);  // cut inside the type
  auto none = m;
  none[3] = 1;  // FORMERR,
  none[5] = 0;  // QDCOUNT 0: the answer to a packet without a readable question
  CHECK(message_qtype(none.data(), 12) == -1);
  std::vector<std::uint8_t> pointer(m.begin(), m.begin() + 12);
  pointer.insert(pointer.end(), {0xC0, 0x0C, 0, 15, 0, 1});
  CHECK(message_qtype(pointer.data(), pointer.size()) == 15);

  AnswerMetrics t(2, false);
  AnswerMeter w0(&t, 0), w1(&t, 1);
  w0.answered(m.data(), m.size(), AnswerKind::miss, 40'000'000);
  w1.answered(none.data(), 12);
  // A UDP batch of two hits: one whose type the caller knows, one read from the answer.
  const auto a = message(1, 0);
  w1.udp_answer(a.data(), a.size(), 1);
  w1.udp_answer(a.data(), a.size(), -1);
  w1.udp_hits(2, 30'000);
  const AnswerMetrics::Totals s = t.totals();
  CHECK(s.rcodes[3] == 1);  // NXDOMAIN
  CHECK(s.rcodes[1] == 1);  // FORMERR
  CHECK(s.rcodes[0] == 2);  // the two A answers
  CHECK(s.qtypes[qtype_kind(28)] == 1);
  CHECK(s.qtypes[qtype_kind(1)] == 2);
  CHECK(s.qtypes[kQtypeKinds - 1] == 1);
  CHECK(s.hit.count() == 2);
  CHECK(s.hit.counts[0] == 2);
  CHECK(s.hit.sum_ns == 60'000);
  CHECK(s.miss.count() == 1);
  CHECK(s.miss.counts[latency_bucket(40'000'000)] == 1);
}

TEST_CASE("answer metrics: forked workers on their own rows sum exactly", "[histograms][multiprocess]") {
  constexpr int kProcs = 4, kEach = 20000;
  AnswerMetrics t(kProcs, true);
  const auto a = message(1, 0), nx = message(16, 3);
  REQUIRE(in_children(kProcs, [&](int i) {
    AnswerMeter w(&t, static_cast<unsigned>(i));
    for (int k = 0; k < kEach; ++k) {
      w.answered((k & 1) ? nx.data() : a.data(), a.size(), (k & 1) ? AnswerKind::miss : AnswerKind::hit,
                 1000u * static_cast<unsigned>(i + 1));
    }
  }));
  const AnswerMetrics::Totals s = t.totals();
  CHECK(s.hit.count() == kProcs * kEach / 2);
  CHECK(s.miss.count() == kProcs * kEach / 2);
  CHECK(s.hit.sum_ns == 1000ull * (1 + 2 + 3 + 4) * kEach / 2);
  CHECK(s.rcodes[0] == kProcs * kEach / 2);
  CHECK(s.rcodes[3] == kProcs * kEach / 2);
  CHECK(s.qtypes[qtype_kind(16)] == kProcs * kEach / 2);
}

TEST_CASE("upstream RTT histograms: every process writes the same row, none is lost", "[histograms][multiprocess]") {
  constexpr int kProcs = 4, kEach = 20000;
  UpstreamHealth h(8, true);
  Endpoint e = Endpoint::parse("127.0.0.1:5353");
  const int row = h.add(e);
  REQUIRE(row == 0);
  REQUIRE(in_children(kProcs, [&](int i) {
    for (int k = 0; k < kEach; ++k) h.replied(0, (k % 2) ? 300 : 30'000 + static_cast<unsigned>(i), 1);
  }));
  h.replied(0, 0, 2);  // a TCP reply: no RTT sample
  const UpstreamHealth::Snapshot s = h.snapshot(0, 3);
  CHECK(s.rtt.count() == kProcs * kEach);
  CHECK(s.rtt.counts[latency_bucket(300'000)] == kProcs * kEach / 2);    // 0.3 ms: (0.25, 0.5]
  CHECK(s.rtt.counts[latency_bucket(30'000'000)] == kProcs * kEach / 2);  // 30 ms: (25, 50]
  CHECK(s.rtt.sum_ns == 1000ull * (kProcs * kEach / 2 * 300ull + kEach / 2 * (4 * 30'000ull + 0 + 1 + 2 + 3)));
}

TEST_CASE("/metrics histograms: cumulative buckets, +Inf equal to _count, labels per kind and upstream",
          "[histograms]") {
  AnswerMetrics t(1, false);
  AnswerMeter w(&t, 0);
  const auto a = message(1, 0);
  w.answered(a.data(), a.size(), AnswerKind::hit, 200'000);
  w.answered(a.data(), a.size(), AnswerKind::miss, 12'000'000);
  w.answered(a.data(), a.size(), AnswerKind::miss, 9'000'000'000);
  w.proxy(ProxyOutcome::accepted);
  w.proxy(ProxyOutcome::accepted);
  w.proxy(ProxyOutcome::unlisted);
  UpstreamHealth h(4, false);
  h.add(Endpoint::parse("127.0.0.1:53"));
  h.add(Endpoint::parse("[::1]:5300"));
  h.replied(1, 700, 1);
  const std::string text = prometheus_text(t.totals()) + prometheus_text(h, 2);
  const dnsarena::test::PrometheusText p = dnsarena::test::parse_prometheus_text(text);
  INFO(text);
  for (const std::string& e : p.errors) INFO(e);
  CHECK(p.errors.empty());
  CHECK(p.types.at("dnsarena_answer_latency_seconds") == "histogram");
  CHECK(p.types.at("dnsarena_upstream_rtt_seconds") == "histogram");
  CHECK(p.value("dnsarena_answer_latency_seconds_bucket{kind=\"hit\",le=\"0.00025\"}") == 1);
  CHECK(p.value("dnsarena_answer_latency_seconds_bucket{kind=\"hit\",le=\"0.0001\"}") == 0);
  CHECK(p.value("dnsarena_answer_latency_seconds_bucket{kind=\"miss\",le=\"0.01\"}") == 0);
  CHECK(p.value("dnsarena_answer_latency_seconds_bucket{kind=\"miss\",le=\"0.025\"}") == 1);
  CHECK(p.value("dnsarena_answer_latency_seconds_bucket{kind=\"miss\",le=\"5\"}") == 1);
  CHECK(p.value("dnsarena_answer_latency_seconds_count{kind=\"miss\"}") == 2);
  CHECK(p.value("dnsarena_answer_latency_seconds_sum{kind=\"miss\"}") == Approx(9.012));
  CHECK(p.value("dnsarena_answer_rcodes_total{rcode=\"NOERROR\"}") == 3);
  CHECK(p.value("dnsarena_answer_qtypes_total{qtype=\"A\"}") == 3);
  CHECK(p.types.at("dnsarena_proxy_headers_total") == "counter");
  CHECK(p.value("dnsarena_proxy_headers_total{outcome=\"accepted\"}") == 2);
  CHECK(p.value("dnsarena_proxy_headers_total{outcome=\"unlisted\"}") == 1);
  CHECK(p.value("dnsarena_proxy_headers_total{outcome=\"malformed\"}") == 0);
  CHECK(p.value("dnsarena_upstream_rtt_seconds_count{upstream=\"[::1]:5300\"}") == 1);
  CHECK(p.value("dnsarena_upstream_rtt_seconds_bucket{upstream=\"[::1]:5300\",le=\"0.001\"}") == 1);
  CHECK(p.value("dnsarena_upstream_rtt_seconds_count{upstream=\"127.0.0.1:53\"}") == 0);
  // The parser itself refuses what a scraper would.
  CHECK(!dnsarena::test::parse_prometheus_text("# TYPE x_total counter\nx_total{a=\"1\"} 1\nx_total{a=\"1\"} 2\n")
             .errors.empty());
  CHECK(!dnsarena::test::parse_prometheus_text("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
                                               "h_count 1\n").errors.empty());
  CHECK(!dnsarena::test::parse_prometheus_text("# TYPE c counter\nc 1\n").errors.empty());
  CHECK(!dnsarena::test::parse_prometheus_text("x{a=1} 2\n").errors.empty());
}

TEST_CASE("policy counters: per zone and trigger kind, summed over forked workers, named in /metrics",
          "[histograms][multiprocess]") {
  constexpr int kProcs = 3, kEach = 5000;
  AnswerMetrics t(kProcs, true);
  t.policy().set_zone_names({"local", "rpz.example.", "we\"ird\\zone."});
  REQUIRE(in_children(kProcs, [&](int i) {
    AnswerMeter w(&t, static_cast<unsigned>(i));
    for (int k = 0; k < kEach; ++k) w.policy_hit(static_cast<unsigned>(k % 2), static_cast<unsigned>(i));
    w.policy_hit(200, 0);  // a zone of an earlier policy, not named now
  }));
  const AnswerMetrics::Totals s = t.totals();
  REQUIRE(s.policy.size() == 4);
  CHECK(s.policy[0].name == "local");
  CHECK(s.policy[0].hits == std::array<std::uint64_t, kPolicyKinds>{kEach / 2, kEach / 2, kEach / 2, 0});
  CHECK(s.policy[1].hits == std::array<std::uint64_t, kPolicyKinds>{kEach / 2, kEach / 2, kEach / 2, 0});
  CHECK(s.policy[2].hits == std::array<std::uint64_t, kPolicyKinds>{});
  CHECK(s.policy[3].name == "zone200");
  CHECK(s.policy[3].hits[0] == kProcs);
  const std::string text = prometheus_text(s);
  const dnsarena::test::PrometheusText p = dnsarena::test::parse_prometheus_text(text);
  INFO(text);
  for (const std::string& e : p.errors) INFO(e);
  CHECK(p.errors.empty());
  CHECK(p.types.at("dnsarena_policy_zone_hits_total") == "counter");
  CHECK(p.value("dnsarena_policy_zone_hits_total{zone=\"rpz.example.\",trigger=\"cname_chain\"}") == kEach / 2);
  CHECK(p.value("dnsarena_policy_zone_hits_total{zone=\"local\",trigger=\"client_ip\"}") == 0);
  CHECK(text.find("dnsarena_policy_zone_hits_total{zone=\"we\\\"ird\\\\zone.\",trigger=\"qname\"} 0\n") !=
        std::string::npos);  // the label value escaped
}
