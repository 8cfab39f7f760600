// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena dump SEGMENT [--out FILE]` and `dnsarena restore FILE [--segment SEG]`:
// a live cache to text and back (format: dump_format.hpp; docs/operator-guide.md, Operator commands).
//
// dump walks without a lock (Cache::for_each_entry): workers go on answering and
// writing; an entry written during the walk may or may not be in the dump. restore
// inserts through Cache::insert like a worker (the writer lock per entry), into a
// segment that serves or not; a missing segment is created with --max-entries and
// --arena-bytes. Entries the cache already holds under the same key are replaced.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "admin/byte_size.hpp"
#include "admin/commands.hpp"
#include "admin/dump_format.hpp"
#include "admin/entry_walk.hpp"
#include "admin/run_reporting.hpp"
#include "common/add_command.hpp"

namespace dnsarena::admin {

namespace {

struct DumpRequest {
  std::string segment;
  std::string out;  // empty: standard output
};

int run_dump(const DumpRequest& req) {
  const std::string& segment = req.segment;
  const std::string& out_path = req.out;
  cache::Segment seg = cache::Segment::attach(segment);
  cache::Cache cache(seg, cache::SlotRole::tool);
  std::ofstream file;
  if (!out_path.empty()) {
    file.open(out_path, std::ios::out | std::ios::trunc);
    if (!file) throw std::runtime_error("cannot write " + out_path + ": " + std::strerror(errno));
  }
  std::ostream& out = out_path.empty() ? std::cout : file;
  const std::uint32_t now = cache::wall_clock_now();
  write_dump_header(out, now);
  std::uint64_t entries = 0;
  const std::uint64_t malformed = for_each_entry_once(cache, now, WalkOptions{}, [&](cache::EntryReader& e, bool) {
    write_entry_block(out, e, now);
    ++entries;
  });
  out << "; " << entries << " entries\n";
  out.flush();
  if (!out) throw std::runtime_error("writing the dump failed: " + std::string(std::strerror(errno)));
  std::cerr << "dumped " << entries << " entries of segment " << segment << (out_path.empty() ? "" : " to " + out_path)
            << "\n";
  if (malformed) {
    std::cerr << "dnsarena dump: " << malformed << " malformed entries left out (run `dnsarena check " << segment
              << "`)\n";
    return 1;
  }
  return 0;
}

struct RestoreRequest {
  std::string file;
  std::string segment = "dnsarena";
  long long max_entries = -1;
  std::string arena_bytes;
};

cache::Segment attach_or_create(const RestoreRequest& req) {
  try {
    return cache::Segment::attach(req.segment);
  } catch (const cache::SegmentError& e) {
    if (e.kind() != cache::SegmentError::Kind::not_found) throw;
  }
  cache::Geometry g;
  if (req.max_entries > 0) g.max_entries = static_cast<std::uint64_t>(req.max_entries);
  if (!req.arena_bytes.empty()) g.arena_bytes = parse_byte_size(req.arena_bytes, "--arena-bytes");
  std::cerr << "segment " << req.segment << " not found: creating it\n";
  return cache::Segment::open(req.segment, g, cache::OpenPolicy::refuse);
}

int run_restore(const RestoreRequest& req) {
  std::ifstream in(req.file);
  if (!in) throw std::runtime_error("cannot read " + req.file + ": " + std::strerror(errno));
  cache::Segment seg = attach_or_create(req);
  cache::Cache cache(seg, cache::SlotRole::tool);
  cache.set_writer_lock_timeout(std::chrono::seconds(10));
  const std::uint32_t now = cache::wall_clock_now();
  const RestoreCounts c = read_dump(in, req.file, now, [&](const cache::CacheKey& key, const cache::Answer& answer) {
    const cache::InsertStatus st = cache.insert(key, answer, now);
    return st == cache::InsertStatus::inserted || st == cache::InsertStatus::replaced;
  });
  std::cout << "restored " << c.restored << " entries into " << req.segment << " (" << c.expired
            << " expired since the dump, " << c.skipped << " not taken by the cache)\n";
  return c.skipped ? 1 : 0;
}

}  // namespace

void add_dump_command(CLI::App& app) {
  auto [cmd, req] = common::add_command<DumpRequest>(
      app, "dump",
      "Write every live entry of a cache as text (key, remaining TTL, records; docs/operator-guide.md: Operator commands)",
      reporting("dump", run_dump));
  cmd->add_option("segment", req->segment, "Segment name (the file under /dev/shm)")->required();
  cmd->add_option("--out", req->out, "file to write (default: standard output)");
}

void add_restore_command(CLI::App& app) {
  auto [cmd, req] = common::add_command<RestoreRequest>(
      app, "restore", "Load a dump into a cache (live or not), remaining TTLs reduced by the time since the dump",
      reporting("restore", run_restore));
  cmd->add_option("file", req->file, "A file written by `dnsarena dump`")->required();
  cmd->add_option("--segment", req->segment, "segment name (default dnsarena)");
  cmd->add_option("--max-entries", req->max_entries, "capacity when the segment must be created");
  cmd->add_option("--arena-bytes", req->arena_bytes, "arena size (e.g. 256M) when the segment must be created");
}

}  // namespace dnsarena::admin
