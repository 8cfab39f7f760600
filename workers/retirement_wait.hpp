// SPDX-License-Identifier: GPL-3.0-or-later
// The supervisor's wait, in a reload, for the workers it retired to stop reading their
// sockets. Until a retired worker handles its kRetireSignal it may still read the shared
// UDP socket or accept, and answer with the previous config (an access_control "refuse"
// not yet in force, a blocklist entry not yet blocked). Each one says when it has stopped
// by writing kBeatRetired on its heartbeat pipe (worker.hpp); the reload is reported done
// (logged, READY to systemd) only after that, or after the bound.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace dnsarena::workers {

// A retired worker at most this long after its signal: a worker handles the signal within
// one pass of its event loop (epoll_pwait ends at once). Only a stopped or hung worker
// reaches it; the reload then goes on, with a warning, rather than wait for it.
inline constexpr std::uint64_t kRetireAckTimeoutMs = 2000;

// Reads the heartbeat pipes (read ends, non-blocking) of the workers just retired until
// each has delivered kBeatRetired or reached end of file (it exited), or `timeout_ms`
// passed. kBeatAlive bytes read on the way are dropped (a retired worker's beats are not
// watched). Returns the positions in `beat_fds` that did neither; a negative fd (a worker
// without a pipe) counts as not confirmed.
std::vector<std::size_t> await_stopped_reading(std::span<const int> beat_fds, std::uint64_t timeout_ms);

}  // namespace dnsarena::workers
