// `dnsarena top [--by hits|bytes] [-n N] [--segment SEG]`: the hottest or the largest
// entries of a live cache.
//
// --by bytes: one lock-free walk; entries ranked by their size in the arena.
// --by hits: the cache keeps no per-entry hit counter (the index slot has one hit bit,
// for the second chance: index_slot.hpp), so hotness is sampled: a first walk clears
// every hit bit, then each of --rounds walks, --interval/rounds apart, counts the
// entries whose bit a lookup set again and clears it. An entry's score is the number of
// rounds it was hit in (0..rounds): the entries hit in every round are the hottest.
// Cost: rounds + 1 walks (Cache::for_each_entry). Clearing the bits costs an entry not
// hit again before its region is reclaimed its second chance: negligible for hot
// entries, and a sample of a second or two touches a few regions at most.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "admin/commands.hpp"
#include "admin/dump_format.hpp"
#include "admin/entry_walk.hpp"
#include "admin/run_reporting.hpp"

namespace dnsarena::admin {

namespace {

struct TopRequest {
  std::string by = "hits";
  std::size_t count = 20;
  std::string segment = "dnsarena";
  double interval_s = 1.0;
  unsigned rounds = 10;
  bool json = false;
};

struct TopRow {
  std::string key;       // key_to_text
  std::uint64_t score = 0;  // rounds hit, or arena bytes
  std::uint32_t bytes = 0;
  std::uint32_t records = 0;
  std::uint32_t ttl_left = 0;
};

int run_top(const TopRequest& req) {
  cache::Segment seg = cache::Segment::attach(req.segment);
  cache::Cache cache(seg, cache::SlotRole::tool);
  const bool by_hits = req.by == "hits";
  std::map<std::string, TopRow> rows;  // by key blob
  auto visit_round = [&](bool count_hits) {
    const std::uint32_t now = cache::wall_clock_now();
    for_each_entry_once(cache, now, WalkOptions{.clear_hit_bits = by_hits}, [&](cache::EntryReader& e, bool hit) {
      const auto blob = e.key_blob();
      if (by_hits && !(count_hits && hit)) return;
      TopRow& r = rows[std::string(reinterpret_cast<const char*>(blob.data()), blob.size())];
      if (r.key.empty()) r.key = key_to_text(blob);
      r.bytes = static_cast<std::uint32_t>(cache::padded_entry_size(e.length()));
      r.records = e.record_count();
      r.ttl_left = e.expire() > now ? e.expire() - now : 0;
      r.score = by_hits ? r.score + 1 : r.bytes;
    });
  };
  if (by_hits) {
    visit_round(false);
    for (unsigned i = 0; i < req.rounds; ++i) {
      std::this_thread::sleep_for(std::chrono::duration<double>(req.interval_s / req.rounds));
      visit_round(true);
    }
  } else {
    visit_round(false);
  }
  std::vector<TopRow> ranked;
  for (auto& [blob, row] : rows) ranked.push_back(row);
  const std::size_t n = std::min(req.count, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<long>(n), ranked.end(),
                    [](const TopRow& a, const TopRow& b) { return a.score != b.score ? a.score > b.score : a.key < b.key; });
  ranked.resize(n);
  if (req.json) {
    nlohmann::json j{{"segment", req.segment}, {"by", req.by}, {"rows", nlohmann::json::array()}};
    if (by_hits) j["rounds"] = req.rounds;
    for (const TopRow& r : ranked)
      j["rows"].push_back({{"key", r.key}, {by_hits ? "rounds_hit" : "bytes", r.score}, {"bytes", r.bytes},
                           {"records", r.records}, {"ttl_left", r.ttl_left}});
    std::cout << j.dump() << "\n";
    return 0;
  }
  if (by_hits)
    std::cout << "entries hit in most of " << req.rounds << " rounds over " << req.interval_s << " s (segment "
              << req.segment << ")\n";
  else
    std::cout << "largest entries (segment " << req.segment << ")\n";
  std::printf("%8s %7s %7s %8s  %s\n", by_hits ? "rounds" : "bytes", "bytes", "records", "ttl left", "key");
  for (const TopRow& r : ranked)
    std::printf("%8llu %7u %7u %8u  %s\n", static_cast<unsigned long long>(r.score), r.bytes, r.records, r.ttl_left,
                r.key.c_str());
  return 0;
}

}  // namespace

void add_top_command(CLI::App& app) {
  auto req = std::make_shared<TopRequest>();
  auto* cmd = app.add_subcommand("top", "The hottest (sampled hit bits) or largest entries of a live cache");
  cmd->add_option("--by", req->by, "hits (default) or bytes")->check(CLI::IsMember({"hits", "bytes"}));
  cmd->add_option("-n", req->count, "how many entries (default 20)");
  cmd->add_option("--segment", req->segment, "segment name (default dnsarena)");
  cmd->add_option("--interval", req->interval_s, "--by hits: seconds to sample (default 1)")->check(CLI::Range(0.01, 600.0));
  cmd->add_option("--rounds", req->rounds, "--by hits: samples in the interval (default 10)")->check(CLI::Range(1u, 1000u));
  cmd->add_flag("--json", req->json, "print one JSON object");
  cmd->callback([req] { run_reporting("top", [&] { return run_top(*req); }); });
}

}  // namespace dnsarena::admin
