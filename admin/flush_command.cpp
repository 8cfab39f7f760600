// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena flush NAME [--type T] [--subtree] [--segment SEG]`: removes entries from a
// live cache, as `unbound-control flush` / `flush_zone` and Knot Resolver's
// cache.clear() do.
//
// The walk and its cost: name_flush.hpp.
#include <iostream>

#include "admin/commands.hpp"
#include "admin/knot_text.hpp"
#include "admin/name_flush.hpp"
#include "admin/run_reporting.hpp"
#include "common/add_command.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::admin {

namespace {

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
  const NameFlush r = flush_name(cache, name, type, req.subtree);
  const std::uint64_t removed = r.removed, skipped = r.skipped;
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
