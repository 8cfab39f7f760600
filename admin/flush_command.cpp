// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena flush NAME [--type T] [--subtree] [--segment SEG]`: removes entries from a
// live cache, as `unbound-control flush` / `flush_zone` and Knot Resolver's
// cache.clear() do.
//
// Which entries: those whose qname is NAME (with --subtree: NAME or any name below it),
// of every qtype or only T, with every key variant: ECS scopes, DO, CD, authenticated.
// The key hash covers the whole key (ECS scope included), so those variants cannot be
// found by hashing NAME: both forms walk the index.
// Cost: one lock-free pass over the index plus one copy per live entry (about as long
// as `dnsarena check`), then, per entry removed, one erase
// under the writer lock (one atomic store): workers never wait on the walk, and at most
// one erase at a time. An entry written while the walk runs may survive it (it was
// fetched after the flush began, as in Unbound).
#include <iostream>

#include "admin/commands.hpp"
#include "admin/entry_walk.hpp"
#include "admin/knot_text.hpp"
#include "admin/run_reporting.hpp"
#include "common/add_command.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::admin {

namespace {

// Whether wire name `q` is `name` or below it. Both lowercase.
bool at_or_below(std::span<const std::uint8_t> q, std::span<const std::uint8_t> name) {
  for (std::size_t pos = 0; pos < q.size(); pos += std::size_t{q[pos]} + 1) {
    if (q.size() - pos == name.size() && std::equal(name.begin(), name.end(), q.begin() + static_cast<long>(pos)))
      return true;
    if (q[pos] == 0) break;
  }
  return false;
}

struct FlushRequest {
  std::string name;
  std::string type;
  bool subtree = false;
  std::string segment = "dnsarena";
};

int run_flush(const FlushRequest& req) {
  std::basic_string<std::uint8_t> name = wire::name_to_wire(req.name);
  wire::lowercase_copy(name.data(), name);
  const int type = req.type.empty() ? -1 : type_from_text(req.type);
  cache::Segment seg = cache::Segment::attach(req.segment);
  cache::Cache cache(seg, cache::SlotRole::tool);
  cache.set_writer_lock_timeout(std::chrono::seconds(10));
  std::vector<cache::CacheKey> doomed;
  for_each_entry_once(cache, cache::wall_clock_now(), WalkOptions{.include_expired = true},
                      [&](cache::EntryReader& entry, bool) {
                        if (type >= 0 && entry.qtype() != type) return;
                        const auto q = entry.qname();
                        const bool match = req.subtree ? at_or_below(q, name)
                                                       : std::equal(q.begin(), q.end(), name.begin(), name.end());
                        if (!match) return;
                        cache::CacheKey key;
                        if (cache::CacheKey::from_blob(entry.key_blob(), key)) doomed.push_back(key);
                      });
  const auto unavailable = [&] {
    return cache.my_stats().counters[static_cast<std::size_t>(cache::Counter::writer_lock_unavailable)].load();
  };
  const std::uint64_t unavailable_before = unavailable();
  std::uint64_t removed = 0;
  for (const cache::CacheKey& key : doomed) removed += cache.erase(key);
  const std::uint64_t skipped = unavailable() - unavailable_before;
  std::cout << "flushed " << removed << " entries (" << wire::wire_to_text(name)
            << (req.type.empty() ? "" : " " + req.type) << (req.subtree ? ", subtree" : "") << ")\n";
  if (skipped) {
    std::cerr << "dnsarena flush: the writer lock was unavailable for " << skipped
              << " entries, which were not removed (`dnsarena check " << req.segment << "` says why)\n";
    return 1;
  }
  return 0;
}

}  // namespace

void add_flush_command(CLI::App& app) {
  auto [cmd, req] = common::add_command<FlushRequest>(
      app, "flush",
      "Remove a name's entries (every type and ECS variant, or one type; with --subtree everything below it) "
      "from a live cache; prints how many",
      reporting("flush", run_flush));
  cmd->add_option("name", req->name, "Name to flush, e.g. www.example.com")->required();
  cmd->add_option("--type", req->type, "only this RR type (A, AAAA, TXT, ...)");
  cmd->add_flag("--subtree", req->subtree, "also every name below NAME (flush_zone)");
  cmd->add_option("--segment", req->segment, "segment name (default dnsarena)");
}

}  // namespace dnsarena::admin
