// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/rpz_blocklist.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "policy/policy_config.hpp"

namespace dnsarena::bench {

namespace {
constexpr const char* kOrigin = "rpz.bench.";
}  // namespace

std::string blocked_name(std::size_t i) {
  return "b" + std::to_string(i) + ".l" + std::to_string(i % 1000) + ".zone";
}

RpzFile write_rpz_blocklist(const std::string& dir, std::size_t rules) {
  RpzFile f{std::filesystem::absolute(dir + "/blocklist.rpz").string(), kOrigin, rules};
  std::ofstream out(f.path);
  out << "$ORIGIN " << kOrigin << "\n$TTL 300\n"
      << "@ SOA ns.rpz.bench. admin.rpz.bench. 1 3600 600 86400 300\n@ NS ns.rpz.bench.\n";
  for (std::size_t i = 0; i < rules; ++i) out << blocked_name(i) << " CNAME .\n";
  out.close();
  if (!out) throw std::runtime_error("cannot write " + f.path);
  return f;
}

RpzFile read_rpz_file(const std::string& path) {
  policy::PolicyConfig cfg;
  cfg.rpz.push_back({std::filesystem::absolute(path).string(), ""});
  try {
    const policy::CompiledPolicy c = policy::compile_policy_config(cfg);
    if (c.zones.empty()) throw std::runtime_error(path + ": no zone read");
    std::string origin = c.zones.front().name;
    if (origin.empty() || origin.back() != '.') origin += '.';
    return {cfg.rpz.front().file, origin, c.rules};
  } catch (const policy::PolicyError& e) {
    throw std::runtime_error(e.what());
  }
}

std::size_t mix_blocked_queries(const std::string& in, const std::string& out, std::size_t rules, unsigned percent,
                                std::uint64_t seed) {
  std::ifstream src(in);
  std::ofstream dst(out);
  if (!src || !dst) throw std::runtime_error("cannot rewrite " + in + " as " + out);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<unsigned> hundred(0, 99);
  std::uniform_int_distribution<std::size_t> pick(0, rules ? rules - 1 : 0);
  std::size_t replaced = 0;
  std::string line;
  while (std::getline(src, line)) {
    if (rules && hundred(rng) < percent) {
      dst << blocked_name(pick(rng)) << " A\n";
      ++replaced;
    } else {
      dst << line << "\n";
    }
  }
  dst.close();
  if (!dst) throw std::runtime_error("cannot write " + out);
  return replaced;
}

}  // namespace dnsarena::bench
