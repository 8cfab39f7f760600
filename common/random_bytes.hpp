// SPDX-License-Identifier: GPL-3.0-or-later
// Random bytes for what an off-path attacker must not guess (query IDs, 0x20 case bits,
// upstream picks), from the kernel's CSPRNG (getrandom), drawn kRandomBufferBytes at a
// time per thread.
//
// Why a buffer: glibc 2.36's arc4random calls getrandom on every call, and a cold
// resolution draws twice (ID, case bits): two system calls per query, when a worker's
// whole budget for one is about ten. Here one getrandom serves about a hundred queries.
//
// Every byte is handed out once. The buffer lives in a page of its own marked
// MADV_WIPEONFORK: a forked child finds it zeroed (its count of unused bytes too) and
// draws its own, so two workers forked from one supervisor never share bytes, however
// the fork was made. Where the kernel refuses the mark, every call goes to getrandom.
//
// Page layout (one per thread, mmap'd on first use, unmapped when the thread ends):
//   +0      uint32 unused   bytes of `bytes` not handed out yet (0 after a fork)
//   +4..63  padding
//   +64     bytes[kRandomBufferBytes]  handed out from the end down
// The same exposure as any user-space CSPRNG (OpenBSD's arc4random, Unbound's): a reader
// of the process's memory learns the next IDs; nothing else does.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dnsarena::common {

inline constexpr std::size_t kRandomBufferBytes = 4032;  // the page less the header

// Fills out[0..n) with random bytes. Throws std::runtime_error only if getrandom fails.
void random_fill(void* out, std::size_t n);

inline std::uint32_t random_u32() {
  std::uint32_t v;
  random_fill(&v, sizeof v);
  return v;
}

inline std::uint16_t random_u16() {
  std::uint16_t v;
  random_fill(&v, sizeof v);
  return v;
}

}  // namespace dnsarena::common
