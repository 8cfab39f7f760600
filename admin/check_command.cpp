// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena check SEGMENT [--json]`: attach (refusing foreign, damaged or other-version
// segments with the reason), walk every invariant, exit 0 only when the segment is sound.
#include <iostream>
#include <nlohmann/json.hpp>

#include "admin/commands.hpp"
#include "cache/segment_check.hpp"

namespace dnsarena::admin {

namespace {

int run_check(const std::string& name, bool json) {
  using namespace dnsarena::cache;
  try {
    Segment seg = Segment::attach(name);
    Cache cache(seg, SlotRole::tool);
    const CheckReport rep = check_segment(cache);
    const CacheStats st = cache.stats();
    if (json) {
      nlohmann::json j{{"segment", name},
                       {"ok", rep.ok()},
                       {"problem_count", rep.problem_count},
                       {"problems", rep.problems},
                       {"repaired", rep.repaired},
                       {"live_entries", rep.live_entries},
                       {"max_entries", st.max_entries},
                       {"entries_walked", rep.entries_walked},
                       {"used_regions", rep.used_regions},
                       {"region_count", seg.layout().region_count},
                       {"bytes_in_use", rep.bytes_in_use},
                       {"segment_bytes", st.segment_bytes}};
      std::cout << j.dump() << "\n";
    } else {
      std::cout << "segment " << name << ": " << (rep.ok() ? "sound" : "DAMAGED") << "\n"
                << "  live entries   " << rep.live_entries << " of " << st.max_entries << "\n"
                << "  entries walked " << rep.entries_walked << " (live and dead) in " << rep.used_regions << " of "
                << seg.layout().region_count << " regions\n"
                << "  bytes in use   " << rep.bytes_in_use << " of " << st.arena_bytes << " arena bytes\n";
      if (rep.repaired) std::cout << "  a writer had died holding the lock; its work was repaired\n";
      for (const auto& p : rep.problems) std::cout << "  problem: " << p << "\n";
      if (rep.problem_count > rep.problems.size())
        std::cout << "  ... and " << rep.problem_count - rep.problems.size() << " more problems\n";
    }
    return rep.ok() ? 0 : 1;
  } catch (const SegmentError& e) {
    if (json) std::cout << nlohmann::json{{"segment", name}, {"ok", false}, {"error", e.what()}}.dump() << "\n";
    else std::cerr << "dnsarena check: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Verify every invariant of a cache segment (exit 0 only when sound)");
  auto name = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("segment", *name, "Segment name (the file under /dev/shm)")->required();
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->callback([name, json] {
    const int rc = run_check(*name, *json);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::admin
