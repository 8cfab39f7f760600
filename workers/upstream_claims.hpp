// SPDX-License-Identifier: GPL-3.0-or-later
// One upstream query per name per host: which worker is asking the upstream for which
// question right now, shared by every worker of one `dnsarena serve`.
//
// A worker that misses on a question first claims it here. If another worker already
// holds a live claim for it, the miss does not go upstream: the worker registers its row
// as a waiter and parks its client. When the owner's query ends, the owner has already
// put the answer into the shared cache (or, an answer the cache did not take, into the
// claim's answer slot: answer_slots.hpp; or the failure into the failure cache), then it
// releases the claim and wakes every waiting row through that row's eventfd; the woken
// worker answers its parked clients from the slot, else resolves them again (the cache). A claim whose owner was
// killed is released by the replacement worker on the same row before it serves
// (release_row), and in any case is ignored once it is older than the longest a query
// can live (max_life_ms): a parked client never waits past its response deadline.
//
// Memory: an anonymous shared mapping made by the supervisor before the first fork (as
// in_flight_names.hpp), plus one eventfd per row, created then and inherited.
//
//   offset      size   field     meaning
//   0           8      seed      random; mixes the slot choice and the tag
//   8           8      base_ms   CLOCK_MONOTONIC milliseconds at creation
//   16          4      slots     a power of two
//   20          4      rows      worker rows (<= 64: a row is a bit of `waiters`)
//   24          40     (zero)    so that slot 0 starts on a cache line
//   64 + 16*i   8      claim i   |63 -- 40: tag (24)|39 -- 32: owner row|31 -- 0: started_ms|
//                                0 = free; started_ms relative to base_ms (49 days)
//   72 + 16*i   8      waiters i bit r: row r waits for this claim
//
// A question (the in-flight key: qname, qtype, DO/CD and the ECS subnet sent) maps to one
// slot. Two questions on one slot: the second finds the slot held for another tag and
// goes upstream on its own (unavailable), exactly as without this table.
//
// Concurrency: peek: one load of the claim word. claim: CAS of the claim word from free (or from a claim older than
// max_life_ms) to ours. wait_on: fetch_or of the row's bit into waiters, then a reload of
// the claim word: if the claim is no longer the one waited on, the owner may have
// released (and read waiters) before the bit landed, so the caller resolves at once
// instead of waiting. release: store 0 into the claim word, then exchange waiters with 0,
// then write to each waiting row's eventfd. A bit that lands after the exchange (the
// waiter then sees the claim gone and does not wait) stays set until the slot's next
// release, which wakes that row once for nothing: a spurious wake-up only makes a worker
// look at its parked clients. All seq_cst.
// Crash safety: a killed owner leaves its claim; its row's replacement releases it (and
// wakes its waiters); until then waiters keep their deadline.
//
// Costs: claim and release are one cache line and one CAS or store + exchange; a release
// with waiters writes 8 bytes per waiting row's eventfd. 64 + 16 x slots bytes (16,384
// slots: 256 KiB).
#pragma once
#include "common/anonymous_mapping.hpp"
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace dnsarena::workers {

class UpstreamClaims {
public:
  static constexpr std::uint32_t kDefaultSlots = 16384;
  static constexpr unsigned kMaxRows = 64;

  // Maps the table for `rows` worker rows (shared across fork() when `shared`) and makes
  // one non-blocking eventfd per row. Throws std::system_error when mmap or eventfd fails.
  UpstreamClaims(unsigned rows, std::uint32_t slots, bool shared);
  ~UpstreamClaims();
  UpstreamClaims(const UpstreamClaims&) = delete;
  UpstreamClaims& operator=(const UpstreamClaims&) = delete;

  struct Claim {
    std::uint32_t slot = 0;
    std::uint64_t value = 0;  // the claim word; 0: none
  };
  enum class Outcome {
    claimed,      // ours: release it when the query ends
    held,         // another row holds a live claim (in *claim): wait on it
    unavailable,  // the slot is held for another question, or the row is past kMaxRows
  };
  Outcome claim(std::uint64_t question_hash, unsigned row, std::uint64_t now_ms, std::uint64_t max_life_ms,
                Claim* claim);
  // Whether a live claim holds this question (in *claim), without claiming it when free:
  // for a caller that waits on a claim only if there is one (denial_claims.hpp).
  bool peek(std::uint64_t question_hash, std::uint64_t now_ms, std::uint64_t max_life_ms, Claim* claim) const;
  // Registers `row` as waiting for `claim`. False: the claim has ended already (resolve now).
  bool wait_on(const Claim& claim, unsigned row);
  // Whether `claim` still holds its slot and is younger than max_life_ms.
  bool holds(const Claim& claim, std::uint64_t now_ms, std::uint64_t max_life_ms) const;
  // Ends a claim this row made, waking the rows that wait for it.
  void release(const Claim& claim);
  // Releases every claim of `row` (a worker starting on a row its predecessor died on).
  void release_row(unsigned row);

  unsigned rows() const { return header_->rows; }
  int wake_fd(unsigned row) const { return row < wake_fds_.size() ? wake_fds_[row] : -1; }
  // Empties the row's eventfd (after a wake-up).
  void drain(unsigned row) const;

private:
  struct Header {
    std::uint64_t seed;
    std::uint64_t base_ms;
    std::uint32_t slots;
    std::uint32_t rows;
    std::uint8_t zero[40];
  };
  struct Slot {
    std::atomic<std::uint64_t> claim;
    std::atomic<std::uint64_t> waiters;
  };
  static_assert(sizeof(Header) == 64, "slot 0 starts on its own cache line");
  static_assert(offsetof(Header, slots) == 16 && offsetof(Header, rows) == 20, "the documented layout");
  static_assert(sizeof(Slot) == 16 && offsetof(Slot, waiters) == 8, "the documented layout");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
                "slots are shared between processes: only lock-free atomics are address-free");
  std::uint64_t relative(std::uint64_t now_ms) const {
    return now_ms > header_->base_ms ? now_ms - header_->base_ms : 0;
  }
  bool live(std::uint64_t value, std::uint64_t now_ms, std::uint64_t max_life_ms) const;
  // A question's slot and its tag (never 0).
  std::pair<std::uint32_t, std::uint64_t> place(std::uint64_t question_hash) const;
  void wake(std::uint64_t rows_mask) const;

  common::AnonymousMapping map_;
  Header* header_ = nullptr;
  Slot* slots_ = nullptr;
  std::vector<int> wake_fds_;
};

}  // namespace dnsarena::workers
