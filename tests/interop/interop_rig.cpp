// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/interop/interop_rig.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "cache/stat_slots.hpp"

namespace dnsarena::interop {

namespace {

// The TTL that decides whether an answer may be cached, and for how long: the smallest
// of the answer and authority records (a chain's links, a negative answer's SOA, a
// referral's NS). UINT32_MAX when both sections are empty.
std::uint32_t deciding_ttl(const Reply& r) {
  std::uint32_t t = UINT32_MAX;
  for (const auto* sec : {&r.answer, &r.authority})
    for (const Record& a : *sec) t = std::min(t, a.ttl);
  return t;
}

}  // namespace

unsigned env_unsigned(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : fallback;
}

std::vector<QueryShape> udp_shapes() {
  std::vector<QueryShape> s{QueryShape{}};
  for (std::uint16_t size : {512, 1232, 4096})
    for (bool d : {false, true}) s.push_back(QueryShape{true, size, d});
  return s;
}

Rig::Rig(std::uint64_t seed, unsigned names)
    : zones_(generate_zones(seed, names)), segment_(test::unique_segment("interop")), rng_(seed ^ 0x20) {
  // NOTE: the free port may be taken by another test between the pick and knotd's bind
  // (the machine runs several suites at once): a few attempts, each on a new port.
  for (int attempt = 1;; ++attempt) {
    knot_ = std::make_unique<KnotServer>(zones_.zones);  // stops the previous one, if any
    if (knot_->wait_ready()) break;
    if (attempt == 3) throw std::runtime_error("knotd did not serve the zones:\n" + knot_->log());
  }
  port_ = test::free_port();
  // Policy written out rather than assumed: TTL floor 0, so that TTL 0 stays 0; the
  // ceilings above every generated TTL (one day) and negative TTL (300 s); no rate limit.
  const std::string config = knot_->dir() + "/serve.yaml";
  std::ofstream(config) << "ttl: {floor: 0, ceiling: 86400, negative_ceiling: 3600}\n"
                         << "rate_limit: {responses_per_second: 0}\n"  // thousands of queries from 127.0.0.1
                         << "max_udp_size: 4096\n";  // as knotd's udp-max-payload (knot_server.hpp)
  serve_ = std::make_unique<test::ServeProcess>(
      std::vector<std::string>{"--config", config, "--listen", "127.0.0.1:" + std::to_string(port_), "--upstream",
                               "127.0.0.1:" + std::to_string(knot_->port()), "--segment", segment_, "--workers", "2",
                               "--max-entries", "200000", "--arena-bytes", "64M", "--upstream-timeout-ms", "1000",
                               "--no-metrics", "--log-level", "warn"},
      port_);
  if (!serve_->wait_ready()) {
    const std::string log = serve_->log();
    serve_.reset();
    cache::Segment::remove(segment_);
    throw std::runtime_error("dnsarena serve did not start:\n" + log);
  }
  seg_ = std::make_unique<cache::Segment>(cache::Segment::attach(segment_));
}

Rig::~Rig() {
  seg_.reset();
  serve_.reset();
  cache::Segment::remove(segment_);
}

std::uint64_t Rig::upstream_queries() const {
  std::uint64_t n = 0;
  for (std::uint32_t i = 0; i < seg_->layout().stat_slots; ++i)
    n += seg_->stat_slots()[i].get(cache::Counter::upstream_queries);
  return n;
}

Reply Rig::query_dnsarena(const std::vector<std::uint8_t>& query, const QueryShape& shape) const {
  return parse_reply(shape.tcp ? test::tcp_exchange(port_, query).wire : test::udp_exchange(port_, query).wire);
}

Reply Rig::query_knot(const std::vector<std::uint8_t>& query, const QueryShape& shape) const {
  const std::uint16_t p = knot_->port();
  return parse_reply(shape.tcp ? test::tcp_exchange(p, query).wire : test::udp_exchange(p, query).wire);
}

void Rig::ask(const Question& q, const QueryShape& shape, MismatchTable& table) {
  const std::string qname = random_case(q.qname, rng_);
  const std::vector<std::uint8_t> query = build_query(next_id(), qname, q.qtype, shape);
  const std::string where = qname + " " + type_name(q.qtype) + " " + shape.describe() + " [" + q.kind + "] ";
  QueryShape tcp = shape;
  tcp.tcp = true;

  const Reply knot = query_knot(query, shape);
  if (!knot.parsed) {
    table.add("knotd gave no usable reply (test setup)", where);
    return;
  }
  Reply knot_tcp;  // asked only when some UDP reply has TC
  if (knot.tc()) knot_tcp = query_knot(query, tcp);
  const Reply& knot_full = knot.tc() ? knot_tcp : knot;

  const Reply first = query_dnsarena(query, shape);
  const std::uint64_t u1 = upstream_queries();
  const Reply second = query_dnsarena(query, shape);
  const std::uint64_t u2 = upstream_queries();
  for (const auto& [label, got] : {std::pair<const char*, const Reply*>{"first", &first}, {"second", &second}}) {
    table.compared();
    for (const Mismatch& m : compare_replies(query, shape, knot, knot_full, *got))
      table.add(m.category, where + label + ": " + m.detail);
  }
  if (knot.tc() || first.tc() || second.tc()) {
    if (!knot.tc()) knot_tcp = query_knot(query, tcp);
    const Reply got = query_dnsarena(query, tcp);
    table.compared();
    for (const Mismatch& m : compare_replies(query, tcp, knot_tcp, knot_tcp, got))
      table.add(m.category, where + "then over TCP: " + m.detail);
  }

  const bool complete = knot_full.parsed && !knot_full.tc() && (knot_full.rcode == 0 || knot_full.rcode == 3);
  const std::uint32_t ttl = deciding_ttl(knot_full);
  const bool second_went_upstream = u2 > u1;
  if (!complete || second.tc() || !second.parsed) return;
  if (ttl == 0 && !second_went_upstream)
    table.add("TTL-0 answer served from cache", where + "second query answered without asking knotd");
  // NOTE: TTL 1-2 s is not judged: dnsarena's clock counts whole seconds, so such an
  // entry may rightly expire between the two queries.
  if (ttl > 2 && ttl != UINT32_MAX && second_went_upstream)
    table.add("not cached [" + q.kind + "]", where + "second query went upstream; knot TTL " + std::to_string(ttl));
}

}  // namespace dnsarena::interop
