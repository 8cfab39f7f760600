// SPDX-License-Identifier: GPL-3.0-or-later
// The default local zones (policy/default_local_zones.hpp) as compile_policy_config
// builds them: Unbound's list and records, replaced by a local_zone of the same name,
// dropped by nodefault or unblock_lan_zones, a nodefault for another name refused; and
// the view's top-level-label filter that lets a name under none of them skip the lookup.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "policy/default_local_zones.hpp"
#include "policy/policy_config.hpp"
#include "policy/policy_view.hpp"
#include "tests/policy/policy_test_util.hpp"
#include "wire/dns_name.hpp"

using namespace dnsarena::policy;

namespace {

struct Built {
  CompiledPolicy compiled;
  PolicyView view;
  Match find(const std::string& name) const {
    const auto w = dnsarena::wire::name_to_wire(name);
    return view.find({w.data(), w.size()});
  }
  // The types of the local data records of `name`'s match.
  std::vector<std::uint16_t> types(const std::string& name) const {
    std::vector<std::uint16_t> t;
    const Match m = find(name);
    if (m) PolicyView::for_each_record(m, [&](const LocalRr& rr) { t.push_back(rr.type); });
    return t;
  }
};

Built build(PolicyConfig cfg) {
  Built b;
  b.compiled = compile_policy_config(cfg);
  b.view = PolicyView(b.compiled.image);
  return b;
}

}  // namespace

TEST_CASE("default local zones: Unbound's list, each answered here", "[policy][local-zone]") {
  const auto& names = default_local_zone_names();
  // 7 special-use and loopback zones, then the 95 AS112 zones of Unbound 1.17 (util/as112.c).
  REQUIRE(names.size() == 102);
  CHECK(names[0] == "localhost.");
  CHECK(std::count(names.begin(), names.end(), "home.arpa.") == 1);
  CHECK(std::count(names.begin(), names.end(), "31.172.in-addr.arpa.") == 1);
  CHECK(std::count(names.begin(), names.end(), "127.100.in-addr.arpa.") == 1);
  CHECK(std::count(names.begin(), names.end(), "8.b.d.0.1.0.0.2.ip6.arpa.") == 1);

  const Built b = build({});
  REQUIRE(b.compiled.zones.size() == 1);
  CHECK(b.compiled.zones[0].name == "default");
  CHECK(b.compiled.zones[0].source == "built in");
  // localhost: redirect, its A and AAAA for every name below it.
  CHECK(b.find("localhost.").action == Action::local_data);
  CHECK(b.find("www.LocalHost.").action == Action::local_data);
  CHECK(b.types("a.b.localhost.") == std::vector<std::uint16_t>{6, 2, 1, 28});  // SOA, NS, A, AAAA
  // The loopback reverse zones: their PTR, other names NXDOMAIN.
  CHECK(b.types("1.0.0.127.in-addr.arpa.") == std::vector<std::uint16_t>{12});
  CHECK(b.find("2.0.0.127.in-addr.arpa.").action == Action::nxdomain);
  CHECK(b.types("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa.") ==
        std::vector<std::uint16_t>{6, 2, 12});
  // Empty static zones: the apex's SOA and NS, every name below NXDOMAIN.
  for (const char* apex : {"home.arpa.", "onion.", "test.", "invalid.", "10.in-addr.arpa.", "168.192.in-addr.arpa.",
                           "64.100.in-addr.arpa.", "d.f.ip6.arpa."}) {
    INFO(apex);
    CHECK(b.types(apex) == std::vector<std::uint16_t>{6, 2});
    const Match below = b.find(std::string("x.y.") + apex);
    REQUIRE(below);
    CHECK(below.action == Action::nxdomain);
  }
  // Around them: nothing.
  for (const char* name : {"www.example.com.", "onion.example.", "1.1.1.1.in-addr.arpa.", "15.172.in-addr.arpa.",
                           "x.32.172.in-addr.arpa.", "arpa.", "localhost.example.", "."}) {
    INFO(name);
    CHECK_FALSE(b.find(name));
  }
}

TEST_CASE("default local zones: a local_zone of the same name replaces one, nodefault and unblock_lan_zones drop them",
          "[policy][local-zone]") {
  PolicyConfig cfg;
  cfg.local_zones = {"10.in-addr.arpa. transparent", "ONION nodefault", "home.arpa. static"};
  cfg.local_data = {"printer.home.arpa. 300 A 192.168.1.9"};
  const Built b = build(cfg);
  REQUIRE(b.compiled.zones.size() == 2);
  CHECK(b.compiled.zones[0].name == "local");
  CHECK(b.compiled.zones[1].name == "default");
  CHECK_FALSE(b.find("1.0.0.10.in-addr.arpa."));  // transparent: forwarded
  CHECK_FALSE(b.find("www.onion."));               // dropped
  CHECK(b.find("1.1.168.192.in-addr.arpa.").action == Action::nxdomain);  // the others stay
  // The config's home.arpa. (its own data, no default SOA or NS at its apex).
  CHECK(b.types("printer.home.arpa.") == std::vector<std::uint16_t>{1});
  CHECK(b.find("printer.home.arpa.").zone == 0);
  CHECK(b.find("other.home.arpa.").action == Action::nxdomain);
  CHECK(b.find("home.arpa.").action == Action::nodata);
  // Local data under a default zone the config does not name: that name answers, the
  // zone's other names stay NXDOMAIN.
  PolicyConfig data_only;
  data_only.local_data = {"box.test. 60 A 192.0.2.7"};
  const Built d = build(data_only);
  CHECK(d.types("box.test.") == std::vector<std::uint16_t>{1});
  CHECK(d.find("other.test.").action == Action::nxdomain);

  PolicyConfig lan;
  lan.unblock_lan_zones = true;
  const Built u = build(lan);
  CHECK_FALSE(u.find("1.1.168.192.in-addr.arpa."));
  CHECK_FALSE(u.find("1.0.0.10.in-addr.arpa."));
  CHECK(u.find("localhost.").action == Action::local_data);
  CHECK(u.find("x.onion.").action == Action::nxdomain);
  CHECK(u.find("2.0.0.127.in-addr.arpa.").action == Action::nxdomain);

  // Every default dropped: no rule at all (serve then maps no policy).
  PolicyConfig none;
  none.unblock_lan_zones = true;
  for (std::size_t i = 0; i < 7; ++i) none.local_zones.push_back(default_local_zone_names()[i] + " nodefault");
  CHECK(compile_policy_config(none).rules == 0);
}

TEST_CASE("default local zones: nodefault of a name that is not one, or a bad type, is an error naming the entry",
          "[policy][local-zone]") {
  PolicyConfig cfg;
  cfg.local_zones = {"test. nodefault", "example. nodefault"};
  CHECK_THROWS_WITH(compile_policy_config(cfg), Catch::Contains("local_zone[1] 'example. nodefault'") &&
                                                    Catch::Contains("not a default local zone"));
  cfg.local_zones = {"test. nodefaults"};
  CHECK_THROWS_WITH(compile_policy_config(cfg),
                    Catch::Contains("local_zone[0]") && Catch::Contains("unknown type") && Catch::Contains("nodefault"));
  cfg.local_zones = {"test.. nodefault"};
  CHECK_THROWS_WITH(compile_policy_config(cfg), Catch::Contains("local_zone[0]"));
}

TEST_CASE("policy view: a name under none of the triggers' top-level labels has no rule, in any case",
          "[policy][local-zone]") {
  using test::compile_zones;
  // Under the filter's bound of top-level labels: the filter decides most names alone.
  const auto few = compile_zones({{"rpz.test.", "$ORIGIN rpz.test.\n@ SOA a. b. 1 1 1 1 1\n"
                                                "ads.example CNAME .\n*.track.net CNAME .\n"}});
  CHECK(few->find("ADS.Example.").action == Action::nxdomain);
  CHECK(few->find("a.b.TRACK.net.").action == Action::nxdomain);
  CHECK_FALSE(few->find("ads.example.com."));
  CHECK_FALSE(few->find("net."));
  CHECK_FALSE(few->find("."));
  // More top-level labels than the filter holds, and a trigger at the root: every name
  // takes the full lookup, and still finds its rule.
  std::string many = "$ORIGIN rpz.test.\n@ SOA a. b. 1 1 1 1 1\n";
  for (int i = 0; i < 12; ++i) many += "x.tld" + std::to_string(i) + " CNAME .\n";
  const auto wide = compile_zones({{"rpz.test.", many}});
  for (int i = 0; i < 12; ++i) CHECK(wide->find("X.tld" + std::to_string(i) + ".").action == Action::nxdomain);
  CHECK_FALSE(wide->find("y.tld3."));
  const auto root = compile_zones({{"rpz.test.", "$ORIGIN rpz.test.\n@ SOA a. b. 1 1 1 1 1\n* CNAME .\n"}});
  CHECK(root->find("anything.example.").action == Action::nxdomain);
}
