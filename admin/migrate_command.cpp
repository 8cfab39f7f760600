// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena migrate SEGMENT [--max-entries N] [--arena-bytes S] [--region-bytes S]`:
// what `dnsarena serve` does on start with a segment of an older format or another
// geometry (cache/segment_migration.hpp), on its own: the segment is converted to this
// build's format and the given geometry (what is not given keeps the segment's), warm.
// Refused while a live process is attached to the segment (stop serve first).
#include <iostream>

#include "admin/byte_size.hpp"
#include "admin/commands.hpp"
#include "admin/run_reporting.hpp"
#include "common/add_command.hpp"
#include "cache/legacy/segment_reader.hpp"
#include "cache/segment_migration.hpp"

namespace dnsarena::admin {

namespace {

struct MigrateRequest {
  std::string segment;
  long long max_entries = -1;
  std::string arena_bytes, region_bytes;
};

int run_migrate(const MigrateRequest& req) {
  cache::Geometry g = cache::legacy::SegmentReader(req.segment).geometry();
  if (req.max_entries > 0) g.max_entries = static_cast<std::uint64_t>(req.max_entries);
  if (!req.arena_bytes.empty()) g.arena_bytes = parse_byte_size(req.arena_bytes, "--arena-bytes");
  if (!req.region_bytes.empty())
    g.region_bytes = static_cast<std::uint32_t>(parse_byte_size(req.region_bytes, "--region-bytes"));
  cache::OpenOutcome outcome{};
  cache::MigrationReport report;
  const cache::Segment seg = cache::Segment::open(req.segment, g, cache::OpenPolicy::migrate, &outcome, &report);
  if (outcome == cache::OpenOutcome::migrated)
    std::cout << "segment " << req.segment << " migrated: " << report.summary() << "\n";
  else
    std::cout << "segment " << req.segment << " is already format " << cache::kFormatVersion
              << " with that geometry: nothing to do\n";
  return 0;
}

}  // namespace

void add_migrate_command(CLI::App& app) {
  auto [cmd, req] = common::add_command<MigrateRequest>(
      app, "migrate",
      "Convert a stopped cache to this build's format and/or another geometry, keeping its live entries "
      "(docs/operator-guide.md: Upgrades and warm migration)",
      reporting("migrate", run_migrate));
  cmd->add_option("segment", req->segment, "Segment name (the file under /dev/shm)")->required();
  cmd->add_option("--max-entries", req->max_entries, "new capacity (default: the segment's)");
  cmd->add_option("--arena-bytes", req->arena_bytes, "new arena size, e.g. 256M (default: the segment's)");
  cmd->add_option("--region-bytes", req->region_bytes, "new region size, e.g. 1M (default: the segment's)");
}

}  // namespace dnsarena::admin
