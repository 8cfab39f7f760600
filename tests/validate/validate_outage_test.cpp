// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim validate` with an upstream outage: where the outage goes in a run, and
// the stale share's comparison (measured stale_answers / queries between the samples
// bounding the outage against the model curve's outage minutes).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "tests/command_output.hpp"
#include "sim/validate/validate_report.hpp"

using namespace dnsarena::sim::fleet;

TEST_CASE("validate outage: whole minutes, after the first, ending before the plateau minutes", "[fleet][validate][outage]") {
  // 5 minutes: plateau minutes 4..5, so the latest 60 s outage is at 120 s.
  OutageWindow w = place_outage(300, 60, -1, false);
  CHECK(w.at_s == 120);
  CHECK(w.seconds == 60);
  CHECK(w.note.empty());
  w = place_outage(240, 60, -1, false);
  CHECK(w.at_s == 60);
  w = place_outage(600, 120, 180, true);
  CHECK(w.at_s == 180);
  CHECK(w.seconds == 120);
  // Too short a run: none by default (with a note), an error when asked for.
  w = place_outage(60, 60, -1, false);
  CHECK(w.seconds == 0);
  CHECK(w.note.find("no upstream outage") != std::string::npos);
  CHECK_THROWS_AS(place_outage(60, 60, -1, true), std::invalid_argument);
  CHECK_THROWS_WITH(place_outage(300, 90, -1, true), Catch::Contains("whole minutes"));
  CHECK_THROWS_WITH(place_outage(300, 60, 150, true), Catch::Contains("whole minutes"));
  CHECK_THROWS_WITH(place_outage(300, 60, 180, true), Catch::Contains("before the plateau minutes"));
  CHECK_THROWS_WITH(place_outage(300, 60, 0, true), Catch::Contains("after the first minute"));
  CHECK(place_outage(300, 0, -1, true).seconds == 0);
}

namespace {
// A 5-minute run sampled every minute, 1,000 queries a minute, the outage in minute 3
// (samples 2 and 3), and a model curve to match.
ServiceRun synthetic_run(std::uint64_t stale_in_outage) {
  ServiceRun run;
  for (std::uint64_t k = 0; k <= 5; ++k) {
    ServiceSample s;
    s.t_s = static_cast<double>(60 * k);
    s.queries = 1000 * k;
    s.hits = 500 * k;
    s.entries = 100 * k;
    s.stale_answers = k >= 3 ? stale_in_outage : 0;
    run.samples.push_back(s);
  }
  run.outage_first_sample = 2;
  run.outage_last_sample = 3;
  run.sent = 5000;
  run.lost = 300;  // all in the outage
  return run;
}

Prediction synthetic_prediction() {
  Prediction p;
  p.curve.entries = {0, 100, 200, 300, 400, 500};
  p.curve.inserted = p.curve.entries;
  p.curve.hit_rate = {0, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  p.curve.hit_rate_raw = p.curve.hit_rate;
  p.curve.outage_start = 3;
  p.curve.outage_fresh = {0.2f};
  p.curve.outage_stale = {0.4f};
  p.cache_resident_bytes.assign(6, 1e6);
  p.rss_bytes.assign(6, 2e6);
  return p;
}
}  // namespace

TEST_CASE("validate outage: stale share measured against predicted, within 5 points", "[fleet][validate][outage]") {
  const Prediction pred = synthetic_prediction();
  const ValidateReport near = compare(synthetic_run(380), pred, 60);
  REQUIRE(near.outage);
  CHECK(near.outage_queries == 1000);
  CHECK(near.measured_stale_share == Approx(0.38));
  CHECK(near.predicted_stale_share == Approx(0.4));
  CHECK(near.predicted_outage_fresh_share == Approx(0.2));
  CHECK(near.stale_error_pts == Approx(2.0).margin(1e-4));
  CHECK(near.stale_met);
  // The outage's 1,000 queries are left out of the load's unanswered share: the 300 lost
  // fall within them.
  CHECK(near.unanswered_share == 0);
  CHECK(near.load_answered);
  const ValidateReport far = compare(synthetic_run(0), pred, 60);
  CHECK(far.stale_error_pts == Approx(40.0).margin(1e-4));
  CHECK_FALSE(far.stale_met);
  // Without an outage: nothing to compare, and every query counts for the load.
  ServiceRun plain = synthetic_run(0);
  plain.outage_last_sample = plain.outage_first_sample = 0;
  const ValidateReport none = compare(plain, pred, 60);
  CHECK_FALSE(none.outage);
  CHECK(none.stale_met);
  CHECK(none.unanswered_share == Approx(300.0 / 5000));
  CHECK_FALSE(none.load_answered);
}

// Four simulated minutes at 1,000 q/s on a 4,000-entry cache of the short-TTL profile
// (20,000 names, TTLs 30-120 s), the upstream silent in minute 2 (`sim upstream`'s
// SIGUSR1/SIGUSR2): what the service answers then against the model's outage. On the
// compressed clock (a minute lasts 30 s: TTLs and serve's probe interval halved, the model
// at 500 q/s per simulated second), so the run takes two minutes instead of four.
TEST_CASE("validate: a real run with an upstream outage, stale share against the model",
          "[fleet][validate][multiprocess][timing][outage]") {
  int status = 0;
  const std::string out = dnsarena::test::command_output(std::string(DNSARENA_LAB_BINARY) + " sim validate --profile " DNSARENA_CONFIGS_DIR
                                                                    "/profiles/short-ttl.yaml --duration 240 --rate 1000"
                                                                    " --capacity 4000 --workers 2 --sample-every 10"
                                                                    " --calibration-entries 20000 --outage 60 --minute-seconds 30 --json 2>&1",
                                     &status);
  INFO(out);
  REQUIRE(status == 0);
  const auto brace = out.rfind("\n{");
  REQUIRE(brace != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(out.substr(brace + 1));
  const nlohmann::json& o = j["outage"];
  REQUIRE(o.is_object());
  CHECK(o["at_s"].get<int>() == 60);
  CHECK(o["seconds"].get<int>() == 60);
  CHECK(j["scale"]["minute_seconds"].get<int>() == 30);
  CHECK(o["queries"].get<double>() > 0.9 * 30 * 1000);  // the simulated minute's 30 real seconds
  // The model: with TTLs of 30-120 s much of what the cache holds expires during the
  // minute, so a good share is answered stale (and less fresh than before the outage).
  CHECK(o["predicted_stale_share"].get<double>() > 0.1);
  CHECK(o["predicted_fresh_share"].get<double>() < j["predicted"]["hit_rate"].get<double>() - 0.05);
  // The service during the outage: its hits are the model's fresh answers (nothing is
  // inserted while the upstream is silent), within the hit rate's 5 points.
  CHECK(std::fabs(o["measured_hit_share"].get<double>() - o["predicted_fresh_share"].get<double>()) <= 0.05);
  // After the outage the plateau's hit rate is still the model's.
  CHECK(j["met"]["hit_rate"].get<bool>());
  // Stale answers: within 5 points of the model.
  CHECK(o["measured_stale_share"].get<double>() > 0);
  CHECK(j["met"]["stale"].get<bool>());
}
