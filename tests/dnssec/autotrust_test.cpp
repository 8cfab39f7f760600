// SPDX-License-Identifier: GPL-3.0-or-later
// RFC 5011 trust anchor updates (dnssec/autotrust.hpp) against a zone knotd signs and
// rolls in the test: a new KSK published (add hold-down, then valid), the old one revoked
// (self-signed, so it counts) and forgotten after the remove hold-down; a revocation
// without the revoked key's own signature ignored; a tampered set and a dead server change
// no key; and `dnsarena dnssec update-trust` writing the file back. Then `dnsarena serve`
// with dnssec.auto_update (workers/trust_anchor_updater.hpp): the rolled key trusted
// after the (configured) hold-down without a restart or a reload, and a failed probe
// counted with the anchors unchanged.
//
// Time: knotd's signatures are valid for two weeks, so a hold-down of 30 days cannot pass
// on the validation clock; the test moves the keys' last-change times back instead,
// which is what a file written 31 days ago holds.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cache/segment.hpp"
#include "common/child_process.hpp"
#include "common/nta_table.hpp"
#include "dns/query_builder.hpp"
#include "dnssec/autotrust.hpp"
#include "dnssec/trust_anchors.hpp"
#include "tests/dnssec/signed_zones.hpp"
#include "tests/workers/serve_harness.hpp"

using namespace dnsarena::dnssec;

namespace {

constexpr std::uint32_t kDays31 = 31 * 86400;

void write_text_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// One zone, "roll.", signed by knotd with keys the test generates, revokes and restarts
// knotd for (manual key management, as an operator rolls a KSK).
class RollingZone {
public:
  // `dnskey_ttl`: the DNSKEY set's TTL (0: the zone's 3600 s); RFC 5011's add hold-down
  // is never shorter than it.
  explicit RollingZone(unsigned dnskey_ttl = 0) {
    char templ[] = "/tmp/dnsarena-autotrust-XXXXXX";
    if (!::mkdtemp(templ)) throw std::runtime_error("mkdtemp failed");
    dir_ = templ;
    std::filesystem::create_directories(dir_ + "/db");
    std::filesystem::create_directories(dir_ + "/zones");
    port_ = dnsarena::test::free_port();
    std::ostringstream c;
    c << dnsarena::dnssec::test::knotd_conf_head(dir_, port_) << "policy:\n  - id: manual\n    algorithm: ecdsap256sha256\n    manual: on\n"
      << (dnskey_ttl ? "    dnskey-ttl: " + std::to_string(dnskey_ttl) + "\n" : std::string())
      << "template:\n  - id: default\n    storage: \"" << dir_ << "/zones\"\n    file: \"%s.zone\"\n"
      << "    zonefile-sync: -1\n    journal-content: none\n"
      << "zone:\n  - domain: roll.\n    dnssec-signing: on\n    dnssec-policy: manual\n";
    write_text_file(dir_ + "/knot.conf", c.str());
    write_text_file(dir_ + "/zones/roll.zone", "$ORIGIN roll.\n$TTL 3600\n@ SOA ns h 1 3600 600 86400 300\n@ NS ns\n"
                                          "ns A 127.0.0.1\n");
    first_key_ = add_key();
    start();
  }
  ~RollingZone() {
    knotd_.stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::uint16_t port() const { return port_; }
  const std::string& dir() const { return dir_; }
  const std::string& first_key() const { return first_key_; }

  // A new CSK, published and signing from now; returns its keymgr id.
  std::string add_key() {
    const std::string out = keymgr({"roll.", "generate", "ksk=yes", "zsk=yes"});
    return out.substr(0, out.find('\n'));
  }
  void revoke(const std::string& id) { keymgr({"roll.", "set", id, "revoke=+0"}); }
  // The key gone from the zone (an old KSK retired without revocation).
  void remove(const std::string& id) { keymgr({"roll.", "delete", id}); }
  // The zone's DNSKEYs now, as keymgr prints them (DNSKEY lines).
  std::string dnskey_lines() { return keymgr({"roll.", "dnskey"}); }
  std::string ds_lines() {
    std::string out;
    std::istringstream in(keymgr({"roll.", "ds"}));
    for (std::string line; std::getline(in, line);)
      if (line.find(" 13 2 ") != std::string::npos) out += line + "\n";
    return out;
  }

  // knotd signs again with the key store as it is now.
  void restart(std::size_t expect_keys) {
    knotd_.stop();
    start(expect_keys);
  }

  Response fetch() const {
    const Bytes qname = name_from_text("roll.");  // outlives spec, which only points at it
    dnsarena::dns::QuerySpec spec;
    spec.id = static_cast<std::uint16_t>(++id_);
    spec.qname = qname;
    spec.qtype = kTypeDnskey;
    spec.cd = true;
    spec.do_bit = true;
    const dnsarena::common::Bytes q = dnsarena::dns::build_query(spec);
    const std::vector<std::uint8_t> packet(q.begin(), q.end());
    dnsarena::test::DnsReply r;
    for (int attempt = 0; attempt < 3 && r.wire.empty(); ++attempt)
      r = dnsarena::test::udp_exchange(port_, packet, std::chrono::milliseconds(1000));
    if (r.wire.empty() || r.tc()) r = dnsarena::test::tcp_exchange(port_, packet, std::chrono::milliseconds(5000));
    Response out;
    std::string error;
    if (!parse_response(r.wire, out, error)) throw std::runtime_error("DNSKEY reply: " + error);
    return out;
  }

private:
  std::string keymgr(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{KEYMGR_PROGRAM, "-c", dir_ + "/knot.conf"};
    argv.insert(argv.end(), args.begin(), args.end());
    int status = 0;
    std::string out = dnsarena::common::run_and_capture(argv, status);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("keymgr failed: " + out);
    return out;
  }
  // Until knotd serves a signed DNSKEY set of `expect_keys` keys.
  void start(std::size_t expect_keys = 1) {
    knotd_ = dnsarena::common::ChildProcess({KNOTD_PROGRAM, "-c", dir_ + "/knot.conf"},
                                            {.log_path = dir_ + "/knotd.log", .truncate_log = false,
                                             .die_with_parent = true});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline && knotd_.running()) {
      try {
        const Response r = fetch();
        for (const Rrset& s : r.answer)
          if (s.type == kTypeDnskey && s.rdata.size() == expect_keys && !s.rrsigs.empty()) return;
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("knotd did not serve roll. signed with " + std::to_string(expect_keys) + " keys; see " +
                             dir_);
  }

  std::string dir_;
  std::uint16_t port_ = 0;
  std::string first_key_;
  dnsarena::common::ChildProcess knotd_;
  mutable unsigned id_ = 0;
};

std::uint32_t now() { return static_cast<std::uint32_t>(std::time(nullptr)); }

std::vector<std::string> states(const TrustPoint& tp) {
  std::vector<std::string> out;
  for (const AutotrustKey& k : tp.keys) out.emplace_back(key_state_name(k.state));
  return out;
}

std::string anchor_text(const std::string& keymgr_dnskey) {
  return "; the first key of roll.\n" + keymgr_dnskey;
}

}  // namespace

TEST_CASE("autotrust: a KSK roll with RFC 5011 hold-downs and a self-signed revocation", "[dnssec][autotrust]") {
  RollingZone z;
  TrustPoint tp = parse_trust_point(anchor_text(z.dnskey_lines()), "anchor");
  REQUIRE(states(tp) == std::vector<std::string>{"VALID"});
  const Bytes first = tp.keys[0].dnskey;

  // The published set verifies with the anchor; nothing changes. The probe interval is
  // MAX(1 h, MIN(15 days, half the original TTL of 3600 s, half the time to expiry)).
  ProbeReport r = observe(tp, z.fetch(), now(), Limits{});
  REQUIRE(r.accepted);
  CHECK(r.changes.empty());
  CHECK(tp.query_interval == 3600);
  CHECK(tp.query_failed == 0);

  // A second key is published: it waits out the add hold-down.
  z.add_key();
  z.restart(2);
  r = observe(tp, z.fetch(), now(), Limits{});
  REQUIRE(r.accepted);
  REQUIRE(states(tp) == std::vector<std::string>{"VALID", "ADDPEND"});
  CHECK(trusted_keys(tp).size() == 1);
  {  // A validator reading the file meanwhile trusts the first key alone.
    TrustAnchors pending;
    pending.add_text(format_trust_point(tp), "pending");
    REQUIRE(pending.anchors().size() == 1);
    CHECK(pending.anchors()[0].dnskeys == std::vector<Bytes>{tp.keys[0].dnskey});
  }
  r = observe(tp, z.fetch(), now(), Limits{});
  CHECK(states(tp) == std::vector<std::string>{"VALID", "ADDPEND"});  // 30 days not passed
  tp.keys[1].last_change -= kDays31;
  r = observe(tp, z.fetch(), now(), Limits{});
  REQUIRE(r.accepted);
  CHECK(states(tp) == std::vector<std::string>{"VALID", "VALID"});
  CHECK(trusted_keys(tp).size() == 2);

  // The first key is revoked: published with the REVOKE bit and signing the set itself.
  z.revoke(z.first_key());
  z.restart(2);
  const Response revoked_set = z.fetch();

  SECTION("a revocation the revoked key did not sign is ignored (RFC 5011 2.1)") {
    Response stripped = revoked_set;
    for (Rrset& s : stripped.answer) {
      if (s.type != kTypeDnskey) continue;
      // Keep only the RRSIGs by the second key (the one whose tag is not the revoked key's).
      std::uint16_t revoked_tag = 0;
      for (const Bytes& d : s.rdata)
        if (d[1] & 0x80) revoked_tag = dnskey_tag(d);
      REQUIRE(revoked_tag != 0);
      std::erase_if(s.rrsigs, [&](const Bytes& sig) { return parse_rrsig(sig)->key_tag == revoked_tag; });
      REQUIRE(!s.rrsigs.empty());
    }
    r = observe(tp, stripped, now(), Limits{});
    REQUIRE(r.accepted);  // the second key vouches for the set
    CHECK(states(tp) == std::vector<std::string>{"VALID", "VALID"});
  }

  SECTION("a self-signed revocation revokes, and the key is forgotten after the remove hold-down") {
    r = observe(tp, revoked_set, now(), Limits{});
    REQUIRE(r.accepted);
    REQUIRE(states(tp) == std::vector<std::string>{"REVOKED", "VALID"});
    CHECK(trusted_keys(tp).size() == 1);
    // The revoked key stays out even when it signs.
    r = observe(tp, revoked_set, now(), Limits{});
    CHECK(states(tp) == std::vector<std::string>{"REVOKED", "VALID"});
    tp.keys[0].last_change -= kDays31;
    r = observe(tp, revoked_set, now(), Limits{});
    REQUIRE(r.accepted);
    CHECK(states(tp) == std::vector<std::string>{"VALID"});
    CHECK(tp.keys[0].dnskey != first);

    // What a resolver reads back from the file: the revoked key is no anchor, the
    // second key is (TrustAnchors, the validator's reader).
    TrustAnchors anchors;
    anchors.add_text(format_trust_point(tp), "written");
    REQUIRE(anchors.anchors().size() == 1);
    CHECK(anchors.anchors()[0].dnskeys == std::vector<Bytes>{tp.keys[0].dnskey});
  }
}

TEST_CASE("autotrust: a tampered set, a set without a trusted key and a DS anchor", "[dnssec][autotrust]") {
  RollingZone z;
  TrustPoint tp = parse_trust_point(anchor_text(z.dnskey_lines()), "anchor");
  const Response good = z.fetch();

  Response tampered = good;
  for (Rrset& s : tampered.answer)
    for (Bytes& sig : s.rrsigs) sig.back() ^= 0x01;
  ProbeReport r = observe(tp, tampered, now(), Limits{});
  CHECK_FALSE(r.accepted);
  CHECK(tp.query_failed == 1);
  CHECK(tp.retry_time >= 3600);
  CHECK(states(tp) == std::vector<std::string>{"VALID"});

  // A set signed by a key nobody trusts: a new key alone (the anchor's key not published).
  TrustPoint stranger = parse_trust_point(
      "roll. 3600 IN DNSKEY 257 3 13 "
      "mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==\n",
      "stranger");
  r = observe(stranger, good, now(), Limits{});
  CHECK_FALSE(r.accepted);
  CHECK(stranger.query_failed == 1);

  // A DS anchor (root.ds style) becomes the key it matches.
  TrustPoint from_ds = parse_trust_point(z.ds_lines(), "ds anchor");
  REQUIRE(from_ds.keys.empty());
  REQUIRE(from_ds.ds.size() == 1);
  r = observe(from_ds, good, now(), Limits{});
  REQUIRE(r.accepted);
  CHECK(states(from_ds) == std::vector<std::string>{"VALID"});
  CHECK(from_ds.ds.empty());
  CHECK(from_ds.keys[0].dnskey == tp.keys[0].dnskey);
}

TEST_CASE("autotrust: the file round-trips, and update-trust writes it back atomically", "[dnssec][autotrust]") {
  RollingZone z;
  const std::string file = z.dir() + "/roll.key";
  write_text_file(file, anchor_text(z.dnskey_lines()));
  z.add_key();
  z.restart(2);

  const std::string server = "127.0.0.1:" + std::to_string(z.port());
  int status = 0;
  std::string out = dnsarena::common::run_and_capture(
      {dnsarena::test::dnsarena_binary(), "dnssec", "update-trust", file, "--server", server}, status);
  INFO(out);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(out.find("VALID -> ") == std::string::npos);
  CHECK(out.find("START -> ADDPEND") != std::string::npos);
  TrustPoint tp = read_trust_point(file);
  CHECK(states(tp) == std::vector<std::string>{"VALID", "ADDPEND"});
  CHECK(tp.last_success >= now() - 60);
  CHECK(tp.next_probe == tp.last_success + tp.query_interval);

  // Round trip: what is written reads back the same, states and times.
  const TrustPoint again = parse_trust_point(format_trust_point(tp), "again");
  REQUIRE(again.keys.size() == tp.keys.size());
  for (std::size_t i = 0; i < tp.keys.size(); ++i) {
    CHECK(again.keys[i].dnskey == tp.keys[i].dnskey);
    CHECK(again.keys[i].state == tp.keys[i].state);
    CHECK(again.keys[i].last_change == tp.keys[i].last_change);
  }
  CHECK(again.query_interval == tp.query_interval);
  CHECK(again.next_probe == tp.next_probe);

  // --if-due: not due, nothing asked, the file untouched.
  const std::string before = [&] { std::stringstream ss; ss << std::ifstream(file).rdbuf(); return ss.str(); }();
  out = dnsarena::common::run_and_capture(
      {dnsarena::test::dnsarena_binary(), "dnssec", "update-trust", file, "--server", server, "--if-due"}, status);
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(out.find("nothing done") != std::string::npos);
  CHECK([&] { std::stringstream ss; ss << std::ifstream(file).rdbuf(); return ss.str(); }() == before);

  // A server that answers nothing: exit 2, the failure recorded, no key changed.
  out = dnsarena::common::run_and_capture({dnsarena::test::dnsarena_binary(), "dnssec", "update-trust", file,
                                           "--server", "127.0.0.1:" + std::to_string(dnsarena::test::free_port()),
                                           "--timeout-ms", "200"},
                                          status);
  INFO(out);
  CHECK(WEXITSTATUS(status) == 2);
  const TrustPoint failed = read_trust_point(file);
  CHECK(failed.query_failed == 1);
  CHECK(states(failed) == std::vector<std::string>{"VALID", "ADDPEND"});

  // Bad input: a missing file and a bad server are errors (exit 1), nothing written.
  out = dnsarena::common::run_and_capture(
      {dnsarena::test::dnsarena_binary(), "dnssec", "update-trust", file + ".missing", "--server", server}, status);
  CHECK(WEXITSTATUS(status) == 1);
  CHECK_FALSE(std::filesystem::exists(file + ".missing"));
  out = dnsarena::common::run_and_capture(
      {dnsarena::test::dnsarena_binary(), "dnssec", "update-trust", file, "--server", "not-an-address"}, status);
  CHECK(WEXITSTATUS(status) == 1);
  // No temporary file left beside it.
  for (const auto& e : std::filesystem::directory_iterator(z.dir()))
    CHECK(e.path().filename().string().rfind("roll.key.", 0) != 0);
}

TEST_CASE("autotrust: Unbound's root.key states are read, and a bad state is an error", "[dnssec][autotrust]") {
  const std::string key =
      ".\t172800\tIN\tDNSKEY\t257 3 8 AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3+/4RgWOq7HrxRixHlFlExOLAJr5emLvN"
      "7SWXgnLh4+B5xQlNVz8Og8kvArMtNROxVQuCaSnIDdD5LKyWbRd2n9WGe2R8PzgCmr3EgVLrjyBxWezF0jLHwVN8efS3rCj/EWgvIWgb9tarpVUDK/"
      "b58Da+sqqls3eNbuv7pr+eoZG+SrDK6nWeL3c6H5Apxz7LjVc1uTIdsIXxuOLYA4/ilBmSVIzuDWfdRUfhHdY6+cn8HFRm+2hM8AnXGXws9555KrU"
      "B5qihylGa8subX2Nn6UwNR1AkUTV74bU=";
  const TrustPoint tp = parse_trust_point("; autotrust trust anchor file\n;;id: . 1\n;;query_failed: 2\n"
                                          ";;query_interval: 43200\n;;next_probe_time: 1700040000 ;;Wed\n" +
                                              key + " ;{id = 20326 (ksk), size = 2048b} ;;state=1 [ ADDPEND ] "
                                                    ";;count=1 ;;lastchange=1700000000 ;;Tue\n",
                                          "root.key");
  REQUIRE(tp.keys.size() == 1);
  CHECK(tp.keys[0].state == KeyState::addpend);
  CHECK(tp.keys[0].last_change == 1700000000u);
  CHECK(tp.query_failed == 2);
  CHECK(tp.query_interval == 43200);
  CHECK(tp.next_probe == 1700040000u);
  CHECK(trusted_keys(tp).empty());  // a pending key is no anchor yet
  CHECK_THROWS_WITH(parse_trust_point(key + " ;;state=9 ;;lastchange=1\n", "bad.key"),
                    Catch::Contains("bad.key:1: unknown key state 9"));
  CHECK_THROWS_WITH(parse_trust_point(key + "\nexample. 3600 IN DNSKEY 257 3 13 "
                                            "mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iU"
                                            "zy1L53eKGQ==\n",
                                      "two.key"),
                    Catch::Contains("two zones"));
}

namespace {

// `dnsarena serve` forwarding to the rolling zone's knotd and validating with `anchor_file`;
// `dnssec_extra`: more keys of the dnssec section, indented.
struct AutoUpdateServe {
  std::uint16_t port = dnsarena::test::free_port();
  std::string segment = dnsarena::test::unique_segment("autotrust");
  std::unique_ptr<dnsarena::test::ServeProcess> serve;
  AutoUpdateServe(std::uint16_t upstream_port, const std::string& anchor_file, const std::string& dnssec_extra) {
    const std::string config = dnsarena::test::write_config("dnssec:\n  trust_anchor_file: " + anchor_file + "\n" +
                                                            dnssec_extra);
    serve = std::make_unique<dnsarena::test::ServeProcess>(
        std::vector<std::string>{"--config", config, "--segment", segment, "--workers", "1", "--max-entries", "10000",
                                 "--arena-bytes", "8M", "--listen", "127.0.0.1:" + std::to_string(port), "--upstream",
                                 "127.0.0.1:" + std::to_string(upstream_port), "--no-metrics"},
        port);
    if (!serve->wait_ready()) throw std::runtime_error("serve did not start: " + serve->log());
  }
  ~AutoUpdateServe() {
    serve.reset();
    dnsarena::cache::Segment::remove(segment);
    std::remove(dnsarena::common::NtaTable::path_for(segment).c_str());
  }
  dnsarena::test::DnsReply ask(const std::string& name, std::uint16_t type) const {
    static std::uint16_t id = 3000;
    return dnsarena::test::udp_exchange(port, dnsarena::test::make_query(++id, name, type, 1232, true),
                                        std::chrono::milliseconds(5000));
  }
  std::uint64_t total(const char* counter) const {
    return dnsarena::test::serve_stats(segment)["total"][counter].get<std::uint64_t>();
  }
  // Until the supervisor's counter reaches `at_least` (false after `limit`).
  bool wait_counter(const char* counter, std::uint64_t at_least, std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (total(counter) < at_least) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }
};

}  // namespace

TEST_CASE("autotrust: serve with dnssec.auto_update trusts a rolled KSK after the hold-down, without a reload",
          "[dnssec][autotrust][serve]") {
  RollingZone z(2);  // DNSKEY TTL 2 s: the probe interval and the add hold-down's floor
  const std::string anchor = z.dir() + "/roll.key";
  write_text_file(anchor, anchor_text(z.dnskey_lines()));
  const std::string first_anchor = z.dir() + "/roll-first.key";
  std::filesystem::copy_file(anchor, first_anchor);
  AutoUpdateServe serve(z.port(), anchor,
                        "  auto_update: true\n  auto_update_min_interval_s: 1\n  auto_update_hold_down_s: 2\n");

  // A second key published: ADDPEND at the next probe, VALID two seconds later; the
  // supervisor then replaces the workers with the new anchors.
  z.add_key();
  z.restart(2);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (dnsarena::test::occurrences(serve.serve->log(), "workers replaced with the new anchors") == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(dnsarena::test::occurrences(serve.serve->log(), "workers replaced with the new anchors") == 1);
  const TrustPoint written = read_trust_point(anchor);
  CHECK(trusted_keys(written).size() == 2);

  // The first key gone: the zone is signed by the new key alone. Nothing of roll. was asked
  // before, so the answer is validated now, with the anchors in force.
  z.remove(z.first_key());
  z.restart(1);
  const dnsarena::test::DnsReply secure = serve.ask("ns.roll.", 1);
  REQUIRE(secure.answered);
  CHECK(secure.rcode() == 0);
  CHECK(secure.ad());

  // Without auto_update, the first key alone: the set signed by the new key is bogus.
  AutoUpdateServe fixed(z.port(), first_anchor, "");
  const dnsarena::test::DnsReply bogus = fixed.ask("ns.roll.", 1);
  REQUIRE(bogus.answered);
  CHECK(bogus.rcode() == 2);
  CHECK_FALSE(bogus.ad());
}

TEST_CASE("autotrust: a failed probe in serve is logged and counted and changes no anchor", "[dnssec][autotrust][serve]") {
  RollingZone z;
  const std::string anchor = z.dir() + "/roll.key";
  write_text_file(anchor, anchor_text(z.dnskey_lines()));
  const std::uint16_t nobody = dnsarena::test::free_port();  // nothing listens there
  AutoUpdateServe serve(nobody, anchor, "  auto_update: true\n  auto_update_min_interval_s: 1\n");
  REQUIRE(serve.wait_counter("trust_anchor_probe_failures", 1, std::chrono::seconds(30)));
  CHECK(dnsarena::test::occurrences(serve.serve->log(), "workers replaced with the new anchors") == 0);
  const TrustPoint after = read_trust_point(anchor);
  CHECK(states(after) == std::vector<std::string>{"VALID"});
  CHECK(after.query_failed == 1);
  CHECK(dnsarena::test::occurrences(serve.serve->log(), "probe of roll. DNSKEY failed") == 1);
}
