// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim fit --dnstap FILE [FILE...] [-o profile.yaml] [--zone Z] [--keep-truncated] [--json]`
#include <cstdio>
#include <fstream>
#include <iostream>

#include "sim/command_options.hpp"
#include "sim/fit/commands.hpp"
#include "sim/fit/dnstap_reader.hpp"
#include "sim/fit/profile_fit.hpp"
#include "sim/workload/traffic_profile_writer.hpp"

namespace dnsarena::sim {

namespace {

struct FitArgs {
  std::vector<std::string> files;
  std::string out;
  std::string zone;
  bool keep_truncated = false;
  bool json = false;
};

void run_fit(const FitArgs& a) {
  FILE* const report = a.json ? stderr : stdout;
  fit::TapTally tally;
  fit::ReadOptions ro;
  ro.keep_truncated = a.keep_truncated;
  nlohmann::json files = nlohmann::json::array();
  for (const std::string& path : a.files) {
    const fit::FileSummary s = fit::read_dnstap_file(path, [&](const fit::TapMessage& m) { tally.add(m); }, ro);
    std::fprintf(report, "%s: %llu frames, %llu messages, %llu skipped%s%s\n", path.c_str(),
                 static_cast<unsigned long long>(s.data_frames), static_cast<unsigned long long>(s.messages),
                 static_cast<unsigned long long>(s.skipped), s.note.empty() ? "" : "; ", s.note.c_str());
    files.push_back({{"path", path}, {"frames", s.data_frames}, {"messages", s.messages}, {"skipped", s.skipped},
                     {"bytes", s.bytes}, {"truncated", s.truncated}, {"note", s.note}});
  }
  if (tally.client_queries == 0)
    throw std::runtime_error("sim fit: no CLIENT_QUERY message in the capture (is client_query on in serve's dnstap?)");
  const fit::ProfileFit f = fit::fit_profile(tally, {.zone = a.zone});
  std::fprintf(report, "%s", f.report().c_str());

  std::string yaml = "# Traffic profile fitted by `dnsarena-lab sim fit` from " + std::to_string(a.files.size()) +
                     " dnstap file(s): " + std::to_string(f.client_queries) + " client queries over " +
                     std::to_string(static_cast<long long>(f.capture_s)) + " s, zone " + f.zone +
                     " (docs/simulator.md, \"Fitting a profile to a dnstap capture\").\n";
  yaml += traffic_profile_yaml(f.profile);
  if (!a.out.empty()) {
    std::ofstream out(a.out, std::ios::trunc);
    out << yaml;
    if (!out.flush()) throw std::runtime_error(a.out + ": cannot write");
    std::fprintf(report, "wrote %s\n", a.out.c_str());
  } else if (!a.json) {
    std::fprintf(report, "\n%s", yaml.c_str());
  }
  if (a.json) {
    nlohmann::json j = f.to_json();
    j["files"] = files;
    j["yaml"] = yaml;
    std::cout << j.dump(2) << std::endl;
  }
}

}  // namespace

void add_fit_command(CLI::App& sim) {
  auto [cmd, args] = add_command<FitArgs>(
      sim, "fit",
      "Fit a traffic profile to dnstap captures (Frame Streams files, e.g. serve's dnstap\n"
      "file output PATH.0 PATH.1 ...): popularity (Zipf MLE, universe), qtypes, answer shapes,\n"
      "TTLs, negative/CNAME/stray/ECS shares and qps, written in the schema sim load, sim\n"
      "upstream, sim rollout and sim tune read. The report also gives the rate by hour.",
      run_fit);
  cmd->add_option("--dnstap", args->files, "dnstap Frame Streams files (several: merged)")->required()->expected(1, -1);
  cmd->add_option("-o,--out", args->out, "Write the profile YAML here (default: print it)");
  cmd->add_option("--zone", args->zone, "The zone the names are under (default: their longest common suffix)");
  cmd->add_flag("--keep-truncated", args->keep_truncated, "Read a truncated file up to its cut instead of failing");
  add_json_flag(*cmd, args->json);
}

}  // namespace dnsarena::sim
