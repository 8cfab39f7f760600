// SPDX-License-Identifier: GPL-3.0-or-later
// The policy compiler and lookup (policy/): RPZ actions, trigger precedence, zone order,
// errors, local_zone types, a reference model, the image layout.
#include <catch2/catch.hpp>

#include <array>

#include <bit>
#include <cstddef>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "policy/name_hash.hpp"
#include "policy/sealed_image.hpp"
#include "policy_test_util.hpp"

namespace dnsarena::policy {
namespace {

using test::compile_zones;

const char* kSoa = "@ 300 SOA ns.rpz. admin.rpz. 1 3600 600 86400 300\n@ 300 NS ns.rpz.\n";

std::string zone_text(const std::string& body) { return std::string("$TTL 300\n") + kSoa + body; }

TEST_CASE("each RPZ action compiles to its action", "[policy]") {
  const auto c = compile_zones({{"rpz.test.", zone_text("nx.example CNAME .\n"
                                                        "nodata.example CNAME *.\n"
                                                        "pass.example CNAME rpz-passthru.\n"
                                                        "drop.example CNAME rpz-drop.\n"
                                                        "data.example A 192.0.2.1\n"
                                                        "data.example AAAA 2001:db8::1\n"
                                                        "garden.example CNAME walled.garden.\n")}});
  REQUIRE(c->find("nx.example.").action == Action::nxdomain);
  REQUIRE(c->find("nodata.example.").action == Action::nodata);
  REQUIRE(c->find("pass.example.").action == Action::passthru);
  REQUIRE(c->find("drop.example.").action == Action::drop);
  const Match data = c->find("data.example.");
  REQUIRE(data.action == Action::local_data);
  std::vector<std::uint16_t> types;
  PolicyView::for_each_record(data, [&](const LocalRr& rr) {
    types.push_back(rr.type);
    REQUIRE(rr.ttl == 300);
  });
  REQUIRE(types == std::vector<std::uint16_t>{1, 28});
  const Match garden = c->find("garden.example.");
  REQUIRE(garden.action == Action::local_data);
  PolicyView::for_each_record(garden, [&](const LocalRr& rr) {
    REQUIRE(rr.type == 5);
    REQUIRE(wire::wire_to_text(rr.rdata) == "walled.garden.");
  });
  REQUIRE_FALSE(c->find("other.example."));
  REQUIRE_FALSE(c->find("example."));
  REQUIRE_FALSE(c->find("rpz.test."));  // the apex's SOA and NS are no rules
  REQUIRE(c->rules.rules().size() == 6);
}

TEST_CASE("query names match in any case", "[policy]") {
  const auto c = compile_zones({{"rpz.test.", zone_text("Ads.Example CNAME .\n*.Track.Example CNAME .\n")}});
  REQUIRE(c->find("ADS.example.").action == Action::nxdomain);
  REQUIRE(c->find("ads.EXAMPLE.").action == Action::nxdomain);
  REQUIRE(c->find("X.TRACK.example.").wildcard);
}

TEST_CASE("a wildcard covers names below its parent but not the parent and exact beats wildcard", "[policy]") {
  const auto c = compile_zones({{"rpz.test.", zone_text("*.ads.example CNAME .\n"
                                                        "ok.ads.example CNAME rpz-passthru.\n"
                                                        "*.deep.ads.example CNAME rpz-drop.\n")}});
  REQUIRE_FALSE(c->find("ads.example."));
  REQUIRE(c->find("x.ads.example.").action == Action::nxdomain);
  REQUIRE(c->find("a.b.c.ads.example.").action == Action::nxdomain);
  REQUIRE(c->find("ok.ads.example.").action == Action::passthru);
  REQUIRE_FALSE(c->find("ok.ads.example.").wildcard);
  // Below `ok`: the exact rule of `ok` does not cover it, `*.ads.example` does.
  REQUIRE(c->find("x.ok.ads.example.").action == Action::nxdomain);
  // The longest wildcard wins.
  REQUIRE(c->find("deep.ads.example.").action == Action::nxdomain);
  REQUIRE(c->find("x.deep.ads.example.").action == Action::drop);
  REQUIRE(c->find("y.x.deep.ads.example.").action == Action::drop);
}

TEST_CASE("the first zone that matches wins whatever the trigger kind", "[policy]") {
  const auto c = compile_zones({{"one.rpz.", zone_text("*.example CNAME rpz-passthru.\nsame.test CNAME .\n")},
                                {"two.rpz.", zone_text("www.example CNAME .\nsame.test CNAME rpz-drop.\n"
                                                       "only.two CNAME *.\n")}});
  // Zone one's `*.example` beats zone two's exact www.example.
  REQUIRE(c->find("www.example.").action == Action::passthru);
  REQUIRE(c->find("www.example.").zone == 0);
  // The same trigger in both: the first zone's, the later one counted as shadowed.
  REQUIRE(c->find("same.test.").action == Action::nxdomain);
  REQUIRE(c->rules.zones()[1].shadowed == 1);
  REQUIRE(c->find("only.two.").action == Action::nodata);
  REQUIRE(c->find("only.two.").zone == 1);
}

TEST_CASE("a root wildcard matches every name", "[policy]") {
  const auto c = compile_zones({{"rpz.test.", zone_text("*.rpz.test. CNAME .\nok.example CNAME rpz-passthru.\n")}});
  REQUIRE(c->find("anything.example.").action == Action::nxdomain);
  REQUIRE(c->find("com.").action == Action::nxdomain);
  REQUIRE(c->find("ok.example.").action == Action::passthru);
}

TEST_CASE("name server triggers, malformed address triggers and unsupported actions are skipped and counted",
          "[policy]") {
  const auto c = compile_zones({{"rpz.test.", zone_text("ns.evil.rpz-nsdname CNAME .\n"
                                                        "32.1.2.0.192.rpz-nsip CNAME .\n"
                                                        "33.1.2.0.192.rpz-ip CNAME .\n"
                                                        "24.zz.zz.1.rpz-ip CNAME .\n"
                                                        "tcp.example CNAME rpz-tcp-only.\n"
                                                        "rewrite.example CNAME *.garden.\n"
                                                        "kept.example CNAME .\n")}});
  REQUIRE(c->rules.zones()[0].unsupported == 6);
  REQUIRE(c->rules.rules().size() == 1);
  REQUIRE(c->find("kept.example.").action == Action::nxdomain);
  REQUIRE_FALSE(c->find("tcp.example."));
}

TEST_CASE("address triggers: IPv4 and IPv6 prefixes, the lowest zone, then the longest prefix", "[policy]") {
  const auto c = compile_zones({{"rpz.test.", zone_text("32.1.2.0.192.rpz-ip CNAME .\n"
                                                        "24.0.2.0.192.rpz-ip CNAME *.\n"
                                                        "48.zz.db8.2001.rpz-ip CNAME rpz-drop.\n"
                                                        "128.1.zz.db8.2001.rpz-ip A 192.0.2.99\n"
                                                        "24.0.0.0.10.rpz-client-ip CNAME rpz-drop.\n"
                                                        "32.1.2.0.192.rpz-client-ip CNAME rpz-passthru.\n")},
                                {"rpz2.test.", zone_text("16.0.0.168.192.rpz-ip CNAME .\n"
                                                         "32.7.2.0.192.rpz-ip CNAME rpz-passthru.\n")}});
  REQUIRE(c->rules.zones()[0].unsupported == 0);
  auto v4 = [](std::uint8_t a, std::uint8_t b, std::uint8_t x, std::uint8_t d) {
    return std::array<std::uint8_t, 16>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, a, b, x, d};
  };
  auto v6 = [](std::uint16_t g0, std::uint16_t g1, std::uint16_t last) {
    std::array<std::uint8_t, 16> a{};
    a[0] = g0 >> 8, a[1] = g0 & 0xFF, a[2] = g1 >> 8, a[3] = g1 & 0xFF, a[14] = last >> 8, a[15] = last & 0xFF;
    return a;
  };
  const PolicyView& v = c->view;
  REQUIRE(v.has_address_triggers(TriggerKind::response_ip));
  REQUIRE(v.has_address_triggers(TriggerKind::client_ip));
  CHECK(v.find_address(TriggerKind::response_ip, v4(192, 0, 2, 1).data()).action == Action::nxdomain);  // /32 over /24
  CHECK(v.find_address(TriggerKind::response_ip, v4(192, 0, 2, 2).data()).action == Action::nodata);
  CHECK(v.find_address(TriggerKind::response_ip, v4(192, 0, 2, 7).data()).action == Action::nodata);  // zone 0 first
  CHECK(v.find_address(TriggerKind::response_ip, v4(192, 168, 9, 9).data()).zone == 1);
  CHECK_FALSE(v.find_address(TriggerKind::response_ip, v4(192, 0, 3, 1).data()));
  CHECK(v.find_address(TriggerKind::response_ip, v6(0x2001, 0xdb8, 1).data()).action == Action::local_data);
  CHECK(v.find_address(TriggerKind::response_ip, v6(0x2001, 0xdb8, 2).data()).action == Action::drop);
  CHECK_FALSE(v.find_address(TriggerKind::response_ip, v6(0x2001, 0xdb9, 1).data()));
  CHECK(v.find_address(TriggerKind::client_ip, v4(10, 0, 0, 200).data()).action == Action::drop);
  CHECK(v.find_address(TriggerKind::client_ip, v4(192, 0, 2, 1).data()).action == Action::passthru);
  CHECK_FALSE(v.find_address(TriggerKind::client_ip, v4(10, 0, 1, 1).data()));
  // Address triggers are not names: no name matches them, and they set no label bits.
  CHECK_FALSE(c->find("32.1.2.0.192.rpz-ip."));
  CHECK(v.header().exact_labels == 0);
  const auto names = compile_zones({{"rpz.test.", zone_text("a.example CNAME .\n")}});
  CHECK_FALSE(names->view.has_address_triggers(TriggerKind::response_ip));
  CHECK_FALSE(names->view.find_address(TriggerKind::response_ip, v4(192, 0, 2, 1).data()));
}

TEST_CASE("a malformed zone is refused with its file and line", "[policy]") {
  RuleSet rules;
  const std::string text = zone_text("good.example CNAME .\nbad.example A 999.1.1.1\n");  // line 5
  try {
    read_rpz_text(text, "broken.rpz", "rpz.test.", rules);
    FAIL("no error");
  } catch (const PolicyError& e) {
    INFO(e.what());
    REQUIRE(std::string(e.what()).rfind("broken.rpz:5: ", 0) == 0);
  }
  RuleSet outside;
  REQUIRE_THROWS_WITH(read_rpz_text("$TTL 60\nwww.elsewhere. CNAME .\n", "out.rpz", "rpz.test.", outside),
                      Catch::Contains("out.rpz:2: owner www.elsewhere. is outside the zone rpz.test."));
  RuleSet no_soa;  // no name given: the SOA names the zone
  REQUIRE_THROWS_WITH(read_rpz_text("x.rpz. 60 CNAME .\n", "nosoa.rpz", "", no_soa), Catch::Contains("nosoa.rpz:1: "));
}

TEST_CASE("without a configured name the SOA's owner is the origin", "[policy]") {
  RuleSet rules;
  read_rpz_text("rpz.local. 60 SOA ns. admin. 1 1 1 1 1\nwww.ads.rpz.local. 60 CNAME .\n", "f.rpz", "", rules);
  REQUIRE(rules.zones()[0].name == "rpz.local.");
  REQUIRE(rules.rules().size() == 1);
  REQUIRE(wire::wire_to_text(rules.rules()[0].name) == "www.ads.");
}

TEST_CASE("local_zone types and local_data", "[policy]") {
  const auto c = compile_zones({{"rpz.test.", zone_text("www.static.test CNAME rpz-drop.\nrpz.only CNAME .\n")}},
                               {"static.test static", "refused.test refuse", "gone.test always_nxdomain",
                                "redir.test redirect", "quiet.test deny", "empty.test always_nodata"},
                               {"www.static.test. 60 A 192.0.2.10", "gone.test. A 192.0.2.11",
                                "redir.test. 60 A 192.0.2.12", "host.plain. 60 AAAA 2001:db8::5",
                                "ok.refused.test. 60 A 192.0.2.13"});
  // static: local data answers (and the local zone comes before the RPZ file)
  REQUIRE(c->find("www.static.test.").action == Action::local_data);
  REQUIRE(c->find("other.static.test.").action == Action::nxdomain);
  REQUIRE(c->find("static.test.").action == Action::nodata);
  REQUIRE(c->find("refused.test.").action == Action::refuse);
  REQUIRE(c->find("a.refused.test.").action == Action::refuse);
  REQUIRE(c->find("ok.refused.test.").action == Action::local_data);
  // always_nxdomain ignores the local data under it
  REQUIRE(c->find("gone.test.").action == Action::nxdomain);
  REQUIRE(c->find("a.gone.test.").action == Action::nxdomain);
  // redirect: the apex's data for every name below
  REQUIRE(c->find("any.thing.redir.test.").action == Action::local_data);
  REQUIRE(c->find("redir.test.").action == Action::local_data);
  REQUIRE(c->find("x.quiet.test.").action == Action::drop);
  REQUIRE(c->find("x.empty.test.").action == Action::nodata);
  // local_data without a zone: transparent
  REQUIRE(c->find("host.plain.").action == Action::local_data);
  REQUIRE_FALSE(c->find("other.plain."));
  REQUIRE(c->find("rpz.only.").action == Action::nxdomain);
  REQUIRE(c->find("rpz.only.").zone == 1);
  RuleSet bad;
  REQUIRE_THROWS_WITH(read_local_config("local", "config", {"x.test inform"}, {}, bad), Catch::Contains("local_zone[0]"));
  RuleSet bad_data;
  REQUIRE_THROWS_WITH(read_local_config("local", "config", {}, {"www.test. A not-an-address"}, bad_data), Catch::Contains("local_data[0]:1: "));
}

// The reference: every rule in a map, each query decided by the definition (the lowest
// zone among the exact name and its `*.` parents; in a zone exact, then the longest parent).
TEST_CASE("random rules and names agree with a reference model", "[policy]") {
  std::mt19937_64 rng(7);
  const char* labels[] = {"a", "b", "c", "ads", "www", "x1", "track"};
  auto random_name = [&](unsigned depth) {
    std::string s;
    for (unsigned i = 0; i < depth; ++i) s += std::string(labels[rng() % 7]) + ".";
    return s;
  };
  for (int round = 0; round < 20; ++round) {
    std::vector<test::Zone> zones(1 + rng() % 3);
    std::map<std::pair<std::string, bool>, std::pair<unsigned, Action>> reference;  // (parent, wildcard) -> zone, action
    const char* actions[] = {"CNAME .", "CNAME *.", "CNAME rpz-passthru.", "CNAME rpz-drop."};
    const Action action_of[] = {Action::nxdomain, Action::nodata, Action::passthru, Action::drop};
    for (unsigned z = 0; z < zones.size(); ++z) {
      zones[z].origin = "z" + std::to_string(z) + ".rpz.";
      std::string body;
      for (int i = 0; i < 40; ++i) {
        const std::string name = random_name(1 + rng() % 3);
        const bool wildcard = rng() % 3 == 0;
        const unsigned a = rng() % 4;
        body += (wildcard ? "*." : "") + name + zones[z].origin + " " + actions[a] + "\n";
        const auto key = std::make_pair(name, wildcard);
        // The first zone and the first action at one trigger hold.
        reference.try_emplace(key, z, action_of[a]);
      }
      zones[z].text = zone_text(body);
    }
    const auto c = compile_zones(zones);
    for (int q = 0; q < 400; ++q) {
      const std::string name = random_name(1 + rng() % 5);
      // Expected: candidates in order exact, then parents longest first.
      std::optional<std::pair<unsigned, Action>> best;
      auto consider = [&](const std::string& n, bool wildcard) {
        const auto it = reference.find({n, wildcard});
        if (it != reference.end() && (!best || it->second.first < best->first)) best = it->second;
      };
      consider(name, false);
      for (std::size_t dot = name.find('.'); dot != std::string::npos && dot + 1 < name.size(); dot = name.find('.', dot + 1))
        consider(name.substr(dot + 1), true);
      const Match m = c->find(name);
      INFO("round " << round << " name " << name);
      REQUIRE(bool(m) == best.has_value());
      if (best) {
        REQUIRE(m.zone == best->first);
        REQUIRE(m.action == best->second);
      }
    }
  }
}

TEST_CASE("the image layout is as documented and survives a sealed mapping", "[policy][layout]") {
  const auto c = compile_zones({{"rpz.test.", zone_text("a.example CNAME .\n*.b.example CNAME *.\nc.example TXT hi\n")}});
  const std::vector<std::uint8_t>& img = c->image;
  const ImageHeader& h = c->view.header();
  REQUIRE(std::memcmp(img.data(), "DNSAPOL", 8) == 0);
  REQUIRE(h.format_version == kImageFormatVersion);
  REQUIRE(h.image_bytes == img.size());
  REQUIRE(h.rule_count == 3);
  REQUIRE(h.slot_count == 16);
  REQUIRE(h.filter_words == 1);
  REQUIRE(h.records_offset == 128 + 8 * 16 + 8 * 1);
  REQUIRE(h.exact_labels == (label_bit(2)));
  REQUIRE(h.wildcard_labels == label_bit(2));
  // The first record: a.example., exact, nxdomain, zone 0, no data.
  const std::uint8_t* rec = img.data() + h.records_offset;
  REQUIRE(rec[0] == 11);
  REQUIRE(rec[1] == (static_cast<unsigned>(Action::nxdomain) << kActionShift));
  REQUIRE(rec[2] == 0);
  REQUIRE(std::memcmp(rec + 8, "\x01" "a\x07" "example", 11) == 0);
  // Every occupied slot points at a record whose name hashes to the slot's tag.
  std::size_t used = 0;
  for (std::uint32_t i = 0; i < h.slot_count; ++i) {
    std::uint64_t slot;
    std::memcpy(&slot, img.data() + 128 + 8 * i, 8);
    if (!slot) continue;
    ++used;
    const std::uint8_t* r = img.data() + (slot >> 32) * 4;
    std::uint8_t name[264] = {};
    std::memcpy(name, r + 8, r[0]);
    NameSuffixes s;
    split_suffixes(name, r[0], s);
    const std::uint64_t hash = trigger_hash(s.state[0], r[1] & kFlagWildcard);
    std::uint64_t word;
    std::memcpy(&word, img.data() + 128 + 8 * 16 + 8 * filter_word(hash, h.filter_words), 8);
    REQUIRE((word & filter_bits(hash)) == filter_bits(hash));
    REQUIRE(static_cast<std::uint32_t>(slot) == (static_cast<std::uint32_t>(hash >> 32) ? static_cast<std::uint32_t>(hash >> 32) : 1));
  }
  REQUIRE(used == 3);
  // The filter word has both bits of every trigger.
  std::uint64_t filter;
  std::memcpy(&filter, img.data() + 128 + 8 * 16, 8);
  REQUIRE(filter != 0);
  REQUIRE(std::popcount(filter) <= 6);
  const SealedImage sealed(img);
  const auto w = wire::name_to_wire("x.b.example.");
  REQUIRE(sealed.view().find({w.data(), w.size()}).action == Action::nodata);
  // A damaged header is refused.
  std::vector<std::uint8_t> bad = img;
  bad[8] = 99;
  REQUIRE_THROWS_WITH(PolicyView(bad), Catch::Contains("format 99"));
  REQUIRE_THROWS_WITH(PolicyView({img.data(), img.size() - 1}), Catch::Contains("truncated"));
}

TEST_CASE("the slot table stays at most three quarters full", "[policy]") {
  for (std::size_t n : {0u, 1u, 12u, 13u, 1000u, 1u << 20})
    REQUIRE(slot_count_for(n) * 3 >= n * 4);
  REQUIRE(slot_count_for(1'000'000) == (1u << 21));
  REQUIRE(filter_words_for(1'000'000) == (1u << 17));  // 8.4 bits per trigger
}

TEST_CASE("the filter passes every trigger and at most 6% of names no rule has", "[policy]") {
  std::string text;
  for (int i = 0; i < 100'000; ++i) text += "r" + std::to_string(i) + ".example CNAME .\n";
  const auto c = compile_zones({{"rpz.test.", zone_text(text)}});
  REQUIRE(c->view.header().filter_words == (1u << 14));  // 100,000 / 8 -> 16,384 words: 10.5 bits each
  std::size_t passed = 0, matched = 0;
  constexpr int kNames = 100'000;
  for (int i = 0; i < kNames; ++i) {
    matched += c->find("r" + std::to_string(i) + ".example.") ? 1 : 0;
    REQUIRE_FALSE(c->find("q" + std::to_string(i) + ".example."));
    const auto w = wire::name_to_wire("q" + std::to_string(i) + ".example.");
    std::uint8_t name[264] = {};
    std::memcpy(name, w.data(), w.size());
    NameSuffixes s;
    split_suffixes(name, w.size(), s);
    const std::uint64_t hash = trigger_hash(s.state[0], false);
    std::uint64_t word;
    std::memcpy(&word, c->image.data() + 128 + 8 * c->view.header().slot_count +
                           8 * filter_word(hash, c->view.header().filter_words), 8);
    passed += (word & filter_bits(hash)) == filter_bits(hash) ? 1 : 0;
  }
  CHECK(matched == kNames);
  INFO("passed falsely: " << passed << " of " << kNames);
  CHECK(passed < kNames * 6 / 100);
}

}  // namespace
}  // namespace dnsarena::policy
