// SPDX-License-Identifier: GPL-3.0-or-later
// Configuration of `dnsarena serve`: what the YAML file holds, its defaults, validation.
//
// Purpose: one plain struct that the supervisor and every worker read; built from
// configs/serve.yaml (load_serve_config) and then overridden by command-line flags.
//
// YAML layout (every key optional; unknown keys are rejected with file:line:column):
//
//   listen: [127.0.0.1:8053, "[::1]:8053"]   address:port for UDP and TCP (IPv4 or [IPv6]),
//                                  one or a list; each gets one UDP socket per worker and
//                                  one TCP listener. A wildcard (0.0.0.0:53, [::]:53)
//                                  answers every datagram from the address it was sent to
//                                  (udp_pktinfo.hpp); [::] is IPv6 only, so 0.0.0.0 and ::
//                                  can both be listed
//   max_udp_size: 1232             largest answer over UDP (512 .. 4096): a client offering
//                                  more still gets at most this, larger answers get TC and
//                                  are asked again over TCP (DNS Flag Day 2020: no IP
//                                  fragmentation, which loses packets and lets an off-path
//                                  attacker splice forged fragments into an answer)
//   workers: 0                     worker processes; 0 = one per core
//   upstreams: [127.0.0.1:5300]    the root zone "." (every name); which one a miss asks:
//                                  upstream_health below; a timeout moves to another
//   upstreams_trust_ad: false      pass the upstreams' AD bit to clients (a validating
//                                  resolver on a trusted path); else AD is cleared, over
//                                  TLS too; a reload that takes it away also clears AD on
//                                  what was cached before (ad_trust.hpp)
//   forward_zones: [{zone: example.com, upstreams: [192.0.2.53:53], trust_ad: false}]   longest zone wins;
//                                  an upstream speaks only for names in its zone
//                                  (records outside it are scrubbed); a name in no
//                                  zone is REFUSED
//   upstream_timeout_ms: 1000      first attempt; later ones wait 2x, then 4x (backoff); an
//                                  upstream's RTO replaces it when shorter (at least 50 ms)
//                                  and the miss has another upstream to fail over to
//   upstream_attempts: 0           attempts per miss; 0 = max(3, number of upstreams)
//   query_timeout_ms: 10000        the query resolution timer: a miss's attempts (and the
//                                  late replies to earlier ones) go on at most this long,
//                                  and a client with nothing stale waits for the answer
//                                  until then before SERVFAIL + EDE 22 (client_timers.hpp).
//                                  1 .. 600000. Knot Resolver gives a request 10 s
//                                  (KR_RESOLVE_TIME_LIMIT, fixed); Unbound has no total
//                                  limit (its retries of each server end the query)
//   upstream_max_in_flight: 1024   distinct upstream queries per worker; when full, a new
//                                  miss replaces the oldest query if that one has waited
//                                  upstream_jostle_timeout_ms, else it gets SERVFAIL.
//                                  Capped by the descriptor budget (below). Also bounds
//                                  the clients waiting per worker (64 per slot)
//   upstream_jostle_timeout_ms: 200   0 = never replace (as Unbound's jostle-timeout)
//   upstream_max_per_name: 32      upstream queries for one name and type (any ECS
//                                  subnet) in flight on the host, all workers together
//   upstream_case_randomization: true   0x20: random qname case, echoed exactly
//   upstream_health: {rtt_band_ms: 400, down_after_timeouts: 3, down_backoff_initial_ms: 1000,
//                     down_backoff_max_ms: 5000}
//                                  shared by every worker (upstream_health.hpp): a miss
//                                  goes to a random upstream among those not down whose
//                                  smoothed RTT is within rtt_band_ms of the fastest; an
//                                  upstream silent for down_after_timeouts attempts in a
//                                  row (no reply to anything within their RTO window:
//                                  slow names at a live server do not count) is down:
//                                  skipped, probed once per interval (from the initial to
//                                  the max, doubling) until it answers. When every
//                                  upstream of a zone is down a miss still goes to the one
//                                  last heard from (at most down_after_timeouts in flight
//                                  per upstream and worker); past that it is answered at
//                                  once (stale, else SERVFAIL)
//   udp: {receive_buffer: 4M, send_buffer: 4M}   listening socket buffers; 0 = system's
//   udp: {coalesce_us: 100}        at a rate of at least two datagrams per coalesce_us, a
//                                  worker naps this long after a batch before waiting
//                                  again, so one wakeup takes several datagrams (as a
//                                  NIC's interrupt moderation); 0 = off, at most 1000.
//                                  Adds up to this much latency under such rates only;
//                                  naps that gather fewer than two datagrams hold the
//                                  next ones back (udp_coalescing.hpp)
//   access_control: ["127.0.0.0/8 allow", "::1 allow"]   SUBNET allow|refuse|deny
//   proxy_protocol_from: [10.0.0.5/32]   load balancers that put a PROXY protocol v2
//                                  header in front of every UDP datagram and at the start
//                                  of every TCP, DoT and DoH connection (before TLS); at
//                                  most 64 subnets, none = off. The client address a header
//                                  carries replaces the balancer's everywhere (access_control,
//                                  rate_limit, cookies, ECS, dnstap, rpz-client-ip, the
//                                  per-client TCP bound); the answer goes to the balancer.
//                                  A listed source without a valid header, or a header from
//                                  any other source, is dropped and counted
//                                  (proxy_protocol.hpp)
//   rate_limit: {responses_per_second: 0, slip: 2, ipv4_prefix: 24, ipv6_prefix: 56,
//                table_size: 65536}        per client subnet over UDP and per host: every
//                                  worker counts in one shared table (rate_limit_table.hpp);
//                                  0 = off
//   cookies: true                  DNS server cookies (RFC 7873, RFC 9018 format): a query
//                                  with a COOKIE option gets a server cookie back; a valid
//                                  one exempts its query from rate_limit (server_cookies.hpp)
//   cookies_require: false         over UDP, a query with a COOKIE option but no valid server
//                                  cookie gets BADCOOKIE with a new cookie instead of an
//                                  answer (queries with no COOKIE option are answered)
//   cookie_secret: 32 hex digits   the 16-byte server secret, the same on every server of an
//                                  anycast pool; absent: random at start. Changed by a
//                                  reload: the previous one still validates until the next
//   cache: {segment: dnsarena, max_entries: 1000000, arena_bytes: 256M, region_bytes: 1M,
//           reset_on_mismatch: false}
//   ttl: {floor: 0, ceiling: 86400, negative_ceiling: 3600}
//   stale: {max_age_s: 86400, client_timeout_ms: 1800, answer_first: false, ttl_s: 30}
//                                  serve-stale (RFC 8767; Unbound serve-expired-ttl,
//                                  serve-expired-client-timeout, serve-expired-reply-ttl):
//                                  an expired entry still held answers (TTL ttl_s, EDE 3 or
//                                  19) when the upstream fails, the name is in the failure
//                                  cache, or no answer came within client_timeout_ms (RFC
//                                  8767's client response timer: it decides only when a
//                                  stale answer goes out; with nothing stale the client
//                                  waits for the answer, up to query_timeout_ms). max_age_s
//                                  0: never stale. answer_first: answer stale at once and
//                                  refresh in the background (serve-expired-client-timeout: 0)
//   failure_cache: {min_s: 1, max_s: 300}   a name whose upstream queries all failed is not
//                                  asked again for min_s, doubling to max_s while it keeps
//                                  failing (RFC 9520); host-wide
//   prefetch: {percent: 10}        a hit in the last percent of an entry's TTL refreshes it
//                                  in the background (Unbound prefetch); 0 = off
//   mrc: {enabled: true, sample_rate: 0.001, min_sampled_entries: 1000, max_sampled_entries: 65536}
//                                  miss-ratio curves: the hit rate the cache would have at
//                                  1/8x..8x its size, from miniature copies fed with a
//                                  hash-sampled share R of the keys (miss_ratio_curves.hpp;
//                                  `dnsarena stats --mrc`, /metrics). R = sample_rate, raised
//                                  or lowered so that R x max_entries lies between the two
//                                  bounds (max <= 16,777,216). Changed only by a restart
//   ecs: {policy: off|forward|synthesize, ipv4_prefix: 24, ipv6_prefix: 56}
//   policy: {local_zone: ["ads.example always_nxdomain"], local_data: ["www.example. 300 A 192.0.2.1"],
//            rpz: [{file: block.rpz, name: rpz.example.}]}   response policy before the cache
//                                  (policy/): the local zone first, then each RPZ file in
//                                  order; a relative file is relative to this config's
//                                  directory; name: the zone's origin (default: its SOA owner).
//                                  watch_interval_ms (5000; 0 = off, else >= 100): how often
//                                  the RPZ files are looked at; a changed one is compiled and
//                                  swapped in as by a SIGHUP (policy/zone_file_watch.hpp).
//                                  Unbound's default local zones (localhost., test., onion.,
//                                  invalid., home.arpa., the loopback and AS112 reverse
//                                  zones) are answered here unless a local_zone of the same
//                                  name replaces one or "NAME nodefault" drops it;
//                                  unblock_lan_zones: true drops the AS112 ones
//                                  (policy/default_local_zones.hpp)
//            rpz: [{zone: rpz.example., primary: 192.0.2.1@53, file: rpz.example.zone,
//                   tsig: {name: k, algorithm: hmac-sha256, secret: B64}, refresh: 0,
//                   notify_from: [192.0.2.1]}], notify_listen: 127.0.0.1@5353
//                                  an RPZ by zone transfer (AXFR, then IXFR on the SOA
//                                  refresh and on NOTIFY received on notify_listen): file
//                                  keeps the last copy; each transfer is compiled and
//                                  swapped in as a changed file is; a failed one keeps the
//                                  running policy (workers/rpz_transfer_config.hpp,
//                                  rpz_transfer_process.hpp). Changed only by a restart
//   dnssec: {trust_anchor_file: /usr/share/dns/root.ds, validate: true,
//            negative_trust_anchors: [example.com], limits: {max_key_tag_collisions: 4,
//            max_signature_validations: 16, max_nsec3_hashes: 64, max_nsec3_iterations: 150}}
//                                  validation of forwarded answers (RFC 4033-4035, RFC 5155;
//                                  validation_jobs.hpp), on when a trust anchor file is set
//                                  (validate: true without one is an error). Upstream
//                                  queries then carry DO and CD; clients without CD get
//                                  secure answers with AD (to DO or AD clients), bogus ones
//                                  SERVFAIL with the RFC 8914 EDE; CD clients the data as
//                                  the upstream sent it. auto_update: true (off by default)
//                                  keeps the anchor file current by RFC 5011 probes from
//                                  the supervisor (trust_anchor_updater.hpp).
//                                  dnssec_config.hpp says the rest
//   dns64: {prefix: 64:ff9b::/96, exclude: ["::ffff:0:0/96"], clients: [192.0.2.0/24]}
//                                  DNS64 (RFC 6147, dns64.hpp), on when the section is
//                                  present: an AAAA query whose answer has no AAAA record
//                                  (NODATA, or only records inside `exclude`) gets AAAA
//                                  records synthesized from the name's A records under
//                                  `prefix` (RFC 6052: length 32, 40, 48, 56, 64 or 96,
//                                  bits 64-71 zero); a PTR query for an address under the
//                                  prefix is answered from the IPv4 address's PTR. exclude:
//                                  IPv6 ranges ([] = none; default the IPv4-mapped range,
//                                  RFC 6147 5.1.4); clients: the client subnets DNS64 is
//                                  for (default: every client). DO+CD queries get the real
//                                  answer (RFC 6147 5.5). Synthesized answers are cached
//                                  under a key of their own (cache_key.hpp: kKeyDns64).
//                                  Unbound: module-config "dns64 ...", dns64-prefix;
//                                  Knot Resolver: dns64.config({prefix, exclude_subnets})
//   private_address: [192.168.0.0/16, fd00::/8]   rebinding protection (Unbound's
//                                  private-address): A/AAAA records of these subnets are
//                                  removed from upstream answers for names outside
//   private_domain: [corp.example]  these domains (workers/private_address.hpp); none = off
//   tcp: {idle_timeout_ms: 10000, max_connections: 256, max_connections_per_client: 32}
//                                  per worker; tcp_server.hpp says what each bounds
//   tls: {listen: [127.0.0.1:853], certificate: /etc/dnsarena/cert.pem, key: /etc/dnsarena/key.pem,
//         handshake_timeout_ms: 5000, max_handshakes: 64, max_connections: 256}
//                                  DNS over TLS (RFC 7858) on these addresses, answered by
//                                  the same workers from the same cache; absent or an
//                                  empty listen = no DoT. certificate: PEM chain, key: PEM
//                                  private key, both read by the supervisor at start
//                                  (a missing, unreadable or mismatched pair stops the
//                                  start) and at each reload (a bad pair keeps the old one).
//                                  DoT connections are a pool of their own, bounded by
//                                  max_connections per worker (default: tcp.max_connections;
//                                  DoT clients keep connections open far longer than plain
//                                  TCP ones, so the two often want different bounds), with
//                                  tcp's idle timeout and per-client bound, plus: a
//                                  handshake not done within
//                                  handshake_timeout_ms closes the connection, and at most
//                                  max_handshakes per worker are in progress (a new one
//                                  closes the oldest). tls_server.hpp says the rest
//   https: {listen: [127.0.0.1:443], path: /dns-query, max_streams: 100, max_connections: 256}
//                                  DNS over HTTPS (RFC 8484, HTTP/2 over TLS, ALPN h2) on
//                                  these addresses, answered by the same workers from the
//                                  same cache; absent or an empty listen = no DoH. It
//                                  serves tls.certificate and tls.key (the tls: section
//                                  names them even without tls.listen) with tls's
//                                  handshake bounds; its connections are a pool of their
//                                  own, bounded as DoT's (max_connections, default
//                                  tcp.max_connections). path: the one endpoint (GET
//                                  ?dns= and POST);
//                                  max_streams: SETTINGS_MAX_CONCURRENT_STREAMS per
//                                  connection. doh_server.hpp says the rest
//   stats: {metrics_listen: 127.0.0.1:9153}   empty string: no /metrics endpoint; a stats
//                                  section without the key keeps the default
//   restart: {backoff_initial_ms: 100, backoff_max_ms: 5000, heartbeat_timeout_ms: 2000}
//   dnstap: {socket: /run/dnsarena/dnstap.sock, client_query: true, client_response: true,
//            forwarder_query: true, forwarder_response: true, identity: "", version: dnsarena,
//            queue: 65536}
//                                  dnstap (https://dnstap.info) of client and upstream
//                                  traffic, off unless socket or file is set (not both):
//                                  socket, a Frame Streams reader's unix socket (every
//                                  worker connects, and reconnects within 1 s when the
//                                  reader restarts); file, one file per worker, FILE.<worker
//                                  index>. identity "" = the host name. queue: frames per
//                                  worker waiting for its writer thread (2 .. 1,048,576;
//                                  at most 32 MiB of them); when full a frame is dropped,
//                                  never the answer (dnstap_writer.hpp)
//   recursion: {enabled: false, root_hints: PATH, max_in_flight: 256, attempt_timeout_ms: 400,
//               max_queries: 32, qname_minimisation: true, local_root: PATH,
//               local_root_zonemd: verify, local_root_from: [ADDRESS[@PORT], ...],
//               local_root_refresh_min_s: 60}
//                                  the workers resolve a miss that no forward zone covers
//                                  themselves, from the root (recursive_client.hpp); every
//                                  key is in recursion_config.hpp. Needs root_hints and no
//                                  `upstreams`; forward_zones keep working beside it.
//                                  local_root: a root zone file answering for the root
//                                  servers inside each worker (RFC 8806, local_root.hpp),
//                                  its ZONEMD checked as local_root_zonemd says;
//                                  local_root_from: kept fresh by AXFR from these
//                                  primaries (local_root_updater.hpp)
//   log_level: info
//
// Descriptors (descriptor_budget.hpp): RLIMIT_NOFILE is per process, so each worker splits
// its own at start: what it has open plus a margin of 32 first, then its stream connection
// pools (tcp.max_connections, and tls.max_connections and https.max_connections when those
// listen), and what is left for upstream queries (one socket each), at most
// upstream_max_in_flight. Worker 0 logs the split once, e.g. "descriptors per worker:
// limit 1024: 11 open + 32 margin, TCP 256, upstream 725 (of 1024 configured)". A limit
// that cannot hold the pools and 64 upstream queries is warned about with its numbers and
// split in half between the pools (each shrunk in proportion) and upstream, so stream
// clients still get in.
//
// Sizes accept K/M/G suffixes (powers of 1024). Loading is done once per start; cost is
// irrelevant.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/segment.hpp"
#include "common/config_error.hpp"
#include "policy/policy_config.hpp"
#include "workers/private_address.hpp"
#include "workers/access_control.hpp"
#include "workers/dnssec_config.hpp"
#include "workers/dns64.hpp"
#include "workers/rate_limiter.hpp"
#include "workers/subnet.hpp"
#include "workers/rpz_transfer_config.hpp"
#include "workers/mrc_settings.hpp"
#include "workers/recursion_config.hpp"

namespace dnsarena::workers {

// An IP address and port, parsed from "1.2.3.4:53" or "[::1]:53".
struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
  std::string text;
  static Endpoint parse(const std::string& s);  // throws std::invalid_argument
  int family() const { return addr.ss_family; }
  std::uint16_t port() const;
  // 0.0.0.0 or :: (any local address).
  bool wildcard() const;
  // The same family, address and port (whatever the text said).
  bool same_address(const Endpoint& other) const;
};

// Listen addresses at most (each holds one UDP socket per worker and a TCP listener).
inline constexpr std::size_t kMaxListen = 64;
// proxy_protocol_from's subnets at most (each datagram from a balancer scans them).
inline constexpr std::size_t kMaxProxySources = 64;

// "127.0.0.1:53, [::1]:53": the endpoints' texts for logs and messages.
std::string join_endpoints(const std::vector<Endpoint>& endpoints);

// How a forward zone's upstreams are asked (upstream_client.hpp, upstream_stream.hpp):
// udp, with TCP only after TC (one connection per retry); tcp or tls, over one kept
// connection per worker and upstream, queries pipelined (RFC 7766), TLS as RFC 7858 with
// the certificate verified against tls_auth_name (RFC 8310 strict).
enum class UpstreamTransport : std::uint8_t { udp, tcp, tls };
const char* to_string(UpstreamTransport t);
UpstreamTransport parse_upstream_transport(const std::string& s);  // throws std::invalid_argument

// Names at or below `name` go to `upstreams` (Unbound forward-zone, Knot Resolver
// policy.FORWARD with a suffix filter).
struct ForwardZone {
  std::string text;                         // "example.com."
  std::basic_string<std::uint8_t> name;     // lowercase wire form
  std::vector<Endpoint> upstreams;
  // The upstreams' AD bit (RFC 4035 3.2.3: they validated the answer) reaches clients only
  // when they are trusted to validate and the path to them is trusted (RFC 6840 5.8:
  // plain UDP/TCP can be forged or altered on the way); otherwise it is cleared.
  // trust_ad alone decides: TLS authenticates the path, not the validation, so an
  // upstream reached over TLS that is not trusted to validate gets its AD cleared too.
  bool trust_ad = false;
  UpstreamTransport transport = UpstreamTransport::udp;
  std::string tls_auth_name;  // tls: the name the upstreams' certificates must carry
  std::string tls_ca_file;    // tls: PEM trust anchors ("": the system's store)
  static ForwardZone make(const std::string& zone, std::vector<Endpoint> upstreams);  // throws invalid_argument
  bool contains(const std::uint8_t* wire_name) const;  // at or below the zone, case aside
};

// upstream_health (upstream_health.hpp says how each is used). The defaults:
//   rtt_band_ms 400             Unbound's RTT_BAND: servers within 400 ms of the fastest
//                               share the load (and a new one, counted at 376 ms, is tried)
//   down_after_timeouts 3       Unbound's TIMEOUT_COUNT_MAX; a timeout counts only when the
//                               server sent nothing within the attempt's RTO window (late
//                               replies included), so one lost packet, or slow names at a
//                               live server, never take it down
//   down_backoff_initial_ms 1000  the first probe after a second: what one attempt's
//                               default timeout costs; a server that merely blinked is back
//                               within a second
//   down_backoff_max_ms 5000    Unbound probes a blacklisted server every 12 to 120 s, but
//                               it keeps asking the others meanwhile; here a zone whose
//                               upstreams are all down sends a few misses to the one last
//                               heard from and fails the rest at once (stale or
//                               SERVFAIL) until a reply or a probe finds one back: after the
//                               upstream returns that lasts up to one interval plus one
//                               probe's timeout (a 30 s cap: up to 31 s; measured once at
//                               1,000 q/s, 6 s and 3,468 such answers; this cap: 4 s),
//                               while a probe costs one SOA query per interval and
//                               upstream on the host (0.2 q/s)
struct UpstreamHealthConfig {
  unsigned rtt_band_ms = 400;
  unsigned down_after_timeouts = 3;
  unsigned down_backoff_initial_ms = 1000;
  unsigned down_backoff_max_ms = 5000;
};

// dnstap output (dnstap_writer.hpp; the YAML keys above). Off while socket and file are empty.
struct DnstapConfig {
  std::string socket;  // a Frame Streams unix socket (fstrm_capture -u, a collector)
  std::string file;    // or files: FILE.<worker index>, one per worker process
  bool client_query = true;
  bool client_response = true;
  bool forwarder_query = true;
  bool forwarder_response = true;
  std::string identity;  // empty: the host name
  std::string version = "dnsarena";
  // Frames per worker waiting for its writer thread: up to 16,384 in fstrm's queue, the
  // rest in the worker's backlog (dnstap_writer.hpp).
  unsigned queue = 65536;
  static constexpr unsigned kMaxQueue = 1u << 20;
  bool enabled() const { return !socket.empty() || !file.empty(); }
};

// DNS over TLS (the tls: section above). The files are read by the supervisor
// (tls_credentials.hpp), not here: the config says where they are.
struct TlsConfig {
  std::vector<Endpoint> listen;  // empty: no DoT
  std::string certificate;       // PEM certificate (chain) file
  std::string key;               // PEM private key file
  unsigned handshake_timeout_ms = 5000;
  unsigned max_handshakes = 64;  // per worker, in progress at once
  unsigned max_connections = 0;  // per worker; 0: tcp.max_connections (ServeConfig::tls_max_connections)
  bool enabled() const { return !listen.empty(); }
};

// DNS over HTTPS (the https: section above); certificate and key are TlsConfig's.
struct HttpsConfig {
  std::vector<Endpoint> listen;  // empty: no DoH
  std::string path = "/dns-query";
  unsigned max_streams = 100;    // per connection
  unsigned max_connections = 0;  // per worker; 0: tcp.max_connections (ServeConfig::https_max_connections)
  bool enabled() const { return !listen.empty(); }
};

enum class EcsPolicy { off, forward, synthesize };
const char* to_string(EcsPolicy p);
EcsPolicy parse_ecs_policy(const std::string& s);  // throws std::invalid_argument

struct ServeConfig {
  // At least one, none twice. The default port is no well-known one: not 5353, mDNS's,
  // where avahi answers on many desktops.
  std::vector<Endpoint> listen{Endpoint::parse("127.0.0.1:8053")};
  unsigned workers = 0;  // 0 = one per core (resolved by resolved_workers())
  unsigned max_udp_size = 1232;  // answers over UDP: at most min(the client's EDNS size, this)
  std::vector<Endpoint> upstreams;         // the "." zone
  bool upstreams_trust_ad = false;         // the "." zone's trust_ad (ForwardZone)
  UpstreamTransport upstreams_transport = UpstreamTransport::udp;  // the "." zone's transport
  std::string upstreams_tls_auth_name;     // ... and its TLS settings (ForwardZone)
  std::string upstreams_tls_ca_file;
  unsigned upstream_idle_timeout_ms = 8000;  // tcp/tls: a connection with nothing in flight this long is closed
  std::vector<ForwardZone> forward_zones;  // more zones (a "." entry here replaces upstreams)
  unsigned upstream_timeout_ms = 1000;
  unsigned upstream_attempts = 0;  // 0 = max(3, upstreams)
  unsigned query_timeout_ms = 10000;  // the query resolution timer (client_timers.hpp)
  unsigned upstream_max_in_flight = 1024;
  unsigned upstream_jostle_timeout_ms = 200;
  unsigned upstream_max_per_name = 32;
  bool upstream_case_randomization = true;
  UpstreamHealthConfig upstream_health;
  std::uint64_t udp_receive_buffer = 4u << 20;  // 0: the system's default
  std::uint64_t udp_send_buffer = 4u << 20;
  unsigned udp_coalesce_us = 100;  // 0: off (worker.cpp; docs/operator-guide.md: Every option)
  AccessControl access_control;  // default: loopback only
  RateLimitConfig rate_limit;
  bool cookies = true;                                // answer server cookies
  bool cookies_require = false;                       // BADCOOKIE over UDP without a valid one
  std::optional<std::array<std::uint8_t, 16>> cookie_secret;  // absent: random at start

  std::string segment = "dnsarena";
  cache::Geometry geometry{};
  bool reset_on_mismatch = false;

  std::uint32_t ttl_floor = 0;
  std::uint32_t ttl_ceiling = 86400;
  std::uint32_t negative_ttl_ceiling = 3600;

  // Serve-stale (RFC 8767): an expired entry still in the arena answers when the upstream
  // fails, is in the failure cache, or has not answered within the client timeout.
  std::uint32_t stale_max_age_s = 86400;     // 0: never answer stale
  unsigned stale_client_timeout_ms = 1800;  // the client response timer: when a stale answer goes out
  bool stale_answer_first = false;           // answer stale at once, then refresh
  std::uint32_t stale_ttl_s = 30;            // the TTL of every record of a stale answer
  // Failure cache (RFC 9520): a failed name is not asked again for min_s, doubling to max_s.
  std::uint32_t failure_min_s = 1;
  std::uint32_t failure_max_s = 300;
  // Prefetch: a hit within the last `prefetch_percent`% of an entry's TTL refreshes it in
  // the background, one query per name per host. 0: off.
  unsigned prefetch_percent = 10;
  // Miss-ratio curves (miss_ratio_curves.hpp): miniature caches at 1/8x..8x, host-wide.
  MrcSettings mrc;

  EcsPolicy ecs_policy = EcsPolicy::off;
  std::uint8_t ecs_ipv4_prefix = 24;
  std::uint8_t ecs_ipv6_prefix = 56;

  // Response policy (policy/): RPZ files and local zones, applied before the cache.
  policy::PolicyConfig policy;
  // The policy.rpz zones that come by zone transfer (each also in policy.rpz, by its file).
  RpzTransfers rpz_transfers;
  // DNS64 (dns64.hpp): off unless the dns64 section is present.
  Dns64Config dns64;
  // Rebinding protection (private_address.hpp): off unless subnets are listed.
  PrivateAddresses private_addresses;
  // DNSSEC validation of forwarded answers (dnssec_config.hpp, validation_jobs.hpp).
  DnssecConfig dnssec;
  // Sources that must send a PROXY v2 header (proxy_protocol.hpp); empty: off.
  std::vector<Subnet> proxy_protocol_from;

  unsigned tcp_idle_timeout_ms = 10000;
  unsigned tcp_max_connections = 256;             // per worker; when full the longest-idle one is closed
  unsigned tcp_max_connections_per_client = 32;  // per worker and address (IPv4 /32, IPv6 /64); 0 = none
  TlsConfig tls;
  HttpsConfig https;

  std::string metrics_listen = "127.0.0.1:9153";  // empty: off
  unsigned backoff_initial_ms = 100;
  unsigned backoff_max_ms = 5000;
  unsigned heartbeat_timeout_ms = 2000;  // a worker silent this long is killed; 0 = never
  std::string log_level = "info";
  DnstapConfig dnstap;
  RecursionConfig recursion;  // recursion_config.hpp

  unsigned resolved_workers() const;
  // Every zone with its upstreams, "." from `upstreams` unless forward_zones has one.
  std::vector<ForwardZone> zones() const;
  unsigned attempts(const ForwardZone& zone) const {
    return upstream_attempts ? upstream_attempts : std::max(3u, static_cast<unsigned>(zone.upstreams.size()));
  }
  // The DoT and DoH connection bounds per worker: their own, else tcp.max_connections.
  unsigned tls_max_connections() const { return tls.max_connections ? tls.max_connections : tcp_max_connections; }
  unsigned https_max_connections() const {
    return https.max_connections ? https.max_connections : tcp_max_connections;
  }
  // Throws std::invalid_argument naming the bad setting.
  void validate() const;
};

// A configuration error with its position in the file: the strict reader's one class.
using common::ConfigError;

// Reads a YAML file with the strict reader (common/yaml_reader.hpp). Throws ConfigError
// "FILE:LINE:COLUMN: key 'K': problem"; keys left at their defaults are simply absent.
ServeConfig load_serve_config(const std::string& path);
// Parses "256M", "1G", "4096".
std::uint64_t parse_size(const std::string& s);

}  // namespace dnsarena::workers
