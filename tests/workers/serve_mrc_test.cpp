// SPDX-License-Identifier: GPL-3.0-or-later
// The miss-ratio curves of a running serve (workers/miss_ratio_curves.hpp): fed by every
// worker from the three places a lookup's outcome is known (the batched UDP path, the
// cache stage of a TCP query, the upstream answer), published to `stats --mrc` (table
// and JSON) and /metrics, and kept when a worker is killed with -9 and across a reload.
#include <signal.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/workers/prometheus_text.hpp"
#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {

nlohmann::json stats_mrc(const std::string& segment) {
  int status = 0;
  const std::string out =
      run_command(dnsarena_binary() + " stats --mrc --json --interval 0 --segment " + segment + " 2>/dev/null", &status);
  if (status != 0 || out.empty()) return nlohmann::json::object();
  return nlohmann::json::parse(out, nullptr, false);
}

std::uint64_t requests_at(const nlohmann::json& snap, std::size_t model) {
  return snap.contains("models") ? snap["models"][model]["requests"].get<std::uint64_t>() : 0;
}

std::string scrape(std::uint16_t metrics_port) {
  const std::string raw = run_command("bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(metrics_port) +
                                      " && printf \"GET /metrics HTTP/1.0\\r\\n\\r\\n\" >&3 && timeout 5 cat <&3'");
  const std::size_t body = raw.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : raw.substr(body + 4);
}

}  // namespace

TEST_CASE("serve: every worker feeds the miss-ratio curves, stats --mrc and /metrics show them, kill -9 keeps them",
          "[serve][mrc]") {
  const std::uint16_t metrics_port = free_port();
  // R = 1: every key is fed (the 10,000-entry test cache is under max_sampled_entries).
  const std::string config = write_config("mrc: {sample_rate: 1}\n");
  Service s({"-c", config, "--metrics", "127.0.0.1:" + std::to_string(metrics_port)});
  // 20 misses (NXDOMAIN, negatively cached), then the same 20 over UDP (the batched path)
  // and over TCP (the pipeline's cache stage): 40 hits.
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 20; ++i) {
      const auto q = make_query(static_cast<std::uint16_t>(round * 100 + i), "m" + std::to_string(i) + ".test", 1);
      const DnsReply r = round == 2 ? tcp_exchange(s.port, q) : udp_exchange(s.port, q);
      REQUIRE(r.answered);
      REQUIRE(r.rcode() == 3);
    }
  REQUIRE(s.upstream.queries() == 20);
  nlohmann::json snap;
  REQUIRE(eventually([&] {  // written once a second
    snap = stats_mrc(s.segment);
    return requests_at(snap, 3) == 60;
  }));
  INFO(snap.dump(1));
  REQUIRE(snap["models"].size() == 7);
  CHECK(snap["sample_rate"] == 1.0);
  for (const auto& m : snap["models"]) {
    if (m["factor"].get<double>() > 1) continue;  // above 1x, R/f of the keys
    CHECK(m["requests"] == 60);
    CHECK(m["hits"] == 40);
    CHECK(m["sampled_entries"] == 20);
  }
  CHECK(snap["hit_rate"].get<double>() == Approx(40.0 / 60));
  CHECK(snap["shared_bytes"].get<double>() > 0);

  // The table names every factor and the memory.
  const std::string table =
      run_command(dnsarena_binary() + " stats --mrc --interval 0 --segment " + s.segment + " 2>&1");
  CHECK(table.find("miss-ratio curve") != std::string::npos);
  CHECK(table.find("0.125") != std::string::npos);
  CHECK(table.find("66.7%") != std::string::npos);
  CHECK(table.find("shared memory") != std::string::npos);

  // /metrics, read by the strict parser.
  const PrometheusText prom = parse_prometheus_text(scrape(metrics_port));
  CHECK(prom.value("dnsarena_mrc_hit_ratio{factor=\"1\"}") == Approx(40.0 / 60));
  CHECK(prom.value("dnsarena_mrc_requests_total{factor=\"0.125\"}") == 60);
  CHECK(prom.value("dnsarena_mrc_sample_rate") == 1);

  // A worker killed with -9: its successor and the other worker feed the same curves.
  const std::vector<pid_t> kids = s.serve->children();
  REQUIRE(!kids.empty());
  ::kill(kids.front(), SIGKILL);
  REQUIRE(eventually([&] { return s.serve->children().size() == 2 && s.serve->children() != kids; }));
  for (int i = 0; i < 20; ++i)
    REQUIRE(udp_exchange(s.port, make_query(static_cast<std::uint16_t>(500 + i), "m" + std::to_string(i) + ".test", 1))
                .answered);
  REQUIRE(eventually([&] {
    snap = stats_mrc(s.segment);
    return requests_at(snap, 3) == 80;
  }));
  CHECK(snap["models"][3]["hits"] == 60);

  // A reload keeps the curves (and their running settings: a changed mrc section needs a
  // restart, and says so); the new workers feed the same models.
  std::ofstream(config) << "mrc: {sample_rate: 0.5}\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return s.serve->log().find("reloaded: 2 workers replaced") != std::string::npos; }));
  CHECK(s.serve->log().find("reload: mrc changed; it needs a restart") != std::string::npos);
  for (int i = 0; i < 20; ++i)
    REQUIRE(udp_exchange(s.port, make_query(static_cast<std::uint16_t>(700 + i), "m" + std::to_string(i) + ".test", 1))
                .answered);
  REQUIRE(eventually([&] {
    snap = stats_mrc(s.segment);
    return requests_at(snap, 3) == 100;
  }));
  CHECK(snap["models"][3]["hits"] == 80);
  CHECK(snap["sample_rate"] == 1.0);
}

TEST_CASE("serve: mrc.enabled false publishes no curve and stats --mrc says so", "[serve][mrc]") {
  Service s({"-c", write_config("mrc: {enabled: false}\n")}, 1);
  REQUIRE(udp_exchange(s.port, make_query(1, "x.test", 1)).answered);
  REQUIRE(eventually([&] { return serve_stats(s.segment).contains("answers"); }));  // snapshots written
  int status = 0;
  const std::string out =
      run_command(dnsarena_binary() + " stats --mrc --segment " + s.segment + " --interval 0 2>&1", &status);
  CHECK(status != 0);
  CHECK(out.find("no miss-ratio curve") != std::string::npos);
}

TEST_CASE("sim tune reads a live serve's curve (a stats --mrc --json file, and the segment itself)", "[serve][mrc]") {
  Service s({"-c", write_config("mrc: {sample_rate: 1}\n")});
  // 300 names twice: the models above 1x sample 1/f of them, so 2x and 4x read different
  // hit rates and the tuned capacity is read between two different values.
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 300; ++i)
      REQUIRE(udp_exchange(s.port, make_query(static_cast<std::uint16_t>(round * 1000 + i), "n" + std::to_string(i) + ".tune.test", 1))
                  .answered);
  nlohmann::json snap;
  REQUIRE(eventually([&] {
    snap = stats_mrc(s.segment);
    return requests_at(snap, 3) == 600;
  }));
  const std::string dir = "/tmp/dnsarena-mrc-tune-" + s.segment;
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/host.json";
  int status = 0;
  run_command(dnsarena_binary() + " stats --mrc --json --segment " + s.segment + " > " + file, &status);
  REQUIRE(status == 0);
  std::ifstream in(file);
  const nlohmann::json curve = nlohmann::json::parse(in);
  INFO(curve.dump(1));
  REQUIRE(curve["queries_per_s"].is_number());

  // A budget that fits 3 x the segment besides 1 MB of process memory, at 10% headroom:
  // f = (budget x 0.9 - 0.001) / S = 3 (a hair more: rounding down keeps 3x).
  const double segment_gb = curve["real_segment_bytes"].get<double>() / 1e9;
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.12g", (0.001 + 3.0001 * segment_gb) / 0.9);
  const std::string fleet = dir + "/fleet.yaml";
  std::ofstream(fleet) << "name: live\nlayout: arena\ndatacenters:\n  - name: east\n    instances: 1\n"
                          "    traffic: {names: 1000, zipf: 0.9, ttl: [{seconds: 600, share: 1.0}]}\n"
                          "    memory: {budget_gb: " << budget << ", process_gb: 0.001}\n    capacity: 10000\n";
  const std::string lab = std::filesystem::path(dnsarena_binary()).parent_path() / "dnsarena-lab";
  auto tune = [&](const std::string& source) {
    const std::string out = run_command(lab + " sim tune --fleet " + fleet + " --out " + dir + "/out " + source +
                                            " --json 2>" + dir + "/report.txt", &status);
    INFO(out);
    REQUIRE(status == 0);
    const nlohmann::json rows = nlohmann::json::parse(out);
    REQUIRE(rows.size() == 1);
    return rows[0];
  };
  const nlohmann::json row = tune("--curves east=" + file);
  INFO(row.dump(1));
  // By hand from the file: capacity 3 x 10,000 = 30,000 entries, read between 2x and 4x.
  CHECK(row["current_capacity"] == 10000);
  CHECK(row["tuned_capacity"] == 30000);
  const auto& m = curve["models"];
  REQUIRE(m[4]["factor"] == 2.0);
  REQUIRE(m[5]["factor"] == 4.0);
  const double h2 = m[4]["hit_rate"].get<double>(), h4 = m[5]["hit_rate"].get<double>();
  const double t = std::log(1.5) / std::log(2.0);
  CHECK(row["hit_rate_tuned"].get<double>() == Approx(h2 + t * (h4 - h2)));
  CHECK(row["hit_rate_current"].get<double>() == Approx(m[3]["hit_rate"].get<double>()));
  CHECK(row["read_between"]["low_factor"] == 2.0);
  CHECK(row["read_between"]["high_factor"] == 4.0);
  const double qps = curve["queries_per_s"].get<double>();
  CHECK(row["upstream_qps_tuned"].get<double>() == Approx(qps * (1 - (h2 + t * (h4 - h2)))).margin(1e-9));
  CHECK(row["p99_rss_tuned_gb"].get<double>() == Approx(0.001 + 3 * segment_gb));
  std::ifstream report(dir + "/report.txt");
  const std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  CHECK(text.find("2x..4x") != std::string::npos);

  // The live segment itself: the same geometry and capacity (the hit rates are this
  // moment's, the same queries: equal).
  const nlohmann::json live = tune("--segment east=" + s.segment);
  CHECK(live["tuned_capacity"] == 30000);
  CHECK(live["hit_rate_tuned"].get<double>() == Approx(row["hit_rate_tuned"].get<double>()));
  CHECK(live["hosts"][0] == "segment " + s.segment);
  std::filesystem::remove_all(dir);
}
