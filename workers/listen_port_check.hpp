// SPDX-License-Identifier: GPL-3.0-or-later
// Refusing to start on a port another process already serves.
//
// Our listening sockets set SO_REUSEPORT (one UDP socket per worker), so the kernel would
// also let a second, unrelated `dnsarena serve` (same user) bind the same address: the
// two would then split the port's queries between two caches and configurations, with
// no error anywhere. Before binding, the supervisor binds the address once WITHOUT
// SO_REUSEPORT, which fails with EADDRINUSE exactly when some socket already holds it.
#pragma once
#include <chrono>
#include <string>

#include "serve_config.hpp"

namespace dnsarena::workers {

// "" when nothing listens on `listen` (UDP or TCP), else why we must not bind it, naming
// the processes that hold it where /proc shows them ("UDP 127.0.0.1:53 is already bound
// by pid 812 (unbound)"). Retries for up to `grace`: the workers of a serve whose
// supervisor was just killed still hold the sockets they inherited until they exit.
std::string listen_port_taken(const Endpoint& listen, std::chrono::milliseconds grace);

}  // namespace dnsarena::workers
