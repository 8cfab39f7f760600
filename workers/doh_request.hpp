// SPDX-License-Identifier: GPL-3.0-or-later
// DNS over HTTPS (RFC 8484) requests, decided without any I/O: which HTTP status a request
// gets, and the DNS message it carries. The HTTP/2 session (doh_server.hpp) collects a
// stream's headers and body and asks here; the fuzz target tests/fuzz/doh_request_fuzz.cpp
// feeds these functions arbitrary bytes.
//
//   check_request(req, endpoint, msg)   the request's status; on 200 `msg` holds the DNS
//       message (GET: decoded from ?dns=, POST: the body). In the order a client learns
//       most from: 404 a path other than `endpoint` (the query string is not part of the
//       path), 405 a method other than GET and POST, 413 a body over 65535 bytes, 415 a
//       POST whose content-type is not application/dns-message (parameters after ';'
//       and case are ignored), 400 a GET without exactly one dns= parameter, a dns=
//       value that is not base64url without padding (RFC 4648 5; '=' is refused, as
//       RFC 8484 4.1 asks), or a message that is not a DNS query (check_dns_query).
//       O(path + body).
//   decode_base64url(text, out)         false on a character outside the URL alphabet,
//       a length of 1 mod 4, or non-zero bits after the last byte: each message has one
//       encoding, the one encode_base64url writes (no padding).
//   check_dns_query(msg)                at least a 12-byte header, at most 65535 bytes,
//       QR clear. Anything further (the question, EDNS) is the worker's parser's, which
//       answers FORMERR as over any transport.
//   min_ttl(answer)                     the smallest TTL of the answer's records (answer,
//       authority and additional sections, the OPT record left out): the response's
//       cache-control max-age (RFC 8484 5.1). 0 when there are no records or the answer
//       does not parse.
//
// The DNS message ID is whatever the client sent: RFC 8484 4.1 asks clients for 0 (so
// HTTP caches can share answers) and the answer carries it back unchanged.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dnsarena::workers {

inline constexpr std::string_view kDohMediaType = "application/dns-message";
inline constexpr std::size_t kDohMaxMessage = 65535;

enum class DohStatus : std::uint16_t {
  ok = 200,
  bad_request = 400,
  not_found = 404,
  method_not_allowed = 405,
  payload_too_large = 413,
  unsupported_media_type = 415,
};

// What the HTTP/2 session collected for one stream.
struct DohRequest {
  std::string_view method;        // :method
  std::string_view path;          // :path, with its query string
  std::string_view content_type;  // content-type ("" when absent)
  std::span<const std::uint8_t> body;
  bool body_too_large = false;  // more than kDohMaxMessage bytes came (the rest not kept)
};

DohStatus check_request(const DohRequest& req, std::string_view endpoint, std::vector<std::uint8_t>& msg);
bool decode_base64url(std::string_view text, std::vector<std::uint8_t>& out);
std::string encode_base64url(std::span<const std::uint8_t> bytes);
bool check_dns_query(std::span<const std::uint8_t> msg);
std::uint32_t min_ttl(std::span<const std::uint8_t> answer);

}  // namespace dnsarena::workers
