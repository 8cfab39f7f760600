// SPDX-License-Identifier: GPL-3.0-or-later
#include "validate_report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dnsarena::sim::fleet {

namespace {

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }
double pct_error(double predicted, double measured) { return measured > 0 ? (predicted - measured) / measured * 100 : 0; }
double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

ValidateReport compare(const ServiceRun& run, const Prediction& pred, std::uint32_t sample_every_s) {
  ValidateReport r;
  const std::size_t per_minute = 60 / sample_every_s;
  const std::size_t minutes = run.samples.empty() ? 0 : (run.samples.size() - 1) / per_minute;
  for (std::size_t m = 1; m <= minutes; ++m) {
    const ServiceSample& a = run.samples[(m - 1) * per_minute];
    const ServiceSample& b = run.samples[m * per_minute];
    MinuteRow row;
    row.minute = static_cast<unsigned>(m);
    row.measured_entries = static_cast<double>(b.entries);
    row.measured_inserted = static_cast<double>(b.inserts - run.samples[0].inserts);
    row.predicted_inserted = pred.curve.inserted_at(m);
    row.measured_hit_rate = ratio(static_cast<double>(b.hits - a.hits), static_cast<double>(b.queries - a.queries));
    row.measured_rss_bytes = static_cast<double>(b.memory_bytes());
    row.measured_pss_total_bytes = static_cast<double>(b.pss.total);
    row.segment_resident_bytes = static_cast<double>(b.segment_resident_bytes);
    row.predicted_entries = pred.curve.entries_at(m);
    row.predicted_hit_rate = m < pred.curve.hit_rate_raw.size() ? pred.curve.hit_rate_raw[m] : pred.curve.plateau_hit_rate;
    row.predicted_hit_rate_smoothed = pred.curve.hit_rate_at(m);
    row.predicted_cache_bytes = m < pred.cache_resident_bytes.size() ? pred.cache_resident_bytes[m] : 0;
    row.predicted_rss_bytes = m < pred.rss_bytes.size() ? pred.rss_bytes[m] : 0;
    r.minutes.push_back(row);
  }
  if (minutes == 0) throw std::runtime_error("the run has no complete minute to compare");
  r.plateau_first = static_cast<unsigned>((2 * minutes + 2) / 3);  // ceil(2M/3)
  if (r.plateau_first < 1) r.plateau_first = 1;
  const ServiceSample& p0 = run.samples[(r.plateau_first - 1) * per_minute];
  const ServiceSample& p1 = run.samples[minutes * per_minute];
  r.measured_hit_rate = ratio(static_cast<double>(p1.hits - p0.hits), static_cast<double>(p1.queries - p0.queries));
  double n = 0;
  for (const MinuteRow& row : r.minutes) {
    if (row.minute < r.plateau_first) continue;
    n += 1;
    r.predicted_hit_rate += row.predicted_hit_rate;
    r.measured_entries += row.measured_entries;
    r.predicted_entries += row.predicted_entries;
    r.measured_rss_bytes += row.measured_rss_bytes;
    r.predicted_rss_bytes += row.predicted_rss_bytes;
    r.measured_segment_bytes += row.segment_resident_bytes;
    r.predicted_cache_bytes += row.predicted_cache_bytes;
    r.process_growth_bytes += static_cast<double>(run.samples[row.minute * per_minute].pss.anon);
  }
  r.predicted_hit_rate /= n;
  r.measured_entries /= n;
  r.predicted_entries /= n;
  r.measured_rss_bytes /= n;
  r.predicted_rss_bytes /= n;
  r.measured_segment_bytes /= n;
  r.predicted_cache_bytes /= n;
  r.process_growth_bytes = r.process_growth_bytes / n - static_cast<double>(run.before_load.pss.anon);
  r.cache_resident_error_pct = pct_error(r.predicted_cache_bytes, r.measured_segment_bytes);
  r.che_hit_rate = pred.che.hit_rate;
  r.che_entries = pred.che.entries;
  r.hit_rate_error_pts = (r.predicted_hit_rate - r.measured_hit_rate) * 100;
  r.che_hit_rate_error_pts = (r.che_hit_rate - r.measured_hit_rate) * 100;
  r.rss_error_pct = pct_error(r.predicted_rss_bytes, r.measured_rss_bytes);
  r.entries_error_pct = pct_error(r.predicted_entries, r.measured_entries);
  if (run.outage_last_sample > run.outage_first_sample) {
    const ServiceSample& o0 = run.samples[run.outage_first_sample];
    const ServiceSample& o1 = run.samples[run.outage_last_sample];
    const double queries = static_cast<double>(o1.queries - o0.queries);
    r.outage = true;
    r.outage_queries = queries;
    r.measured_outage_hit_share = ratio(static_cast<double>(o1.hits - o0.hits), queries);
    r.measured_stale_share = ratio(static_cast<double>(o1.stale_answers - o0.stale_answers), queries);
    r.measured_failure_cached_share = ratio(static_cast<double>(o1.failure_cached - o0.failure_cached), queries);
    r.measured_deadline_share = ratio(static_cast<double>(o1.deadline_answers - o0.deadline_answers), queries);
    double fresh = 0, stale = 0;
    for (std::size_t k = 0; k < pred.curve.outage_fresh.size(); ++k)
      fresh += pred.curve.outage_fresh[k], stale += pred.curve.outage_stale[k];
    const double minutes_n = static_cast<double>(std::max<std::size_t>(1, pred.curve.outage_fresh.size()));
    r.predicted_outage_fresh_share = fresh / minutes_n;
    r.predicted_stale_share = stale / minutes_n;
    r.stale_error_pts = (r.predicted_stale_share - r.measured_stale_share) * 100;
    r.stale_met = std::fabs(r.stale_error_pts) <= kStaleShareTargetPts;
  }
  // The queries of an outage may rightly fail: left out of the load's unanswered share.
  const double unanswered = std::max(0.0, static_cast<double>(run.lost + run.servfail_answers) - r.outage_queries);
  r.unanswered_share = ratio(unanswered, static_cast<double>(run.sent) - r.outage_queries);
  r.load_answered = run.sent > 0 && r.unanswered_share <= kMaxUnansweredShare;
  r.hit_rate_met = std::fabs(r.hit_rate_error_pts) <= kHitRateTargetPts;
  r.rss_met = std::fabs(r.rss_error_pct) <= kRssTargetPct;
  return r;
}

OutageWindow place_outage(std::uint32_t duration_s, std::uint32_t outage_s, std::int64_t at_s, bool given) {
  OutageWindow w;
  if (outage_s == 0) return w;
  if (outage_s % 60 != 0) throw std::invalid_argument("--outage must be whole minutes (the model's curve is per minute)");
  const std::int64_t minutes = duration_s / 60;
  const std::int64_t plateau_first = (2 * minutes + 2) / 3;  // as compare(): ceil(2M/3)
  const std::int64_t latest_end = std::max<std::int64_t>(0, plateau_first - 1) * 60;
  const std::int64_t at = at_s >= 0 ? at_s : latest_end - outage_s;
  if (at_s >= 0 && at % 60 != 0) throw std::invalid_argument("--outage-at must be whole minutes after the first query");
  if (at < 60 || at + outage_s > latest_end) {
    const std::string why = "the outage (" + std::to_string(outage_s) + " s) must start after the first minute and end by " +
                            std::to_string(latest_end) + " s, before the plateau minutes (the last third of --duration " +
                            std::to_string(duration_s) + " s)";
    if (given) throw std::invalid_argument(why + "; give a longer --duration or --outage 0");
    w.note = "no upstream outage in this run: " + why;
    return w;
  }
  w.at_s = static_cast<std::uint32_t>(at);
  w.seconds = outage_s;
  return w;
}

nlohmann::json report_json(const ValidateSetup& s, const ServiceRun& run, const Prediction& pred,
                           const ValidateReport& r, double wall_s) {
  nlohmann::json minutes = nlohmann::json::array();
  for (const MinuteRow& m : r.minutes)
    minutes.push_back({{"minute", m.minute},
                       {"measured_entries", m.measured_entries},
                       {"predicted_entries", m.predicted_entries},
                       {"measured_inserted", m.measured_inserted},
                       {"predicted_inserted", m.predicted_inserted},
                       {"measured_hit_rate", m.measured_hit_rate},
                       {"predicted_hit_rate", m.predicted_hit_rate},
                       {"predicted_hit_rate_smoothed", m.predicted_hit_rate_smoothed},
                       {"measured_rss_bytes", m.measured_rss_bytes},
                       {"measured_pss_total_bytes", m.measured_pss_total_bytes},
                       {"predicted_rss_bytes", m.predicted_rss_bytes},
                       {"measured_segment_resident_bytes", m.segment_resident_bytes},
                       {"predicted_cache_resident_bytes", m.predicted_cache_bytes}});
  nlohmann::json samples = nlohmann::json::array();
  for (const ServiceSample& x : run.samples)
    samples.push_back({{"t_s", x.t_s}, {"entries", x.entries}, {"queries", x.queries}, {"hits", x.hits},
                       {"stale_answers", x.stale_answers}, {"failure_cached", x.failure_cached},
                       {"deadline_answers", x.deadline_answers}, {"prefetches", x.prefetches},
                       {"lookups", x.lookups}, {"inserts", x.inserts},
                       {"second_chances", x.second_chances}, {"arena_bytes_in_use", x.arena_bytes_in_use},
                       {"memory_bytes", x.memory_bytes()},
                       {"pss_bytes", x.pss.total}, {"pss_anon_bytes", x.pss.anon}, {"pss_file_bytes", x.pss.file},
                       {"pss_shmem_bytes", x.pss.shmem},
                       {"segment_resident_bytes", x.segment_resident_bytes}, {"processes", x.processes}});
  return {
      {"command", "sim validate"},
      {"profile", s.profile},
      {"scale",
       {{"names", s.names}, {"target_qps", s.target_rate}, {"achieved_qps", run.achieved_qps},
        {"duration_s", s.duration_s}, {"sample_every_s", s.sample_every_s},
        {"minute_seconds", s.minute_seconds}, {"model_qps", s.model_qps},
        {"capacity", s.capacity},
        {"workers", s.workers}, {"arena_bytes", s.arena_bytes}, {"region_bytes", s.region_bytes},
        {"segment_bytes", run.segment_bytes}, {"index_bytes", run.index_bytes},
        {"ecs_policy", s.ecs_forward ? "forward" : "off"}}},
      {"load",
       {{"sent", run.sent}, {"answered", run.answered}, {"lost", run.lost}, {"servfail", run.servfail_answers},
        {"unanswered_share", r.unanswered_share}, {"answered_the_load", r.load_answered}, {"report", run.load}}},
      {"calibration", {{"entries", s.calibration_entries}, {"arena_bytes_per_entry", s.arena_bytes_per_entry}}},
      {"process_bytes_before_load", run.before_load.memory_bytes()},
      {"pss_total_bytes_before_load", run.before_load.pss.total},
      {"pss_file_bytes_before_load", run.before_load.pss.file},
      {"segment_resident_bytes_before_load", run.before_load.segment_resident_bytes},
      {"plateau_minutes", {r.plateau_first, r.minutes.size()}},
      {"measured", {{"hit_rate", r.measured_hit_rate}, {"entries", r.measured_entries}, {"rss_bytes", r.measured_rss_bytes}}},
      {"predicted",
       {{"hit_rate", r.predicted_hit_rate}, {"entries", r.predicted_entries}, {"rss_bytes", r.predicted_rss_bytes},
        {"che_hit_rate", r.che_hit_rate}, {"che_entries", r.che_entries}, {"che_fills", pred.che.fills},
        {"sample_rate", pred.curve.sample_rate}, {"curve_wall_s", pred.curve_wall_s}}},
      {"hit_rate_error_pts", r.hit_rate_error_pts},
      {"che_hit_rate_error_pts", r.che_hit_rate_error_pts},
      {"rss_error_pct", r.rss_error_pct},
      {"entries_error_pct", r.entries_error_pct},
      {"cache_resident_error_pct", r.cache_resident_error_pct},
      {"measured_segment_resident_bytes", r.measured_segment_bytes},
      {"predicted_cache_resident_bytes", r.predicted_cache_bytes},
      {"process_growth_bytes", r.process_growth_bytes},
      {"targets", {{"hit_rate_pts", kHitRateTargetPts}, {"rss_pct", kRssTargetPct}}},
      {"outage",
       r.outage ? nlohmann::json{{"at_s", s.outage_at_s},
                                 {"seconds", s.outage_s},
                                 {"queries", r.outage_queries},
                                 {"measured_hit_share", r.measured_outage_hit_share},
                                 {"measured_stale_share", r.measured_stale_share},
                                 {"measured_failure_cached_share", r.measured_failure_cached_share},
                                 {"measured_deadline_share", r.measured_deadline_share},
                                 {"predicted_fresh_share", r.predicted_outage_fresh_share},
                                 {"predicted_stale_share", r.predicted_stale_share},
                                 {"stale_error_pts", r.stale_error_pts},
                                 {"target_pts", kStaleShareTargetPts}}
                : nlohmann::json(nullptr)},
      {"met",
       {{"hit_rate", r.hit_rate_met},
        {"rss", r.rss_met},
        {"stale", r.stale_met},
        {"all", r.hit_rate_met && r.rss_met && r.stale_met && r.load_answered}}},
      {"minutes", minutes},
      {"samples", samples},
      {"notes", s.notes},
      {"service_wall_s", run.wall_s},
      {"wall_s", wall_s}};
}

std::string report_table(const ValidateSetup& s, const ServiceRun& run, const Prediction& pred,
                         const ValidateReport& r, double wall_s) {
  std::ostringstream o;
  o << "dnsarena-lab sim validate: " << s.profile << "\n"
    << "scale: " << s.names << " names, " << fmt("%.0f", run.achieved_qps) << " q/s achieved (target "
    << fmt("%.0f", s.target_rate) << ") for " << s.duration_s << " s"
    << (s.minute_seconds != 60 ? " simulated (a minute lasts " + std::to_string(s.minute_seconds) + " s; model at " +
                                     fmt("%.0f", s.model_qps) + " q/s)"
                               : std::string())
    << ", capacity " << s.capacity << " entries, "
    << s.workers << " workers, arena " << fmt("%.2f", mib(double(s.arena_bytes))) << " MiB in "
    << s.region_bytes / 1024 << " KiB regions, ECS " << (s.ecs_forward ? "forward" : "off") << "\n"
    << "calibration: " << fmt("%.1f", s.arena_bytes_per_entry) << " segment bytes/entry (" << s.calibration_entries
    << " entries of the profile's mix); process memory before load (model input): "
    << fmt("%.2f", mib(double(run.before_load.memory_bytes()))) << " MiB (Pss anon+shmem; total Pss "
    << fmt("%.2f", mib(double(run.before_load.pss.total))) << " MiB with "
    << fmt("%.2f", mib(double(run.before_load.pss.file))) << " MiB of shared program and library pages, not compared); "
    << "segment resident " << fmt("%.0f", double(run.before_load.segment_resident_bytes) / 1024) << " KiB of "
    << fmt("%.0f", double(run.segment_bytes) / 1024) << " KiB\n"
    << "RSS below = Pss anon + shmem of the supervisor and workers (the segment counted once)\n\n";
  o << "minute | entries meas / pred | inserted meas / pred | hit rate meas / pred | RSS MiB meas / pred | "
       "segment res MiB | model cache MiB\n";
  for (const MinuteRow& m : r.minutes)
    o << fmt("%6.0f", m.minute) << " | " << fmt("%8.0f", m.measured_entries) << " / " << fmt("%-8.0f", m.predicted_entries)
      << " | " << fmt("%9.0f", m.measured_inserted) << " / " << fmt("%-9.0f", m.predicted_inserted) << " | "
      << fmt("%7.2f%%", m.measured_hit_rate * 100) << " / " << fmt("%6.2f%%", m.predicted_hit_rate * 100)
      << " | " << fmt("%8.2f", mib(m.measured_rss_bytes)) << " / " << fmt("%-8.2f", mib(m.predicted_rss_bytes)) << " | "
      << fmt("%15.2f", mib(m.segment_resident_bytes)) << " | " << fmt("%.2f", mib(m.predicted_cache_bytes)) << "\n";
  auto met = [](bool b) { return b ? "met" : "MISSED"; };
  o << "\nplateau (minutes " << r.plateau_first << ".." << r.minutes.size() << "):\n"
    << "  hit rate  measured " << fmt("%.2f%%", r.measured_hit_rate * 100) << ", predicted "
    << fmt("%.2f%%", r.predicted_hit_rate * 100) << " (Che " << fmt("%.2f%%", r.che_hit_rate * 100)
    << ", steady state), error " << fmt("%+.2f", r.hit_rate_error_pts) << " points (target 5: "
    << met(r.hit_rate_met) << ")\n"
    << "  RSS       measured " << fmt("%.2f", mib(r.measured_rss_bytes)) << " MiB, predicted "
    << fmt("%.2f", mib(r.predicted_rss_bytes)) << " MiB, error " << fmt("%+.2f", r.rss_error_pct)
    << "% (target 10%: " << met(r.rss_met) << ")\n"
    << "    cache   segment resident " << fmt("%.2f", mib(r.measured_segment_bytes)) << " MiB, memory model "
    << fmt("%.2f", mib(r.predicted_cache_bytes)) << " MiB, error " << fmt("%+.2f", r.cache_resident_error_pct) << "%\n"
    << "    process Pss anon grew " << fmt("%.2f", mib(r.process_growth_bytes))
    << " MiB under load (not in the model's input, measured before load)\n"
    << "  entries   measured " << fmt("%.0f", r.measured_entries) << ", predicted " << fmt("%.0f", r.predicted_entries)
    << " (Che " << fmt("%.0f", r.che_entries) << "), error " << fmt("%+.2f", r.entries_error_pct) << "%\n"
    << (r.outage ? "upstream outage (" + std::to_string(s.outage_s) + " s from t=" + std::to_string(s.outage_at_s) +
                       " s, " + fmt("%.0f", r.outage_queries) + " queries): answered stale measured " +
                       fmt("%.2f%%", r.measured_stale_share * 100) + ", predicted " +
                       fmt("%.2f%%", r.predicted_stale_share * 100) + ", error " + fmt("%+.2f", r.stale_error_pts) +
                       " points (target 5: " + met(r.stale_met) + "); hits " +
                       fmt("%.2f%%", r.measured_outage_hit_share * 100) + " measured, fresh " +
                       fmt("%.2f%%", r.predicted_outage_fresh_share * 100) + " predicted\n"
                 : std::string())
    << "load: " << run.sent << " sent, " << run.answered << " answered, " << run.lost << " lost, "
    << run.servfail_answers << " SERVFAIL"
    << (r.load_answered ? "" : "  -- the service did not answer the load: the comparison is not fair")
    << (r.outage ? " (the outage's queries left out of that check)" : "") << "\n"
    << "model curve: sample rate " << fmt("%.3f", pred.curve.sample_rate) << ", " << fmt("%.1f", pred.curve_wall_s)
    << " s; service run " << fmt("%.1f", run.wall_s) << " s; total " << fmt("%.1f", wall_s) << " s\n";
  o << "model approximations:\n";
  for (const std::string& n : s.notes) o << "  - " << n << "\n";
  return o.str();
}

void write_csv(const std::string& dir, const ServiceRun& run, const ValidateReport& r) {
  std::ofstream m(dir + "/validate_minutes.csv");
  m << "minute,measured_entries,predicted_entries,measured_inserted,predicted_inserted,measured_hit_rate,predicted_hit_rate,predicted_hit_rate_smoothed,"
       "measured_rss_bytes,predicted_rss_bytes,measured_segment_resident_bytes,predicted_cache_resident_bytes\n";
  for (const MinuteRow& x : r.minutes)
    m << x.minute << ',' << x.measured_entries << ',' << x.predicted_entries << ',' << x.measured_inserted << ','
      << x.predicted_inserted << ',' << x.measured_hit_rate << ','
      << x.predicted_hit_rate << ',' << x.predicted_hit_rate_smoothed << ',' << x.measured_rss_bytes << ','
      << x.predicted_rss_bytes << ',' << x.segment_resident_bytes << ',' << x.predicted_cache_bytes << '\n';
  std::ofstream s(dir + "/validate_samples.csv");
  s << "t_s,entries,queries,hits,lookups,inserts,second_chances,arena_bytes_in_use,memory_bytes,pss_bytes,pss_anon_bytes,pss_file_bytes,pss_shmem_bytes,"
       "segment_resident_bytes,processes\n";
  for (const ServiceSample& x : run.samples)
    s << x.t_s << ',' << x.entries << ',' << x.queries << ',' << x.hits << ',' << x.lookups << ',' << x.inserts << ','
      << x.second_chances << ',' << x.arena_bytes_in_use << ',' << x.memory_bytes() << ','
      << x.pss.total << ',' << x.pss.anon << ',' << x.pss.file << ',' << x.pss.shmem << ','
      << x.segment_resident_bytes << ',' << x.processes << '\n';
  if (!m || !s) throw std::runtime_error("cannot write the CSV files in " + dir);
}

}  // namespace dnsarena::sim::fleet
