// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/interop/zone_generator.hpp"

#include <algorithm>
#include <cctype>
#include <random>

namespace dnsarena::interop {

namespace {

constexpr std::uint16_t kA = 1, kNs = 2, kCname = 5, kSoa = 6, kMx = 15, kTxt = 16, kAaaa = 28, kSrv = 33,
                        kNaptr = 35, kDname = 39, kDnskey = 48, kHttps = 65, kCaa = 257;
constexpr unsigned kKindCount = 21;

class Rng {
public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  // Uniform enough in [0, n) for test data (n is tiny next to 2^64).
  std::uint64_t pick(std::uint64_t n) { return g_() % n; }
  bool coin() { return pick(2) == 1; }

private:
  std::mt19937_64 g_;
};

// 0, 30 s .. one day. NOTE: never above 86400: dnsarena's ceiling (86400) would lower a
// TTL and knotd refuses to sign records near 2^31.
std::uint32_t pick_ttl(Rng& r) {
  const auto p = r.pick(100);
  if (p < 8) return 0;
  if (p < 20) return 30;
  if (p < 35) return 60;
  if (p < 55) return 300;
  if (p < 70) return 3600;
  if (p < 80) return 86400;
  return static_cast<std::uint32_t>(30 + r.pick(86400 - 30 + 1));
}

std::string random_text(Rng& r, std::size_t len) {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;=-_";
  std::string s;
  for (std::size_t i = 0; i < len; ++i) s += kChars[r.pick(sizeof kChars - 1)];
  return s;
}

std::string txt_rdata(Rng& r, unsigned strings, std::size_t max_len) {
  std::string s;
  for (unsigned i = 0; i < strings; ++i) s += (i ? " \"" : "\"") + random_text(r, r.pick(max_len + 1)) + "\"";
  return s;
}

std::string ipv4(unsigned a, unsigned b) {
  return "192.0." + std::to_string(2 + a % 2) + "." + std::to_string(b % 256);
}

// Writes one zone's records and questions.
class ZoneWriter {
public:
  ZoneWriter(std::string origin, Rng& rng, GeneratedZones& out) : origin_(std::move(origin)), r_(rng), out_(out) {
    text_ = "$ORIGIN " + origin_ + "\n";
    rr("@", 3600, "SOA", "ns1 hostmaster 1 7200 3600 1209600 300");
    rr("@", 3600, "NS", "ns1");
    rr("ns1", 3600, "A", "192.0.2.1");
    ask("", kSoa, "apex");
    ask("", kNs, "apex");
    ask("", kDnskey, "apex");
    ask("", kA, "apex-nodata");
  }

  std::string abs(const std::string& rel) const { return rel.empty() || rel == "@" ? origin_ : rel + "." + origin_; }
  void rr(const std::string& owner, std::uint32_t ttl, const std::string& type, const std::string& rdata) {
    text_ += owner + " " + std::to_string(ttl) + " " + type + " " + rdata + "\n";
  }
  void ask(const std::string& rel, std::uint16_t qtype, const std::string& kind) {
    out_.questions.push_back({abs(rel), qtype, kind});
  }
  std::string text() const { return text_; }

  // The name number `i` of this zone: kind i % kKindCount, ordinal i / kKindCount.
  void add_name(unsigned i) {
    const unsigned k = i / kKindCount;
    const std::string n = std::to_string(k);
    switch (i % kKindCount) {
      case 0: {
        const unsigned count = 1 + static_cast<unsigned>(r_.pick(4));
        const auto ttl = pick_ttl(r_);
        for (unsigned j = 0; j < count; ++j) rr("a-" + n, ttl, "A", ipv4(k, 10 + j));
        ask("a-" + n, kA, "a");
        ask("a-" + n, kAaaa, "nodata");
        break;
      }
      case 1: {
        const auto ttl = pick_ttl(r_);
        for (unsigned j = 0, c = 1 + static_cast<unsigned>(r_.pick(3)); j < c; ++j)
          rr("aaaa-" + n, ttl, "AAAA", "2001:db8::" + std::to_string(k) + ":" + std::to_string(j + 1));
        ask("aaaa-" + n, kAaaa, "aaaa");
        break;
      }
      case 2: {
        const auto ttl = pick_ttl(r_);
        for (unsigned j = 0, c = 1 + static_cast<unsigned>(r_.pick(3)); j < c; ++j)
          rr("txt-" + n, ttl, "TXT", txt_rdata(r_, 1 + static_cast<unsigned>(r_.pick(4)), 40));
        ask("txt-" + n, kTxt, "txt");
        ask("txt-" + n, kA, "nodata");
        break;
      }
      case 3:
        rr("mx-" + n, pick_ttl(r_), "MX", "10 mail.mx-" + n);
        rr("mail.mx-" + n, pick_ttl(r_), "A", ipv4(k, 21));
        ask("mx-" + n, kMx, "mx");
        // 20 MX whose targets compress to a label and a pointer: ~450 bytes from knotd,
        // ~800 without compression of names in rdata (RFC 1035 4.1.4 allows it for MX).
        for (unsigned j = 0; j < 20; ++j)
          rr("mxbig-" + n, 300, "MX", std::to_string(j) + " m" + std::to_string(100 + j) + ".mxbig-" + n);
        ask("mxbig-" + n, kMx, "compression");
        break;
      case 4:
        rr("_sip._tcp.srv-" + n, pick_ttl(r_), "SRV", "10 20 5060 host.srv-" + n);
        rr("_sip._tcp.srv-" + n, 300, "SRV", "20 0 5061 sip.example.net.");
        rr("host.srv-" + n, pick_ttl(r_), "AAAA", "2001:db8::53:" + n);
        ask("_sip._tcp.srv-" + n, kSrv, "srv");
        ask("_tcp.srv-" + n, kSrv, "ent-nodata");
        break;
      case 5: {
        const auto ttl = pick_ttl(r_);
        rr("caa-" + n, ttl, "CAA", "0 issue \"ca-" + n + ".example.net\"");
        rr("caa-" + n, ttl, "CAA", "128 iodef \"mailto:security@example.net\"");
        ask("caa-" + n, kCaa, "caa");
        break;
      }
      case 6: {
        const auto ttl = pick_ttl(r_);
        rr("naptr-" + n, ttl, "NAPTR", "100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp.example.net.");
        rr("naptr-" + n, ttl, "NAPTR", "102 10 \"U\" \"E2U+sip\" \"!^.*$!sip:info@example.net!\" .");
        ask("naptr-" + n, kNaptr, "naptr");
        break;
      }
      case 7:
        rr("https-" + n, pick_ttl(r_), "HTTPS",
           k % 2 ? "0 a-0." + origin_ : "1 . alpn=\"h2,h3\" port=8443 ipv4hint=" + ipv4(k, 30));
        ask("https-" + n, kHttps, "https");
        break;
      case 8: {
        const unsigned links = 1 + static_cast<unsigned>(r_.pick(3));
        std::string from = "cn-" + n;
        for (unsigned j = 1; j <= links; ++j) {
          const std::string to = j == links ? "cnend-" + n : "cn-" + n + "-" + std::to_string(j);
          rr(from, pick_ttl(r_), "CNAME", to);
          from = to;
        }
        rr(from, pick_ttl(r_), "A", ipv4(k, 40));
        ask("cn-" + n, kA, "cname-chain");
        ask("cn-" + n, kAaaa, "cname-chain-nodata");
        ask("cn-" + n, kCname, "cname");
        break;
      }
      case 9:
        rr("cnx-" + n, pick_ttl(r_), "CNAME", "tgt-" + n + ".other.test.");
        rr("cno-" + n, pick_ttl(r_), "CNAME", "nx-" + n + ".other.test.");
        rr("cnu-" + n, pick_ttl(r_), "CNAME", "host-" + n + ".unserved.example.");
        ask("cnx-" + n, kA, "cname-out");
        ask("cno-" + n, kA, "cname-out-nxdomain");
        ask("cnu-" + n, kA, "cname-unserved");
        break;
      case 10:
        rr("cnnx-" + n, pick_ttl(r_), "CNAME", "cn-" + n + "-gone");
        rr("cnnx2-" + n, pick_ttl(r_), "CNAME", "cnnx-" + n);
        ask("cnnx-" + n, kA, "cname-nxdomain");
        ask("cnnx2-" + n, kTxt, "cname-nxdomain");
        {  // two links of ~250 bytes each: over 512 without EDNS, so a TC reply must keep NXDOMAIN
          const std::string l1 = long_name(k, "lcn"), l2 = long_name(k, "lgone");
          rr("lcn-" + n, pick_ttl(r_), "CNAME", l1);
          rr(l1, pick_ttl(r_), "CNAME", l2);
          ask("lcn-" + n, kA, "cname-nxdomain-long");
        }
        break;
      case 11:
        rr("dn-" + n, pick_ttl(r_), "DNAME", "dtgt-" + n);
        rr("www.dtgt-" + n, pick_ttl(r_), "A", ipv4(k, 50));
        ask("www.dn-" + n, kA, "dname");
        ask("gone.dn-" + n, kA, "dname-nxdomain");
        ask("dn-" + n, kDname, "dname-self");
        break;
      case 12: {
        const auto ttl = pick_ttl(r_);
        rr("*.wild-" + n, ttl, "A", ipv4(k, 60));
        rr("*.wild-" + n, ttl, "TXT", txt_rdata(r_, 2, 20));
        rr("exists.wild-" + n, pick_ttl(r_), "A", ipv4(k, 61));
        ask("x" + std::to_string(r_.pick(1000)) + ".wild-" + n, kA, "wildcard");
        ask("a.b.wild-" + n, kTxt, "wildcard");
        ask("q.wild-" + n, kAaaa, "wildcard-nodata");
        ask("exists.wild-" + n, kTxt, "nodata");
        break;
      }
      case 13:
        rr("leaf.mid.ent-" + n, pick_ttl(r_), "A", ipv4(k, 70));
        ask("mid.ent-" + n, kA, "ent-nodata");
        ask("ent-" + n, kTxt, "ent-nodata");
        ask("leaf.mid.ent-" + n, kA, "a");
        break;
      case 14:
        rr("sub-" + n, 3600, "NS", "ns.sub-" + n);
        rr("sub-" + n, 3600, "NS", "ns.elsewhere.example.");
        rr("ns.sub-" + n, 3600, "A", ipv4(k, 80));
        rr("ns.sub-" + n, 3600, "AAAA", "2001:db8::80:" + n);
        ask("host.sub-" + n, kA, "referral");
        ask("sub-" + n, kNs, "referral");
        break;
      case 15: {
        const std::string name = long_name(k, "long");
        rr(name, pick_ttl(r_), "A", ipv4(k, 90));
        ask(name, kA, "long-name");
        ask(name, kTxt, "long-name-nodata");
        break;
      }
      case 16: {
        std::string owner = "mixed-case-" + n;
        for (char& c : owner)
          if (r_.coin()) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        rr(owner, pick_ttl(r_), "A", ipv4(k, 100));
        rr("Cn-To-" + owner, pick_ttl(r_), "CNAME", owner);
        ask(owner, kA, "mixed-case");
        ask("cn-to-" + owner, kA, "mixed-case");
        break;
      }
      case 17: {  // 30-60 A: 512 < answer < 1232
        const auto ttl = pick_ttl(r_);
        for (unsigned j = 0, c = 30 + static_cast<unsigned>(r_.pick(31)); j < c; ++j)
          rr("big-" + n, ttl, "A", ipv4(j / 250, 1 + j % 250));
        ask("big-" + n, kA, "big-512");
        break;
      }
      case 18: {  // answer > 1232: 90-150 A, or 6-9 TXT of ~200 bytes
        const auto ttl = pick_ttl(r_);
        if (k % 2 == 0) {
          for (unsigned j = 0, c = 90 + static_cast<unsigned>(r_.pick(61)); j < c; ++j)
            rr("huge-" + n, ttl, "A", "198.51.100." + std::to_string(j));
          ask("huge-" + n, kA, "big-1232");
        } else {
          for (unsigned j = 0, c = 6 + static_cast<unsigned>(r_.pick(4)); j < c; ++j)
            rr("huge-" + n, ttl, "TXT", "\"" + random_text(r_, 200) + "\" \"" + random_text(r_, 20) + "\"");
          ask("huge-" + n, kTxt, "big-1232");
        }
        break;
      }
      case 19:
        ask("nx-" + n + "-" + std::to_string(r_.pick(100000)), kA, "nxdomain");
        ask("deep.nx-" + n + ".a-0", kAaaa, "nxdomain");
        break;
      default:  // 20: several types at one name
        rr("multi-" + n, pick_ttl(r_), "A", ipv4(k, 110));
        rr("multi-" + n, pick_ttl(r_), "AAAA", "2001:db8::110:" + n);
        rr("multi-" + n, pick_ttl(r_), "TXT", txt_rdata(r_, 3, 10));
        ask("multi-" + n, kTxt, "txt");
        ask("multi-" + n, kMx, "nodata");
        break;
    }
  }

private:
  // A relative name whose absolute wire form is 240..255 bytes.
  std::string long_name(unsigned k, const std::string& prefix) {
    const std::size_t origin_wire = origin_.size() + 1;  // "a.b." -> 1a1b0: same count
    std::size_t left = 240 + r_.pick(16) - origin_wire;  // wire bytes of the relative labels
    std::string name;
    std::string tag = prefix + std::to_string(k) + "-";
    while (left > 0) {
      std::size_t len = std::min<std::size_t>(63, left - 1);
      if (left - (len + 1) == 1) --len;  // never leave a single byte (a label needs 2)
      std::string label = tag + random_text(r_, 63);
      label.erase(len);
      for (char& c : label)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = 'x';
      name += (name.empty() ? "" : ".") + label;
      tag.clear();
      left -= len + 1;
    }
    return name;
  }

  std::string origin_;
  Rng& r_;
  GeneratedZones& out_;
  std::string text_;
};

void add_short_ttl_records(ZoneWriter& w, GeneratedZones& out) {
  auto add = [&](const std::string& owner, const std::string& qname, std::uint16_t qtype, std::uint32_t ttl,
                 const std::string& type, const std::string& before, const std::string& after) {
    w.rr(owner, ttl, type, before);
    out.short_ttl.push_back({w.abs(owner), w.abs(qname), qtype, ttl, type, before, after});
  };
  auto address = [](const char* net, unsigned n) { return std::string(net) + std::to_string(200 + n); };
  for (unsigned i = 0; i < 4; ++i) {
    const std::string name = "short-" + std::to_string(i);
    add(name, name, kA, 1 + i % 2, "A", address("192.0.2.", i), address("198.51.100.", i));
  }
  for (unsigned i = 0; i < 2; ++i) {
    const std::string name = "ttl0-" + std::to_string(i);
    add(name, name, kA, 0, "A", address("192.0.2.", 10 + i), address("198.51.100.", 10 + i));
  }
  // Chains whose shortest link decides: a 1 s link that ends in NXDOMAIN, then points to
  // an address; a 2 s link that ends in NODATA, then in an AAAA record.
  w.rr("short-aaaa", 3600, "AAAA", "2001:db8::5");
  add("shortnx", "shortnx", kA, 1, "CNAME", w.abs("shortnx-gone"), w.abs("short-0"));
  add("shortnd", "shortnd", kAaaa, 2, "CNAME", w.abs("short-1"), w.abs("short-aaaa"));
  // A chain whose first link lives 300 s and whose second lives 1 s (kept last: the test
  // polls knotd with it until the change is visible).
  w.rr("shortcn", 300, "CNAME", "shortcn-end");
  add("shortcn-end", "shortcn", kA, 1, "A", address("192.0.2.", 20), address("198.51.100.", 20));
}

}  // namespace

GeneratedZones generate_zones(std::uint64_t seed, unsigned names) {
  GeneratedZones out;
  Rng rng(seed);
  const unsigned per_zone = std::max(kKindCount, (names + 2) / 3);
  const struct {
    const char* origin;
    bool dnssec, nsec3;
  } content[] = {{"diff.test.", false, false}, {"sig.test.", true, false}, {"nsec3.test.", true, true}};
  for (const auto& z : content) {
    ZoneWriter w(z.origin, rng, out);
    for (unsigned i = 0; i < per_zone; ++i) w.add_name(i);
    if (!z.dnssec) add_short_ttl_records(w, out);
    out.zones.push_back({z.origin, w.text(), z.dnssec, z.nsec3});
  }
  // The zone the out-of-zone CNAMEs point into: tgt-N exist, nx-N do not.
  ZoneWriter other("other.test.", rng, out);
  for (unsigned k = 0; k * kKindCount < per_zone; ++k)
    other.rr("tgt-" + std::to_string(k), pick_ttl(rng), "A", ipv4(k, 120));
  out.zones.push_back({"other.test.", other.text(), false, false});
  return out;
}

}  // namespace dnsarena::interop
