// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim validate [--profile P] [--rate R] [--duration S] [--capacity N] ...`
//
// Runs the real service under the profile's load at a small scale (validate_service.hpp),
// the fleet model on the same scaled profile (validate_model.hpp), and prints predicted
// against measured (validate_report.hpp). Order: calibration first (it sizes serve's
// arena), then the service run, then the model (so its CPU does not compete with the
// service's on a small machine). Ctrl-C or SIGTERM stops the children and removes the
// segment before exiting.
//
// The upstream outage (--outage S, default 60 s; --outage-at T): `sim upstream` goes
// silent for S seconds from T seconds after the first query (its black-hole switch,
// validate_service.hpp), and the model's curve runs the same outage; the share of the
// queries answered stale is compared as the hit rate is. Whole minutes (the curve is per
// minute), ending before the plateau minutes (the last third) so that the hit-rate
// comparison stays on minutes after it. By default T is the latest that allows, and the
// outage is left out, with a note, when the run is too short for one (under 4 minutes).
//
// A compressed clock (--minute-seconds S < 60): every time on the command line and in the
// report is simulated; a simulated minute lasts S real seconds, the upstream serves TTLs
// x S/60, serve's waits that span minutes are x S/60, and the model runs at the achieved
// rate x S/60 per simulated second (validate_service.hpp). The real-time run (S = 60) is
// the reference; the compressed one is the same comparison in a fraction of the time.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "sim/command_options.hpp"
#include "sim/fleet/calibration.hpp"
#include "sim/validate/commands.hpp"
#include "validate_model.hpp"
#include "common/child_process.hpp"
#include "common/sibling_program.hpp"
#include "validate_process.hpp"
#include "validate_report.hpp"
#include "validate_service.hpp"

namespace dnsarena::sim::fleet {

namespace {

struct ValidateArgs {
  std::string profile, out;
  double rate = 2000;
  std::uint32_t duration_s = 300;
  std::uint64_t capacity = 50'000;  // at 20,000 the workers' own heap growth under load (~0.7 MiB) is 10% of the service's memory
  unsigned workers = 2;
  std::uint32_t sample_every_s = 10;
  std::uint32_t minute_seconds = 60;
  std::uint64_t seed = 1;
  std::uint64_t calibration_entries = 100'000;
  std::uint32_t sample_entries = FleetConfig{}.sample_entries;  // the fleet model's default
  std::uint32_t outage_s = 60;
  unsigned prefetch_percent = 0;
  std::int64_t outage_at_s = -1;  // -1: the latest that ends before the plateau minutes
  bool outage_given = false;      // --outage or --outage-at on the command line
  bool json = false;
};


void on_signal(int) { validate_interrupted().store(true); }

// SIGINT/SIGTERM set the flag for the duration of the run (children get their own).
struct SignalScope {
  struct sigaction old_int {}, old_term {};
  SignalScope() {
    validate_interrupted().store(false);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
  }
  ~SignalScope() {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
  }
};

// A directory for the children's logs and serve's config: DIR/logs with --out, else a
// private one under /tmp, removed after a successful run.
struct WorkDir {
  std::string path;
  bool remove = false;
  explicit WorkDir(const std::string& out) {
    if (!out.empty()) {
      path = out + "/logs";
    } else {
      path = (std::filesystem::temp_directory_path() / ("dnsarena-validate-" + std::to_string(::getpid()))).string();
      remove = true;
    }
    std::filesystem::create_directories(path);
  }
  void keep() { remove = false; }
  ~WorkDir() {
    std::error_code ec;
    if (remove) std::filesystem::remove_all(path, ec);
  }
};

void run(const ValidateArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  if (60 % a.sample_every_s != 0) throw std::invalid_argument("--sample-every must divide 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60)");
  if (a.duration_s % 60 != 0) throw std::invalid_argument("--duration must be whole minutes (the model's curve is per minute)");
  const std::string daemon = common::daemon_program();  // before the calibration: a missing daemon fails at once
  const TrafficProfile profile =
      a.profile.empty() ? sim::default_traffic_profile() : sim::load_traffic_profile(a.profile);
  auto say = [](const std::string& s) { std::cerr << "sim validate: " << s << std::endl; };

  ValidateSetup setup;
  setup.profile = a.profile.empty() ? "(embedded published profile)" : a.profile;
  setup.names = profile.names;
  setup.target_rate = a.rate;
  setup.duration_s = a.duration_s;
  setup.sample_every_s = a.sample_every_s;
  setup.minute_seconds = a.minute_seconds;
  setup.capacity = a.capacity;
  setup.workers = a.workers;
  setup.ecs_forward = profile.ecs_subnets > 0;
  setup.calibration_entries = a.calibration_entries;
  setup.region_bytes = 64u << 10;  // cache_curve.cpp's regions: the same reclaim granularity
  const OutageWindow outage = place_outage(a.duration_s, a.outage_s, a.outage_at_s, a.outage_given);
  if (!outage.note.empty()) say(outage.note);
  setup.outage_at_s = outage.at_s;
  setup.outage_s = outage.seconds;
  const TrafficProfile traffic = served_traffic(profile, &setup.notes);
  const double scale = a.minute_seconds / 60.0;
  if (a.minute_seconds != 60) {
    const std::string x = std::to_string(scale).substr(0, 5);
    setup.notes.push_back("compressed clock: a simulated minute lasts " + std::to_string(a.minute_seconds) +
                          " real seconds; the upstream serves TTLs x " + x +
                          " (whole seconds, at least 1), serve's stale window, probe interval and failure cache x " +
                          x + ", and the model runs at the achieved rate x " + x + " per simulated second");
  }

  say("calibrating the arena layout on the profile's mix (" + std::to_string(a.calibration_entries) + " entries)");
  Calibration cal("", layouts_measurer(), a.calibration_entries, a.seed);
  setup.arena_bytes_per_entry = cal.layout(calibration_mix(profile), "arena").net_bytes;
  setup.arena_bytes = model_arena_bytes(double(a.capacity), setup.arena_bytes_per_entry, setup.region_bytes);

  WorkDir work(a.out);
  ServiceOptions so;
  so.program = common::self_executable();
  so.daemon = daemon;
  so.profile_path = a.profile;
  so.work_dir = work.path;
  so.seed = a.seed;
  so.rate = a.rate;
  so.duration_s = a.duration_s;
  so.sample_every_s = a.sample_every_s;
  so.minute_s = a.minute_seconds;
  so.workers = a.workers;
  so.capacity = a.capacity;
  so.arena_bytes = setup.arena_bytes;
  so.region_bytes = setup.region_bytes;
  so.ecs_forward = setup.ecs_forward;
  so.outage_at_s = setup.outage_at_s;
  so.outage_s = setup.outage_s;
  so.prefetch_percent = a.prefetch_percent;
  so.progress = say;
  ServiceRun run;
  {
    const SignalScope signals;
    try {
      run = run_service(so);
    } catch (...) {
      work.keep();
      say("logs kept in " + work.path);
      throw;
    }
  }

  setup.model_qps = run.achieved_qps * scale;  // queries per simulated second
  say("running the model at " + std::to_string(setup.model_qps) + " q/s");
  PredictRequest pr;
  pr.traffic = &traffic;
  pr.capacity = a.capacity;
  pr.rate_qps = setup.model_qps;
  pr.arena_bytes_per_entry = setup.arena_bytes_per_entry;
  pr.process_bytes = static_cast<double>(run.before_load.memory_bytes());
  pr.sample_entries = a.sample_entries;
  pr.seed = a.seed;
  if (setup.outage_s > 0) {
    pr.outage_start_minute = setup.outage_at_s / 60 + 1;  // curve minute m is [60(m-1), 60m) s
    pr.outage_minutes = setup.outage_s / 60;
  }
  pr.prefetch_percent = a.prefetch_percent;
  const Prediction pred = predict(pr);
  const ValidateReport rep = compare(run, pred, a.sample_every_s);
  if (!a.out.empty()) write_csv(a.out, run, rep);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ostream& report = a.json ? std::cerr : std::cout;  // --json: the JSON alone on stdout
  report << report_table(setup, run, pred, rep, wall);
  if (!a.out.empty()) report << "wrote " << a.out << "/validate_minutes.csv, validate_samples.csv\n";
  if (a.json) std::cout << report_json(setup, run, pred, rep, wall).dump() << std::endl;
}

}  // namespace

void add_validate_command(CLI::App& sim) {
  auto [c, args] = add_command<ValidateArgs>(
      sim, "validate",
      "Check the fleet model against the real service at a small scale: runs `sim upstream`, `serve`\n"
      "and `sim load` with a traffic profile, records entries, hit rate and RSS over time, runs the\n"
      "model (real-cache curve, Che, memory model) on the same scaled profile, and prints predicted\n"
      "against measured per minute and at the plateau (targets: 5 hit-rate points, 10% RSS). The\n"
      "upstream goes silent for --outage seconds (SIGUSR1/SIGUSR2 to `sim upstream`) and the share of\n"
      "queries answered stale then is compared with the model's (target 5 points).",
      run);
  c->add_option("--profile", args->profile, "Traffic profile YAML (default: the embedded published profile)")
      ->check(CLI::ExistingFile);
  c->add_option("--rate", args->rate, "Load in queries per second")->capture_default_str()->check(CLI::Range(10.0, 50'000.0));
  c->add_option("--duration", args->duration_s, "Seconds of load, whole minutes")
      ->capture_default_str()
      ->check(CLI::Range(60u, 7200u));
  c->add_option("--capacity", args->capacity, "Cache capacity in entries (serve --max-entries); small enough to evict")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1'000}, std::uint64_t{10'000'000}));
  c->add_option("--workers", args->workers, "Resolver worker processes")->capture_default_str()->check(CLI::Range(1u, 16u));
  c->add_option("--sample-every", args->sample_every_s, "Seconds between samples of the service (divides 60)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 60u));
  c->add_option("--minute-seconds", args->minute_seconds,
                "Real seconds a simulated minute lasts (60: real time; less compresses the run: TTLs and the "
                "model's rate scale by it, every time given or reported stays simulated)")
      ->capture_default_str()
      ->check(CLI::Range(10u, 60u));
  add_seed_option(*c, args->seed, "Seed of the names (upstream and load) and of the model's trace");
  c->add_option("--calibration-entries", args->calibration_entries, "Entries per layout in the bytes/entry calibration")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1'000}, std::uint64_t{10'000'000}));
  c->add_option("--sample-entries", args->sample_entries, "Model: SHARDS target of sampled cache entries (as sim rollout)")
      ->capture_default_str()
      ->check(CLI::Range(256u, 10'000'000u));
  c->add_option("--outage", args->outage_s,
                "Seconds the upstream stays silent (whole minutes; 0 = none; by default left out when --duration "
                "is too short)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 3600u))
      ->each([args = args](const std::string&) { args->outage_given = true; });
  c->add_option("--outage-at", args->outage_at_s,
                "Seconds after the first query the outage starts (whole minutes; default: the latest that ends "
                "before the plateau minutes)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{7200}))
      ->each([args = args](const std::string&) { args->outage_given = true; });
  c->add_option("--prefetch-percent", args->prefetch_percent,
                "serve's prefetch.percent and the model's (0 = off): a hit in the last percent of its TTL refreshes it")
      ->capture_default_str()
      ->check(CLI::Range(0u, 50u));
  c->add_option("--out", args->out, "Directory for validate_minutes.csv, validate_samples.csv and the children's logs");
  add_json_flag(*c, args->json);
}

}  // namespace dnsarena::sim::fleet
