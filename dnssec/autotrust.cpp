// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/autotrust.hpp"

#include "dnssec/c_libraries.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "dnssec/dnskey_trust.hpp"
#include "dnssec/trust_anchors.hpp"
#include "dnssec/zone_keys.hpp"

namespace dnsarena::dnssec {

namespace {

constexpr std::uint8_t kRevokeBit = 0x80;  // in the flags' low byte (flags bit 8, RFC 5011 7)
constexpr std::uint32_t kHour = 3600, kDay = 86400;

// The key's identity: its RDATA with the REVOKE bit cleared.
Bytes key_id(const Bytes& dnskey) {
  Bytes k = dnskey;
  if (k.size() >= 2) k[1] &= static_cast<std::uint8_t>(~kRevokeBit);
  return k;
}
bool revoked_bit(const Bytes& dnskey) { return dnskey.size() >= 2 && (dnskey[1] & kRevokeBit); }

std::string base64(std::span<const std::uint8_t> bytes) {
  const dnssec_binary_t in{bytes.size(), const_cast<std::uint8_t*>(bytes.data())};
  dnssec_binary_t out{};
  if (dnssec_binary_to_base64(&in, &out) != DNSSEC_EOK) throw std::runtime_error("base64 encoding failed");
  std::string s(reinterpret_cast<const char*>(out.data), out.size);
  dnssec_binary_free(&out);
  return s;
}

std::string date_text(std::uint32_t t) {
  const std::time_t tt = t;
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &tm);
  return buf;
}

// ";;name: N" in a header line, or ";;name=N" in a key's comment.
bool read_field(const std::string& line, const std::string& name, std::uint32_t& value) {
  const std::size_t at = line.find(name);
  if (at == std::string::npos) return false;
  const char* p = line.c_str() + at + name.size();
  while (*p == ' ') ++p;
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(p, &end, 10);
  if (end == p || errno != 0 || v > UINT32_MAX) return false;
  value = static_cast<std::uint32_t>(v);
  return true;
}

AutotrustKey* find_key(TrustPoint& tp, const Bytes& id) {
  for (AutotrustKey& k : tp.keys)
    if (key_id(k.dnskey) == id) return &k;
  return nullptr;
}

void set_state(AutotrustKey& k, KeyState s, std::uint32_t now, ProbeReport& r) {
  r.changes.push_back("key " + std::to_string(dnskey_tag(key_id(k.dnskey))) + ": " +
                      std::string(key_state_name(k.state)) + " -> " + std::string(key_state_name(s)));
  k.state = s;
  k.last_change = now;
}

// RFC 5011 2.3: the probe interval from the set's original TTL and its signatures'
// expiration; `fraction_inverse` 2 after a success, 10 after a failure, capped by `cap`.
std::uint32_t probe_interval(std::uint32_t orig_ttl, std::uint32_t to_expiry, std::uint32_t fraction_inverse,
                             std::uint32_t cap, std::uint32_t floor) {
  std::uint32_t v = std::min({cap, orig_ttl / fraction_inverse, to_expiry / fraction_inverse});
  return std::max(v, floor);
}

}  // namespace

std::uint16_t dnskey_tag(const Bytes& dnskey) {
  const dnssec_binary_t b{dnskey.size(), const_cast<std::uint8_t*>(dnskey.data())};
  std::uint16_t tag = 0;
  dnssec_keytag(&b, &tag);
  return tag;
}

std::string_view key_state_name(KeyState s) {
  switch (s) {
    case KeyState::start: return "START";
    case KeyState::addpend: return "ADDPEND";
    case KeyState::valid: return "VALID";
    case KeyState::missing: return "MISSING";
    case KeyState::revoked: return "REVOKED";
    case KeyState::removed: return "REMOVED";
  }
  return "?";
}

TrustPoint parse_trust_point(const std::string& text, const std::string& what) {
  TrustPoint tp;
  // The states written by an autotrust writer, by key (each such line parsed alone).
  std::map<Bytes, std::pair<KeyState, std::uint32_t>> states;
  std::istringstream in(text);
  std::string line;
  unsigned line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.rfind(";;", 0) == 0) {
      read_field(line, ";;last_queried:", tp.last_queried);
      read_field(line, ";;last_success:", tp.last_success);
      read_field(line, ";;next_probe_time:", tp.next_probe);
      read_field(line, ";;query_failed:", tp.query_failed);
      read_field(line, ";;query_interval:", tp.query_interval);
      read_field(line, ";;retry_time:", tp.retry_time);
      continue;
    }
    const std::size_t state_at = line.find(";;state=");
    if (state_at == std::string::npos) continue;
    std::uint32_t state = 0, last_change = 0;
    read_field(line, ";;state=", state);
    read_field(line, ";;lastchange=", last_change);
    if (state > static_cast<std::uint32_t>(KeyState::removed))
      throw TrustAnchorError(what + ":" + std::to_string(line_no) + ": unknown key state " + std::to_string(state));
    const std::vector<AnchorRecord> r =
        scan_anchor_records(line.substr(0, line.find(';')) + "\n", what + ":" + std::to_string(line_no));
    if (r.size() == 1 && r[0].type == kTypeDnskey)
      states[r[0].rdata] = {static_cast<KeyState>(state), last_change};
  }
  const std::vector<AnchorRecord> records = scan_anchor_records(text, what);
  if (records.empty()) throw TrustAnchorError(what + ": no DS or DNSKEY record");
  for (const AnchorRecord& r : records) {
    if (tp.zone.empty()) tp.zone = r.owner;
    if (r.owner != tp.zone)
      throw TrustAnchorError(what + ": records of two zones; a trust point file holds one zone's anchor");
    if (r.type == kTypeDs) {
      tp.ds.push_back(r.rdata);
      continue;
    }
    AutotrustKey k;
    k.dnskey = r.rdata;
    if (const auto it = states.find(r.rdata); it != states.end()) {
      k.state = it->second.first;
      k.last_change = it->second.second;
    } else {
      k.state = revoked_bit(r.rdata) ? KeyState::revoked : KeyState::valid;
    }
    if (k.state == KeyState::start || k.state == KeyState::removed) continue;
    tp.keys.push_back(std::move(k));
  }
  return tp;
}

TrustPoint read_trust_point(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw TrustAnchorError(path + ": cannot be read: " + std::strerror(errno));
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_trust_point(ss.str(), path);
}

std::string format_trust_point(const TrustPoint& tp) {
  const std::string zone = name_text(tp.zone);
  std::ostringstream o;
  auto timed = [&](const char* name, std::uint32_t t) { o << ";;" << name << ": " << t << " ;;" << date_text(t) << "\n"; };
  o << "; autotrust trust anchor file\n";
  o << ";;id: " << zone << " 1\n";
  timed("last_queried", tp.last_queried);
  timed("last_success", tp.last_success);
  timed("next_probe_time", tp.next_probe);
  o << ";;query_failed: " << tp.query_failed << "\n";
  o << ";;query_interval: " << tp.query_interval << "\n";
  o << ";;retry_time: " << tp.retry_time << "\n";
  for (const Bytes& ds : tp.ds) {
    if (ds.size() < 4) continue;
    o << zone << "\t86400\tIN\tDS\t" << ((ds[0] << 8) | ds[1]) << " " << unsigned{ds[2]} << " " << unsigned{ds[3]} << " ";
    static const char* hex = "0123456789ABCDEF";
    for (std::size_t i = 4; i < ds.size(); ++i) o << hex[ds[i] >> 4] << hex[ds[i] & 15];
    o << "\n";
  }
  for (const AutotrustKey& k : tp.keys) {
    if (k.dnskey.size() < 4) continue;
    const unsigned flags = (k.dnskey[0] << 8) | k.dnskey[1];
    o << zone << "\t172800\tIN\tDNSKEY\t" << flags << " " << unsigned{k.dnskey[2]} << " " << unsigned{k.dnskey[3]} << " "
      << base64(std::span(k.dnskey).subspan(4)) << " ;{id = " << dnskey_tag(k.dnskey) << ((flags & 1) ? " (ksk)" : " (zsk)")
      << "} ;;state=" << static_cast<unsigned>(k.state) << " [ " << key_state_name(k.state) << " ] ;;count=0"
      << " ;;lastchange=" << k.last_change << " ;;" << date_text(k.last_change) << "\n";
  }
  return o.str();
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string tmp = path + ".XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) throw std::runtime_error(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  auto fail = [&](const char* step) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(path + ": " + step + ": " + std::strerror(e));
  };
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) fail("chmod");
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error(path + ": close: " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(path + ": rename: " + std::strerror(e));
  }
  if (const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); d >= 0) {
    ::fsync(d);
    ::close(d);
  }
}

std::vector<Bytes> trusted_keys(const TrustPoint& tp) {
  std::vector<Bytes> out;
  for (const AutotrustKey& k : tp.keys)
    if (k.state == KeyState::valid || k.state == KeyState::missing) out.push_back(key_id(k.dnskey));
  return out;
}

ProbeReport observe_failure(TrustPoint& tp, std::uint32_t now, std::string_view why, std::uint32_t min_interval_s) {
  ProbeReport r;
  r.outcome = Outcome::bogus(Ede::dnssec_bogus, why);
  tp.last_queried = now;
  ++tp.query_failed;
  tp.retry_time = std::max(min_interval_s, std::min(kDay, tp.query_interval ? tp.query_interval / 5 : kHour));
  tp.next_probe = now + tp.retry_time;
  r.next_probe = tp.next_probe;
  return r;
}

ProbeReport observe(TrustPoint& tp, const Response& reply, std::uint32_t now, const Limits& limits,
                    const AutotrustLimits& hold) {
  const Rrset* set = nullptr;
  for (const Rrset& s : reply.answer)
    if (s.type == kTypeDnskey && s.owner == tp.zone) set = &s;
  if (!set) return observe_failure(tp, now, "no DNSKEY set of the trust point in the answer", hold.min_interval_s);

  // Trusted keys that this very set revokes may not vouch for it.
  std::vector<Bytes> anchors;
  for (const Bytes& k : trusted_keys(tp)) {
    const bool revoked_here = std::any_of(set->rdata.begin(), set->rdata.end(),
                                          [&](const Bytes& d) { return revoked_bit(d) && key_id(d) == k; });
    if (!revoked_here) anchors.push_back(k);
  }
  Budget budget(limits);
  const KeySetTrust trust = trust_dnskey_set(*set, tp.ds, anchors, now, budget);
  if (trust.outcome.verdict != Verdict::secure) {
    ProbeReport r = observe_failure(tp, now, trust.outcome.why, hold.min_interval_s);
    r.outcome = trust.outcome;
    return r;
  }

  ProbeReport r;
  r.accepted = true;
  r.outcome = trust.outcome;
  // A DS anchor becomes the keys it matches.
  if (!tp.ds.empty()) {
    for (const Bytes& d : set->rdata)
      for (const Bytes& ds : tp.ds)
        if (!revoked_bit(d) && ds_matches_dnskey(ds, tp.zone, d) && !find_key(tp, key_id(d))) {
          tp.keys.push_back({d, KeyState::valid, now});
          r.changes.push_back("key " + std::to_string(dnskey_tag(d)) + ": DS anchor -> VALID");
        }
    tp.ds.clear();
  }

  std::uint32_t orig_ttl = UINT32_MAX, expiration = UINT32_MAX;
  for (const Bytes& sig : set->rrsigs)
    if (const auto f = parse_rrsig(sig); f && static_cast<std::int32_t>(f->expiration - now) > 0) {
      orig_ttl = std::min(orig_ttl, f->original_ttl);
      expiration = std::min(expiration, f->expiration);
    }
  if (orig_ttl == UINT32_MAX) orig_ttl = set->ttl;
  const std::uint32_t to_expiry = expiration == UINT32_MAX ? orig_ttl : expiration - now;
  const std::uint32_t add_hold_down = std::max(hold.add_hold_down_s, orig_ttl);

  std::vector<Bytes> seen;
  for (const Bytes& d : set->rdata) {
    const Bytes id = key_id(d);
    seen.push_back(id);
    AutotrustKey* k = find_key(tp, id);
    if (revoked_bit(d)) {
      // RFC 5011 2.1: a revocation counts only when the revoked key signed the set itself.
      if (!k || k->state == KeyState::revoked) continue;
      ZoneKeys self(tp.zone, {d}, ZoneKeys::RevokedKeys::include);
      Budget self_budget(limits);
      if (verify_rrset(*set, self, now, self_budget).outcome.verdict != Verdict::secure) continue;
      k->dnskey = d;
      set_state(*k, KeyState::revoked, now, r);
      continue;
    }
    if (!k) {
      // Only keys that can sign (the SEP flag is not required by RFC 5011; Unbound takes
      // every key with the zone key flag) enter the hold-down.
      tp.keys.push_back({d, KeyState::start, now});
      set_state(tp.keys.back(), KeyState::addpend, now, r);
      continue;
    }
    switch (k->state) {
      case KeyState::missing: set_state(*k, KeyState::valid, now, r); break;
      case KeyState::addpend:
        if (now - k->last_change >= add_hold_down) set_state(*k, KeyState::valid, now, r);
        break;
      default: break;
    }
  }
  for (AutotrustKey& k : tp.keys) {
    const bool present = std::find(seen.begin(), seen.end(), key_id(k.dnskey)) != seen.end();
    if (k.state == KeyState::valid && !present) set_state(k, KeyState::missing, now, r);
    else if (k.state == KeyState::addpend && !present) set_state(k, KeyState::removed, now, r);
    else if (k.state == KeyState::revoked && now - k.last_change >= hold.remove_hold_down_s)
      set_state(k, KeyState::removed, now, r);
  }
  std::erase_if(tp.keys, [](const AutotrustKey& k) { return k.state == KeyState::removed; });
  if (trusted_keys(tp).empty()) r.changes.push_back("no trusted key left: the trust point can validate nothing");

  tp.last_queried = tp.last_success = now;
  tp.query_failed = 0;
  tp.query_interval = probe_interval(orig_ttl, to_expiry, 2, 15 * kDay, hold.min_interval_s);
  tp.retry_time = probe_interval(orig_ttl, to_expiry, 10, kDay, hold.min_interval_s);
  tp.next_probe = now + tp.query_interval;
  r.next_probe = tp.next_probe;
  return r;
}

}  // namespace dnsarena::dnssec
