// SPDX-License-Identifier: GPL-3.0-or-later
// `sim fit` end to end, real processes: `sim upstream` answers from a known profile
// (data/truth.yaml), `dnsarena serve` (2 workers, dnstap to files, ECS forwarded) sits in
// front of it, `sim load` asks the profile's stream through serve (50,000 queries at its
// 2,500 q/s, seeds fixed); then `sim fit` on the per-worker dnstap files must give back
// every parameter within tolerance (tests/fit/profile_tolerance.hpp), the fitted file
// must read back with the profile reader, and `sim tune` on a datacenter with the fitted
// traffic must give a capacity within 5% of the one with the true traffic (while a profile
// with larger answers does not: the datacenter is memory-bound, so its capacity follows the
// bytes per entry measured on the profile's answers).
#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/child_process.hpp"
#include "common/loopback.hpp"
#include "sim/workload/traffic_profile.hpp"
#include "tests/fit/profile_tolerance.hpp"

using namespace dnsarena;
using common::ChildProcess;

namespace {

const std::string kLab = DNSARENA_LAB_BIN;
const std::string kDaemon = DNSARENA_DAEMON_BIN;
const std::string kTruth = std::string(DNSARENA_FIT_DATA_DIR) + "/truth.yaml";

void wait_accepting(ChildProcess& child, std::uint16_t port, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!common::accepts_tcp(port)) {
    if (!child.running()) FAIL(what << " ended: " << child.exit_status() << "\n" << child.log_tail());
    if (std::chrono::steady_clock::now() > deadline) FAIL(what << " does not listen on " << port << "\n" << child.log_tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A one-datacenter fleet whose traffic is the profile file's text; memory-bound (the
// tuned capacity follows the bytes per entry measured on the profile's answers) at a
// rate where the hit rate depends on popularity and TTLs.
std::string write_fleet(const std::string& dir, const std::string& tag, const std::string& profile_path) {
  std::ostringstream f;
  f << "name: fit-" << tag << "\nseed: 17\nlayout: v0\n"
    << "model: {sample_entries: 2048, curve_max_days: 1, calibration_entries: 5000}\n"
    << "datacenters:\n  - name: dc\n    instances: 4\n    rate_qps: {median: 40, spread: 0.1}\n"
    << "    memory: {budget_gb: 0.03, process_gb: 0.01}\n    capacity: 20000\n    traffic:\n";
  std::istringstream profile(read_file(profile_path));
  std::string line;
  while (std::getline(profile, line))
    if (!line.empty() && line[0] != '#') f << "      " << line << '\n';
  const std::string path = dir + "/fleet-" + tag + ".yaml";
  std::ofstream(path) << f.str();
  return path;
}

nlohmann::json run_json(const std::vector<std::string>& argv, const std::string& log) {
  ChildProcess p(argv, {.capture_stdout = true});
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(p.stdout_fd(), buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  const int status = p.wait();
  INFO(log << ": " << argv[1] << ' ' << argv[2] << " exit " << status << "\n" << out.substr(0, 2000));
  REQUIRE(status == 0);
  return nlohmann::json::parse(out);
}

std::uint64_t tuned_capacity(const std::string& dir, const std::string& fleet, const std::string& tag) {
  const auto j = run_json({kLab, "sim", "tune", "--fleet", fleet, "--out", dir + "/tune-" + tag, "--reinvest-layout", "", "--json"},
                          "tune " + tag);
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 1);
  return j[0].at("tuned_capacity").get<std::uint64_t>();
}

}  // namespace

TEST_CASE("sim fit: serve's dnstap of a known profile's traffic gives the profile back", "[fit][process][timing]") {
  const std::string dir = "/tmp/dnsarena-fit-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string seed = "3";

  const std::uint16_t up_port = common::free_loopback_port();
  ChildProcess upstream({kLab, "sim", "upstream", "--port", std::to_string(up_port), "--seed", seed, "--profile", kTruth},
                        {.log_path = dir + "/upstream.log", .die_with_parent = true});
  wait_accepting(upstream, up_port, "sim upstream");

  std::ofstream(dir + "/serve.yaml") << "dnstap: {file: " << dir << "/tap}\n";
  const std::uint16_t port = common::free_loopback_port();
  const std::string segment = "dnsarena-fit-test-" + std::to_string(::getpid());
  ChildProcess serve({kDaemon, "serve", "--config", dir + "/serve.yaml", "--listen", "127.0.0.1:" + std::to_string(port),
                      "--upstream", "127.0.0.1:" + std::to_string(up_port), "--workers", "2", "--segment", segment,
                      "--max-entries", "50000", "--ecs", "forward", "--no-metrics", "--remove-segment", "--reset-segment",
                      "--log-level", "warn"},
                     {.log_path = dir + "/serve.log", .die_with_parent = true});
  wait_accepting(serve, port, "dnsarena serve");
  // Both workers up: each has taken its statistics row in the segment (with its pid).
  const auto workers_up = [&] {
    const auto stats = run_json({kDaemon, "stats", "--segment", segment, "--json", "--interval", "0"}, "stats");
    unsigned up = 0;
    for (const auto& row : stats["rows"]) up += row.value("worker", -1) >= 0 && row.value("pid", 0) != 0;
    return up;
  };
  const auto workers_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (workers_up() < 2) {
    REQUIRE(std::chrono::steady_clock::now() < workers_deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  const auto load = run_json({kLab, "sim", "load", "--server", "127.0.0.1:" + std::to_string(port), "--profile", kTruth,
                              "--seed", seed, "--duration", "20", "--json"},
                             "load");
  const auto sent = load.at("sent").get<std::uint64_t>();
  CHECK(sent == 50'000);
  CHECK(load.at("lost").get<std::uint64_t>() < sent / 1000);
  serve.stop();  // the workers flush their dnstap files on the way out
  upstream.stop();

  const std::string fitted_path = dir + "/fitted.yaml";
  const auto fit = run_json({kLab, "sim", "fit", "--dnstap", dir + "/tap.0", dir + "/tap.1", "-o", fitted_path, "--json"}, "fit");
  CHECK(fit.at("client_queries").get<std::uint64_t>() == sent);
  // The rate by hour (the schema has one qps): every query in some hour, at the load's rate.
  std::uint64_t by_hour = 0;
  for (const auto& h : fit.at("rate_by_hour")) {
    by_hour += h.at("queries").get<std::uint64_t>();
    if (h.at("queries").get<std::uint64_t>() > sent / 4) CHECK(h.at("qps").get<double>() == Approx(2500).epsilon(0.05));
  }
  CHECK(by_hour == sent);
  sim::TrafficProfile truth = sim::load_traffic_profile(kTruth);
  // The rate the capture can show is the one the load achieved (the profile's, unless the
  // machine held the load back); the check of it is the load's own.
  const double achieved = load.at("achieved_qps").get<double>();
  CHECK(achieved == Approx(truth.qps).epsilon(0.05));
  truth.qps = achieved;
  const sim::TrafficProfile fitted = sim::load_traffic_profile(fitted_path);  // the reader of sim rollout / sim tune
  const auto errors = test::compare_profiles(truth, fitted);
  const std::string table = test::error_table(errors);
  std::printf("sim fit against %s:\n%s", kTruth.c_str(), table.c_str());
  for (const auto& e : errors) {
    INFO(e.name << "\n" << table);
    CHECK(e.ok());
  }

  const std::uint64_t cap_truth = tuned_capacity(dir, write_fleet(dir, "truth", kTruth), "truth");
  const std::uint64_t cap_fitted = tuned_capacity(dir, write_fleet(dir, "fitted", fitted_path), "fitted");
  const double ratio = static_cast<double>(cap_fitted) / static_cast<double>(cap_truth);
  std::printf("sim tune: capacity %llu with the true profile, %llu with the fitted one (ratio %.4f)\n",
              static_cast<unsigned long long>(cap_truth), static_cast<unsigned long long>(cap_fitted), ratio);
  CHECK(ratio == Approx(1.0).margin(0.05));
  // The comparison can fail: answers of up to 6 records instead of 4 (more bytes per entry)
  // move the capacity by far more than 5%.
  std::string heavier = read_file(kTruth);
  const std::string records = "records: {min: 1, max: 4}";
  REQUIRE(heavier.find(records) != std::string::npos);
  heavier.replace(heavier.find(records), records.size(), "records: {min: 1, max: 6}");
  std::ofstream(dir + "/heavier.yaml") << heavier;
  const std::uint64_t cap_heavier = tuned_capacity(dir, write_fleet(dir, "heavier", dir + "/heavier.yaml"), "heavier");
  std::printf("sim tune: capacity %llu with answers of up to 6 records\n", static_cast<unsigned long long>(cap_heavier));
  CHECK(static_cast<double>(cap_heavier) / static_cast<double>(cap_truth) < 0.95);
  std::filesystem::remove_all(dir);
}

TEST_CASE("sim fit: a file it cannot read stops the run, naming the file and why", "[fit][process]") {
  const std::string dir = "/tmp/dnsarena-fit-cli-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const auto run = [&](const std::vector<std::string>& files, std::string& log) {
    std::vector<std::string> argv = {kLab, "sim", "fit", "--dnstap"};
    argv.insert(argv.end(), files.begin(), files.end());
    ChildProcess p(argv, {.log_path = dir + "/fit.log", .truncate_log = true});
    const int status = p.wait();
    log = read_file(dir + "/fit.log");
    return status;
  };
  std::string log;
  CHECK(run({dir + "/missing.0"}, log) != 0);
  CHECK_THAT(log, Catch::Contains(dir + "/missing.0: cannot open: No such file or directory"));
  CHECK(run({kTruth}, log) != 0);  // a YAML file, not Frame Streams
  CHECK_THAT(log, Catch::Contains("truth.yaml: not a Frame Streams file"));
  std::filesystem::remove_all(dir);
}
