// SPDX-License-Identifier: GPL-3.0-or-later
#include "chart.hpp"

#include <cstdlib>
#include <fstream>

namespace dnsarena::sim::fleet {

bool run_gnuplot(const std::string& script, const std::string& script_path, std::string* why) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    *why = "gnuplot not found (apt-get install gnuplot-nox); chart skipped, CSV written";
    return false;
  }
  {
    std::ofstream out(script_path);
    out << script;
    if (!out) {
      *why = "cannot write " + script_path;
      return false;
    }
  }
  const std::string cmd = "gnuplot '" + script_path + "' 2>'" + script_path + ".log'";
  if (std::system(cmd.c_str()) != 0) {
    *why = "gnuplot failed; see " + script_path + ".log";
    return false;
  }
  return true;
}

bool rollout_chart(const std::string& csv, const std::string& out_png, const std::string& start_time,
                   const std::string& end_time, const std::string& title, std::string* why,
                   const std::string& versus_csv, const std::string& versus_title) {
  const std::string vs = versus_title.empty() ? "other run" : versus_title;
  std::string s;
  s += "set terminal pngcairo size 1200,800 noenhanced\n";
  s += "set output '" + out_png + "'\n";
  s += "set datafile separator ','\n";
  s += "set xdata time\nset timefmt '%Y-%m-%dT%H:%M'\nset format x '%m-%d'\n";
  s += "set grid\nset key top right\nset multiplot layout 2,1\n";
  s += "set arrow from '" + start_time + "', graph 0 to '" + start_time + "', graph 1 nohead dt 2 lc rgb 'gray40'\n";
  s += "set arrow from '" + end_time + "', graph 0 to '" + end_time + "', graph 1 nohead dt 2 lc rgb 'gray40'\n";
  s += "set label 'rollout start' at '" + start_time + "', graph 0.97 offset 0.5,0\n";
  s += "set label 'rollout end' at '" + end_time + "', graph 0.97 offset 0.5,0\n";
  s += "set title \"" + title + "\"\nset ylabel 'RSS per instance (GB)'\nset yrange [0:*]\n";
  s += "plot '" + csv + "' every ::1 using 1:7 with lines lw 2 lc 1 title 'p99', '' every ::1 using 1:6 with lines lw 2 lc 2 "
       "title 'p98', '' every ::1 using 1:5 with lines lw 2 lc 3 title 'p90'";
  if (!versus_csv.empty())
    s += ", '" + versus_csv + "' every ::1 using 1:7 with lines dt 2 lw 1 lc 1 title 'p99, " + vs + "', '" + versus_csv +
         "' every ::1 using 1:5 with lines dt 2 lw 1 lc 3 title 'p90, " + vs + "'";
  s += "\nset title 'Upstream queries/s (the fleet)'\nset ylabel 'queries/s'\nset autoscale y\n";
  s += "plot '" + csv + "' every ::1 using 1:10 with lines lw 2 lc 4 title 'upstream'";
  if (!versus_csv.empty())
    s += ", '" + versus_csv + "' every ::1 using 1:10 with lines dt 2 lw 1 lc 4 title 'upstream, " + vs + "'";
  s += "\nunset multiplot\n";
  return run_gnuplot(s, out_png + ".gp", why);
}

bool tune_chart(const std::string& csv, const std::vector<std::string>& datacenters, const std::string& out_png,
                std::string* why) {
  std::string s;
  s += "set terminal pngcairo size 1000,600 noenhanced\n";
  s += "set output '" + out_png + "'\n";
  s += "set datafile separator ','\nset logscale x\nset grid\nset key bottom right\n";
  s += "set xlabel 'cache capacity (entries)'\nset ylabel 'hit rate'\nset yrange [0:1]\n";
  s += "set title 'Hit rate against capacity per datacenter (real cache, sampled)'\n";
  s += "plot ";
  for (std::size_t i = 0; i < datacenters.size(); ++i) {
    if (i) s += ", ";
    s += "'" + csv + "' using 2:(strcol(1) eq '" + datacenters[i] + "' ? $3 : 1/0) with linespoints title '" +
         datacenters[i] + "'";
  }
  s += "\n";
  return run_gnuplot(s, out_png + ".gp", why);
}

}  // namespace dnsarena::sim::fleet
