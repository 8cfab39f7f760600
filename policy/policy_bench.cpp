// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/policy_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <random>
#include <vector>

#include "policy/answer_chain.hpp"
#include "policy/policy_compiler.hpp"
#include "policy/rpz_reader.hpp"
#include "policy/sealed_image.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr const char* kTlds[] = {"com", "net", "org", "io", "de", "info", "xyz", "example"};
constexpr std::size_t kDomains = 1000;

std::string random_label(std::mt19937_64& rng, char first) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s(1, first);
  const std::size_t len = 6 + rng() % 9;
  for (std::size_t i = 0; i < len; ++i) s += kAlphabet[rng() % 36];
  return s;
}

std::string domain(std::mt19937_64& rng) {
  const std::uint64_t d = rng() % kDomains;
  return "d" + std::to_string(d) + "." + kTlds[d % 8];
}

// Names as one flat buffer of wire names, each with 8 bytes of slack for the lookup.
struct NameList {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint32_t> offset;
  void add(const std::string& text) {
    const auto w = wire::name_to_wire(text);
    offset.push_back(static_cast<std::uint32_t>(bytes.size()));
    bytes.insert(bytes.end(), w.begin(), w.end());
  }
  std::size_t size() const { return offset.size(); }
  std::span<const std::uint8_t> operator[](std::size_t i) const {
    const std::size_t end = i + 1 < offset.size() ? offset[i + 1] : bytes.size();
    return {bytes.data() + offset[i], end - offset[i]};
  }
};

// Mean ns per lookup over `rounds` passes of `names`; `found` counts matches.
double time_lookups(const PolicyView& view, const NameList& names, std::size_t total, std::size_t& found) {
  found = 0;
  const auto t = Clock::now();
  for (std::size_t i = 0; i < total; ++i)
    if (view.find(names[i % names.size()])) ++found;
  return seconds_since(t) * 1e9 / static_cast<double>(total);
}

// An answer as the cache's response writer lays it out for `qname` (A): header, question,
// [qname CNAME target,] one A owned by the last name, OPT last.
std::vector<std::uint8_t> answer_message(std::span<const std::uint8_t> qname, std::span<const std::uint8_t> target) {
  std::vector<std::uint8_t> m = {0x12, 0x34, 0x81, 0x80, 0, 1, 0, target.empty() ? std::uint8_t{1} : std::uint8_t{2},
                                 0, 0, 0, 1};
  m.insert(m.end(), qname.begin(), qname.end());
  m.insert(m.end(), {0, 1, 0, 1});
  std::size_t owner = 12;
  if (!target.empty()) {
    m.insert(m.end(), {0xC0, 12, 0, 5, 0, 1, 0, 0, 1, 0x2C, 0, static_cast<std::uint8_t>(target.size())});
    owner = m.size();
    m.insert(m.end(), target.begin(), target.end());
  }
  m.insert(m.end(), {static_cast<std::uint8_t>(0xC0 | owner >> 8), static_cast<std::uint8_t>(owner), 0, 1, 0, 1, 0, 0,
                     1, 0x2C, 0, 4, 192, 0, 2, 1});
  m.insert(m.end(), {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0});
  return m;
}

// Mean ns per chain check over `messages`; `found` counts answers a rule matched (none
// should: a match would rewrite the message in place, and these names have no rule).
[[gnu::noinline]] double time_chain(const PolicyView& view, std::vector<std::vector<std::uint8_t>>& messages, std::size_t total,
                  std::size_t& found) {
  found = 0;
  std::vector<std::size_t> qname_len;  // the worker knows it from the query
  for (const std::vector<std::uint8_t>& m : messages) qname_len.push_back(wire::skip_wire_name(m, 12) - 12);
  const auto t = Clock::now();
  for (std::size_t i = 0, j = 0; i < total; ++i, j = j + 1 == messages.size() ? 0 : j + 1) {
    std::vector<std::uint8_t>& m = messages[j];
    const std::size_t len = qname_len[j];
    // As the worker does (workers/policy_gate.hpp): the inline test, then the walk.
    if (answer_needs_check(view, m.data(), m.size(), len) &&
        check_answer_chain(view, 1, len, 1232, m.data(), m.size(), m.size()).match)
      ++found;
  }
  return seconds_since(t) * 1e9 / static_cast<double>(total);
}

}  // namespace

PolicyBenchResult run_policy_bench(const PolicyBenchOptions& o) {
  PolicyBenchResult r;
  std::mt19937_64 rng(o.seed);
  const std::string path = o.dir + "/dnsarena-policy-bench-" + std::to_string(::getpid()) + ".rpz";
  NameList match;
  {
    std::ofstream out(path);
    out << "$TTL 300\n@ SOA ns.rpz.bench. admin.rpz.bench. 1 3600 600 86400 300\n@ NS ns.rpz.bench.\n";
    for (std::size_t i = 0; i < o.rules; ++i) {
      const bool wildcard = rng() % 10 == 0;
      const std::string name = random_label(rng, wildcard ? 'w' : 'r') + "." + domain(rng);
      const unsigned a = rng() % 20;
      const char* rdata = a < 14 ? "CNAME ." : a < 16 ? "CNAME *." : a < 17 ? "CNAME rpz-passthru." : a < 18 ? "CNAME rpz-drop." : "A 192.0.2.1";
      out << (wildcard ? "*." : "") << name << " " << rdata << "\n";
      if (match.size() < o.lookups) match.add(wildcard ? "www." + name : name);
    }
    r.zone_file_bytes = static_cast<std::size_t>(out.tellp());
  }
  auto t = Clock::now();
  RuleSet rules;
  rules.reserve(o.rules);
  try {
    read_rpz_file({path, "rpz.bench"}, rules);
  } catch (...) {
    std::remove(path.c_str());
    throw;
  }
  std::remove(path.c_str());
  r.parse_s = seconds_since(t);
  t = Clock::now();
  const std::vector<std::uint8_t> image = compile_policy(rules);
  r.compile_s = seconds_since(t);
  r.total_s = r.parse_s + r.compile_s;
  r.rules = rules.rules().size();
  r.image_bytes = image.size();
  r.bytes_per_rule = r.rules ? static_cast<double>(image.size()) / static_cast<double>(r.rules) : 0;
  const SealedImage sealed(image);

  NameList no_match, hot;
  for (std::size_t i = 0; i < o.lookups; ++i) {
    const std::string name = random_label(rng, 'q') + "." + domain(rng);
    no_match.add(i % 2 ? "www." + name : name);
    if (hot.size() < 1000) hot.add(i % 2 ? "www." + name : name);
  }
  std::size_t found = 0;
  time_lookups(sealed.view(), hot, hot.size(), found);  // warm the code
  r.no_match_ns = time_lookups(sealed.view(), no_match, no_match.size(), found);
  r.no_match_found = found;
  r.no_match_hot_ns = time_lookups(sealed.view(), hot, o.lookups, found);
  r.no_match_found += found;
  r.match_ns = time_lookups(sealed.view(), match, match.size(), found);
  r.match_missed = match.size() - found;

  std::vector<std::vector<std::uint8_t>> plain, cname;
  // 200,000 distinct CNAME answers (26 MB) are enough to read the image from memory.
  for (std::size_t i = 0; i < no_match.size() && cname.size() < 200'000; ++i) {
    if (plain.size() < 1000) plain.push_back(answer_message(no_match[i], {}));
    cname.push_back(answer_message(no_match[i], no_match[(i + 1) % no_match.size()]));
  }
  r.chain_plain_ns = time_chain(sealed.view(), plain, o.lookups, found);
  r.no_match_found += found;
  r.chain_cname_ns = time_chain(sealed.view(), cname, cname.size(), found);
  r.no_match_found += found;
  r.chain_plain_share = o.hit_ns > 0 ? r.chain_plain_ns / o.hit_ns : 0;
  return r;
}

}  // namespace dnsarena::policy
