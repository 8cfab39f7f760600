// SPDX-License-Identifier: GPL-3.0-or-later
// Structured record data for layouts v0..v4: the per-type alternatives of an rdata
// variant, parsed from wire form at insert and written back to wire form at lookup.
//
// RdataModel<Str, Seq> is one family of alternatives; Str is the string type (growable
// CString in v0, BoxedBytes from v1 on) and Seq the list type (CVector / BoxedSlice).
// The largest alternative is NAPTR (three strings, a name, two integers), so a variant
// holding them inline is as large as a NAPTR for every record: the published fleet's 144 B enum.
// Names are kept in uncompressed wire form, so writing them back is a copy.
// Anything that does not parse as its type is kept as Unknown (raw bytes).
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include "counting_allocator.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::layouts {

template <class Str, template <class> class Seq>
struct RdataModel {
  struct A { std::array<std::uint8_t, 4> addr; };
  struct Aaaa { std::array<std::uint8_t, 16> addr; };
  struct Name { Str name; };  // CNAME, NS, PTR, DNAME
  struct Txt { Seq<Str> strings; };
  struct Mx { std::uint16_t preference; Str exchange; };
  struct Soa { Str mname, rname; std::uint32_t serial, refresh, retry, expire, minimum; };
  struct Naptr { Str flags, services, regexp; Str replacement; std::uint16_t order, preference; };
  struct Unknown { Seq<std::uint8_t> bytes; };
};

// --- building the string and list types --------------------------------------------
template <class Str>
Str make_str(std::span<const std::uint8_t> b) {
  if constexpr (std::is_same_v<Str, CString>) return make_cstring(b);
  else return Str(b);
}
// Fills a list with n elements made by make(i): pushed one by one into a growable vector
// (as v0 would), or constructed at exactly n in a boxed slice.
template <class T, class Make>
void fill_seq(CVector<T>& v, std::size_t n, Make&& make) {
  for (std::size_t i = 0; i < n; ++i) v.push_back(make(i));
}
template <class T, class Make>
void fill_seq(BoxedSlice<T>& v, std::size_t n, Make&& make) {
  v = BoxedSlice<T>(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = make(i);
}
inline void fill_bytes(CVector<std::uint8_t>& v, std::span<const std::uint8_t> b) { v.assign(b.begin(), b.end()); }
inline void fill_bytes(BoxedBytes& v, std::span<const std::uint8_t> b) { v = BoxedBytes(b); }

template <class T>
const T& unbox(const T& t) { return t; }
template <class T>
const T& unbox(const Box<T>& t) { return *t; }

namespace rdata_detail {
inline std::uint16_t get16(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }
inline std::uint32_t get32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}
inline std::uint8_t* put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
  return p + 2;
}
inline std::uint8_t* put32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
  return p + 4;
}
inline std::uint8_t* put_bytes(std::uint8_t* p, std::span<const std::uint8_t> b) {
  if (!b.empty()) std::memcpy(p, b.data(), b.size());
  return p + b.size();
}
// Length of the character-string at rd[pos], or -1 when it runs past the end.
inline long char_string_end(std::span<const std::uint8_t> rd, std::size_t pos) {
  if (pos >= rd.size() || pos + 1 + rd[pos] > rd.size()) return -1;
  return static_cast<long>(pos + 1 + rd[pos]);
}
}  // namespace rdata_detail

// Parses wire rdata of `type` into an alternative of model M and hands it to wrap(),
// which returns the layout's variant (inline alternative, or boxed for v4).
template <class M, class Wrap>
auto parse_rdata(std::uint16_t type, std::span<const std::uint8_t> rd, Wrap&& wrap) {
  using namespace rdata_detail;
  using Str = decltype(std::declval<typename M::Name>().name);
  auto unknown = [&] {
    typename M::Unknown u;
    fill_bytes(u.bytes, rd);
    return wrap(std::move(u));
  };
  auto name_at = [&](std::size_t pos) { return wire::wire_name_length(rd.subspan(pos)); };
  switch (type) {
    case 1:
      if (rd.size() == 4) {
        typename M::A a;
        std::memcpy(a.addr.data(), rd.data(), 4);
        return wrap(std::move(a));
      }
      break;
    case 28:
      if (rd.size() == 16) {
        typename M::Aaaa a;
        std::memcpy(a.addr.data(), rd.data(), 16);
        return wrap(std::move(a));
      }
      break;
    case 2: case 5: case 12: case 39:
      if (!rd.empty() && name_at(0) == rd.size()) return wrap(typename M::Name{make_str<Str>(rd)});
      break;
    case 15:
      if (rd.size() > 2 && 2 + name_at(2) == rd.size())
        return wrap(typename M::Mx{get16(rd.data()), make_str<Str>(rd.subspan(2))});
      break;
    case 6: {
      const std::size_t m = name_at(0);
      const std::size_t r = m ? name_at(m) : 0;
      if (m && r && m + r + 20 == rd.size()) {
        const std::uint8_t* p = rd.data() + m + r;
        return wrap(typename M::Soa{make_str<Str>(rd.first(m)), make_str<Str>(rd.subspan(m, r)), get32(p),
                                    get32(p + 4), get32(p + 8), get32(p + 12), get32(p + 16)});
      }
      break;
    }
    case 16: {
      std::size_t n = 0;
      long pos = 0;
      while (pos >= 0 && static_cast<std::size_t>(pos) < rd.size()) {
        pos = char_string_end(rd, static_cast<std::size_t>(pos));
        ++n;
      }
      if (pos < 0 || n == 0) break;
      typename M::Txt t;
      std::size_t at = 0;
      fill_seq(t.strings, n, [&](std::size_t) {
        Str s = make_str<Str>(rd.subspan(at + 1, rd[at]));
        at += 1 + rd[at];
        return s;
      });
      return wrap(std::move(t));
    }
    case 35: {
      if (rd.size() < 4) break;
      const long f = char_string_end(rd, 4);
      const long s = f < 0 ? -1 : char_string_end(rd, static_cast<std::size_t>(f));
      const long x = s < 0 ? -1 : char_string_end(rd, static_cast<std::size_t>(s));
      if (x < 0 || static_cast<std::size_t>(x) + name_at(static_cast<std::size_t>(x)) != rd.size() ||
          name_at(static_cast<std::size_t>(x)) == 0)
        break;
      auto cs = [&](long end, long start) { return make_str<Str>(rd.subspan(start + 1, end - start - 1)); };
      return wrap(typename M::Naptr{cs(f, 4), cs(s, f), cs(x, s), make_str<Str>(rd.subspan(x)), get16(rd.data()),
                                    get16(rd.data() + 2)});
    }
    default:
      break;
  }
  return unknown();
}

// Wire size and wire form of each alternative (boxed or not).
template <class M>
struct RdataWire {
  using A = typename M::A;
  using Aaaa = typename M::Aaaa;
  static std::size_t size(const A&) { return 4; }
  static std::size_t size(const Aaaa&) { return 16; }
  static std::size_t size(const typename M::Name& n) { return n.name.size(); }
  static std::size_t size(const typename M::Mx& m) { return 2 + m.exchange.size(); }
  static std::size_t size(const typename M::Soa& s) { return s.mname.size() + s.rname.size() + 20; }
  static std::size_t size(const typename M::Txt& t) {
    std::size_t n = 0;
    for (const auto& s : t.strings) n += 1 + s.size();
    return n;
  }
  static std::size_t size(const typename M::Naptr& n) {
    return 4 + 3 + n.flags.size() + n.services.size() + n.regexp.size() + n.replacement.size();
  }
  static std::size_t size(const typename M::Unknown& u) { return u.bytes.size(); }

  static std::uint8_t* write(const A& a, std::uint8_t* p) { return rdata_detail::put_bytes(p, a.addr); }
  static std::uint8_t* write(const Aaaa& a, std::uint8_t* p) { return rdata_detail::put_bytes(p, a.addr); }
  static std::uint8_t* write(const typename M::Name& n, std::uint8_t* p) { return rdata_detail::put_bytes(p, bytes_of(n.name)); }
  static std::uint8_t* write(const typename M::Mx& m, std::uint8_t* p) {
    return rdata_detail::put_bytes(rdata_detail::put16(p, m.preference), bytes_of(m.exchange));
  }
  static std::uint8_t* write(const typename M::Soa& s, std::uint8_t* p) {
    using namespace rdata_detail;
    p = put_bytes(put_bytes(p, bytes_of(s.mname)), bytes_of(s.rname));
    for (std::uint32_t v : {s.serial, s.refresh, s.retry, s.expire, s.minimum}) p = rdata_detail::put32(p, v);
    return p;
  }
  static std::uint8_t* write(const typename M::Txt& t, std::uint8_t* p) {
    for (const auto& s : t.strings) {
      *p++ = static_cast<std::uint8_t>(s.size());
      p = rdata_detail::put_bytes(p, bytes_of(s));
    }
    return p;
  }
  static std::uint8_t* write(const typename M::Naptr& n, std::uint8_t* p) {
    using namespace rdata_detail;
    p = rdata_detail::put16(rdata_detail::put16(p, n.order), n.preference);
    for (const auto* s : {&n.flags, &n.services, &n.regexp}) {
      *p++ = static_cast<std::uint8_t>(s->size());
      p = put_bytes(p, bytes_of(*s));
    }
    return put_bytes(p, bytes_of(n.replacement));
  }
  static std::uint8_t* write(const typename M::Unknown& u, std::uint8_t* p) { return rdata_detail::put_bytes(p, bytes_of(u.bytes)); }

  // For a std::variant of alternatives (inline or Box<>ed).
  template <class Variant>
  static std::size_t variant_size(const Variant& v) {
    return std::visit([](const auto& alt) { return size(unbox(alt)); }, v);
  }
  template <class Variant>
  static std::uint8_t* variant_write(const Variant& v, std::uint8_t* p) {
    return std::visit([p](const auto& alt) { return write(unbox(alt), p); }, v);
  }
};

}  // namespace dnsarena::sim::layouts
