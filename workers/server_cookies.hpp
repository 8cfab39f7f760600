// SPDX-License-Identifier: GPL-3.0-or-later
// DNS server cookies (RFC 7873, RFC 9018) as `serve` uses them: where the secret lives,
// and what a worker does with a query's COOKIE option.
//
// Where the secret lives: the supervisor's memory, and nowhere else. It is the config's
// `cookie_secret` or, when absent, 16 random bytes (getrandom) made once at supervisor
// start, before the first fork, so every worker holds the same copy (fork copies it) and
// validates the cookies any other worker made. It is not in the cache segment: a cookie
// proves an address to this service instance, and the segment outlives it and is
// readable by tools. A SIGHUP reload forks new workers from the supervisor's current
// secrets: the secret stays unless the reloaded config names a different one; then that
// one makes every new cookie and the one it replaces still validates (RFC 9018 Appendix
// B rollover: a client's cookie stays good through one change) until the next change.
// A restart of the whole service with no configured secret makes a new one: clients
// then get BADCOOKIE (with cookies_require) or a new cookie with a normal answer once.
//
// What a worker does (answer_cookie): a query with a COOKIE option gets, in every answer
// to it, its client cookie and a server cookie: the one it sent when valid and fresh,
// else a new one (dns/server_cookie.hpp). A valid server cookie over UDP proves the client
// owns its address: that query is exempt from response rate limiting (cookie_valid).
// An invalid one is answered normally with a new cookie (RFC 7873 5.2.3), or, with
// cookies_require, over UDP with BADCOOKIE and only the OPT (cookie_badcookie). Cookies
// are written into each answer's OPT when it is sent, never into the cache entry.
//
// Costs: a cookie query costs one SipHash (about 370 instructions) to check and, when
// the cookie is not echoed, one more to make; a query without one costs a branch.
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

#include "dns/server_cookie.hpp"

namespace dnsarena::workers {

// Parses a 16-byte secret written as 32 hex digits. Throws std::invalid_argument.
dns::SipHashKey parse_cookie_secret(const std::string& hex);

// The supervisor's secrets at start: the configured one, else random bytes.
dns::CookieSecrets initial_cookie_secrets(const std::optional<dns::SipHashKey>& configured);

// After a reload: a configured secret other than the current one becomes current and the
// current one previous. Returns true when the secrets changed.
bool reload_cookie_secrets(dns::CookieSecrets& secrets, const std::optional<dns::SipHashKey>& configured);

// Replaces `cookie` (the query's, len > 0) by the one the answer carries, for `client`
// at `now`. Returns true when the query's server cookie was valid.
bool answer_cookie(dns::Cookie& cookie, const sockaddr_storage& client, std::uint32_t now,
                   const dns::CookieSecrets& secrets);

}  // namespace dnsarena::workers
