// SPDX-License-Identifier: GPL-3.0-or-later
// When a worker naps before waiting for datagrams (udp.coalesce_us, serve_config.hpp), so
// that one wakeup takes several datagrams, as a NIC's interrupt moderation does.
//
// The rate says when a nap should pay: the last wakeup read `batch` datagrams and came
// `gap` after the one before, so at that rate batch x nap / gap datagrams arrive within a
// nap; the worker naps only when that is at least two (at one, the nap's own timer wakeup
// just replaces the one it saves). That prediction fails for clients that wait for each
// answer before they ask again (a stub, a forwarder with one query out, a health check): their
// next datagram cannot come before the answer, so the short gap is the worker's own
// round trip and every nap gathers one datagram, costing a timer, a sleep and a wakeup per
// query. So each nap is judged by what it gathered: a nap followed by a batch of fewer
// than two holds the next naps back, for 1, 2, 4 ... up to kMaxHoldoff opportunities (each
// useless nap doubling it); a nap that gathered two or more clears the hold.
//
// Cost: a few compares per wakeup; no system call.
#pragma once
#include <algorithm>
#include <cstdint>

namespace dnsarena::workers {

class UdpCoalescing {
public:
  static constexpr unsigned kMaxHoldoff = 256;

  explicit UdpCoalescing(unsigned nap_us) : nap_us_(nap_us) {}

  // Before the worker waits: nap now? `batch`: datagrams the last wakeup read (after a
  // nap: what the nap gathered); `gap_us`: between the last two wakeups; `max_batch`: a
  // wakeup that filled its batch reads on at once, it never naps.
  bool nap_now(unsigned batch, std::uint64_t gap_us, unsigned max_batch) {
    if (nap_us_ == 0) return false;
    if (napped_) {
      napped_ = false;
      if (batch >= 2) {
        backoff_ = 0;
      } else {
        backoff_ = backoff_ == 0 ? 1 : std::min(2 * backoff_, kMaxHoldoff);
        holdoff_ = backoff_;
        ++useless_naps_;
      }
    }
    if (batch == 0 || batch >= max_batch) return false;
    if (std::uint64_t{batch} * nap_us_ < 2 * gap_us) return false;
    if (holdoff_ > 0) {
      --holdoff_;
      return false;
    }
    napped_ = true;
    return true;
  }

  unsigned nap_us() const { return nap_us_; }
  // Naps that gathered fewer than two datagrams, since the start.
  std::uint64_t useless_naps() const { return useless_naps_; }

private:
  unsigned nap_us_;
  bool napped_ = false;
  unsigned backoff_ = 0;   // the hold a next useless nap doubles
  unsigned holdoff_ = 0;   // opportunities still to let pass
  std::uint64_t useless_naps_ = 0;
};

}  // namespace dnsarena::workers
