// SPDX-License-Identifier: GPL-3.0-or-later
// The binary copy of a transferred RPZ (policy/rpz_copy_file.hpp): a zone written as a
// copy and read back compiles to the very image its zone file text compiles to, and so
// does the text `dnsarena policy export` prints of it; a damaged, cut, grown, foreign or
// other-version file is a PolicyError naming what is wrong, at every length and byte.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "policy/policy_compiler.hpp"
#include "policy/rpz_copy_file.hpp"
#include "policy/rpz_copy_text.hpp"
#include "policy/rpz_reader.hpp"
#include "policy/zone_scanner.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {
namespace {

// Every kind of trigger and action the reader knows, and some it skips.
const char* kCopyZone =
    "$TTL 300\n"
    "@ SOA ns.rpz. admin.rpz. 7 3600 600 86400 300\n"
    "@ NS ns.rpz.\n"
    "nx.example CNAME .\n"
    "*.wild.example CNAME .\n"
    "nodata.example CNAME *.\n"
    "pass.example CNAME rpz-passthru.\n"
    "drop.example CNAME rpz-drop.\n"
    "data.example 60 A 192.0.2.1\n"
    "data.example AAAA 2001:db8::1\n"
    "data.example TXT \"a walled garden\"\n"
    "garden.example CNAME walled.garden.\n"
    "32.1.2.0.192.rpz-ip CNAME .\n"
    "128.1.zz.db8.2001.rpz-client-ip CNAME rpz-drop.\n"
    "ns.example.rpz-nsdname CNAME .\n"
    "Mixed.Case.Example CNAME .\n";

struct CopyDir {
  std::string path = "/tmp/dnsarena-rpz-copy-" + std::to_string(::getpid());
  CopyDir() { std::filesystem::create_directories(path); }
  ~CopyDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return path + "/" + name; }
};

std::vector<std::uint8_t> copy_of_text(const std::string& text, const std::string& origin) {
  ZoneScanner scanner("text", origin);
  scanner.open_text(text);
  RpzCopyWriter w(wire::name_to_wire(origin), 16);
  ScannedRecord r;
  while (scanner.next(r)) w.add(r.owner.data(), r.owner.size(), r.type, r.ttl, r.rdata.data(), r.rdata.size());
  return w.finish();
}

void save(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> image_of_file(const std::string& path, const std::string& origin) {
  RuleSet rules;
  read_rpz_file({path, origin, true}, rules);
  return compile_policy(rules);
}

std::vector<std::uint8_t> image_of_text(const std::string& text, const std::string& origin) {
  RuleSet rules;
  read_rpz_text(text, "text", origin, rules);
  return compile_policy(rules);
}

std::string error_of(const std::vector<std::uint8_t>& bytes) {
  try {
    RpzCopyReader r(bytes, "copy");
    return "";
  } catch (const PolicyError& e) {
    return e.what();
  }
}

// Rewrites the header's checksum after a deliberate change of the body, so that the
// checks past the checksum are the ones that must catch it.
void reseal(std::vector<std::uint8_t>& bytes) {
  const std::uint64_t sum = rpz_copy_checksum(bytes.data() + kRpzCopyHeaderBytes, bytes.size() - kRpzCopyHeaderBytes);
  for (int i = 0; i < 8; ++i) bytes[32 + i] = static_cast<std::uint8_t>(sum >> (8 * i));
}

}  // namespace

TEST_CASE("an RPZ copy compiles to the image its zone text compiles to, and exports text that does too",
          "[policy][rpz-copy]") {
  CopyDir dir;
  const std::vector<std::uint8_t> bytes = copy_of_text(kCopyZone, "rpz.test.");
  save(dir.file("copy"), bytes);
  REQUIRE(RpzCopyReader::is_copy(dir.file("copy")));
  const std::vector<std::uint8_t> want = image_of_text(kCopyZone, "rpz.test.");
  CHECK(image_of_file(dir.file("copy"), "rpz.test.") == want);
  CHECK(image_of_file(dir.file("copy"), "RPZ.Test") == want);  // the configured name in any case
  CHECK(image_of_file(dir.file("copy"), "") == want);           // no name: the copy's SOA owner

  RpzCopyReader copy(dir.file("copy"));
  CHECK(copy.records() == 15);
  CHECK(wire::wire_to_text(copy.origin()) == "rpz.test.");
  std::FILE* out = std::fopen(dir.file("export.zone").c_str(), "w");
  REQUIRE(out);
  print_rpz_copy(copy, out);
  std::fclose(out);
  std::ifstream in(dir.file("export.zone"));
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  CHECK(text.find("mixed.case.example.rpz.test.") != std::string::npos);
  CHECK(image_of_text(text, "rpz.test.") == want);
  CHECK(image_of_file(dir.file("export.zone"), "rpz.test.") == want);  // a zone file still reads as one
  CHECK_FALSE(RpzCopyReader::is_copy(dir.file("export.zone")));
}

TEST_CASE("a large generated RPZ round-trips through its copy to the same image", "[policy][rpz-copy]") {
  std::mt19937_64 rng(43);
  std::string text = "$TTL 300\n@ SOA ns.rpz. admin.rpz. 1 3600 600 86400 300\n";
  const char* actions[] = {"CNAME .", "CNAME *.", "CNAME rpz-passthru.", "CNAME rpz-drop.", "A 192.0.2.9", "TXT \"x\""};
  for (int i = 0; i < 5000; ++i) {
    const auto v = rng();
    text += (v & 1 ? "*." : "") + std::string("n") + std::to_string(v % 4000) + ".l" + std::to_string(v % 7) + " " +
            actions[(v >> 8) % 6] + "\n";
  }
  CopyDir dir;
  save(dir.file("copy"), copy_of_text(text, "big.rpz."));
  CHECK(image_of_file(dir.file("copy"), "big.rpz.") == image_of_text(text, "big.rpz."));
}

TEST_CASE("a copy of another zone, a zone file, or another format version is refused by name",
          "[policy][rpz-copy]") {
  CopyDir dir;
  save(dir.file("copy"), copy_of_text(kCopyZone, "rpz.test."));
  RuleSet rules;
  CHECK_THROWS_WITH(read_rpz_file({dir.file("copy"), "other.test.", true}, rules),
                    Catch::Contains("a copy of the zone rpz.test., not of other.test."));

  std::ofstream(dir.file("text.zone")) << kCopyZone;
  CHECK_THROWS_WITH(RpzCopyReader(dir.file("text.zone")), Catch::Contains("not an RPZ copy written by dnsarena"));
  CHECK_THROWS_WITH(RpzCopyReader(dir.file("missing")), Catch::Contains("cannot read"));

  std::vector<std::uint8_t> v2 = copy_of_text(kCopyZone, "rpz.test.");
  v2[8] = 2;  // the format version
  CHECK_THROWS_WITH(RpzCopyReader(v2, "copy"), Catch::Contains("format version 2, this build reads version 1"));
  save(dir.file("v2"), v2);
  CHECK_THROWS_WITH(read_rpz_file({dir.file("v2"), "rpz.test.", true}, rules), Catch::Contains("format version 2"));
}

TEST_CASE("a cut, grown or damaged copy is an error at every length and every byte", "[policy][rpz-copy]") {
  const std::vector<std::uint8_t> good = copy_of_text(kCopyZone, "rpz.test.");
  REQUIRE(error_of(good).empty());
  for (std::size_t n = 0; n < good.size(); ++n) {
    INFO("cut to " << n << " bytes");
    const std::string e = error_of({good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)});
    CHECK_FALSE(e.empty());
    if (n >= kRpzCopyMagic.size()) CHECK(e.find("truncated") != std::string::npos);
  }
  std::vector<std::uint8_t> grown = good;
  grown.push_back(0);
  CHECK_THAT(error_of(grown), Catch::Contains("trailing bytes"));
  for (std::size_t i = kRpzCopyHeaderBytes; i < good.size(); ++i) {
    INFO("byte " << i << " flipped");
    std::vector<std::uint8_t> bad = good;
    bad[i] ^= 0x20;
    CHECK_THAT(error_of(bad), Catch::Contains("damaged"));
  }
}

TEST_CASE("a copy whose checksum holds but whose records do not is refused before any record",
          "[policy][rpz-copy]") {
  const std::vector<std::uint8_t> good = copy_of_text(kCopyZone, "rpz.test.");
  const std::size_t first = kRpzCopyHeaderBytes + wire::name_to_wire("rpz.test.").size();  // the SOA's owner length
  std::vector<std::uint8_t> bad = good;
  bad[first] = 200;  // an owner past the rest of the SOA record
  reseal(bad);
  CHECK_THAT(error_of(bad), Catch::Contains("copy:record 1:"));
  bad = good;
  bad[first + 1] = 70;  // a label over 63 bytes
  reseal(bad);
  CHECK_THAT(error_of(bad), Catch::Contains("a malformed owner name"));
  bad = good;
  bad[16] = 14;  // the record count
  reseal(bad);
  CHECK_THAT(error_of(bad), Catch::Contains("holds 15 records, its header says 14"));
  bad = good;
  bad.resize(bad.size() - 1);  // the last rdata one byte short, lengths made consistent
  for (int i = 0; i < 8; ++i) bad[24 + i] = static_cast<std::uint8_t>((bad.size() - kRpzCopyHeaderBytes) >> (8 * i));
  reseal(bad);
  CHECK_THAT(error_of(bad), Catch::Contains("copy:record 15: the rdata runs past the end"));
}

}  // namespace dnsarena::policy
