// SPDX-License-Identifier: GPL-3.0-or-later
// The RPZ transfer process's loop (run_rpz_transfers, rpz_transfer_process.hpp): timers,
// NOTIFY, transfers, the zone files and the status snapshot.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>


#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/monotonic_clock.hpp"
#include "dns/knot_packet.hpp"
#include "wire/dns_name.hpp"
#include "workers/rpz_transfer_process.hpp"
#include "workers/rpz_transfer_status.hpp"
#include "workers/rpz_zone_copy.hpp"
#include "workers/zone_transfer.hpp"

namespace dnsarena::workers {

namespace {

constexpr std::uint64_t kMinRetryMs = 5'000;

std::uint64_t unix_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

struct Zone {
  explicit Zone(const RpzTransferConfig& c) : cfg(c), origin(wire::name_to_wire(c.zone)), copy(origin) {}
  ~Zone() {
    if (has_key) knot_tsig_key_deinit(&key);
  }
  Zone(const Zone&) = delete;
  Zone& operator=(const Zone&) = delete;

  const RpzTransferConfig& cfg;
  XfrBytes origin;
  RpzZoneCopy copy;
  knot_tsig_key_t key{};
  bool has_key = false;
  std::uint64_t due_ms = 0;
  RpzZoneStatus status;
};

class TransferLoop {
public:
  TransferLoop(const RpzTransfers& cfg, std::string segment, int notify_fd, pid_t supervisor)
      : cfg_(cfg), segment_(std::move(segment)), notify_fd_(notify_fd), supervisor_(supervisor) {}

  int run();

private:
  void open_zones();
  void transfer(Zone& z);
  void schedule_refresh(Zone& z);
  void schedule_retry(Zone& z);
  void read_notifies();
  void handle_notify(const std::uint8_t* msg, std::size_t len, const sockaddr_storage& from, socklen_t from_len);
  void publish();

  const RpzTransfers& cfg_;
  std::string segment_;
  int notify_fd_;
  pid_t supervisor_;
  std::vector<std::unique_ptr<Zone>> zones_;
  std::uint64_t notifies_over_rate_ = 0;
  std::uint64_t rate_window_ms_ = 0;
  unsigned rate_count_ = 0;
};

void TransferLoop::open_zones() {
  for (const RpzTransferConfig& c : cfg_.zones) {
    auto z = std::make_unique<Zone>(c);
    z->status.zone = c.zone;
    z->status.primary = c.primary.text;
    if (c.tsig.enabled()) {
      const int rc = make_tsig_key(c.tsig, z->key);
      if (rc != KNOT_EOK) throw std::runtime_error("zone " + c.zone + ": TSIG key: " + knot_strerror(rc));
      z->has_key = true;
    }
    std::string error;
    if (z->copy.load(c.file, error)) {
      spdlog::info("rpz zone {}: serial {} ({} records) from {}", c.zone, z->copy.serial(), z->copy.size(), c.file);
    } else if (!error.empty()) {
      spdlog::warn("rpz zone {}: the kept copy cannot be read ({}); transferring the whole zone", c.zone, error);
    }
    z->status.has_copy = z->copy.has();
    z->status.serial = z->copy.serial();
    z->status.records = z->copy.size();
    zones_.push_back(std::move(z));
  }
}

void TransferLoop::schedule_refresh(Zone& z) {
  std::uint64_t s = z.cfg.refresh_s;
  if (s == 0) s = std::clamp<std::uint64_t>(z.copy.has() ? soa_refresh(z.copy.soa().rdata) : kMinRefreshS, kMinRefreshS,
                                           kMaxRefreshS);
  z.due_ms = common::monotonic_ms() + s * 1000;
}

void TransferLoop::schedule_retry(Zone& z) {
  const std::uint64_t refresh_ms =
      (z.cfg.refresh_s ? z.cfg.refresh_s
                       : std::clamp<std::uint64_t>(z.copy.has() ? soa_refresh(z.copy.soa().rdata) : kMinRefreshS,
                                                   kMinRefreshS, kMaxRefreshS)) * 1000;
  const std::uint64_t retry_ms = z.copy.has() ? std::uint64_t{soa_retry(z.copy.soa().rdata)} * 1000 : kMinRetryMs;
  z.due_ms = common::monotonic_ms() + std::clamp(retry_ms, kMinRetryMs, std::max(kMinRetryMs, refresh_ms));
}

void TransferLoop::transfer(Zone& z) {
  const TransferLimits limits{z.cfg.max_records, z.cfg.max_bytes, z.cfg.timeout_ms};
  const auto* primary = reinterpret_cast<const sockaddr*>(&z.cfg.primary.addr);
  const knot_tsig_key_t* key = z.has_key ? &z.key : nullptr;
  z.status.last_attempt_unix_ms = unix_ms();
  const std::uint64_t t0 = common::monotonic_ms();
  try {
    std::optional<std::uint32_t> have;
    if (z.copy.has()) have = z.copy.serial();
    TransferResult res = transfer_zone(primary, z.cfg.primary.len, z.origin, have, key, limits);
    if (res.kind == TransferKind::ixfr) {
      try {
        z.copy.apply(res.deltas, res.soa);
      } catch (const TransferError& e) {
        spdlog::warn("rpz zone {}: {}; transferring the whole zone", z.cfg.zone, e.what());
        ++z.status.fallbacks_to_axfr;
        res = transfer_zone(primary, z.cfg.primary.len, z.origin, std::nullopt, key, limits);
      }
    }
    if (res.kind == TransferKind::axfr) z.copy.replace(res);
    z.status.last_error.clear();
    ++z.status.transfers_ok;
    if (res.kind == TransferKind::up_to_date) {
      spdlog::debug("rpz zone {}: serial {} is current", z.cfg.zone, z.copy.serial());
    } else {
      z.copy.write(z.cfg.file);
      z.status.last_kind = to_string(res.kind);
      z.status.last_transfer_unix_ms = unix_ms();
      spdlog::info("rpz zone {}: {} to serial {} ({} records, {} messages, {} bytes) in {} ms", z.cfg.zone,
                   to_string(res.kind), z.copy.serial(), z.copy.size(), res.messages, res.bytes,
                   common::monotonic_ms() - t0);
      if (::kill(supervisor_, kRpzTransferSignal) != 0)
        spdlog::warn("rpz zone {}: cannot signal the supervisor: {}", z.cfg.zone, std::strerror(errno));
    }
    schedule_refresh(z);
  } catch (const std::exception& e) {
    ++z.status.transfers_failed;
    z.status.last_error = e.what();
    spdlog::error("rpz zone {}: transfer from {} failed: {}; keeping serial {}", z.cfg.zone, z.cfg.primary.text,
                  e.what(), z.copy.has() ? std::to_string(z.copy.serial()) : std::string("(none)"));
    schedule_retry(z);
  }
  z.status.has_copy = z.copy.has();
  z.status.serial = z.copy.serial();
  z.status.records = z.copy.size();
  publish();
}

bool same_address(const sockaddr_storage& a, int family, const std::uint8_t*& bytes) {
  if (a.ss_family != family) return false;
  bytes = family == AF_INET ? reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in*>(&a)->sin_addr)
                            : reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr);
  return true;
}

void TransferLoop::read_notifies() {
  std::uint8_t buf[4096];
  for (unsigned n = 0; n < 64; ++n) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const ssize_t r = ::recvfrom(notify_fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (r < 0) return;
    const std::uint64_t now = common::monotonic_ms();
    if (now - rate_window_ms_ >= 1000) {
      rate_window_ms_ = now;
      rate_count_ = 0;
    }
    if (++rate_count_ > kNotifiesPerSecond) {
      ++notifies_over_rate_;
      continue;
    }
    handle_notify(buf, static_cast<std::size_t>(r), from, from_len);
  }
}

void TransferLoop::handle_notify(const std::uint8_t* msg, std::size_t len, const sockaddr_storage& from,
                                 socklen_t from_len) {
  if (len < KNOT_WIRE_HEADER_SIZE || knot_wire_get_qr(msg) || knot_wire_get_opcode(msg) != KNOT_OPCODE_NOTIFY) return;
  std::vector<std::uint8_t> wire(msg, msg + len);
  std::unique_ptr<knot_pkt_t, void (*)(knot_pkt_t*)> q(knot_pkt_new(wire.data(), len, nullptr),
                                                       [](knot_pkt_t* p) { knot_pkt_free(p); });
  if (!q || knot_pkt_parse(q.get(), 0) != KNOT_EOK || knot_pkt_qtype(q.get()) != KNOT_RRTYPE_SOA) return;
  XfrBytes qname(knot_pkt_qname(q.get()), knot_dname_size(knot_pkt_qname(q.get())));
  knot_dname_to_lower(qname.data());
  const auto it = std::find_if(zones_.begin(), zones_.end(), [&](const auto& z) { return z->origin == qname; });
  if (it == zones_.end()) return;  // not a zone of ours: no answer
  Zone& z = **it;
  const std::uint8_t* addr = nullptr;
  const bool listed = std::any_of(z.cfg.notify_from.begin(), z.cfg.notify_from.end(), [&](const Subnet& s) {
    return same_address(from, s.family, addr) && s.contains(s.family, addr);
  });
  if (!listed) {
    ++z.status.notifies_refused;
    spdlog::warn("rpz zone {}: NOTIFY from an address not in notify_from: ignored", z.cfg.zone);
    publish();
    return;
  }
  // The response: the query's header and question, QR and AA set (RFC 1996 section 4.7).
  const std::size_t question_end = KNOT_WIRE_HEADER_SIZE + knot_pkt_question_size(q.get());
  std::uint8_t resp[512];
  if (question_end > sizeof resp - 200) return;
  std::memcpy(resp, msg, question_end);
  knot_wire_set_qr(resp);
  knot_wire_set_aa(resp);
  knot_wire_set_ancount(resp, 0);
  knot_wire_set_nscount(resp, 0);
  knot_wire_set_arcount(resp, 0);
  std::size_t resp_len = question_end;
  if (z.has_key) {
    const int rc = q->tsig_rr ? knot_tsig_server_check(q->tsig_rr, q->wire, q->size, &z.key) : KNOT_TSIG_EBADKEY;
    if (rc != KNOT_EOK) {
      ++z.status.notifies_refused;
      spdlog::warn("rpz zone {}: NOTIFY refused: TSIG: {}", z.cfg.zone, q->tsig_rr ? knot_strerror(rc) : "not signed");
      knot_wire_set_rcode(resp, KNOT_RCODE_NOTAUTH);
      ::sendto(notify_fd_, resp, resp_len, 0, reinterpret_cast<const sockaddr*>(&from), from_len);
      publish();
      return;
    }
    std::uint8_t digest[kMaxTsigDigest];
    std::size_t digest_len = sizeof digest;
    knot_tsig_sign(resp, &resp_len, sizeof resp, knot_tsig_rdata_mac(q->tsig_rr), knot_tsig_rdata_mac_length(q->tsig_rr),
                   digest, &digest_len, &z.key, 0, 0);
  }
  ::sendto(notify_fd_, resp, resp_len, 0, reinterpret_cast<const sockaddr*>(&from), from_len);
  ++z.status.notifies_accepted;
  spdlog::info("rpz zone {}: NOTIFY from its primary; transferring", z.cfg.zone);
  z.due_ms = std::min(z.due_ms, common::monotonic_ms());
}

void TransferLoop::publish() {
  std::vector<RpzZoneStatus> all;
  for (const auto& z : zones_) all.push_back(z->status);
  write_rpz_snapshot(segment_, all, notifies_over_rate_);
}

int TransferLoop::run() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  ::sigprocmask(SIG_BLOCK, &stop, nullptr);
  const int sfd = ::signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) throw std::runtime_error(std::string("signalfd: ") + std::strerror(errno));
  open_zones();
  publish();
  for (;;) {
    std::uint64_t next = UINT64_MAX;
    for (auto& z : zones_) next = std::min(next, z->due_ms);
    const std::uint64_t now = common::monotonic_ms();
    const int timeout = next <= now ? 0 : static_cast<int>(std::min<std::uint64_t>(next - now, 60'000));
    pollfd fds[2] = {{sfd, POLLIN, 0}, {notify_fd_, POLLIN, 0}};
    const int r = ::poll(fds, notify_fd_ >= 0 ? 2 : 1, timeout);
    if (r < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (r > 0 && (fds[0].revents & POLLIN)) break;
    if (r > 0 && notify_fd_ >= 0 && (fds[1].revents & POLLIN)) read_notifies();
    for (auto& z : zones_)
      if (z->due_ms <= common::monotonic_ms()) transfer(*z);
  }
  ::close(sfd);
  return 0;
}

}  // namespace

int run_rpz_transfers(const RpzTransfers& cfg, const std::string& segment, int notify_fd, pid_t supervisor) {
  return TransferLoop(cfg, segment, notify_fd, supervisor).run();
}

}  // namespace dnsarena::workers
