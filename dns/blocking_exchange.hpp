// SPDX-License-Identifier: GPL-3.0-or-later
// One query and its reply, blocking, for the operator tools (not the workers' event
// loop): UDP first, TCP when the reply is truncated. A reply counts only when it comes
// from the server asked, carries the query's ID and repeats its question (case
// included); anything else on the socket is ignored, so an off-path sender must guess
// the ID and the port. Each UDP attempt waits `timeout`; TCP gets one connection and the
// same timeout for each step.
#pragma once
#include <sys/socket.h>

#include <chrono>
#include <span>
#include <string>

#include "common/bytes.hpp"

namespace dnsarena::dns {

struct Exchange {
  common::Bytes reply;  // empty: none; `error` says why
  bool tcp = false;     // the reply came over TCP
  std::string error;
};

Exchange exchange_blocking(const sockaddr_storage& server, socklen_t server_len, std::span<const std::uint8_t> query,
                           std::chrono::milliseconds timeout, unsigned udp_attempts = 3);

}  // namespace dnsarena::dns
