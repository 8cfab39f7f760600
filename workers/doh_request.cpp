// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/doh_request.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace dnsarena::workers {

namespace {

// Base64url (RFC 4648 5) value of each byte, 0xFF outside the alphabet.
constexpr std::array<std::uint8_t, 256> make_alphabet() {
  std::array<std::uint8_t, 256> t{};
  t.fill(0xFF);
  for (int i = 0; i < 26; ++i) {
    t['A' + i] = static_cast<std::uint8_t>(i);
    t['a' + i] = static_cast<std::uint8_t>(26 + i);
  }
  for (int i = 0; i < 10; ++i) t['0' + i] = static_cast<std::uint8_t>(52 + i);
  t['-'] = 62;
  t['_'] = 63;
  return t;
}
constexpr std::array<std::uint8_t, 256> kAlphabet = make_alphabet();

bool equals_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The one dns= value of a query string; false when absent or given twice.
bool dns_parameter(std::string_view query, std::string_view& value) {
  bool found = false;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (param.substr(0, 4) != "dns=") continue;
    if (found) return false;
    found = true;
    value = param.substr(4);
  }
  return found;
}

// A name at `p` in `m`; the offset after it, or 0 when it runs out of the message.
std::size_t skip_name(std::span<const std::uint8_t> m, std::size_t p) {
  while (p < m.size()) {
    const std::uint8_t len = m[p];
    if (len == 0) return p + 1;
    if ((len & 0xC0) == 0xC0) return p + 2 <= m.size() ? p + 2 : 0;  // a pointer ends the name
    if (len & 0xC0) return 0;
    p += 1 + len;
  }
  return 0;
}

std::uint16_t u16(std::span<const std::uint8_t> m, std::size_t p) {
  return static_cast<std::uint16_t>(m[p] << 8 | m[p + 1]);
}

}  // namespace

std::string encode_base64url(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  std::uint32_t bits = 0;
  int have = 0;
  for (const std::uint8_t b : bytes) {
    bits = (bits << 8) | b;
    have += 8;
    while (have >= 6) out += kDigits[(bits >> (have -= 6)) & 63];
  }
  if (have) out += kDigits[(bits << (6 - have)) & 63];
  return out;
}

bool decode_base64url(std::string_view text, std::vector<std::uint8_t>& out) {
  out.clear();
  if (text.size() % 4 == 1) return false;
  // Four characters make three bytes; written into the sized buffer (no push_back per byte).
  out.resize(text.size() / 4 * 3 + (text.size() % 4 ? text.size() % 4 - 1 : 0));
  const auto* in = reinterpret_cast<const unsigned char*>(text.data());
  std::uint8_t* o = out.data();
  std::size_t i = 0;
  for (; i + 4 <= text.size(); i += 4) {
    const std::uint32_t a = kAlphabet[in[i]], b = kAlphabet[in[i + 1]], c = kAlphabet[in[i + 2]], d = kAlphabet[in[i + 3]];
    if ((a | b | c | d) & 0xC0) return false;  // one is 0xFF: outside the alphabet
    const std::uint32_t bits = a << 18 | b << 12 | c << 6 | d;
    *o++ = static_cast<std::uint8_t>(bits >> 16);
    *o++ = static_cast<std::uint8_t>(bits >> 8);
    *o++ = static_cast<std::uint8_t>(bits);
  }
  // The last 2 or 3 characters: 1 or 2 bytes, and the bits left over (4 or 2) must be zero:
  // one message has one encoding.
  const std::size_t tail = text.size() - i;
  if (tail == 0) return true;
  std::uint32_t bits = 0;
  for (std::size_t k = 0; k < tail; ++k) {
    const std::uint32_t v = kAlphabet[in[i + k]];
    if (v == 0xFF) return false;
    bits = bits << 6 | v;
  }
  if (tail == 2) {
    *o = static_cast<std::uint8_t>(bits >> 4);
    return (bits & 0xF) == 0;
  }
  *o++ = static_cast<std::uint8_t>(bits >> 10);
  *o = static_cast<std::uint8_t>(bits >> 2);
  return (bits & 0x3) == 0;
}

bool check_dns_query(std::span<const std::uint8_t> msg) {
  return msg.size() >= 12 && msg.size() <= kDohMaxMessage && (msg[2] & 0x80) == 0;
}

DohStatus check_request(const DohRequest& req, std::string_view endpoint, std::vector<std::uint8_t>& msg) {
  msg.clear();
  const std::size_t q = req.path.find('?');
  if (req.path.substr(0, q) != endpoint) return DohStatus::not_found;
  const bool get = req.method == "GET", post = req.method == "POST";
  if (!get && !post) return DohStatus::method_not_allowed;
  if (req.body_too_large || req.body.size() > kDohMaxMessage) return DohStatus::payload_too_large;
  if (post) {
    if (!equals_nocase(trim(req.content_type.substr(0, req.content_type.find(';'))), kDohMediaType))
      return DohStatus::unsupported_media_type;
    msg.assign(req.body.begin(), req.body.end());
  } else {
    std::string_view value;
    if (q == std::string_view::npos || !dns_parameter(req.path.substr(q + 1), value)) return DohStatus::bad_request;
    if (value.size() > (kDohMaxMessage * 4 + 2) / 3 || !decode_base64url(value, msg)) return DohStatus::bad_request;
  }
  return check_dns_query(msg) ? DohStatus::ok : DohStatus::bad_request;
}

std::uint32_t min_ttl(std::span<const std::uint8_t> m) {
  if (m.size() < 12) return 0;
  const unsigned qd = u16(m, 4), records = unsigned{u16(m, 6)} + u16(m, 8) + u16(m, 10);
  std::size_t p = 12;
  for (unsigned i = 0; i < qd; ++i) {
    if (!(p = skip_name(m, p)) || p + 4 > m.size()) return 0;
    p += 4;
  }
  std::uint32_t least = UINT32_MAX;
  for (unsigned i = 0; i < records; ++i) {
    if (!(p = skip_name(m, p)) || p + 10 > m.size()) return 0;
    const std::uint16_t type = u16(m, p);
    const std::uint32_t ttl = std::uint32_t{u16(m, p + 4)} << 16 | u16(m, p + 6);
    const std::size_t rdlen = u16(m, p + 8);
    p += 10 + rdlen;
    if (p > m.size()) return 0;
    if (type != 41) least = std::min(least, ttl);  // OPT's "TTL" is flags, not a lifetime
  }
  return least == UINT32_MAX ? 0 : least;
}

}  // namespace dnsarena::workers
