// SPDX-License-Identifier: GPL-3.0-or-later
#include "admin/dump_format.hpp"

#include <arpa/inet.h>

#include <array>
#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "admin/knot_text.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::admin {

namespace {

constexpr const char* kSectionNames[3] = {"answer", "authority", "additional"};

// Key blob fields (cache_key.hpp). FORMAT-DEPENDENT: the one place admin/ reads a blob's
// bytes directly; everything else goes through CacheKey and EntryReader.
struct KeyFields {
  std::uint16_t qtype = 0;
  std::uint8_t flags = 0;
  cache::EcsTag ecs;
  std::span<const std::uint8_t> qname;
};

KeyFields key_fields(std::span<const std::uint8_t> blob) {
  cache::CacheKey key;
  if (!cache::CacheKey::from_blob(blob, key)) throw std::runtime_error("malformed key in the cache");
  KeyFields f;
  f.qtype = key.qtype();
  f.flags = key.flags();
  f.ecs.family = static_cast<cache::EcsFamily>((blob[2] >> 3) & 0x3);
  f.ecs.prefix = blob[3];
  const std::size_t address_bytes = (blob[3] + 7u) / 8u;
  for (std::size_t i = 0; i < address_bytes && i < f.ecs.address.size(); ++i) f.ecs.address[i] = blob[cache::kKeyFixedBytes + i];
  f.qname = blob.subspan(cache::kKeyFixedBytes + address_bytes, blob[4]);
  return f;
}

std::string flags_to_text(std::uint8_t flags) {
  std::string s;
  auto add = [&](std::uint8_t bit, const char* name) {
    if (flags & bit) s += (s.empty() ? "" : ",") + std::string(name);
  };
  add(cache::kKeyDo, "do");
  add(cache::kKeyCd, "cd");
  add(cache::kKeyAuthenticated, "validated");
  add(cache::kKeyDns64, "dns64");
  return s.empty() ? "-" : s;
}

std::uint8_t flags_from_text(const std::string& text) {
  if (text == "-") return 0;
  std::uint8_t flags = 0;
  std::istringstream in(text);
  for (std::string f; std::getline(in, f, ',');) {
    if (f == "do") flags |= cache::kKeyDo;
    else if (f == "cd") flags |= cache::kKeyCd;
    else if (f == "validated" || f == "ad") flags |= cache::kKeyAuthenticated;
    else if (f == "dns64") flags |= cache::kKeyDns64;
    else throw std::invalid_argument("unknown key flag '" + f + "' (do, cd, validated, dns64)");
  }
  return flags;
}

std::string ecs_to_text(const cache::EcsTag& ecs) {
  if (ecs.family == cache::EcsFamily::none) return "-";
  char buf[INET6_ADDRSTRLEN];
  const int af = ecs.family == cache::EcsFamily::ipv4 ? AF_INET : AF_INET6;
  if (!inet_ntop(af, ecs.address.data(), buf, sizeof buf)) throw std::runtime_error("bad ECS address in the cache");
  return std::string(buf) + "/" + std::to_string(ecs.prefix);
}

cache::EcsTag ecs_from_text(const std::string& text) {
  cache::EcsTag ecs;
  if (text == "-") return ecs;
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) throw std::invalid_argument("ECS '" + text + "' is not ADDRESS/PREFIX");
  const std::string address = text.substr(0, slash);
  const int prefix = std::stoi(text.substr(slash + 1));
  if (inet_pton(AF_INET, address.c_str(), ecs.address.data()) == 1) ecs.family = cache::EcsFamily::ipv4;
  else if (inet_pton(AF_INET6, address.c_str(), ecs.address.data()) == 1) ecs.family = cache::EcsFamily::ipv6;
  else throw std::invalid_argument("ECS address '" + address + "' is not IPv4 or IPv6");
  if (prefix < 0 || prefix > (ecs.family == cache::EcsFamily::ipv4 ? 32 : 128))
    throw std::invalid_argument("ECS prefix out of range in '" + text + "'");
  ecs.prefix = static_cast<std::uint8_t>(prefix);
  return ecs;
}

// "name=value" -> value, or throws.
std::string value_of(const std::string& token, const std::string& name) {
  if (token.rfind(name + "=", 0) != 0) throw std::invalid_argument("expected " + name + "=..., found '" + token + "'");
  return token.substr(name.size() + 1);
}

std::uint32_t number_of(const std::string& token, const std::string& name) {
  const std::string v = value_of(token, name);
  std::size_t used = 0;
  const unsigned long n = std::stoul(v, &used);
  if (used != v.size() || n > 0xFFFFFFFFul) throw std::invalid_argument(name + "='" + v + "' is not a number");
  return static_cast<std::uint32_t>(n);
}

}  // namespace

std::string key_to_text(std::span<const std::uint8_t> key_blob) {
  const KeyFields f = key_fields(key_blob);
  return wire::wire_to_text(f.qname) + " " + type_to_text(f.qtype) + " flags=" + flags_to_text(f.flags) +
         " ecs=" + ecs_to_text(f.ecs);
}

namespace {
// By cache::EntryVerdict; "not validated" is written as no dnssec= at all.
constexpr std::array<std::string_view, 4> kVerdictNames = {"-", "secure", "insecure", "indeterminate"};
}  // namespace

void write_dump_header(std::ostream& out, std::uint32_t now) {
  out << "; dnsarena cache dump (text format " << kDumpTextFormat << "; docs/operator-guide.md: Operator commands)\n"
      << "$DUMPED " << now << "\n\n";
}

void write_entry_block(std::ostream& out, cache::EntryReader& reader, std::uint32_t now) {
  const std::uint32_t remaining = reader.expire() > now ? reader.expire() - now : 0;
  out << "$ENTRY " << key_to_text(reader.key_blob()) << " rcode=" << unsigned{reader.rcode()}
      << " ad=" << (reader.authentic_data() ? 1 : 0) << " ttl=" << remaining;
  if (reader.verdict() != cache::EntryVerdict::unvalidated)
    out << " dnssec=" << kVerdictNames[static_cast<unsigned>(reader.verdict())];
  out << "\n";
  reader.rewind();
  cache::RecordView rec;
  unsigned section = 0;
  std::uint32_t left_in_section = reader.count(cache::kAnswer);
  while (reader.next(rec)) {
    while (left_in_section == 0 && section < 2) left_in_section = reader.count(static_cast<cache::Section>(++section));
    --left_in_section;
    const auto owner = rec.owner_is_qname ? reader.qname() : rec.owner;
    out << kSectionNames[section] << " "
        << record_to_text(owner, rec.type, rec.rclass, cache::remaining_ttl(rec.ttl, reader.inserted(), now), rec.rdata)
        << "\n";
  }
  if (!reader.records_valid()) throw std::runtime_error("malformed records in entry " + key_to_text(reader.key_blob()));
  out << "$END\n\n";
}

RestoreCounts read_dump(std::istream& in, const std::string& file_name, std::uint32_t now,
                        const std::function<bool(const cache::CacheKey&, const cache::Answer&)>& insert) {
  RestoreCounts counts;
  RecordParser parser;
  bool have_dumped = false, in_entry = false;
  std::uint32_t dumped = 0;
  std::uint64_t line_no = 0;
  // The entry being read.
  std::basic_string<std::uint8_t> qname;
  std::uint16_t qtype = 0;
  std::uint8_t flags = 0;
  cache::EcsTag ecs;
  std::uint8_t rcode = 0;
  bool ad = false;
  cache::EntryVerdict verdict = cache::EntryVerdict::unvalidated;
  std::uint32_t ttl = 0;
  std::array<std::vector<WireRecord>, 3> sections;

  auto finish_entry = [&] {
    const std::uint32_t elapsed = now > dumped ? now - dumped : 0;
    if (ttl <= elapsed) {
      ++counts.expired;
      return;
    }
    const cache::CacheKey key(qname, qtype, flags, ecs);
    std::array<std::vector<cache::RecordData>, 3> records;
    for (unsigned s = 0; s < 3; ++s)
      for (const WireRecord& r : sections[s])
        records[s].push_back({r.owner, r.type, r.rclass, r.ttl > elapsed ? r.ttl - elapsed : 0, r.rdata});
    cache::Answer answer;
    answer.rcode = rcode;
    answer.authentic_data = ad;
    answer.verdict = verdict;
    answer.ttl = ttl - elapsed;
    for (unsigned s = 0; s < 3; ++s) answer.sections[s] = records[s];
    if (insert(key, answer)) ++counts.restored;
    else ++counts.skipped;
  };

  for (std::string line; std::getline(in, line);) {
    ++line_no;
    try {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || line[0] == ';') continue;
      std::istringstream words(line);
      std::string first;
      words >> first;
      if (first == "$DUMPED") {
        if (!(words >> dumped)) throw std::invalid_argument("$DUMPED needs a unix time");
        have_dumped = true;
      } else if (first == "$ENTRY") {
        if (in_entry) throw std::invalid_argument("$ENTRY inside an entry (missing $END)");
        if (!have_dumped) throw std::invalid_argument("$ENTRY before $DUMPED");
        std::string name, type, f, e, rc, a, t;
        if (!(words >> name >> type >> f >> e >> rc >> a >> t))
          throw std::invalid_argument("$ENTRY needs: qname qtype flags= ecs= rcode= ad= ttl=");
        qname = wire::name_to_wire(name);
        qtype = type_from_text(type);
        flags = flags_from_text(value_of(f, "flags"));
        ecs = ecs_from_text(value_of(e, "ecs"));
        const std::uint32_t rc_value = number_of(rc, "rcode");
        if (rc_value > 15) throw std::invalid_argument("rcode=" + std::to_string(rc_value) + " is over 15");
        rcode = static_cast<std::uint8_t>(rc_value);
        ad = number_of(a, "ad") != 0;
        ttl = number_of(t, "ttl");
        verdict = cache::EntryVerdict::unvalidated;
        if (std::string v; words >> v) {  // optional: the DNSSEC verdict of a validated entry
          const std::string verdict_name = value_of(v, "dnssec");
          unsigned k = 1;
          while (k < kVerdictNames.size() && verdict_name != kVerdictNames[k]) ++k;
          if (k == kVerdictNames.size())
            throw std::invalid_argument("dnssec=" + verdict_name + ": expected secure, insecure or indeterminate");
          verdict = static_cast<cache::EntryVerdict>(k);
        }
        for (auto& s : sections) s.clear();
        in_entry = true;
      } else if (first == "$END") {
        if (!in_entry) throw std::invalid_argument("$END outside an entry");
        in_entry = false;
        finish_entry();
      } else {
        unsigned s = 0;
        while (s < 3 && first != kSectionNames[s]) ++s;
        if (s == 3) throw std::invalid_argument("expected answer, authority, additional, $ENTRY or $END, found '" + first + "'");
        if (!in_entry) throw std::invalid_argument("a record outside an entry");
        std::string rest;
        std::getline(words, rest);
        // The record starts at its owner: a line that starts with a blank means "the
        // previous owner" to a zone-file parser.
        rest.erase(0, rest.find_first_not_of(" \t"));
        sections[s].push_back(parser.parse(rest));
      }
    } catch (const std::exception& e) {
      throw std::invalid_argument(file_name + ":" + std::to_string(line_no) + ": " + e.what());
    }
  }
  if (in_entry) throw std::invalid_argument(file_name + ": the last entry has no $END (file cut short?)");
  return counts;
}

}  // namespace dnsarena::admin
