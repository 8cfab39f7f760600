// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena top [--by hits|bytes] [-n N] [--segment SEG]`: the hottest or the largest
// entries of a live cache, under one line with the cache's miss-ratio curve
// (top_mrc_line.hpp: the hit rate now and at each measured capacity factor).
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
#include <unordered_map>
#include <nlohmann/json.hpp>
#include <thread>

#include "admin/commands.hpp"
#include "admin/dump_format.hpp"
#include "admin/entry_walk.hpp"
#include "admin/run_reporting.hpp"
#include "admin/top_mrc_line.hpp"
#include "common/add_command.hpp"

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
  std::string blob;         // the key blob; its text is made for the rows printed only
  std::uint64_t score = 0;  // rounds hit, or arena bytes
  std::uint32_t bytes = 0;
  std::uint32_t records = 0;
  std::uint32_t ttl_left = 0;
};

TopRow row_of(cache::EntryReader& e, std::uint32_t now) {
  const auto blob = e.key_blob();
  TopRow r;
  r.blob.assign(reinterpret_cast<const char*>(blob.data()), blob.size());
  r.bytes = static_cast<std::uint32_t>(cache::padded_entry_size(e.length()));
  r.records = e.record_count();
  r.ttl_left = e.expire() > now ? e.expire() - now : 0;
  return r;
}

bool ranks_before(const TopRow& a, const TopRow& b) {
  return a.score != b.score ? a.score > b.score : a.blob < b.blob;
}

// --by bytes: the n largest, kept in a heap of n rows during one walk.
std::vector<TopRow> largest(cache::Cache& cache, std::size_t n) {
  std::vector<TopRow> heap;  // ranks_before-ordered heap: the front is the smallest kept
  const std::uint32_t now = cache::wall_clock_now();
  for_each_entry_once(cache, now, WalkOptions{}, [&](cache::EntryReader& e, bool) {
    const std::uint64_t bytes = cache::padded_entry_size(e.length());
    if (n == 0 || (heap.size() == n && bytes < heap.front().score)) return;
    TopRow r = row_of(e, now);
    r.score = bytes;
    heap.push_back(std::move(r));
    std::push_heap(heap.begin(), heap.end(), ranks_before);
    if (heap.size() > n) {
      std::pop_heap(heap.begin(), heap.end(), ranks_before);
      heap.pop_back();
    }
  });
  return heap;
}

// --by hits: a clearing walk, then `rounds` walks counting the entries hit again.
std::vector<TopRow> hottest(cache::Cache& cache, const TopRequest& req) {
  std::unordered_map<std::uint64_t, TopRow> rows;  // by key hash, hit entries only
  auto walk = [&](bool count) {
    const std::uint32_t now = cache::wall_clock_now();
    for_each_entry_once(cache, now, WalkOptions{.clear_hit_bits = true}, [&](cache::EntryReader& e, bool hit) {
      if (!count || !hit) return;
      auto [it, fresh] = rows.try_emplace(cache::CacheKey::hash_blob(e.key_blob()));
      const std::uint64_t score = it->second.score;
      it->second = row_of(e, now);
      it->second.score = score + 1;
    });
  };
  walk(false);
  for (unsigned i = 0; i < req.rounds; ++i) {
    std::this_thread::sleep_for(std::chrono::duration<double>(req.interval_s / req.rounds));
    walk(true);
  }
  std::vector<TopRow> all;
  for (auto& [hash, row] : rows) all.push_back(std::move(row));
  return all;
}

int run_top(const TopRequest& req) {
  cache::Segment seg = cache::Segment::attach(req.segment);
  cache::Cache cache(seg, cache::SlotRole::tool);
  const bool by_hits = req.by == "hits";
  std::vector<TopRow> ranked = by_hits ? hottest(cache, req) : largest(cache, req.count);
  const std::size_t n = std::min(req.count, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<long>(n), ranked.end(), ranks_before);
  ranked.resize(n);
  const cache::CacheStats stats = cache.stats();
  const std::uint64_t lookups = stats.counter(cache::Counter::lookups);
  const TopMrc mrc = read_top_mrc(
      req.segment, lookups ? static_cast<double>(stats.counter(cache::Counter::hits)) / static_cast<double>(lookups) : 0.0);
  auto key_text = [](const TopRow& r) {
    return key_to_text({reinterpret_cast<const std::uint8_t*>(r.blob.data()), r.blob.size()});
  };
  if (req.json) {
    nlohmann::json j{{"segment", req.segment}, {"by", req.by}, {"rows", nlohmann::json::array()}};
    if (by_hits) j["rounds"] = req.rounds;
    j["mrc"] = top_mrc_json(mrc);
    for (const TopRow& r : ranked)
      j["rows"].push_back({{"key", key_text(r)}, {by_hits ? "rounds_hit" : "bytes", r.score}, {"bytes", r.bytes},
                           {"records", r.records}, {"ttl_left", r.ttl_left}});
    std::cout << j.dump() << "\n";
    return 0;
  }
  if (by_hits)
    std::cout << "entries hit in most of " << req.rounds << " rounds over " << req.interval_s << " s (segment "
              << req.segment << ")\n";
  else
    std::cout << "largest entries (segment " << req.segment << ")\n";
  std::cout << top_mrc_line(mrc);
  std::printf("%8s %7s %7s %8s  %s\n", by_hits ? "rounds" : "bytes", "bytes", "records", "ttl left", "key");
  for (const TopRow& r : ranked)
    std::printf("%8llu %7u %7u %8u  %s\n", static_cast<unsigned long long>(r.score), r.bytes, r.records, r.ttl_left,
                key_text(r).c_str());
  return 0;
}

}  // namespace

void add_top_command(CLI::App& app) {
  auto [cmd, req] = common::add_command<TopRequest>(
      app, "top", "The hottest (sampled hit bits) or largest entries of a live cache", reporting("top", run_top));
  cmd->add_option("--by", req->by, "hits (default) or bytes")->check(CLI::IsMember({"hits", "bytes"}));
  cmd->add_option("-n", req->count, "how many entries (default 20)");
  cmd->add_option("--segment", req->segment, "segment name (default dnsarena)");
  cmd->add_option("--interval", req->interval_s, "--by hits: seconds to sample (default 1)")->check(CLI::Range(0.01, 600.0));
  cmd->add_option("--rounds", req->rounds, "--by hits: samples in the interval (default 10)")->check(CLI::Range(1u, 1000u));
  cmd->add_flag("--json", req->json, "print one JSON object");
}

}  // namespace dnsarena::admin
