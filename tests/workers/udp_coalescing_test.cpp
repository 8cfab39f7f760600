// SPDX-License-Identifier: GPL-3.0-or-later
// When a worker naps before waiting for datagrams (workers/udp_coalescing.hpp): the rate's
// prediction, and the hold after naps that gathered fewer than two datagrams.
#include <catch2/catch.hpp>

#include "workers/udp_coalescing.hpp"

using dnsarena::workers::UdpCoalescing;

namespace {
constexpr unsigned kBatch = 64;
}

TEST_CASE("udp coalescing: off never naps, nor after an empty or a full batch", "[coalesce]") {
  UdpCoalescing off(0);
  CHECK_FALSE(off.nap_now(10, 1, kBatch));
  UdpCoalescing on(100);
  CHECK_FALSE(on.nap_now(0, 1, kBatch));
  CHECK_FALSE(on.nap_now(kBatch, 1, kBatch));
}

TEST_CASE("udp coalescing: naps only when at least two datagrams are due within the nap", "[coalesce]") {
  UdpCoalescing c(100);
  CHECK_FALSE(c.nap_now(1, 51, kBatch));  // 1 x 100 us / 51 us: under two
  CHECK(c.nap_now(1, 50, kBatch));        // exactly two
}

TEST_CASE("udp coalescing: naps that gather batches go on", "[coalesce]") {
  // Many clients: each nap finds several datagrams, so every opportunity is taken.
  UdpCoalescing c(100);
  unsigned naps = 0;
  for (int i = 0; i < 1000; ++i) naps += c.nap_now(6, 120, kBatch);
  CHECK(naps == 1000);
  CHECK(c.useless_naps() == 0);
}

TEST_CASE("udp coalescing: a client that waits for each answer stops the naps", "[coalesce]") {
  // One datagram per wakeup 40 us apart (the worker's own round trip): the rate predicts
  // 2.5 per nap, but every nap gathers one.
  UdpCoalescing c(100);
  unsigned naps = 0;
  for (int i = 0; i < 10000; ++i) naps += c.nap_now(1, 40, kBatch);
  // Holds of 1, 2, 4 ... 256 and then one nap per 257 opportunities.
  CHECK(naps <= 9 + 10000 / (UdpCoalescing::kMaxHoldoff + 1) + 1);
  CHECK(naps >= 10000 / (UdpCoalescing::kMaxHoldoff + 1));
  CHECK(c.useless_naps() >= naps - 1);
}

TEST_CASE("udp coalescing: a nap that gathers a batch clears the hold", "[coalesce]") {
  UdpCoalescing c(100);
  // Useless naps until the hold is long.
  for (int i = 0; i < 2000; ++i) c.nap_now(1, 40, kBatch);
  // Run to the next nap, then let it gather four datagrams.
  int steps = 0;
  while (!c.nap_now(1, 40, kBatch)) REQUIRE(++steps <= static_cast<int>(UdpCoalescing::kMaxHoldoff) + 1);
  CHECK(c.nap_now(4, 40, kBatch));  // the batch the nap gathered: the hold is gone
  CHECK(c.nap_now(4, 40, kBatch));
}
