// SPDX-License-Identifier: GPL-3.0-or-later
// The latency histograms and answer counts of a running serve (workers/answer_metrics.hpp,
// the RTT histograms of workers/upstream_health.hpp), through real kdig queries over
// UDP: hits and misses each counted once with their latency, answers by RCODE (an
// NXDOMAIN, a FORMERR to a broken packet) and by type, one RTT sample per upstream reply,
// the same figures in `stats --json`, in the human `stats` and in /metrics (read by a
// strict parser), nothing lost when a worker is killed with -9, and TCP counted alike.
#include <signal.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "tests/workers/prometheus_text.hpp"
#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {

// kdig's status line word ("NOERROR", "NXDOMAIN") for one query over UDP.
std::string kdig_status(std::uint16_t port, const std::string& name, const std::string& type) {
  const std::string out = run_command(kdig_program() + " @127.0.0.1 -p " + std::to_string(port) + " " + name + " " +
                                      type + " +notcp +timeout=2 +retry=0 2>&1");
  const std::size_t at = out.find("status: ");
  if (at == std::string::npos) return "no answer: " + out;
  return out.substr(at + 8, out.find(";", at) - at - 8);
}

std::string scrape(std::uint16_t metrics_port) {
  const std::string raw = run_command("bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(metrics_port) +
                                      " && printf \"GET /metrics HTTP/1.0\\r\\n\\r\\n\" >&3 && timeout 5 cat <&3'");
  const std::size_t body = raw.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : raw.substr(body + 4);
}

std::uint64_t hist_count(const nlohmann::json& stats, const char* kind) {
  return stats.contains("answers") ? stats["answers"][kind]["count"].get<std::uint64_t>() : 0;
}

}  // namespace

TEST_CASE("serve: hit and miss latency, answers by RCODE and type, upstream RTT, kept across kill -9",
          "[serve][histograms]") {
  const std::uint16_t metrics_port = free_port();
  Service s({"--metrics", "127.0.0.1:" + std::to_string(metrics_port)});
  // Misses (each asks the upstream once): two names it has, two it does not.
  const std::vector<std::pair<std::string, std::string>> misses = {
      {"a.test", "A"}, {"aaaa.test", "AAAA"}, {"nothere.test", "MX"}, {"n1.test", "A"}};
  const std::vector<std::string> miss_status = {"NOERROR", "NOERROR", "NXDOMAIN", "NXDOMAIN"};
  for (std::size_t i = 0; i < misses.size(); ++i)
    REQUIRE(kdig_status(s.port, misses[i].first, misses[i].second) == miss_status[i]);
  // Hits: the same questions again, from the cache (the NXDOMAIN too: negative caching).
  const std::vector<std::pair<std::string, std::string>> hits = {
      {"a.test", "A"}, {"a.test", "A"}, {"a.test", "A"}, {"aaaa.test", "AAAA"}, {"aaaa.test", "AAAA"}, {"n1.test", "A"}};
  for (const auto& [name, type] : hits) REQUIRE(kdig_status(s.port, name, type) != "");
  REQUIRE(s.upstream.queries() == misses.size());
  // A broken packet: a header that promises a question, then 3 bytes of a name.
  const std::vector<std::uint8_t> broken = {0x77, 0x77, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'a', 'b'};
  const DnsReply formerr = udp_exchange(s.port, broken);
  REQUIRE(formerr.answered);
  REQUIRE(formerr.rcode() == 1);

  nlohmann::json stats;
  REQUIRE(eventually([&] {  // the snapshot is written once a second
    stats = serve_stats(s.segment);
    return hist_count(stats, "hit") == hits.size() && hist_count(stats, "miss") == misses.size() &&
           stats["answers"]["rcodes"]["FORMERR"] == 1;
  }));
  INFO(stats.dump(1));
  const nlohmann::json& a = stats["answers"];
  CHECK(a["rcodes"]["NOERROR"] == 2 + 5);
  CHECK(a["rcodes"]["NXDOMAIN"] == 2 + 1);
  CHECK(a["rcodes"]["SERVFAIL"] == 0);
  CHECK(a["qtypes"]["A"] == 2 + 4);
  CHECK(a["qtypes"]["AAAA"] == 1 + 2);
  CHECK(a["qtypes"]["MX"] == 1);
  CHECK(a["qtypes"]["other"] == 1);  // the FORMERR has no question
  CHECK(a["hit"]["sum_ms"].get<double>() > 0);
  CHECK(a["miss"]["p50_ms"].get<double>() > 0);
  CHECK(stats["latency_le_ms"].size() == 15);
  // One RTT sample per upstream reply, in the upstream's row.
  REQUIRE(stats["upstreams"].size() == 1);
  const nlohmann::json& up = stats["upstreams"][0];
  CHECK(up["rtt"]["count"] == misses.size());
  CHECK(up["rtt"]["p99_ms"].get<double>() > 0);
  // A miss waits at least its upstream's round trip.
  CHECK(a["miss"]["sum_ms"].get<double>() >= up["rtt"]["sum_ms"].get<double>());

  // The human table shows the quantiles.
  const std::string table = run_command(dnsarena_binary() + " stats --segment " + s.segment + " --interval 0");
  INFO(table);
  CHECK(table.find("hit   latency p50") != std::string::npos);
  CHECK(table.find("miss  latency p50") != std::string::npos);
  CHECK(table.find("(6 answers)") != std::string::npos);
  CHECK(table.find("NXDOMAIN 3") != std::string::npos);

  // /metrics: valid text, histograms and counters with the same figures.
  const std::string text = scrape(metrics_port);
  const PrometheusText p = parse_prometheus_text(text);
  INFO(text);
  for (const std::string& e : p.errors) INFO(e);
  CHECK(p.errors.empty());
  CHECK(p.types.at("dnsarena_answer_latency_seconds") == "histogram");
  CHECK(p.value("dnsarena_answer_latency_seconds_count{kind=\"hit\"}") == 6);
  CHECK(p.value("dnsarena_answer_latency_seconds_bucket{kind=\"miss\",le=\"+Inf\"}") == 4);
  CHECK(p.value("dnsarena_answer_rcodes_total{rcode=\"FORMERR\"}") == 1);
  CHECK(p.value("dnsarena_answer_qtypes_total{qtype=\"AAAA\"}") == 3);
  const std::string upstream = "upstream=\"127.0.0.1:" + std::to_string(s.upstream.port()) + "\"";
  CHECK(p.value("dnsarena_upstream_rtt_seconds_count{" + upstream + "}") == 4);
  CHECK(p.value("dnsarena_upstream_rtt_seconds_bucket{" + upstream + ",le=\"5\"}") == 4);

  // A worker killed with -9: its replacement adds to the same figures, none is lost.
  const auto before = s.serve->children();
  REQUIRE(before.size() == 2);
  REQUIRE(::kill(before[0], SIGKILL) == 0);
  REQUIRE(eventually([&] {
    const auto now = s.serve->children();
    return now.size() == 2 && std::find(now.begin(), now.end(), before[0]) == now.end();
  }));
  for (int i = 0; i < 4; ++i) REQUIRE(kdig_status(s.port, "a.test", "A") == "NOERROR");
  REQUIRE(eventually([&] {
    stats = serve_stats(s.segment);
    return hist_count(stats, "hit") == hits.size() + 4;
  }));
  CHECK(hist_count(stats, "miss") == misses.size());
  CHECK(stats["answers"]["qtypes"]["A"] == 6 + 4);
  CHECK(stats["upstreams"][0]["rtt"]["count"] == misses.size());
  const PrometheusText after = parse_prometheus_text(scrape(metrics_port));
  CHECK(after.value("dnsarena_answer_latency_seconds_count{kind=\"hit\"}") == 10);

  // Over TCP: a hit and a miss, each counted once.
  const std::string tcp = " +tcp +timeout=2 +retry=0 2>&1";
  REQUIRE(run_command(kdig_program() + " @127.0.0.1 -p " + std::to_string(s.port) + " aaaa.test AAAA" + tcp)
              .find("status: NOERROR") != std::string::npos);
  REQUIRE(run_command(kdig_program() + " @127.0.0.1 -p " + std::to_string(s.port) + " txt.test TXT" + tcp)
              .find("status: NOERROR") != std::string::npos);
  REQUIRE(eventually([&] {
    stats = serve_stats(s.segment);
    return hist_count(stats, "hit") == hits.size() + 5 && hist_count(stats, "miss") == misses.size() + 1;
  }));
  CHECK(stats["answers"]["qtypes"]["TXT"] == 1);
  CHECK(stats["answers"]["qtypes"]["AAAA"] == 3 + 1);
}
