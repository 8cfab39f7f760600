// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/failpoint.hpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Failpoints: named points between the shared-memory write steps of a writer, where a
// test can make this process die (SIGKILL), throw, or act as a concurrent reader.
//
// One mechanism for every crash test: a process installs one handler with
// set_failpoint(); each write step calls failpoint(step, detail) right after the store
// it names (or before the first store of the operation, for the *_begin steps). With no
// handler installed the call is one relaxed load and a predicted branch, on writer paths
// only (never on lookups).
//
// A test forks a writer, installs a handler that raises SIGKILL at step k (and, for
// steps reached many times, at the n-th call), and checks what the next writer's
// repair() leaves: kill_reclaim_test.cpp, crash_step_test.cpp.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>

namespace dnsarena::frozen3 {

enum class FailStep : std::uint8_t {
  // Segment::create (segment.cpp)
  create_sized,          // the temporary object exists and is sized/reserved, header not written
  create_header_written, // header written (READY), not yet linked under its name
  // append (log_arena.cpp)
  append_copied,         // entry bytes copied into the head region, fill not yet published
  append_published,      // fill published, bytes_in_use not yet counted
  head_advanced,         // head_and_free moved to the next (free) region
  // place (cache_write.cpp)
  place_replaced,        // the key's old slot now points at the new entry
  place_linked,          // a free slot now holds the new entry, live_entries not yet counted
  displace_new_linked,   // cuckoo step: the new entry took the resident's slot; the resident
                         // is not yet linked from its other bucket (detail: 0)
  displace_done,         // cuckoo step: the resident is linked from its other bucket
  conflict_unlinked,     // both buckets full: the victim slot was cleared, new one not stored
  // erase
  erase_unlinked,        // the slot was cleared, live_entries not yet decremented
  // reclaim (log_arena.cpp); detail = entries of the region dealt with so far
  reclaim_entry,         // before dealing with the next entry of the region
  reclaim_region_emptied,// every entry dealt with, fill set to 0, generation not yet bumped
  reclaim_generation_bumped,  // generation bumped, region not yet counted free
  // repair (log_arena.cpp)
  repair_begin,          // repair() entered (a handler may throw here: a failing repair)
};

inline constexpr std::string_view kFailStepNames[] = {
    "create_sized",       "create_header_written", "append_copied",     "append_published",
    "head_advanced",      "place_replaced",        "place_linked",      "displace_new_linked",
    "displace_done",      "conflict_unlinked",     "erase_unlinked",    "reclaim_entry",
    "reclaim_region_emptied", "reclaim_generation_bumped", "repair_begin"};
inline constexpr std::size_t kFailStepCount = sizeof(kFailStepNames) / sizeof(kFailStepNames[0]);
static_assert(static_cast<std::size_t>(FailStep::repair_begin) + 1 == kFailStepCount, "one name per step");

using FailpointHandler = std::function<void(FailStep step, std::uint64_t detail)>;

namespace detail {
extern std::atomic<const FailpointHandler*> g_failpoint;
void run_failpoint(FailStep step, std::uint64_t detail);
}  // namespace detail

// Installs `handler` for this process (an empty function removes it). Tests only.
// REQUIRES: no other thread of this process is writing to a cache meanwhile.
void set_failpoint(FailpointHandler handler);

inline void failpoint(FailStep step, std::uint64_t detail = 0) {
  if (detail::g_failpoint.load(std::memory_order_relaxed) != nullptr) [[unlikely]]
    detail::run_failpoint(step, detail);
}

}  // namespace dnsarena::frozen3
