// SPDX-License-Identifier: GPL-3.0-or-later
// The RPZ transfer process's loop (run_rpz_transfers, rpz_transfer_process.hpp): timers,
// NOTIFY, transfers, the zone files and the status snapshot.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>


#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
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

// This process's CPU time (user + system), in microseconds.
std::uint64_t cpu_us() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::uint64_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1'000'000 +
         static_cast<std::uint64_t>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
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
  TransferLoop(const RpzTransfers& cfg, std::string segment, int notify_fd, int notify_tcp_fd, pid_t supervisor)
      : cfg_(cfg), segment_(std::move(segment)), notify_fd_(notify_fd), notify_tcp_fd_(notify_tcp_fd),
        supervisor_(supervisor) {}

  int run();

private:
  void open_zones();
  void transfer(Zone& z);
  // Writes the last IXFR's change beside the zone's file; false (logged) when it cannot.
  bool write_delta(Zone& z);
  // kRpzTransferSignal: the supervisor compiles the policy from the files.
  void tell_supervisor(const Zone& z);
  void schedule_refresh(Zone& z);
  void schedule_retry(Zone& z);
  void read_notifies();
  // The response to send (empty: none).
  std::vector<std::uint8_t> handle_notify(const std::uint8_t* msg, std::size_t len, const sockaddr_storage& from);
  // Under kNotifiesPerSecond (counts this one); false: drop it unread.
  bool within_rate();
  void accept_tcp_notify();
  void publish();
  // The zone's copy (serial, records) into its status, then publish().
  void publish_zone(Zone& z);

  const RpzTransfers& cfg_;
  std::string segment_;
  int notify_fd_;
  int notify_tcp_fd_;
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
  bool changed = false;  // the copy no longer matches the file (and the running policy)
  try {
    std::optional<std::uint32_t> have;
    if (z.copy.has()) have = z.copy.serial();
    TransferResult res = transfer_zone(primary, z.cfg.primary.len, z.origin, have, key, limits);
    if (res.kind == TransferKind::ixfr) {
      try {
        z.copy.apply(res.deltas, res.soa);
        changed = true;
      } catch (const TransferError& e) {
        spdlog::warn("rpz zone {}: {}; transferring the whole zone", z.cfg.zone, e.what());
        ++z.status.fallbacks_to_axfr;
        res = transfer_zone(primary, z.cfg.primary.len, z.origin, std::nullopt, key, limits);
      }
    }
    if (res.kind == TransferKind::axfr) {
      changed = true;
      z.copy.replace(res);
    }
    z.status.last_error.clear();
    ++z.status.transfers_ok;
    if (res.kind == TransferKind::up_to_date) {
      spdlog::debug("rpz zone {}: serial {} is current", z.cfg.zone, z.copy.serial());
    } else {
      const std::uint64_t taken_ms = common::monotonic_ms(), cpu0 = cpu_us();
      // An IXFR's change goes to the supervisor as a delta beside the file, and the file
      // is rewritten after: the rewrite is off the way to the new policy (rpz_copy_delta.hpp).
      const bool by_delta = res.kind == TransferKind::ixfr && z.copy.has_delta() && write_delta(z);
      const std::uint64_t delta_ms = common::monotonic_ms();
      z.status.last_kind = to_string(res.kind);
      z.status.last_transfer_unix_ms = unix_ms();
      if (by_delta) {  // `stats` has the serial the policy is compiled at, before the rewrite
        tell_supervisor(z);
        publish_zone(z);
      }
      z.copy.write(z.cfg.file);
      spdlog::info("rpz zone {}: {} to serial {} ({} records, {} messages, {} bytes) in {} ms, {}file written in {} ms "
                   "({} ms CPU)",
                   z.cfg.zone, to_string(res.kind), z.copy.serial(), z.copy.size(), res.messages, res.bytes,
                   taken_ms - t0,
                   by_delta ? "delta written in " + std::to_string(delta_ms - taken_ms) + " ms, then the " : std::string(),
                   common::monotonic_ms() - delta_ms, (cpu_us() - cpu0) / 1000);
      if (!by_delta) tell_supervisor(z);
    }
    schedule_refresh(z);
  } catch (const std::exception& e) {
    ++z.status.transfers_failed;
    z.status.last_error = e.what();
    if (changed) {  // taken but not written: back to the file's copy, which the policy runs on
      std::string ignored;
      z.copy.load(z.cfg.file, ignored);
    }
    spdlog::error("rpz zone {}: transfer from {} failed: {}; keeping serial {}", z.cfg.zone, z.cfg.primary.text,
                  e.what(), z.copy.has() ? std::to_string(z.copy.serial()) : std::string("(none)"));
    schedule_retry(z);
  }
  publish_zone(z);
}

void TransferLoop::publish_zone(Zone& z) {
  z.status.has_copy = z.copy.has();
  z.status.serial = z.copy.serial();
  z.status.records = z.copy.size();
  publish();
}

bool TransferLoop::write_delta(Zone& z) {
  try {
    z.copy.write_delta(z.cfg.file);
    return true;
  } catch (const std::exception& e) {
    spdlog::warn("rpz zone {}: {}; the supervisor is told after the whole file is written", z.cfg.zone, e.what());
    return false;
  }
}

void TransferLoop::tell_supervisor(const Zone& z) {
  if (::kill(supervisor_, kRpzTransferSignal) != 0)
    spdlog::warn("rpz zone {}: cannot signal the supervisor: {}", z.cfg.zone, std::strerror(errno));
}

bool same_address(const sockaddr_storage& a, int family, const std::uint8_t*& bytes) {
  if (a.ss_family != family) return false;
  bytes = family == AF_INET ? reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in*>(&a)->sin_addr)
                            : reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr);
  return true;
}

bool TransferLoop::within_rate() {
  const std::uint64_t now = common::monotonic_ms();
  if (now - rate_window_ms_ >= 1000) {
    rate_window_ms_ = now;
    rate_count_ = 0;
  }
  if (++rate_count_ <= kNotifiesPerSecond) return true;
  ++notifies_over_rate_;
  return false;
}

void TransferLoop::read_notifies() {
  std::uint8_t buf[4096];
  for (unsigned n = 0; n < 64; ++n) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const ssize_t r = ::recvfrom(notify_fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (r < 0) return;
    if (!within_rate()) continue;
    const std::vector<std::uint8_t> resp = handle_notify(buf, static_cast<std::size_t>(r), from);
    if (!resp.empty()) ::sendto(notify_fd_, resp.data(), resp.size(), 0, reinterpret_cast<const sockaddr*>(&from), from_len);
  }
}

// One NOTIFY over TCP (knotd sends them so): one message read within kTcpNotifyMs, the
// response written, the connection closed. Handled in line, so a connection costs the
// loop kTcpNotifyMs at most, and connections count towards the NOTIFY rate.
void TransferLoop::accept_tcp_notify() {
  constexpr int kTcpNotifyMs = 500;
  sockaddr_storage from{};
  socklen_t from_len = sizeof from;
  const int c = ::accept4(notify_tcp_fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (c < 0) return;
  std::uint8_t buf[4096 + 2];
  std::size_t got = 0, need = 2;
  const std::uint64_t deadline = common::monotonic_ms() + kTcpNotifyMs;
  bool ok = within_rate();
  while (ok && got < need) {
    const std::uint64_t now = common::monotonic_ms();
    pollfd p{c, POLLIN, 0};
    if (now >= deadline || ::poll(&p, 1, static_cast<int>(deadline - now)) <= 0) break;
    const ssize_t r = ::recv(c, buf + got, need - got, 0);
    if (r <= 0 && !(r < 0 && (errno == EAGAIN || errno == EINTR))) break;
    if (r > 0) got += static_cast<std::size_t>(r);
    if (got == 2 && need == 2) {
      need = 2 + (static_cast<std::size_t>(buf[0]) << 8 | buf[1]);
      if (need > sizeof buf || need == 2) break;
    }
  }
  if (ok && need > 2 && got == need) {
    const std::vector<std::uint8_t> resp = handle_notify(buf + 2, need - 2, from);
    if (!resp.empty()) {
      std::uint8_t out[2 + 512];
      out[0] = static_cast<std::uint8_t>(resp.size() >> 8);
      out[1] = static_cast<std::uint8_t>(resp.size());
      std::memcpy(out + 2, resp.data(), std::min(resp.size(), sizeof out - 2));
      ::send(c, out, 2 + std::min(resp.size(), sizeof out - 2), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }
  ::close(c);
}

std::vector<std::uint8_t> TransferLoop::handle_notify(const std::uint8_t* msg, std::size_t len,
                                                      const sockaddr_storage& from) {
  if (len < KNOT_WIRE_HEADER_SIZE || knot_wire_get_qr(msg) || knot_wire_get_opcode(msg) != KNOT_OPCODE_NOTIFY) return {};
  std::vector<std::uint8_t> wire(msg, msg + len);
  std::unique_ptr<knot_pkt_t, void (*)(knot_pkt_t*)> q(knot_pkt_new(wire.data(), len, nullptr),
                                                       [](knot_pkt_t* p) { knot_pkt_free(p); });
  if (!q || knot_pkt_parse(q.get(), 0) != KNOT_EOK || knot_pkt_qtype(q.get()) != KNOT_RRTYPE_SOA) return {};
  XfrBytes qname(knot_pkt_qname(q.get()), knot_dname_size(knot_pkt_qname(q.get())));
  knot_dname_to_lower(qname.data());
  const auto it = std::find_if(zones_.begin(), zones_.end(), [&](const auto& z) { return z->origin == qname; });
  if (it == zones_.end()) return {};  // not a zone of ours: no answer
  Zone& z = **it;
  const std::uint8_t* addr = nullptr;
  const bool listed = std::any_of(z.cfg.notify_from.begin(), z.cfg.notify_from.end(), [&](const Subnet& s) {
    return same_address(from, s.family, addr) && s.contains(s.family, addr);
  });
  if (!listed) {
    ++z.status.notifies_refused;
    spdlog::warn("rpz zone {}: NOTIFY from an address not in notify_from: ignored", z.cfg.zone);
    publish();
    return {};
  }
  // The response: the query's header and question, QR and AA set (RFC 1996 section 4.7).
  const std::size_t question_end = KNOT_WIRE_HEADER_SIZE + knot_pkt_question_size(q.get());
  std::vector<std::uint8_t> resp(512);
  if (question_end > resp.size() - 200) return {};
  std::memcpy(resp.data(), msg, question_end);
  knot_wire_set_qr(resp.data());
  knot_wire_set_aa(resp.data());
  knot_wire_set_ancount(resp.data(), 0);
  knot_wire_set_nscount(resp.data(), 0);
  knot_wire_set_arcount(resp.data(), 0);
  std::size_t resp_len = question_end;
  if (z.has_key) {
    const int rc = q->tsig_rr ? knot_tsig_server_check(q->tsig_rr, q->wire, q->size, &z.key) : KNOT_TSIG_EBADKEY;
    if (rc != KNOT_EOK) {
      ++z.status.notifies_refused;
      spdlog::warn("rpz zone {}: NOTIFY refused: TSIG: {}", z.cfg.zone, q->tsig_rr ? knot_strerror(rc) : "not signed");
      knot_wire_set_rcode(resp.data(), KNOT_RCODE_NOTAUTH);
      resp.resize(resp_len);
      publish();
      return resp;
    }
    std::uint8_t digest[kMaxTsigDigest];
    std::size_t digest_len = sizeof digest;
    knot_tsig_sign(resp.data(), &resp_len, resp.size(), knot_tsig_rdata_mac(q->tsig_rr),
                   knot_tsig_rdata_mac_length(q->tsig_rr), digest, &digest_len, &z.key, 0, 0);
  }
  resp.resize(resp_len);
  ++z.status.notifies_accepted;
  spdlog::info("rpz zone {}: NOTIFY from its primary; transferring", z.cfg.zone);
  z.due_ms = std::min(z.due_ms, common::monotonic_ms());
  return resp;
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
    pollfd fds[3] = {{sfd, POLLIN, 0}, {notify_fd_, POLLIN, 0}, {notify_tcp_fd_, POLLIN, 0}};
    const int r = ::poll(fds, notify_fd_ >= 0 ? 3 : 1, timeout);
    if (r < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (r > 0 && (fds[0].revents & POLLIN)) break;
    if (r > 0 && notify_fd_ >= 0 && (fds[1].revents & POLLIN)) read_notifies();
    if (r > 0 && notify_tcp_fd_ >= 0 && (fds[2].revents & POLLIN)) accept_tcp_notify();
    for (auto& z : zones_)
      if (z->due_ms <= common::monotonic_ms()) transfer(*z);
  }
  ::close(sfd);
  return 0;
}

}  // namespace

int run_rpz_transfers(const RpzTransfers& cfg, const std::string& segment, int notify_fd, int notify_tcp_fd,
                      pid_t supervisor) {
  return TransferLoop(cfg, segment, notify_fd, notify_tcp_fd, supervisor).run();
}

}  // namespace dnsarena::workers
