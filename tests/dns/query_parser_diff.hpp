// SPDX-License-Identifier: GPL-3.0-or-later
// The differential check of the two client query parsers (dns/fast_query_parser.hpp
// against libknot's parse_query_knot), shared by the ctest (fast_query_parser_test.cpp)
// and the libFuzzer target (tests/fuzz/query_parser_diff_fuzz.cpp).
//
// For one packet: parse_query (fast path first) and parse_query_knot each get their own
// copy; they must agree on the verdict, on every ClientQuery field a worker reads (id,
// flags, question bytes, type, class, EDNS, payload size, DO, ECS, COOKIE), on the cache key
// bytes built from the query (plain and ECS-tagged, as workers/ builds them), and on the
// error response written for it. When the fast path accepts, libknot must say ok. The
// one-pass key (parse_query with a key, then finish_plain: the worker's batch path) must
// be byte-identical, hash included, to the key CacheKey builds from the parsed name.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "dns/client_query.hpp"
#include "dns/fast_query_parser.hpp"

namespace dnsarena::dns::testing {

// The cache key bytes of `q` (the worker's plain key and its ECS key at the source
// prefix), or "invalid" when the key refuses the name.
inline std::string key_bytes(const ClientQuery& q) {
  std::uint8_t flags = 0;
  if (q.do_bit) flags |= cache::kKeyDo;
  if (q.cd()) flags |= cache::kKeyCd;
  try {
    const cache::CacheKey plain(q.qname(), q.qtype, flags);
    std::string out(reinterpret_cast<const char*>(plain.blob().data()), plain.blob().size());
    if (q.ecs.present) {
      cache::EcsTag tag;
      tag.family = q.ecs.family == kEcsFamilyIpv4 ? cache::EcsFamily::ipv4 : cache::EcsFamily::ipv6;
      tag.prefix = q.ecs.source_prefix;
      tag.address = q.ecs.address;
      const cache::CacheKey tagged(q.qname(), q.qtype, flags, tag);
      out += '|';
      out.append(reinterpret_cast<const char*>(tagged.blob().data()), tagged.blob().size());
    }
    return out;
  } catch (const std::invalid_argument&) {
    return "invalid";
  }
}

// Every field a worker reads, as text, so a mismatch reads plainly.
inline std::string describe(ParseVerdict v, const ClientQuery& q) {
  std::string s = "verdict=" + std::to_string(static_cast<int>(v));
  if (v == ParseVerdict::drop) return s;
  s += " id=" + std::to_string(q.id) + " flags=" + std::to_string(q.flags) + " qname=";
  for (std::uint8_t b : q.qname()) s += std::to_string(b) + ".";
  s += " qtype=" + std::to_string(q.qtype) + " qclass=" + std::to_string(q.qclass) +
       " edns=" + std::to_string(q.edns) + " udp=" + std::to_string(q.udp_size) + " do=" + std::to_string(q.do_bit) +
       " ecs=" + std::to_string(q.ecs.present);
  if (q.ecs.present) {
    s += " fam=" + std::to_string(q.ecs.family) + " src=" + std::to_string(q.ecs.source_prefix) +
         " scope=" + std::to_string(q.ecs.scope_prefix) + " addr=";
    for (std::uint8_t b : q.ecs.address) s += std::to_string(b) + ".";
  }
  s += " cookie=";
  for (std::size_t i = 0; i < q.cookie.len; ++i) s += std::to_string(q.cookie.bytes[i]) + ".";
  if (v == ParseVerdict::ok) {
    s += " key=";
    for (unsigned char c : key_bytes(q)) s += std::to_string(c) + ".";
  }
  std::uint8_t out[12 + 255 + 4 + 11 + 24 + kMaxCookieOptionBytes];
  const std::size_t n = write_error_response(q, wire::kRcodeServFail, out, sizeof out);
  s += " errresp=";
  for (std::size_t i = 0; i < n; ++i) s += std::to_string(out[i]) + ".";
  return s;
}

// The worker's batch path: parse_query with a key (the fast parser lowercases the name
// into it as it copies it), then finish_plain, or assign when libknot parsed the packet.
// It must agree with libknot (`knot_described`) and give the same key bytes and hash as
// the CacheKey constructor; a packet the fast path took must leave its name in the key.
inline std::string diff_one_pass_key(const std::uint8_t* data, std::size_t size, bool fast_taken,
                                     const std::string& knot_described) {
  std::vector<std::uint8_t> w(data, data + size);
  ClientQuery q;
  cache::CacheKey key;
  const std::vector<std::uint8_t> stale = {3, 'o', 'l', 'd', 0};  // a name taken for an earlier packet
  std::uint8_t raw[255];
  key.take_validated_name(stale.data(), stale.size(), stale.size(), raw);
  const ParseVerdict v = parse_query(w.data(), w.size(), q, &key);
  const std::string d = describe(v, q);
  if (d != knot_described) return "parse_query with a key: " + d + "\nlibknot:              " + knot_described;
  std::uint8_t flags = 0;
  if (q.do_bit) flags |= cache::kKeyDo;
  if (q.cd()) flags |= cache::kKeyCd;
  const bool one_pass = key.finish_plain(q.qtype, flags);
  if (one_pass != fast_taken) return one_pass ? "a key name left by a declined packet" : "the fast path took no key name";
  if (v != ParseVerdict::ok) return {};
  if (!one_pass && !key.assign(q.qname(), q.qtype, flags)) return key_bytes(q) == "invalid" ? "" : "assign refused";
  try {
    const cache::CacheKey plain(q.qname(), q.qtype, flags);
    auto bytes = [](const cache::CacheKey& k) { return std::string(k.blob().begin(), k.blob().end()); };
    if (bytes(key) != bytes(plain) || key.hash() != plain.hash()) return "one-pass key differs from CacheKey()";
  } catch (const std::invalid_argument&) {
    return "one-pass key built for a name CacheKey() refuses";
  }
  return {};
}

struct DiffResult {
  bool fast_taken = false;  // the fast path accepted the packet
  std::string mismatch;     // empty: both paths agree
};

inline DiffResult diff_parsers(const std::uint8_t* data, std::size_t size) {
  DiffResult r;
  std::vector<std::uint8_t> a(data, data + size), b(data, data + size), c(data, data + size);
  ClientQuery qf, qk, qp;
  r.fast_taken = parse_query_fast(a.data(), a.size(), qf);
  const ParseVerdict vk = parse_query_knot(b.data(), b.size(), qk);
  const ParseVerdict vp = parse_query(c.data(), c.size(), qp);
  const std::string k = describe(vk, qk);
  if (r.fast_taken) {
    const std::string f = describe(ParseVerdict::ok, qf);
    if (f != k) r.mismatch = "fast path: " + f + "\nlibknot:   " + k;
  }
  if (r.mismatch.empty()) {
    const std::string p = describe(vp, qp);
    if (p != k) r.mismatch = "parse_query: " + p + "\nlibknot:     " + k;
  }
  if (r.mismatch.empty() && std::vector<std::uint8_t>(data, data + size) != a)
    r.mismatch = "the fast path wrote to the packet";
  if (r.mismatch.empty()) r.mismatch = diff_one_pass_key(data, size, r.fast_taken, k);
  return r;
}

}  // namespace dnsarena::dns::testing
