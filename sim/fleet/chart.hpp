// SPDX-License-Identifier: GPL-3.0-or-later
// Charts with gnuplot (Debian's gnuplot-nox, pngcairo or svg terminal).
//
// The chart is drawn from the CSV the command wrote, so the numbers in the picture are
// the numbers in the file. When gnuplot is missing the command says so and skips the
// chart (the CSV is still written).
#pragma once
#include <string>
#include <vector>

namespace dnsarena::sim::fleet {

// Runs gnuplot on `script`; returns false (and sets *why) when gnuplot is absent or fails.
bool run_gnuplot(const std::string& script, const std::string& script_path, std::string* why);

// Two panels over time, the rollout start and end marked: p90/p98/p99 RSS per instance,
// and the fleet's upstream queries/s. With `versus_csv` (another run's rollout.csv, e.g.
// the same plan with a cold upgrade) its p99, p90 and upstream load are drawn dashed,
// titled `versus_title`.
bool rollout_chart(const std::string& csv, const std::string& out_png, const std::string& start_time,
                   const std::string& end_time, const std::string& title, std::string* why,
                   const std::string& versus_csv = "", const std::string& versus_title = "");

// Hit rate against capacity, one line per datacenter (CSV: datacenter,capacity,hit_rate,...).
bool tune_chart(const std::string& csv, const std::vector<std::string>& datacenters, const std::string& out_png,
                std::string* why);

}  // namespace dnsarena::sim::fleet
