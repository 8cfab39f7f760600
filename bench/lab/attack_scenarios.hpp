// SPDX-License-Identifier: GPL-3.0-or-later
// The scenarios of `dnsarena-lab bench attack`: `dnsarena serve` on a hostile network,
// one file each (attack_<scenario>.cpp), and what they share: the options, the row each
// judged figure becomes, what a scenario is given (AttackContext), the serve it attacks
// and the paced UDP load it sends (attack_shared.cpp).
//
// Every scenario starts its own serve (2 workers, a private segment removed at the end,
// loopback only) with forward zones to peers in this process (attack_peers.hpp):
//   real.  -> AuthUpstream: answers every A name with an address known in advance
//   hole.  -> BlackHole: never answers (only the flood scenario)
// Bounds: every load, spoofer and wait has a count and a deadline; children are
// ChildProcess objects (stopped by their destructor on every path, SIGKILL after 5 s) and
// segments are removed by serve itself (--remove-segment) and again here. SIGINT/SIGTERM
// set AttackContext::interrupted, which ends the loads early; the scenario then unwinds
// and cleans up.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/lab/attack_peers.hpp"
#include "bench/lab/serve_process.hpp"

namespace dnsarena::bench {

struct AttackOptions {
  bool quick = false;
  bool json = false;
  bool check = false;
  std::string only;  // one scenario by name
  std::string baseline_binary;
  std::string serve_config;  // given to every serve this run starts (`-c FILE`), to compare settings
  unsigned pipeline_queries = 10000;
  unsigned slow_clients = 2000;
  double slow_seconds = 20;
  double flood_rate = 5000;
  double flood_seconds = 60;
  unsigned spoof_names = 10000;
  std::uint64_t spoof_forged = 1000000;
  double spoof_seconds = 10;
  std::uint64_t fill_names = 1000000;
  double fill_rate = 10000;
  double hit_rate = 20000;
  double hit_seconds = 5;
  unsigned hit_rounds = 3;
  // Every figure small: the whole run in under a minute (the ctest).
  void make_quick();
};

// One judged figure: a row of the table, an element of the JSON's "rows".
struct AttackRow {
  std::string scenario, figure, target;
  std::optional<bool> met;    // nullopt: not measured (said why in figure)
  bool timing_free = false;   // a target --check asserts
  nlohmann::json detail;
};

// What a scenario is given.
struct AttackContext {
  const AttackOptions& options;
  std::string binary;  // the dnsarena program whose serve is attacked
  std::string dir;     // scratch: serve logs
  const std::atomic<bool>& interrupted;  // set by SIGINT/SIGTERM: loads stop early
};

// One `dnsarena serve` from `binary` with 2 workers, forward zones real. (and hole. when
// given), and the run's --serve-config.
class AttackServe : public ServeProcess {
public:
  AttackServe(const AttackContext& ctx, const std::string& binary, const std::string& tag, std::uint16_t real_port,
              std::uint16_t hole_port = 0, std::uint64_t max_entries = 200000, const std::string& arena = "64M");
};

using NameFn = std::function<std::vector<std::uint8_t>(std::uint64_t)>;
// Name i is <prefix><i>.<zone> (i % modulo when modulo is not 0), in wire form.
NameFn numbered_names(const std::string& prefix, const std::string& zone, std::uint64_t modulo = 0);

// run_load of `count` names at `rate`, stopped by ctx.interrupted.
LoadResult attack_load(const AttackContext& ctx, std::uint16_t port, std::uint64_t count, double rate, NameFn name,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(3000),
                       std::function<void(std::uint64_t, const std::uint8_t*, std::size_t)> on_reply = {},
                       std::atomic<std::uint64_t>* sent = nullptr);
nlohmann::json load_result_json(const LoadResult& r);

// Appends `message` to `out` with its TCP length prefix (RFC 1035 4.2.2).
void append_tcp_frame(std::vector<std::uint8_t>& out, const std::vector<std::uint8_t>& message);

// The host's UDP datagrams dropped for a full receive buffer so far (/proc/net/snmp
// Udp RcvbufErrors): a loss inside the kernel, whoever's socket it was.
std::uint64_t udp_rcvbuf_errors();

// What serve counted that explains a SERVFAIL (empty when its counters were not read).
std::string serve_summary(const nlohmann::json& totals);

// tcp-pipeline  one TCP client pipelines N queries and never reads: growth of the largest
//               worker RSS (target < 8 MiB).
std::vector<AttackRow> run_tcp_pipeline_scenario(const AttackContext& ctx);
// tcp-slow      N slow clients (one byte every 3 s, each from its own 127.1.x.y address)
//               while a normal TCP query is made every second: all answered.
std::vector<AttackRow> run_tcp_slow_scenario(const AttackContext& ctx);
// flood         random-subdomain flood at R q/s at hole. for S s, while legitimate hits
//               (500 q/s over 1,000 cached names) and misses (50 q/s of new names under
//               real.) run: workers' descriptors stay under their limit, hits answered
//               >= 99.9%, misses answered >= 99.9% (three rows: flood-fds, flood-hits,
//               flood-misses).
std::vector<AttackRow> run_flood_scenario(const AttackContext& ctx);
// spoof         an off-path attacker (raw socket, source = the upstream's address and
//               port) sends F forged answers to random ports with random IDs for the
//               names just asked, while the resolver resolves N names (real upstream
//               20 ms away; name i is asked once i/N of the forged answers are out, so
//               the race holds whatever rate the attacker reaches); then every name is
//               asked again: 0 forged records cached.
std::vector<AttackRow> run_spoof_scenario(const AttackContext& ctx);
// fill          all-miss fill of N names at R q/s: 0 SERVFAIL, 0 lost.
std::vector<AttackRow> run_fill_scenario(const AttackContext& ctx);
// cpu-per-hit   workers' CPU time per answered hit at a fixed rate; with
//               --baseline-binary, the same for that binary, interleaved --hit-rounds
//               times, and the ratio of medians (target <= 1.05).
std::vector<AttackRow> run_cpu_per_hit_scenario(const AttackContext& ctx);

}  // namespace dnsarena::bench
