// SPDX-License-Identifier: GPL-3.0-or-later
#include "layouts_report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace dnsarena::sim::layouts {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// 1234567 -> "1,234,567"
std::string grouped(double v) {
  std::string digits = fmt("%.0f", v);
  std::string out;
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[i];
    if (i + 1 < n && (n - i - 1) % 3 == 0 && digits[i] != '-') out += ',';
  }
  return out;
}

const LayoutRow* find(const std::vector<LayoutRow>& rows, const std::string& name) {
  for (const auto& r : rows)
    if (r.layout == name) return &r;
  return nullptr;
}

void check(std::ostream& os, bool ok, const std::string& what) { os << "  [" << (ok ? " ok " : "MISS") << "] " << what << "\n"; }

}  // namespace

void print_table(std::ostream& os, const std::vector<LayoutRow>& rows, const ReportContext& ctx) {
  const TrafficProfile& p = ctx.profile;
  os << "dnsarena-lab sim layouts: " << grouped(static_cast<double>(ctx.entries)) << " entries, seed " << ctx.seed
     << "; mix A " << fmt("%.0f%%", 100 * p.share_a) << ", AAAA " << fmt("%.0f%%", 100 * p.share_aaaa) << ", TXT "
     << fmt("%.0f%%", 100 * p.share_other) << "; ECS " << fmt("%.0f%%", 100 * p.ecs_share) << ", negative "
     << fmt("%.0f%%", 100 * p.negative_share) << ", CNAME " << fmt("%.0f%%", 100 * p.cname_share) << "\n";
  os << "per entry: net = bytes requested (structs, map nodes and buckets, heap data; arena: index + arena in use +\n"
        "fixed), alloc = as the allocator rounds them ("
     << (ctx.alloc_estimate ? "ESTIMATE: glibc-like 16-byte rounding, jemalloc not linked" : "jemalloc nallocx")
     << "), allocs = live allocations.\n"
        "lookup = find + build the DNS response; p50 of single timed lookups of random inserted keys.\n\n";

  char line[256];
  std::snprintf(line, sizeof line, "%-6s %11s %12s %8s %12s %10s   %s\n", "layout", "net B", "alloc B", "allocs",
                "inserts/s", "lookup ns", "| published fleet: net B, alloc B, inserts/s, lookup ns");
  os << line;
  for (const LayoutRow& r : rows) {
    std::snprintf(line, sizeof line, "%-6s %11.1f %12.1f %8.2f %12s %10s", r.layout.c_str(), r.net_bytes, r.alloc_bytes,
                  r.allocs, ctx.speed ? grouped(r.insert_per_s).c_str() : "-",
                  ctx.speed ? fmt("%.0f", r.lookup_ns_p50).c_str() : "-");
    os << line;
    const PublishedFigures* s = r.layout == "v0" ? &kPublishedBefore : r.layout == "v5" ? &kPublishedAfter : nullptr;
    if (s) os << "   | " << grouped(s->net_bytes) << ", " << grouped(s->alloc_bytes) << ", " << grouped(s->insert_per_s) << ", " << grouped(s->lookup_ns);
    os << "\n";
  }

  for (std::size_t i = 0; i < rows.size() && i < ctx.live_entries.size(); ++i)
    if (ctx.live_entries[i] < ctx.entries)
      os << "note: " << rows[i].layout << " holds " << grouped(static_cast<double>(ctx.live_entries[i])) << " of "
         << grouped(static_cast<double>(ctx.entries)) << " entries (the rest lost to index bucket conflicts); "
         << "its figures are per live entry\n";

  const LayoutRow* v0 = find(rows, "v0");
  const LayoutRow* v5 = find(rows, "v5");
  const LayoutRow* arena = find(rows, "arena");
  if (!v0 || !v5) return;
  os << "\nv5 / v0        ours    seed\n";
  auto ratio_line = [&](const char* what, double ours, double theirs) {
    std::snprintf(line, sizeof line, "%-12s %6.2f  %6.2f\n", what, ours, theirs);
    os << line;
  };
  ratio_line("net bytes", v5->net_bytes / v0->net_bytes, kPublishedAfter.net_bytes / kPublishedBefore.net_bytes);
  ratio_line("alloc bytes", v5->alloc_bytes / v0->alloc_bytes, kPublishedAfter.alloc_bytes / kPublishedBefore.alloc_bytes);
  if (ctx.speed) {
    ratio_line("inserts/s", v5->insert_per_s / v0->insert_per_s, kPublishedAfter.insert_per_s / kPublishedBefore.insert_per_s);
    ratio_line("lookup ns", v5->lookup_ns_p50 / v0->lookup_ns_p50, kPublishedAfter.lookup_ns / kPublishedBefore.lookup_ns);
  }

  os << "\ntargets (the layout steps v0..v5 on net bytes, and the arena against them):\n";
  const double share = v5->net_bytes / v0->net_bytes;
  check(os, share >= 0.35 && share <= 0.55, "v5 net bytes within 35%..55% of v0: " + fmt("%.1f%%", 100 * share));
  bool monotone = true;
  std::string steps;
  for (std::size_t i = 0; i < rows.size() && rows[i].layout != "arena"; ++i) {
    if (i > 0 && rows[i].net_bytes > rows[i - 1].net_bytes) monotone = false;
    steps += (i ? " >= " : "") + fmt("%.0f", rows[i].net_bytes);
  }
  check(os, monotone, "each step no worse than the one before on net bytes: " + steps);
  if (!arena) return;
  check(os, arena->net_bytes <= 0.5 * v5->net_bytes,
        "arena net bytes <= 0.5 x v5: " + fmt("%.1f", arena->net_bytes) + " vs " + fmt("%.1f", 0.5 * v5->net_bytes) +
            fmt(" (%.2f x v5)", arena->net_bytes / v5->net_bytes));
  check(os, arena->net_bytes <= 160, "arena net bytes <= 160 B/entry: " + fmt("%.1f", arena->net_bytes));
  if (!ctx.speed) return;
  double best_insert = 0, best_lookup = 1e300;
  for (const LayoutRow& r : rows) {
    if (r.layout == "arena") continue;
    best_insert = std::max(best_insert, r.insert_per_s);
    best_lookup = std::min(best_lookup, r.lookup_ns_p50);
  }
  check(os, arena->insert_per_s > best_insert,
        "arena inserts faster than every heap layout: " + grouped(arena->insert_per_s) + "/s vs best heap " + grouped(best_insert) + "/s");
  check(os, arena->lookup_ns_p50 < best_lookup,
        "arena lookups faster than every heap layout: " + fmt("%.0f", arena->lookup_ns_p50) + " ns vs best heap " + fmt("%.0f", best_lookup) + " ns");
}

nlohmann::json rows_json(const std::vector<LayoutRow>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const LayoutRow& r : rows)
    a.push_back({{"layout", r.layout},
                 {"net_bytes", r.net_bytes},
                 {"alloc_bytes", r.alloc_bytes},
                 {"allocs", r.allocs},
                 {"insert_per_s", r.insert_per_s},
                 {"lookup_ns_p50", r.lookup_ns_p50}});
  return a;
}

}  // namespace dnsarena::sim::layouts
