// SPDX-License-Identifier: GPL-3.0-or-later
// The RPZ transfer process: keeps the policy zones that come by zone transfer (policy.rpz
// entries with a `primary:`, rpz_transfer_config.hpp) up to date, apart from the workers'
// query loop and from the supervisor's.
//
// What it does, per zone:
//   start      reads the zone's `file` (the copy the last run kept) for its serial; the
//              supervisor compiled the same file, so a restart serves the last policy at
//              once. Then transfers at once: IXFR from that serial, or AXFR without one.
//   refresh    every `refresh` seconds (default the SOA's refresh, 30 s .. 1 day): IXFR
//              (RFC 1995). After a failure: the SOA's retry (5 s .. refresh) instead.
//   NOTIFY     (RFC 1996) on policy.notify_listen, UDP and TCP (knotd 3.2 notifies over
//              TCP; one message per connection, read within 500 ms): accepted only from the zone's
//              notify_from (default: its primary) and, when the zone has a key, with a
//              TSIG that verifies; answered with a NOTIFY response (signed likewise) and
//              the zone's transfer made due. Refused ones are counted; a bad TSIG gets
//              NOTAUTH, a stranger nothing. At most kNotifiesPerSecond are looked at per
//              second, the rest dropped unread (counted): a flood costs a bounded share
//              of one core and at most one transfer per zone at a time.
//   transfer   zone_transfer.hpp. An IXFR that the copy cannot take (a removal of a
//              record it lacks) is followed at once by an AXFR. A transfer that changed
//              the copy is written to `file` (rpz_zone_copy.hpp, atomically, as a binary
//              copy: policy/rpz_copy_file.hpp) and the supervisor is told by
//              kRpzTransferSignal: it compiles the policy and swaps it in as it does for
//              a changed RPZ file (supervisor.hpp). An IXFR's change is first written
//              beside `file` as a delta (policy/rpz_copy_delta.hpp, `file`.delta, named
//              for the copy it applies to) and the supervisor told at once: it compiles
//              the old copy with the delta while the copy is rewritten, which is off the
//              way from NOTIFY to the new policy (0.2 to 0.55 s of wall time at
//              1,000,000 records). A kill at any point leaves a copy whose serial is its
//              content's; the next start transfers from it. An AXFR (and an IXFR on a
//              copy read from a zone file) is written whole before the signal. A failed,
//              cut or TSIG-failing transfer changes nothing: the copy, the file and the
//              running policy stay; the error is logged and kept for `dnsarena stats`
//              (rpz_transfer_status.hpp).
// Transfers run one at a time (so at most one per zone); NOTIFYs that arrive meanwhile
// wait in the socket's buffer.
// The process runs at nice 10, below the workers (a 1M-record copy takes about 0.25 s of
// CPU to rewrite). It ends on SIGTERM or SIGINT; it dies with the supervisor
// (PR_SET_PDEATHSIG).
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "workers/helper_process.hpp"
#include "workers/rpz_transfer_config.hpp"

namespace dnsarena::workers {

// Sent by the transfer process to the supervisor when a zone's file changed.
inline constexpr int kRpzTransferSignal = SIGUSR2;  // SIGUSR1 is the workers' kRetireSignal
inline constexpr unsigned kNotifiesPerSecond = 50;

// The supervisor's handle on the process: forked at start, forked again (after a
// backoff from 1 s doubling to 30 s) when it dies, stopped with the service.
class RpzTransferProcess {
public:
  // Binds policy.notify_listen and forks the process; nullptr when no zone comes by
  // transfer. Throws std::runtime_error when the NOTIFY socket cannot be bound.
  static std::unique_ptr<RpzTransferProcess> start(const RpzTransfers& cfg, const std::string& segment);
  ~RpzTransferProcess();
  RpzTransferProcess(const RpzTransferProcess&) = delete;
  RpzTransferProcess& operator=(const RpzTransferProcess&) = delete;

  // True when `pid` was the process (it is then forked again after the backoff).
  bool reaped(pid_t pid, int status);
  // Forks it again when it is dead and its backoff has passed.
  void restart_if_due();
  // Milliseconds until restart_if_due has something to do (a large value when running).
  std::uint64_t ms_until_restart() const;
  // SIGTERM, SIGKILL after 5 s; waits for it.
  void stop();

private:
  RpzTransferProcess(const RpzTransfers& cfg, std::string segment, int notify_fd, int notify_tcp_fd);
  void spawn();

  RpzTransfers cfg_;
  std::string segment_;
  int notify_fd_ = -1, notify_tcp_fd_ = -1;
  pid_t pid_ = 0;
  HelperRestart restart_;
};

// The process's main loop (what the fork runs); returns its exit code. `notify_fd`,
// `notify_tcp_fd`: the bound NOTIFY sockets (UDP, TCP listening) or -1.
int run_rpz_transfers(const RpzTransfers& cfg, const std::string& segment, int notify_fd, int notify_tcp_fd,
                      pid_t supervisor);

}  // namespace dnsarena::workers
