// SPDX-License-Identifier: GPL-3.0-or-later
// The RPZ zones serve fetches by zone transfer (policy.rpz entries with a `primary:`),
// as the config gives them, and the strict reader of one entry.
//
//   policy:
//     notify_listen: 127.0.0.1@5353      where NOTIFY is received (UDP); none: refresh only
//     rpz:
//       - zone: rpz.example.             the zone's origin
//         primary: 192.0.2.1@53          the primary, ADDRESS[@PORT] (port 53 by default)
//         file: rpz.example.zone         where the transferred zone is kept: written
//                                        atomically after each transfer (binary,
//                                        policy/rpz_copy_file.hpp; `dnsarena policy
//                                        export` prints it), read at start so a
//                                        restart serves the last policy at once
//         tsig: {name: k, algorithm: hmac-sha256, secret: BASE64}   or {file: PATH}
//                                        (a keymgr / knsupdate key file, "alg:name:secret")
//         refresh: 300                   seconds between SOA refreshes; 0 (default): the
//                                        zone's SOA refresh, bounded to 30 s .. 1 day
//         notify_from: [192.0.2.0/28]    who may send NOTIFY (default: the primary's address)
//         max_records: 10000000          a transfer past these bounds is refused
//         max_bytes: 2147483648
//         timeout_ms: 60000              a transfer that takes longer is cut
//
// Unbound: `rpz: name:, primary:, zonefile:, tsig-key-name:`, `allow-notify:`;
// Knot Resolver 6: none (policy.rpz on files only).
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dns/knot_packet.hpp"  // libknot (knot_tsig_key_t), inside extern "C"

#include "workers/subnet.hpp"

namespace dnsarena::common {
class MapReader;
}

namespace dnsarena::workers {

// An address and port as "ADDRESS[@PORT]" (Knot DNS's form), `default_port` when none.
struct XfrAddress {
  sockaddr_storage addr{};
  socklen_t len = 0;
  std::string text;
  // Throws std::invalid_argument naming what is wrong.
  static XfrAddress parse(const std::string& s, std::uint16_t default_port);
  bool operator==(const XfrAddress& o) const { return text == o.text; }
};

struct TsigConfig {
  std::string name;       // the key's name (empty: no TSIG)
  std::string algorithm;  // hmac-sha256 unless given
  std::string secret;     // base64
  std::string file;       // or a key file ("[algorithm:]name:secret"); name is then read from it
  bool operator==(const TsigConfig&) const = default;
  bool enabled() const { return !name.empty(); }
};

struct RpzTransferConfig {
  std::string zone;  // absolute, lowercase, "rpz.example."
  XfrAddress primary;
  std::string file;
  TsigConfig tsig;
  unsigned refresh_s = 0;  // 0: the SOA's refresh, bounded
  std::vector<Subnet> notify_from;
  std::uint64_t max_records = 10'000'000;
  std::uint64_t max_bytes = 2ull << 30;
  unsigned timeout_ms = 60'000;
  bool operator==(const RpzTransferConfig&) const = default;
};

struct RpzTransfers {
  std::vector<RpzTransferConfig> zones;
  XfrAddress notify_listen;  // len 0: no NOTIFY socket
  bool operator==(const RpzTransfers&) const = default;
};

// The SOA refresh bounds when the config gives no refresh.
inline constexpr unsigned kMinRefreshS = 30;
inline constexpr unsigned kMaxRefreshS = 86'400;

// The libknot key of `c` (REQUIRES: c.enabled()); the caller knot_tsig_key_deinit()s it.
// Returns a libknot error code (KNOT_EOK on success).
int make_tsig_key(const TsigConfig& c, knot_tsig_key_t& key);

// Throws std::invalid_argument: a zone given twice, notify_listen without a zone.
void validate_rpz_transfers(const RpzTransfers& t);

// Reads one policy.rpz entry that has a `primary:` (and finishes `r`). A relative file or
// key file is relative to `dir`. Throws ConfigError at the bad key.
RpzTransferConfig read_rpz_transfer(common::MapReader& r, const std::string& dir);

}  // namespace dnsarena::workers
