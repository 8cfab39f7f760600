// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/supervisor.hpp"

#include <signal.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <spdlog/spdlog.h>
#include <tuple>
#include <vector>

#include "cache/cache.hpp"
#include "cache/segment_migration.hpp"
#include "common/proc_stats.hpp"
#include "common/process_limits.hpp"
#include "policy/policy_config.hpp"
#include "policy/sealed_image.hpp"
#include "policy/zone_file_watch.hpp"
#include "wire/dns_name.hpp"
#include "workers/listen_port_check.hpp"
#include "workers/metrics_process.hpp"
#include "workers/authority_rate.hpp"
#include "workers/rate_limit_table.hpp"
#include "workers/retirement_wait.hpp"
#include "workers/local_root.hpp"
#include "workers/local_root_updater.hpp"
#include "workers/rpz_transfer_process.hpp"
#include "workers/server_cookies.hpp"
#include "workers/trust_anchor_updater.hpp"
#include "workers/service_notify.hpp"
#include "workers/upstream_client.hpp"
#include "workers/infra_snapshot.hpp"
#include "workers/infra_table.hpp"
#include "workers/upstream_health.hpp"
#include "workers/upstream_snapshot.hpp"
#include "workers/ad_trust.hpp"
#include "workers/answer_snapshot.hpp"
#include "workers/mrc_report.hpp"
#include "workers/worker.hpp"

namespace dnsarena::workers {

namespace {

struct WorkerProc {
  pid_t pid = 0;
  std::uint64_t started_ms = 0;
  std::uint64_t restart_at_ms = 0;  // when pid == 0: fork at this time
  unsigned backoff_ms = 0;
  int beat_fd = -1;                 // read end of the worker's heartbeat pipe
  std::uint64_t last_beat_ms = 0;
  bool killed_silent = false;       // we killed it for not beating
  unsigned in_flight_row = 0;       // its row of the in-flight names table (WorkerSockets)
};

// The descriptor ceiling we raise the soft limit to (never above the hard limit). Each
// worker holds up to tcp.max_connections client sockets plus one socket per upstream
// query in flight; 65,536 is far above both at their defaults while keeping a runaway
// leak visible (and select()-era tools sane) on hosts whose hard limit is 1M or infinite.
constexpr rlim_t kNofileCeiling = 65536;

// Raises RLIMIT_NOFILE's soft limit to min(hard, kNofileCeiling) before the workers are
// forked (they inherit it): the default soft limit of 1,024 is what a flood of misses or
// TCP clients exhausts first.
void raise_nofile_limit() {
  const common::NofileChange c = common::raise_nofile_soft_limit(kNofileCeiling);
  if (c.failed)
    spdlog::warn("file descriptors: cannot raise the soft limit from {}: {}", c.before, std::strerror(errno));
  else if (c.after != c.before)
    spdlog::info("file descriptors: soft limit raised from {} to {} (hard limit {})", c.before, c.after,
                 c.hard == RLIM_INFINITY ? std::string("unlimited") : std::to_string(c.hard));
}

// Compiles the config's response policy (the default local zones included) into a sealed
// read-only image, or nullptr when it has no rule; `zone_names` gets the name of each of
// its zones, in order: the origin of an RPZ zone, "local" for the config's local zone,
// "default" for the default local zones. Throws policy::PolicyError ("FILE:LINE: what").
std::shared_ptr<const policy::SealedImage> load_policy(const policy::PolicyConfig& cfg,
                                                       std::vector<std::string>& zone_names) {
  const auto t = std::chrono::steady_clock::now();
  timespec cpu0{}, cpu1{};  // the compile's CPU time: the wall time says little on a loaded host
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
  const policy::CompiledPolicy c = policy::compile_policy_config(cfg);
  zone_names.clear();
  if (c.rules == 0) return nullptr;
  for (const policy::ZoneReport& z : c.zones)
    zone_names.push_back(z.origin.empty() ? z.name : wire::wire_to_text({z.origin.data(), z.origin.size()}));
  auto image = std::make_shared<const policy::SealedImage>(c.image);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
  const double cpu_s = static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) + 1e-9 * static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec);
  for (const policy::ZoneReport& z : c.zones)
    spdlog::info("policy zone {} ({}): {} rules, {} unsupported skipped, {} shadowed", z.name, z.source, z.rules,
                 z.unsupported, z.shadowed);
  spdlog::info("policy: {} rules in {} zones, image {} bytes, compiled in {:.3f} s ({:.3f} s CPU)", c.rules,
               c.zones.size(), c.image.size(), s, cpu_s);
  return image;
}

// Names the policy counters' zones (policy_counters.hpp) after the policy's zones
// (load_policy's `zone_names`), before workers forked on that policy count in them.
void name_policy_zones(AnswerMetrics* metrics, const std::vector<std::string>& zone_names) {
  if (metrics) metrics->policy().set_zone_names(zone_names);
}

// A watch of the policy's RPZ files from what they look like now, to be taken before they
// are read (a change during the compile is then seen); nullptr: no file, or watching off.
std::unique_ptr<policy::ZoneFileWatch> watch_policy_files(const policy::PolicyConfig& cfg) {
  std::vector<std::string> files;
  for (const policy::RpzZoneConfig& z : cfg.rpz)
    if (!z.transferred) files.push_back(z.file);  // a transferred zone's file: kRpzTransferSignal
  if (files.empty() || cfg.watch_interval_ms == 0) return nullptr;
  return std::make_unique<policy::ZoneFileWatch>(std::move(files), cfg.watch_interval_ms);
}

// The tables every worker of the host shares (anonymous shared mappings made before the
// first fork, inherited by every worker forked later; InFlightNames::kRowsPerWorkerIndex
// rows per worker index: reload_workers).
struct HostTables {
  HostTables(unsigned workers)
      : names(InFlightNames::kRowsPerWorkerIndex * workers, true),
        failures(FailureCache::kDefaultBuckets, true),
        claims(InFlightNames::kRowsPerWorkerIndex * workers, UpstreamClaims::kDefaultSlots, true),
        answer_slots(AnswerSlots::kDefaultSlots, true),
        ad_trust(true),
        nsec_ranges(NsecRanges::kDefaultBuckets, true),
        infra(InfraTable::kDefaultBuckets, true),
        authority_rates(AuthorityRate::kBuckets, true) {}
  InFlightNames names;
  FailureCache failures;
  UpstreamClaims claims;
  AnswerSlots answer_slots;  // what a claim fetched and the cache did not take (answer_slots.hpp)
  AdTrustCut ad_trust;       // which cached AD bits the config in force vouches for (ad_trust.hpp)
  NsecRanges nsec_ranges;    // validated NSEC ranges, RFC 8198 (nsec_ranges.hpp)
  InfraTable infra;          // the recursive workers' server state (infra_table.hpp)
  RateLimitTable authority_rates;  // queries per second to each authoritative (authority_rate.hpp)
  // Run-time negative trust anchors (common/nta_table.hpp): the segment's file, opened
  // (made if absent) once validating (open_nta_table). nullptr: not validating, or it
  // could not be opened (logged; the config's NTAs only).
  std::unique_ptr<common::NtaTable> ntas;
  // Made at start and replaced by a reload only when its size changes (host_rate_limit_table).
  std::unique_ptr<RateLimitTable> rate_limits;
  UpstreamHealth* health = nullptr;  // the supervisor's (upstream_health_): mapped earlier, for /metrics
  AnswerMetrics* answers = nullptr;  // the supervisor's (answer_metrics_), likewise
  // Server cookie secrets: made at start, changed only by a reload that names a new one
  // (server_cookies.hpp); plain memory, copied into each worker by fork.
  dns::CookieSecrets cookie_secrets;
  // The compiled response policy, read-only (policy/sealed_image.hpp); replaced by a
  // reload whose policy compiles. nullptr: none configured.
  std::shared_ptr<const policy::SealedImage> policy;
};

// The segment's run-time negative trust anchor table, when validating and not open yet:
// opened (made if absent) before workers are forked, so they inherit the mapping. A
// table that cannot be opened is logged; the config's NTAs alone apply.
void open_nta_table(HostTables& host, const ServeConfig& cfg) {
  if (host.ntas || !cfg.dnssec.validating()) return;
  try {
    host.ntas = std::make_unique<common::NtaTable>(common::NtaTable::open(cfg.segment, true));
  } catch (const common::NtaTableError& e) {
    spdlog::error("run-time negative trust anchors unavailable: {}", e.what());
  }
}

// The supervisor's listening sockets, per listen address (cfg.listen's order): one UDP
// socket per worker index and one TCP listener.
struct ListenSockets {
  std::vector<std::vector<int>> udp;  // [address][worker index]
  std::vector<bool> pktinfo;          // [address]: a wildcard (udp_pktinfo.hpp)
  std::vector<int> tcp;               // [address]
  std::vector<int> tls;               // [tls.listen address]: DoT listeners
  std::vector<int> doh;               // [https.listen address]: DoH listeners
};

// Forks worker `index` on its UDP sockets and the shared TCP listeners, with a fresh
// heartbeat pipe. The sockets stay the supervisor's (see WorkerSockets).
void spawn(const ServeConfig& cfg, unsigned index, const sigset_t& old_mask, const ListenSockets& listen,
           HostTables& host, const TlsServerSettings* tls, WorkerProc& w) {
  int beat[2] = {-1, -1};
  if (::pipe2(beat, O_CLOEXEC | O_NONBLOCK) != 0) spdlog::warn("worker {}: no heartbeat pipe: {}", index, std::strerror(errno));
  std::fflush(nullptr);
  spdlog::default_logger()->flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The retire signal stays blocked until the worker's loop waits for it (worker.hpp):
    // a reload right after this fork cannot end the worker before its handler is set.
    sigset_t worker_mask = old_mask;
    ::sigaddset(&worker_mask, kRetireSignal);
    ::sigprocmask(SIG_SETMASK, &worker_mask, nullptr);
    std::vector<UdpListener> udp;
    for (std::size_t a = 0; a < listen.udp.size(); ++a) {
      for (unsigned i = 0; i < listen.udp[a].size(); ++i)
        if (i != index) ::close(listen.udp[a][i]);  // another worker's queue is not ours to read
      udp.push_back({listen.udp[a][index], listen.pktinfo[a]});
    }
    if (beat[0] >= 0) ::close(beat[0]);
    int rc = kWorkerExitConfig;
    try {
      WorkerSockets sockets{std::move(udp), listen.tcp, listen.tls, tls, beat[1], &host.names, w.in_flight_row,
                            &host.failures, &host.claims, host.rate_limits.get(), host.health, host.answers,
                            &host.cookie_secrets, host.policy ? &host.policy->view() : nullptr};
      sockets.doh = listen.doh;
      sockets.answer_slots = &host.answer_slots;
      sockets.ad_trust = &host.ad_trust;
      sockets.nsec_ranges = &host.nsec_ranges;
      sockets.infra = &host.infra;
      sockets.authority_rates = &host.authority_rates;
      sockets.ntas = host.ntas.get();
      rc = run_worker(cfg, index, sockets);
    } catch (const std::exception& e) {
      spdlog::error("worker {}: {}", index, e.what());
      rc = 1;
    }
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  if (beat[1] >= 0) ::close(beat[1]);
  if (w.beat_fd >= 0) ::close(w.beat_fd);
  w.beat_fd = beat[0];
  w.pid = pid;
  w.started_ms = w.last_beat_ms = common::monotonic_ms();
  w.killed_silent = false;
}

// Reads every heartbeat byte waiting; kills a worker silent for longer than the timeout
// (stopped, traced, frozen or hung): its death is then handled as any other, and its
// replacement resumes the same UDP socket. Returns how many were killed.
unsigned check_heartbeats(const ServeConfig& cfg, std::vector<WorkerProc>& workers) {
  unsigned killed = 0;
  const std::uint64_t t = common::monotonic_ms();
  for (unsigned i = 0; i < workers.size(); ++i) {
    WorkerProc& w = workers[i];
    if (w.pid <= 0 || w.beat_fd < 0) continue;
    char buf[64];
    while (::read(w.beat_fd, buf, sizeof buf) > 0) w.last_beat_ms = t;
    if (cfg.heartbeat_timeout_ms == 0 || w.killed_silent || t - w.last_beat_ms <= cfg.heartbeat_timeout_ms) continue;
    spdlog::error("worker {} (pid {}) stopped answering: no heartbeat for {} ms; killing it", i, w.pid,
                  t - w.last_beat_ms);
    ::kill(w.pid, SIGKILL);
    w.killed_silent = true;
    ++killed;
  }
  return killed;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                  strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

// The slot the dead worker used: role worker, its index, preferably still marked with its pid.
cache::StatSlot* slot_of(cache::Segment& seg, unsigned index, pid_t pid) {
  cache::StatSlot* fallback = nullptr;
  for (std::uint32_t i = 0; i < seg.layout().stat_slots; ++i) {
    cache::StatSlot& s = seg.stat_slots()[i];
    if (s.role != static_cast<std::uint32_t>(cache::SlotRole::worker) || s.worker_index != index) continue;
    if (s.owner_pid.load(std::memory_order_relaxed) == static_cast<std::uint32_t>(pid)) return &s;
    if (!fallback) fallback = &s;
  }
  return fallback;
}

// One run of the service: what run_supervisor's steps share. Each step is named for
// what it does; run() lists them in order.
class Supervisor {
public:
  Supervisor(const ServeConfig& cfg, const SupervisorOptions& opt) : cfg_(cfg), opt_(opt) {}
  int run();

private:
  // DoT: reads the certificate and key and makes the session ticket key, before the
  // segment is touched. False (logged) when they cannot be used.
  bool load_tls();
  // At a reload: the new certificate and key, or (logged) the running ones kept.
  void reload_tls();
  const TlsServerSettings* tls_settings() const { return tls_credentials_ ? &tls_settings_ : nullptr; }
  bool open_segment();
  bool open_listening_sockets();
  void block_signals();
  // The workers' shared upstream health table (upstream_health.hpp), mapped before
  // /metrics (which reads it) and the first fork, with a row for every upstream.
  void map_upstream_health();
  // The workers' latency histograms and answer counts (answer_metrics.hpp), likewise
  // mapped before /metrics and the first fork: three rows per worker index.
  void map_answer_metrics();
  // The miss-ratio curves (miss_ratio_curves.hpp), of the segment's geometry, made
  // before /metrics and the first fork and handed to the workers by set_host_curves.
  void map_curves();
  // Adds a row for every upstream of cfg_ not yet in the table (at start, and at a
  // reload before the new workers are forked); warns about those that find it full.
  void add_upstream_rows();
  // Writes the table for `dnsarena stats` (upstream_snapshot.hpp), and the answer
  // metrics (answer_snapshot.hpp), at most once a second.
  void publish_upstream_snapshot(bool now = false);
  // Forks the /metrics process (metrics_process.hpp); false when it cannot serve.
  bool start_metrics();
  void start_workers();
  // Until SIGTERM/SIGINT or a worker that cannot run: heartbeats, deaths, restarts,
  // SIGHUP reloads, watchdog pings.
  void supervise();
  // Reaps every child that exited; returns false when one asks the service to stop.
  bool reap_workers();
  void restart_due_workers();
  // SIGHUP: reads and validates the new config; on success replaces the workers one by
  // one (reload_workers); on failure logs why and keeps everything as it is.
  void reload();
  // A policy zone file changed (zone_file_watch.hpp): compiles the running config's policy
  // again and, when it compiles, replaces the workers as a reload does; else logs why and
  // keeps the running policy.
  void reload_policy(const std::string& changed_file);
  // An RFC 5011 probe changed the trusted keys (trust_anchor_updater.hpp): the anchor file
  // is read again into the running config and the workers replaced as a reload does;
  // a file that does not read keeps the running anchors.
  void reload_trust_anchors();
  // A local root refresh loaded a copy (local_root_updater.hpp): the workers are replaced
  // as a reload does, with it and nothing else of the config read again.
  void install_local_root(std::shared_ptr<const LocalRoot> copy);
  void reload_workers();
  // After a reload that took AD trust away (ad_trust_revoked_), once no retired worker is
  // left: the cut moves from every entry to now (ad_trust.hpp).
  void settle_ad_trust();
  bool ad_trust_revoked_ = false;
  // SIGKILLs and reaps a worker retired by an earlier reload that still owns `row`.
  void end_retiring_on_row(unsigned row);
  // A row of worker index `index` that no live process writes (not `current`, the row of
  // the worker being replaced, nor a retiring worker's); when every one is held, the
  // oldest retiring worker of the index is ended for its row.
  unsigned free_row(unsigned index, unsigned current);
  void stop_workers();
  void close_everything();

  ServeConfig cfg_;
  SupervisorOptions opt_;
  std::unique_ptr<cache::Segment> seg_;
  std::unique_ptr<cache::Cache> cache_;
  ListenSockets listen_;
  sigset_t mask_{}, old_mask_{};
  bool signals_blocked_ = false;
  std::unique_ptr<MetricsProcess> metrics_;  // nullptr: no metrics_listen
  // Shared with every worker by fork: the per-name upstream bound across workers, the
  // failure cache, and which worker asks for which question.
  std::unique_ptr<HostTables> host_;
  // Shared with every worker by fork, kept across restarts and reloads: what they learned
  // of each upstream (RTT, timeouts, down). Mapped before /metrics, which reads it.
  std::unique_ptr<UpstreamHealth> upstream_health_;
  // Likewise: every worker's latency histograms and answers by RCODE and type.
  std::unique_ptr<AnswerMetrics> answer_metrics_;
  // Likewise: the miss-ratio curves' miniature caches (nullptr: mrc.enabled false).
  std::unique_ptr<MissRatioCurves> curves_;
  std::uint64_t next_snapshot_ms_ = 0;
  std::vector<WorkerProc> workers_;
  std::vector<WorkerProc> retiring_;  // replaced by a reload, told to stop, not yet reaped
  // DoT (tls_credentials.hpp): made before the first fork, so every worker has the same
  // credentials and ticket key; a reload replaces the credentials, never the ticket key.
  std::unique_ptr<TlsCredentials> tls_credentials_;
  std::unique_ptr<TlsTicketKey> tls_ticket_key_;
  TlsServerSettings tls_settings_;
  std::shared_ptr<const policy::SealedImage> initial_policy_;  // compiled by run(), handed to host_
  std::vector<std::string> policy_zone_names_;                 // the running policy's zones (load_policy)
  std::unique_ptr<policy::ZoneFileWatch> policy_watch_;         // the RPZ files as last compiled
  std::unique_ptr<RpzTransferProcess> rpz_transfers_;           // RPZ by zone transfer (nullptr: none)
  std::unique_ptr<LocalRootUpdater> root_updates_;              // recursion.local_root_from
  std::unique_ptr<TrustAnchorUpdater> anchor_updates_;          // dnssec.auto_update (made with the cache)
  int exit_code_ = 0;
  std::uint64_t next_watchdog_ms_ = 0;
};

bool Supervisor::load_tls() {
  if (!cfg_.tls.enabled() && !cfg_.https.enabled()) return true;
  try {
    tls_credentials_ = TlsCredentials::load(cfg_.tls.certificate, cfg_.tls.key);
    tls_ticket_key_ = std::make_unique<TlsTicketKey>();
  } catch (const std::exception& e) {
    spdlog::error("cannot serve DNS over {}: {}", cfg_.tls.enabled() ? "TLS" : "HTTPS", e.what());
    return false;
  }
  tls_settings_ = TlsServerSettings{tls_credentials_.get(), tls_ticket_key_.get(), cfg_.tls.handshake_timeout_ms,
                                    cfg_.tls.max_handshakes};
  spdlog::info("tls: certificate '{}' (sha256 {}) on {}", cfg_.tls.certificate, tls_credentials_->fingerprint(),
               join_endpoints(cfg_.tls.listen) + (cfg_.https.enabled() ? " https " + join_endpoints(cfg_.https.listen) : ""));
  return true;
}

void Supervisor::reload_tls() {
  if (!tls_credentials_) return;
  try {
    auto next = TlsCredentials::load(cfg_.tls.certificate, cfg_.tls.key);
    tls_credentials_ = std::move(next);  // the workers forked before have their own copy
    spdlog::info("reload: tls: certificate '{}' (sha256 {})", cfg_.tls.certificate, tls_credentials_->fingerprint());
  } catch (const std::exception& e) {
    spdlog::error("reload: {}; keeping the running certificate (sha256 {})", e.what(), tls_credentials_->fingerprint());
  }
  tls_settings_ = TlsServerSettings{tls_credentials_.get(), tls_ticket_key_.get(), cfg_.tls.handshake_timeout_ms,
                                    cfg_.tls.max_handshakes};
}

bool Supervisor::open_segment() {
  cache::OpenOutcome outcome{};
  cache::MigrationReport migration;
  try {
    seg_ = std::make_unique<cache::Segment>(cache::Segment::open(
        cfg_.segment, cfg_.geometry,
        cfg_.reset_on_mismatch ? cache::OpenPolicy::migrate_or_reset : cache::OpenPolicy::migrate, &outcome,
        &migration));
  } catch (const cache::SegmentError& e) {
    spdlog::error("segment '{}': {}{}", cfg_.segment, e.what(),
                  e.kind() == cache::SegmentError::Kind::version_mismatch ||
                          e.kind() == cache::SegmentError::Kind::damaged ||
                          e.kind() == cache::SegmentError::Kind::foreign
                      ? " (it cannot be migrated: set cache.reset_on_mismatch or pass --reset-segment to start a "
                        "fresh one)"
                      : "");
    return false;
  }
  if (outcome == cache::OpenOutcome::migrated)
    spdlog::info("segment '{}' migrated (warm upgrade): {}", cfg_.segment, migration.summary());
  cache_ = std::make_unique<cache::Cache>(*seg_, cache::SlotRole::supervisor);
  const char* what = outcome == cache::OpenOutcome::created    ? "created"
                     : outcome == cache::OpenOutcome::attached ? "re-attached (warm)"
                     : outcome == cache::OpenOutcome::migrated ? "migrated (warm)"
                                                               : "recreated (format or geometry changed)";
  spdlog::info("segment '{}' {}: {} live entries, {} MiB", cfg_.segment, what, cache_->stats().live_entries,
               seg_->size() >> 20);
  if (const std::string why = common::shm_huge_pages_unavailable(); !why.empty())
    spdlog::info("segment '{}' is on 4 KiB pages ({}); 2 MiB pages mean fewer TLB misses per lookup", cfg_.segment, why);
  return true;
}

// The listening sockets are ours for the service's life: per listen address, one UDP
// socket per worker index (a restarted worker resumes its queue) and one TCP listener for
// all.
bool Supervisor::open_listening_sockets() {
  const unsigned n = cfg_.resolved_workers();
  for (const Endpoint& address : cfg_.listen) {
    listen_.udp.emplace_back();
    listen_.pktinfo.push_back(address.wildcard());
    for (unsigned i = 0; i <= n; ++i) {
      const bool tcp = i == n;
      const int fd = open_listen_socket(cfg_, address, tcp);
      if (fd < 0) {
        spdlog::error("cannot bind {} {}: {}", tcp ? "TCP" : "UDP", address.text, std::strerror(errno));
        return false;
      }
      if (tcp) listen_.tcp.push_back(fd);
      else listen_.udp.back().push_back(fd);
    }
  }
  // DoT and DoH: TCP listeners of their own.
  for (auto [addresses, fds, what] : {std::tuple{&cfg_.tls.listen, &listen_.tls, "TLS"},
                                      std::tuple{&cfg_.https.listen, &listen_.doh, "HTTPS"}})
    for (const Endpoint& address : *addresses) {
      const int fd = open_listen_socket(cfg_, address, true);
      if (fd < 0) {
        spdlog::error("cannot bind {} {}: {}", what, address.text, std::strerror(errno));
        return false;
      }
      fds->push_back(fd);
    }
  return true;
}

void Supervisor::block_signals() {
  sigemptyset(&mask_);
  for (int sig : {SIGTERM, SIGINT, SIGCHLD, SIGHUP, kRpzTransferSignal}) sigaddset(&mask_, sig);
  ::sigprocmask(SIG_BLOCK, &mask_, &old_mask_);
  signals_blocked_ = true;
}

void Supervisor::map_upstream_health() {
  // Sized at start: 4x today's endpoints (room for reloads that add some), at least 64.
  std::size_t endpoints = 0;
  for (const ForwardZone& z : cfg_.zones()) endpoints += z.upstreams.size();
  upstream_health_ =
      std::make_unique<UpstreamHealth>(static_cast<unsigned>(std::max<std::size_t>(64, 4 * endpoints)), true);
  add_upstream_rows();
}

void Supervisor::map_answer_metrics() {
  answer_metrics_ = std::make_unique<AnswerMetrics>(InFlightNames::kRowsPerWorkerIndex * cfg_.resolved_workers(), true);
}

void Supervisor::map_curves() {
  if (!cfg_.mrc.enabled) return;
  try {
    curves_ = std::make_unique<MissRatioCurves>(seg_->geometry(), cfg_.mrc, cfg_.resolved_workers() + 2);
    set_host_curves(curves_.get());
    spdlog::info("miss-ratio curves: {} models at sample rate {:.6g}, {:.2f} MiB of shared memory", curves_->models(),
                 curves_->header().base_rate, static_cast<double>(curves_->shared_bytes()) / (1 << 20));
  } catch (const std::exception& e) {
    spdlog::warn("miss-ratio curves off: {}", e.what());
  }
}

void Supervisor::add_upstream_rows() {
  for (const ForwardZone& z : cfg_.zones())
    for (const Endpoint& e : z.upstreams)
      if (upstream_health_->add(e) < 0)
        spdlog::warn("upstream {}: the upstream health table is full ({} rows, sized at start); it is used without "
                     "health (never marked down) until the service restarts",
                     e.text, upstream_health_->capacity());
}

void Supervisor::publish_upstream_snapshot(bool now) {
  const std::uint64_t t = common::monotonic_ms();
  if (!now && t < next_snapshot_ms_) return;
  next_snapshot_ms_ = t + 1000;
  if (!write_upstream_snapshot(cfg_.segment, *upstream_health_))
    spdlog::debug("cannot write {}: {}", upstream_snapshot_path(cfg_.segment), std::strerror(errno));
  if (!write_answer_snapshot(cfg_.segment, *answer_metrics_))
    spdlog::debug("cannot write {}: {}", answer_snapshot_path(cfg_.segment), std::strerror(errno));
  if (host_ && cfg_.recursion.enabled && !write_infra_snapshot(cfg_.segment, host_->infra))
    spdlog::debug("cannot write {}: {}", infra_snapshot_path(cfg_.segment), std::strerror(errno));
  if (curves_ && !write_mrc_snapshot(cfg_.segment, *curves_, seg_->size()))
    spdlog::debug("cannot write {}: {}", mrc_snapshot_path(cfg_.segment), std::strerror(errno));
}

bool Supervisor::start_metrics() {
  if (cfg_.metrics_listen.empty()) return true;
  try {
    metrics_ = std::make_unique<MetricsProcess>(*seg_, Endpoint::parse(cfg_.metrics_listen), upstream_health_.get(),
                                                answer_metrics_.get(), curves_.get());
    spdlog::info("metrics on http://{}/metrics (pid {})", cfg_.metrics_listen, metrics_->pid());
    return true;
  } catch (const std::exception& e) {
    spdlog::error("metrics endpoint {}: {}", cfg_.metrics_listen, e.what());
    return false;
  }
}

void Supervisor::start_workers() {
  const unsigned n = cfg_.resolved_workers();
  host_ = std::make_unique<HostTables>(n);
  host_->rate_limits = host_rate_limit_table(cfg_.rate_limit, nullptr);
  host_->health = upstream_health_.get();
  host_->answers = answer_metrics_.get();
  host_->cookie_secrets = initial_cookie_secrets(cfg_.cookie_secret);
  open_nta_table(*host_, cfg_);
  // What an earlier run cached was fetched under a config not known here (ad_trust.hpp).
  // The cut ends before this second: this run's first answers keep their AD.
  host_->ad_trust.set(trusts_every_name(cfg_) ? 0 : cache::wall_clock_now() - 1);
  host_->policy = std::move(initial_policy_);
  name_policy_zones(answer_metrics_.get(), policy_zone_names_);
  workers_.resize(n);
  for (unsigned i = 0; i < n; ++i) {
    workers_[i].in_flight_row = i;
    spawn(cfg_, i, old_mask_, listen_, *host_, tls_settings(), workers_[i]);
    workers_[i].backoff_ms = cfg_.backoff_initial_ms;
  }
  std::string zones;
  for (const ForwardZone& z : cfg_.zones())
    zones += (zones.empty() ? "" : "; ") + z.text + " -> " + z.upstreams.front().text +
             (z.upstreams.size() > 1 ? " and others" : "") +
             (z.transport == UpstreamTransport::udp ? "" : std::string(" over ") + to_string(z.transport));
  spdlog::info("serving DNS on {} (UDP and TCP) with {} workers; forwarding {}", join_endpoints(cfg_.listen), n,
               zones);
  ServiceNotify::ready("serving on " + join_endpoints(cfg_.listen) + " with " + std::to_string(n) + " workers");
}

bool Supervisor::reap_workers() {
  bool keep_running = true;
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    if (rpz_transfers_ && rpz_transfers_->reaped(pid, status)) continue;
    if (metrics_ && metrics_->reaped(pid, status)) continue;
    if (bool changed = false; anchor_updates_ && anchor_updates_->reaped(pid, status, changed)) {
      if (changed) reload_trust_anchors();
      continue;
    }
    if (std::shared_ptr<const LocalRoot> copy; root_updates_ && root_updates_->reaped(pid, status, cfg_.recursion, copy)) {
      if (copy) install_local_root(std::move(copy));
      continue;
    }
    const auto retired = std::find_if(retiring_.begin(), retiring_.end(), [&](const WorkerProc& w) { return w.pid == pid; });
    if (retired != retiring_.end()) {
      spdlog::debug("replaced worker (pid {}) {}", pid, describe_status(status));
      if (retired->beat_fd >= 0) ::close(retired->beat_fd);
      // Its row's writer is dead and no successor is on it: what it counted in flight
      // would otherwise hold the per-name bound until the next reload takes the row.
      host_->names.reset_row(retired->in_flight_row);
      host_->claims.release_row(retired->in_flight_row);  // a retired worker killed with claims held
      retiring_.erase(retired);
      continue;
    }
    for (unsigned i = 0; i < workers_.size(); ++i) {
      WorkerProc& w = workers_[i];
      if (w.pid != pid) continue;
      w.pid = 0;
      if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerExitConfig) {
        spdlog::error("worker {} (pid {}) cannot run (see above); stopping the service", i, pid);
        exit_code_ = 1;
        keep_running = false;
        break;
      }
      const std::uint64_t ran = common::monotonic_ms() - w.started_ms;
      if (ran > 10000 || w.killed_silent) w.backoff_ms = cfg_.backoff_initial_ms;
      if (cache::StatSlot* s = slot_of(*seg_, i, pid)) s->add(cache::Counter::restarts);
      else cache_->my_stats().add(cache::Counter::restarts);
      spdlog::warn("worker {} (pid {}) {} after {} ms; restarting in {} ms", i, pid, describe_status(status), ran,
                   w.backoff_ms);
      w.restart_at_ms = common::monotonic_ms() + w.backoff_ms;
      w.backoff_ms = std::min(w.backoff_ms * 2, cfg_.backoff_max_ms);
    }
    if (!keep_running) break;
  }
  return keep_running;
}

void Supervisor::restart_due_workers() {
  for (unsigned i = 0; i < workers_.size(); ++i) {
    WorkerProc& w = workers_[i];
    if (w.pid == 0 && common::monotonic_ms() >= w.restart_at_ms) {
      spawn(cfg_, i, old_mask_, listen_, *host_, tls_settings(), w);
      spdlog::info("worker {} restarted as pid {}", i, w.pid);
    }
  }
}

// What a reload may change is everything a worker reads after fork (upstreams, forward
// zones, timeouts, TTL limits, ECS policy, access control, rate limits, TCP limits,
// log level). What the supervisor holds for the service's life cannot change without a
// restart: the listening addresses (the whole list) and their sockets' buffers, the number of workers (one
// UDP socket each), the segment and its geometry, the miss-ratio curves (mrc: their
// models are sized from both), the /metrics endpoint, the restart
// policy. Those keep their running values, with a warning naming each one changed.
// The same addresses in the same order (the order is the workers' socket order).
bool same_addresses(const std::vector<Endpoint>& a, const std::vector<Endpoint>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Endpoint& x, const Endpoint& y) { return x.same_address(y); });
}

void keep_fixed_settings(const ServeConfig& running, ServeConfig& next) {
  auto keep = [](const char* what, auto& next_value, const auto& running_value, bool changed) {
    if (changed) spdlog::warn("reload: {} changed; it needs a restart and keeps its running value", what);
    next_value = running_value;
  };
  keep("listen", next.listen, running.listen, !same_addresses(next.listen, running.listen));
  keep("workers", next.workers, running.workers, next.resolved_workers() != running.resolved_workers());
  keep("udp buffers", next.udp_receive_buffer, running.udp_receive_buffer,
       next.udp_receive_buffer != running.udp_receive_buffer || next.udp_send_buffer != running.udp_send_buffer);
  next.udp_send_buffer = running.udp_send_buffer;
  keep("cache.segment", next.segment, running.segment, next.segment != running.segment);
  keep("cache geometry", next.geometry, running.geometry, !(next.geometry == running.geometry));
  keep("stats.metrics_listen", next.metrics_listen, running.metrics_listen, next.metrics_listen != running.metrics_listen);
  keep("mrc", next.mrc, running.mrc, !(next.mrc == running.mrc));
  keep("policy.rpz zone transfers", next.rpz_transfers, running.rpz_transfers, !(next.rpz_transfers == running.rpz_transfers));
  keep("cache.reset_on_mismatch", next.reset_on_mismatch, running.reset_on_mismatch, false);
  // DoT on or off, and its addresses, are sockets: with them changed the whole tls section
  // keeps its running values (a file without it must not leave listeners without a
  // certificate); else the certificate and key are read again (reload_tls).
  if (!same_addresses(next.tls.listen, running.tls.listen)) keep("tls.listen", next.tls, running.tls, true);
  // Likewise DoH: its listeners, and whether credentials were loaded at all, are fixed.
  if (!same_addresses(next.https.listen, running.https.listen)) keep("https.listen", next.https, running.https, true);
}

void Supervisor::reload() {
  if (!opt_.reload_config) {
    spdlog::warn("SIGHUP: no config to reload");
    return;
  }
  ServiceNotify::reloading();
  bool revoked = false;  // some name's AD trusted before, not now
  try {
    ServeConfig next = opt_.reload_config();
    keep_fixed_settings(cfg_, next);
    next.validate();
    // A policy that does not compile keeps the running config, policy included. The old
    // image stays mapped in the retiring workers until they exit (policy/sealed_image.hpp).
    std::unique_ptr<policy::ZoneFileWatch> watch = watch_policy_files(next.policy);
    std::vector<std::string> zone_names;
    std::shared_ptr<const policy::SealedImage> policy = load_policy(next.policy, zone_names);
    revoked = ad_trust_revoked(cfg_, next);
    cfg_ = std::move(next);
    host_->policy = std::move(policy);
    policy_zone_names_ = std::move(zone_names);
    name_policy_zones(answer_metrics_.get(), policy_zone_names_);
    policy_watch_ = std::move(watch);
  } catch (const std::exception& e) {
    spdlog::error("reload: {}; keeping the running config", e.what());
    ServiceNotify::ready("reload failed; running config kept");
    return;
  }
  spdlog::set_level(spdlog::level::from_str(cfg_.log_level));
  host_->rate_limits = host_rate_limit_table(cfg_.rate_limit, std::move(host_->rate_limits));
  open_nta_table(*host_, cfg_);  // validation turned on by this reload
  add_upstream_rows();  // rows are keyed by endpoint: the upstreams kept keep what was learned
  if (reload_cookie_secrets(host_->cookie_secrets, cfg_.cookie_secret))
    spdlog::info("reload: new cookie_secret; cookies made under the previous one stay valid until the next change");
  reload_tls();
  if (revoked) {
    ad_trust_revoked_ = true;
    // No cached AD stands while retired workers, trusting as before, may still insert;
    // settle_ad_trust() moves the cut to when the last of them has gone.
    host_->ad_trust.set(AdTrustCut::kEveryEntry);
    spdlog::info("reload: AD trust taken from some names: cached answers go out without AD until fetched again");
  }
  if (anchor_updates_) anchor_updates_->configure(cfg_);
  if (root_updates_) root_updates_->configure(cfg_.recursion, cfg_.dnssec.anchors);
  reload_workers();
  settle_ad_trust();
  spdlog::info("reloaded: {} workers replaced with the new config", workers_.size());
  ServiceNotify::ready("serving on " + join_endpoints(cfg_.listen) + " (reloaded)");
}

void Supervisor::reload_trust_anchors() {
  ServeConfig next = cfg_;
  try {
    next.dnssec.anchors = read_anchors(next.dnssec);
  } catch (const std::exception& e) {
    spdlog::error("dnssec.auto_update: {}; keeping the running trust anchors", e.what());
    return;
  }
  const bool revoked = ad_trust_revoked(cfg_, next);
  cfg_ = std::move(next);
  if (revoked) {  // as reload() does
    ad_trust_revoked_ = true;
    host_->ad_trust.set(AdTrustCut::kEveryEntry);
  }
  reload_workers();
  settle_ad_trust();
  if (root_updates_) root_updates_->configure(cfg_.recursion, cfg_.dnssec.anchors);  // the local root's ZONEMD check
  spdlog::info("dnssec.auto_update: trusted keys of {} changed: {} workers replaced with the new anchors",
               cfg_.dnssec.trust_anchor_file, workers_.size());
}

void Supervisor::install_local_root(std::shared_ptr<const LocalRoot> copy) {
  cfg_.recursion.local_root_zone = std::move(copy);
  reload_workers();
  spdlog::info("recursion.local_root: {} workers replaced with the copy of serial {}", workers_.size(),
               cfg_.recursion.local_root_zone->serial());
}

void Supervisor::reload_policy(const std::string& changed_file) {
  spdlog::info("policy: {} changed; compiling the policy again", changed_file);
  ServiceNotify::reloading();
  if (policy_watch_) policy_watch_->mark_loaded();  // a broken file is not compiled again until it changes again
  try {
    std::vector<std::string> zone_names;
    host_->policy = load_policy(cfg_.policy, zone_names);
    policy_zone_names_ = std::move(zone_names);
    name_policy_zones(answer_metrics_.get(), policy_zone_names_);
  } catch (const std::exception& e) {
    spdlog::error("policy reload: {}; keeping the running policy", e.what());
    ServiceNotify::ready("policy reload failed; running policy kept");
    return;
  }
  reload_workers();
  spdlog::info("reloaded: {} workers replaced with the new policy", workers_.size());
  ServiceNotify::ready("serving on " + join_endpoints(cfg_.listen) + " (policy reloaded)");
}

// Rolling replacement: for each index the new worker is forked on the same UDP socket
// first, then the old one is retired (kRetireSignal). Both read the one socket for an
// instant, so no query waits on a gap, and the cache stays warm (it is the segment, not
// the process). The retired worker reads its sockets no more, answers what it had in
// flight (upstream queries, TCP and DoT connections) until that ends or
// tcp.idle_timeout_ms passes, and exits: established connections are not dropped (a new
// certificate serves new handshakes). 5 s past that it is SIGKILLed. Workers are not told to re-read the file
// themselves: a fresh process cannot keep half of an old config (sockets to removed
// upstreams, old TCP limits), and worker.cpp needs no reload path. The host's shared
// tables are the supervisor's and outlive the workers (rate_limit_table.hpp says what a
// reload does to the rate-limit counts).
void Supervisor::end_retiring_on_row(unsigned row) {
  for (auto it = retiring_.begin(); it != retiring_.end();) {
    if (it->in_flight_row != row) {
      ++it;
      continue;
    }
    spdlog::warn("replaced worker pid {} still running at the next reload: SIGKILL", it->pid);
    ::kill(it->pid, SIGKILL);
    ::waitpid(it->pid, nullptr, 0);
    if (it->beat_fd >= 0) ::close(it->beat_fd);  // its row: zeroed by the successor that takes it
    it = retiring_.erase(it);
  }
}

unsigned Supervisor::free_row(unsigned index, unsigned current) {
  const unsigned n = static_cast<unsigned>(workers_.size());
  const WorkerProc* oldest = nullptr;
  for (unsigned k = 0; k < InFlightNames::kRowsPerWorkerIndex; ++k) {
    const unsigned row = index + k * n;
    if (row == current) continue;
    const auto held = std::find_if(retiring_.begin(), retiring_.end(),
                                   [&](const WorkerProc& r) { return r.in_flight_row == row; });
    if (held == retiring_.end()) return row;
    if (!oldest || held->restart_at_ms < oldest->restart_at_ms) oldest = &*held;
  }
  const unsigned row = oldest->in_flight_row;
  end_retiring_on_row(row);
  return row;
}

void Supervisor::settle_ad_trust() {
  if (!ad_trust_revoked_ || !retiring_.empty()) return;
  host_->ad_trust.set(cache::wall_clock_now());
  ad_trust_revoked_ = false;
}

void Supervisor::reload_workers() {
  std::vector<pid_t> retired;
  std::vector<int> retired_beats;
  for (unsigned i = 0; i < workers_.size(); ++i) {
    WorkerProc& w = workers_[i];
    if (w.pid > 0) {
      WorkerProc old = w;
      w.beat_fd = -1;  // the old pipe goes with `old`
      // The successor takes another of the index's rows: `old` keeps releasing into its
      // own until it exits, and so may a worker retired by the reload before. Only when
      // all are held is the oldest retiring worker ended, so the successor never zeroes a
      // row a live process writes.
      w.in_flight_row = free_row(i, old.in_flight_row);
      spawn(cfg_, i, old_mask_, listen_, *host_, tls_settings(), w);
      ::kill(old.pid, kRetireSignal);  // drains its connections, then exits (worker.hpp)
      old.restart_at_ms = common::monotonic_ms();  // for a retiring worker: when it was told to stop
      retiring_.push_back(old);
      retired.push_back(old.pid);
      retired_beats.push_back(old.beat_fd);
    }
    w.backoff_ms = cfg_.backoff_initial_ms;
  }
  // Reported done only when no old worker reads the sockets any more (retirement_wait.hpp).
  for (std::size_t k : await_stopped_reading(retired_beats, kRetireAckTimeoutMs))
    spdlog::warn("replaced worker pid {} has not stopped reading its sockets {} ms after it was told to; until it "
                 "does it may answer with the previous config",
                 retired[k], kRetireAckTimeoutMs);
}

void Supervisor::supervise() {
  const std::uint64_t watchdog_ms = ServiceNotify::watchdog_interval_ms();
  for (;;) {
    // Sleep until a signal, the next scheduled restart or the next watchdog ping.
    std::uint64_t wait_ms = cfg_.heartbeat_timeout_ms ? kHeartbeatMs : 1000;
    const std::uint64_t t = common::monotonic_ms();
    for (const auto& w : workers_)
      if (w.pid == 0) wait_ms = std::min(wait_ms, w.restart_at_ms > t ? w.restart_at_ms - t : 0);
    if (watchdog_ms) wait_ms = std::min(wait_ms, next_watchdog_ms_ > t ? next_watchdog_ms_ - t : 0);
    if (policy_watch_) wait_ms = std::min(wait_ms, policy_watch_->ms_until_check(t));
    if (rpz_transfers_) wait_ms = std::min(wait_ms, rpz_transfers_->ms_until_restart());
    if (metrics_) wait_ms = std::min(wait_ms, metrics_->ms_until_restart());
    if (anchor_updates_) wait_ms = std::min(wait_ms, anchor_updates_->ms_until_due(t));
    if (root_updates_) wait_ms = std::min(wait_ms, root_updates_->ms_until_due(t));
    timespec ts{static_cast<time_t>(wait_ms / 1000), static_cast<long>(wait_ms % 1000) * 1000000L};
    const int sig = ::sigtimedwait(&mask_, nullptr, &ts);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("signal {}: stopping", strsignal(sig));
      return;
    }
    if (watchdog_ms && common::monotonic_ms() >= next_watchdog_ms_) {
      ServiceNotify::watchdog();
      next_watchdog_ms_ = common::monotonic_ms() + watchdog_ms;
    }
    if (sig == SIGHUP) reload();
    else if (sig == kRpzTransferSignal) reload_policy("a zone transfer");
    else if (policy_watch_)
      if (const std::string changed = policy_watch_->poll(common::monotonic_ms()); !changed.empty()) reload_policy(changed);
    for (WorkerProc& old : retiring_)
      if (!old.killed_silent && common::monotonic_ms() - old.restart_at_ms > cfg_.tcp_idle_timeout_ms + 5000) {
        spdlog::warn("replaced worker pid {} still running 5 s after its drain (tcp.idle_timeout_ms): SIGKILL", old.pid);
        ::kill(old.pid, SIGKILL);
        old.killed_silent = true;
      }
    if (check_heartbeats(cfg_, workers_) > 0) cache_->my_stats().add(cache::Counter::workers_killed_silent);
    // Reap (SIGCHLD, or periodically in case signals were merged).
    if (!reap_workers()) return;
    settle_ad_trust();
    restart_due_workers();
    if (rpz_transfers_) rpz_transfers_->restart_if_due();
    if (metrics_) metrics_->restart_if_due();
    if (anchor_updates_) anchor_updates_->start_if_due(common::monotonic_ms());
    if (root_updates_) root_updates_->start_if_due(common::monotonic_ms());
    publish_upstream_snapshot();
  }
}

// SIGTERM to every worker (replaced ones too), SIGKILL after 5 s, wait for all.
void Supervisor::stop_workers() {
  ServiceNotify::stopping();
  rpz_transfers_.reset();
  anchor_updates_.reset();  // a probe running is killed
  root_updates_.reset();    // likewise a local root refresh
  for (WorkerProc& old : retiring_) workers_.push_back(old);
  retiring_.clear();
  for (const auto& w : workers_)
    if (w.pid > 0) ::kill(w.pid, SIGTERM);
  const std::uint64_t deadline = common::monotonic_ms() + 5000;
  for (;;) {
    bool any = false;
    for (auto& w : workers_) {
      if (w.pid <= 0) continue;
      int status = 0;
      const pid_t r = ::waitpid(w.pid, &status, WNOHANG);
      if (r == w.pid || (r < 0 && errno == ECHILD)) w.pid = 0;
      else any = true;
    }
    if (!any) break;
    if (common::monotonic_ms() > deadline) {
      for (auto& w : workers_)
        if (w.pid > 0) {
          spdlog::warn("worker pid {} ignored SIGTERM for 5 s: SIGKILL", w.pid);
          ::kill(w.pid, SIGKILL);
          ::waitpid(w.pid, nullptr, 0);
          w.pid = 0;
        }
      break;
    }
    ::usleep(10000);
  }
}

void Supervisor::close_everything() {
  for (auto& w : workers_)
    if (w.beat_fd >= 0) ::close(w.beat_fd);
  for (const std::vector<int>& fds : listen_.udp)
    for (int fd : fds) ::close(fd);
  for (int fd : listen_.tcp) ::close(fd);
  for (int fd : listen_.tls) ::close(fd);
  for (int fd : listen_.doh) ::close(fd);
  metrics_.reset();
  if (signals_blocked_) ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

int Supervisor::run() {
  cfg_.validate();
  try {
    policy_watch_ = watch_policy_files(cfg_.policy);  // before reading them: a change during the compile is seen
    initial_policy_ = load_policy(cfg_.policy, policy_zone_names_);
  } catch (const std::exception& e) {
    spdlog::error("cannot serve: policy: {}", e.what());
    return 1;
  }
  raise_nofile_limit();
  // Before the segment: a serve refused for its port must not have touched the cache.
  std::vector<Endpoint> addresses = cfg_.listen;
  addresses.insert(addresses.end(), cfg_.tls.listen.begin(), cfg_.tls.listen.end());
  addresses.insert(addresses.end(), cfg_.https.listen.begin(), cfg_.https.listen.end());
  for (const Endpoint& address : addresses)
    if (const std::string taken = listen_port_taken(address, std::chrono::seconds(3)); !taken.empty()) {
      spdlog::error("cannot serve: {}", taken);
      return 1;
    }
  if (!load_tls()) return 1;
  if (!open_segment()) return 1;
  if (!open_listening_sockets()) {
    close_everything();
    return 1;
  }
  block_signals();
  map_upstream_health();
  map_answer_metrics();
  map_curves();
  // The supervisor runs no thread (/metrics serves from a process of its own): every
  // fork below and later (workers, their restarts, probes, refreshes) copies no lock
  // another thread holds. /metrics first, so a port it cannot bind stops the start
  // before any worker.
  if (!start_metrics()) {
    close_everything();
    return 1;
  }
  start_workers();
  try {
    rpz_transfers_ = RpzTransferProcess::start(cfg_.rpz_transfers, cfg_.segment);
  } catch (const std::exception& e) {
    spdlog::error("cannot serve: {}", e.what());
    stop_workers();
    close_everything();
    return 1;
  }
  anchor_updates_ = std::make_unique<TrustAnchorUpdater>(*cache_);
  anchor_updates_->configure(cfg_);
  root_updates_ = std::make_unique<LocalRootUpdater>(cfg_.segment);
  root_updates_->configure(cfg_.recursion, cfg_.dnssec.anchors);
  publish_upstream_snapshot(true);
  supervise();
  stop_workers();
  close_everything();
  remove_upstream_snapshot(cfg_.segment);  // the tables die with the service
  remove_answer_snapshot(cfg_.segment);
  remove_mrc_snapshot(cfg_.segment);
  remove_infra_snapshot(cfg_.segment);
  const auto live = cache_->stats().live_entries;
  if (opt_.remove_segment) {
    cache::Segment::remove(cfg_.segment);
    spdlog::info("stopped; segment '{}' removed", cfg_.segment);
  } else {
    spdlog::info("stopped; segment '{}' kept with {} live entries for the next start", cfg_.segment, live);
  }
  return exit_code_;
}

}  // namespace

int run_supervisor(const ServeConfig& cfg, const SupervisorOptions& opt) { return Supervisor(cfg, opt).run(); }

}  // namespace dnsarena::workers
