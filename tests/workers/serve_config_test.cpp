// SPDX-License-Identifier: GPL-3.0-or-later
// Config errors name file, line, column and key; --help exists; stats and /metrics.
#include <catch2/catch.hpp>
#include <arpa/inet.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "common/child_process.hpp"
#include "common/loopback.hpp"
#include "tests/workers/service_fixture.hpp"
#include "tests/workers/tls_test_support.hpp"
#include "workers/ad_trust.hpp"
#include "workers/rpz_transfer_status.hpp"
#include "workers/local_root.hpp"
#include "workers/metrics_process.hpp"
#include "workers/serve_config.hpp"

using namespace dnsarena::test;

namespace {
std::string write_file(const std::string& text) { return write_config(text); }
}  // namespace

TEST_CASE("the shipped configs/serve.yaml loads", "[serve][config]") {
  const auto c = dnsarena::workers::load_serve_config(DNSARENA_SOURCE_DIR "/configs/serve.yaml");
  REQUIRE(c.listen.size() == 1);
  CHECK(c.listen[0].port() == 8053);
  CHECK(c.upstreams.size() == 1);
  CHECK(c.ecs_policy == dnsarena::workers::EcsPolicy::off);
  CHECK_NOTHROW(c.validate());
}

TEST_CASE("config errors name file, line, column and key", "[serve][config]") {
  using dnsarena::workers::ConfigError;
  using dnsarena::workers::load_serve_config;
  const std::string unknown = write_file("listen: 127.0.0.1:53\nttl:\n  floor: 1\n  cieling: 5\n");
  try {
    load_serve_config(unknown);
    FAIL("accepted an unknown key");
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    CHECK(m.find(unknown + ":4:3") != std::string::npos);
    CHECK(m.find("ttl.cieling") != std::string::npos);
    CHECK(m.find("unknown key") != std::string::npos);
  }
  const std::string bad_value = write_file("workers: many\n");
  CHECK_THROWS_WITH(load_serve_config(bad_value), Catch::Contains(":1:10") && Catch::Contains("'workers'"));
  const std::string bad_yaml = write_file("listen: [127.0.0.1\n");
  CHECK_THROWS_WITH(load_serve_config(bad_yaml), Catch::Contains("YAML syntax error"));
  const std::string bad_ecs = write_file("ecs:\n  policy: sometimes\n");
  CHECK_THROWS_WITH(load_serve_config(bad_ecs), Catch::Contains(":2:11") && Catch::Contains("ecs.policy"));
  // The command reports it and exits non-zero.
  int status = 0;
  const std::string out = run_command(dnsarena_binary() + " serve --config " + unknown + " 2>&1", &status);
  CHECK(status != 0);
  CHECK(out.find("ttl.cieling") != std::string::npos);
}

TEST_CASE("config errors of the strict reader: sizes, lists, nested keys, duplicates", "[serve][config]") {
  using dnsarena::common::ConfigError;  // the one ConfigError (workers::ConfigError names it)
  using dnsarena::workers::load_serve_config;
  const std::string bad_size = write_file("udp:\n  receive_buffer: 4X\n");
  CHECK_THROWS_WITH(load_serve_config(bad_size),
                    Catch::Contains(bad_size + ":2:19") && Catch::Contains("'udp.receive_buffer'") &&
                        Catch::Contains("unknown suffix"));
  const std::string unknown = write_file("ecs:\n  polcy: forward\n");
  CHECK_THROWS_WITH(load_serve_config(unknown), Catch::Contains(":2:3: key 'ecs.polcy': unknown key (known: ") &&
                                                    Catch::Contains("policy"));
  const std::string zone = write_file("forward_zones:\n  - zone: example.\n    upstreams: 127.0.0.1\n");
  CHECK_THROWS_WITH(load_serve_config(zone), Catch::Contains(":3:16: key 'forward_zones.upstreams'"));
  const std::string twice = write_file("workers: 1\nworkers: 2\n");
  CHECK_THROWS_AS(load_serve_config(twice), ConfigError);
  CHECK_THROWS_WITH(load_serve_config(twice), Catch::Contains(":2:1: key 'workers': duplicate key"));
  const std::string range = write_file("ttl:\n  floor: -1\n");
  CHECK_THROWS_WITH(load_serve_config(range), Catch::Contains(":2:10: key 'ttl.floor'"));
  const std::string good = write_file("cache:\n  arena_bytes: 64M\nudp:\n  send_buffer: 1K\necs:\n  policy: off\n");
  const auto c = load_serve_config(good);
  CHECK(c.geometry.arena_bytes == 64ull << 20);
  CHECK(c.udp_send_buffer == 1024);
  CHECK(c.ecs_policy == dnsarena::workers::EcsPolicy::off);
  CHECK_THROWS_WITH(load_serve_config("/nonexistent/serve.yaml"), Catch::Contains("cannot open"));
}

TEST_CASE("stats.metrics_listen: on by default, kept by a stats section without it, off only when empty",
          "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  CHECK(load_serve_config(write_file("workers: 1\n")).metrics_listen == "127.0.0.1:9153");
  CHECK(load_serve_config(write_file("stats: {}\n")).metrics_listen == "127.0.0.1:9153");
  CHECK(load_serve_config(write_file("stats: {metrics_listen: \"127.0.0.1:9999\"}\n")).metrics_listen ==
        "127.0.0.1:9999");
  CHECK(load_serve_config(write_file("stats: {metrics_listen: \"\"}\n")).metrics_listen.empty());
}

TEST_CASE("mrc: on by default at R 0.001 within its bounds, bad rates and crossed bounds are errors", "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  const auto d = load_serve_config(write_file("workers: 1\n"));
  CHECK(d.mrc.enabled);
  CHECK(d.mrc.sample_rate == 0.001);
  const auto c = load_serve_config(
      write_file("mrc: {enabled: false, sample_rate: 0.01, min_sampled_entries: 10, max_sampled_entries: 20}\n"));
  CHECK_FALSE(c.mrc.enabled);
  CHECK(c.mrc.sample_rate == 0.01);
  CHECK(c.mrc.min_sampled_entries == 10);
  CHECK(c.mrc.max_sampled_entries == 20);
  CHECK_THROWS_WITH(load_serve_config(write_file("mrc: {sample_rate: 0}\n")), Catch::Contains("'mrc.sample_rate'"));
  CHECK_THROWS_WITH(load_serve_config(write_file("mrc: {sample_rate: 1.5}\n")), Catch::Contains("'mrc.sample_rate'"));
  CHECK_THROWS_WITH(load_serve_config(write_file("mrc: {max_sampled_entries: 0}\n")),
                    Catch::Contains("'mrc.max_sampled_entries'"));
  CHECK_THROWS_WITH(load_serve_config(write_file("mrc: {min_sampled_entries: 30, max_sampled_entries: 20}\n")),
                    Catch::Contains("'mrc.min_sampled_entries'") && Catch::Contains("must not exceed"));
  CHECK_THROWS_WITH(load_serve_config(write_file("mrc: {rate: 0.1}\n")), Catch::Contains("unknown key"));
}

TEST_CASE("udp.coalesce_us: default 100, 0 turns it off, over 1000 is an error", "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  CHECK(load_serve_config(write_file("workers: 1\n")).udp_coalesce_us == 100);
  CHECK(load_serve_config(write_file("udp:\n  coalesce_us: 0\n")).udp_coalesce_us == 0);
  CHECK(load_serve_config(write_file("udp:\n  coalesce_us: 1000\n")).udp_coalesce_us == 1000);
  const std::string over = write_file("udp:\n  coalesce_us: 1001\n");
  CHECK_THROWS_WITH(load_serve_config(over), Catch::Contains(":2:16") && Catch::Contains("'udp.coalesce_us'"));
}

TEST_CASE("dnstap: off by default, every key read, a socket or a file, a bounded queue", "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  const auto off = load_serve_config(write_file("workers: 1\n"));
  CHECK_FALSE(off.dnstap.enabled());
  CHECK_FALSE(load_serve_config(DNSARENA_SOURCE_DIR "/configs/serve.yaml").dnstap.enabled());
  const auto c = load_serve_config(write_file("dnstap: {socket: /run/tap.sock, client_query: false, client_response: true,"
                                              " forwarder_query: false, forwarder_response: false, identity: ns1,"
                                              " version: v9, queue: 256}\n"));
  CHECK(c.dnstap.enabled());
  CHECK(c.dnstap.socket == "/run/tap.sock");
  CHECK_FALSE(c.dnstap.client_query);
  CHECK(c.dnstap.client_response);
  CHECK_FALSE(c.dnstap.forwarder_query);
  CHECK_FALSE(c.dnstap.forwarder_response);
  CHECK(c.dnstap.identity == "ns1");
  CHECK(c.dnstap.version == "v9");
  CHECK(c.dnstap.queue == 256);
  CHECK(load_serve_config(write_file("dnstap: {file: /var/log/tap}\n")).dnstap.enabled());
  CHECK_THROWS_WITH(load_serve_config(write_file("dnstap: {sockett: /x}\n")), Catch::Contains("'dnstap.sockett'"));
  auto with = [&](const std::string& yaml) {
    auto cfg = load_serve_config(write_file("upstreams: [127.0.0.1:53]\n" + yaml));
    cfg.validate();
  };
  CHECK_NOTHROW(with("dnstap: {socket: /x, queue: 16384}\n"));
  CHECK_THROWS_WITH(with("dnstap: {socket: /x, file: /y}\n"), Catch::Contains("socket or file"));
  CHECK_NOTHROW(with("dnstap: {socket: /x, queue: 1000}\n"));  // fstrm's 512 and a backlog of 488
  CHECK_NOTHROW(with("dnstap: {socket: /x, queue: 1048576}\n"));
  CHECK(load_serve_config(write_file("dnstap: {socket: /x}\n")).dnstap.queue == 65536);
  CHECK_THROWS_WITH(with("dnstap: {socket: /x, queue: 1}\n"), Catch::Contains("dnstap.queue must be in [2, 1048576]"));
  CHECK_THROWS_WITH(load_serve_config(write_file("dnstap: {socket: /x, queue: 1048577}\n")), Catch::Contains("dnstap.queue"));
  CHECK_THROWS_WITH(with("dnstap: {socket: /" + std::string(120, 'x') + "}\n"), Catch::Contains("dnstap.socket"));
}

TEST_CASE("tls: absent = no DoT, listen, files and bounds read, errors name the setting", "[serve][config][tls]") {
  using dnsarena::workers::load_serve_config;
  auto with_upstream = [](const std::string& yaml) { return write_file("upstreams: [127.0.0.1:5300]\n" + yaml); };
  const auto off = load_serve_config(with_upstream(""));
  CHECK_FALSE(off.tls.enabled());
  CHECK_NOTHROW(off.validate());
  const auto on = load_serve_config(with_upstream(
      "tls: {listen: [127.0.0.1:853, \"[::1]:853\"], certificate: /c.pem, key: /k.pem, handshake_timeout_ms: 2000, "
      "max_handshakes: 8}\n"));
  REQUIRE(on.tls.listen.size() == 2);
  CHECK(on.tls.listen[1].port() == 853);
  CHECK(on.tls.certificate == "/c.pem");
  CHECK(on.tls.key == "/k.pem");
  CHECK(on.tls.handshake_timeout_ms == 2000);
  CHECK(on.tls.max_handshakes == 8);
  CHECK_NOTHROW(on.validate());
  const auto defaults = load_serve_config(with_upstream("tls: {listen: [127.0.0.1:853], certificate: c, key: k}\n"));
  CHECK(defaults.tls.handshake_timeout_ms == 5000);
  CHECK(defaults.tls.max_handshakes == 64);
  CHECK_THROWS_WITH(load_serve_config(with_upstream("tls: {listen: [127.0.0.1:853], key: k}\n")).validate(),
                    Catch::Contains("tls.certificate"));
  CHECK_THROWS_WITH(load_serve_config(with_upstream("tls: {listen: [127.0.0.1:853], certificate: c}\n")).validate(),
                    Catch::Contains("tls.key"));
  CHECK_THROWS_WITH(
      load_serve_config(with_upstream("listen: 127.0.0.1:853\ntls: {listen: [127.0.0.1:853], certificate: c, key: k}\n"))
          .validate(),
      Catch::Contains("also a plain listen address"));
  CHECK_THROWS_WITH(load_serve_config(with_upstream("tls: {listen: [127.0.0.1:853], certificat: c}\n")),
                    Catch::Contains("certificat"));
}

TEST_CASE("tls and https max_connections: tcp.max_connections unless set, 1 .. 65,536", "[serve][config][tls]") {
  using dnsarena::workers::load_serve_config;
  auto with_upstream = [](const std::string& yaml) { return write_file("upstreams: [127.0.0.1:5300]\n" + yaml); };
  const std::string tls = "tls: {listen: [127.0.0.1:853], certificate: c, key: k";
  const std::string https = "https: {listen: [127.0.0.1:443]";
  // Unset: the plain TCP bound, whatever it is, in whichever order the sections come.
  const auto inherit = load_serve_config(with_upstream(tls + "}\n" + https + "}\ntcp: {max_connections: 700}\n"));
  CHECK(inherit.tls_max_connections() == 700);
  CHECK(inherit.https_max_connections() == 700);
  CHECK(load_serve_config(with_upstream(tls + "}\n")).tls_max_connections() == 256);
  // Set: their own, apart from tcp's.
  const auto own = load_serve_config(
      with_upstream("tcp: {max_connections: 64}\n" + tls + ", max_connections: 10000}\n" + https +
                    ", max_connections: 900}\n"));
  CHECK(own.tcp_max_connections == 64);
  CHECK(own.tls_max_connections() == 10000);
  CHECK(own.https_max_connections() == 900);
  CHECK_NOTHROW(own.validate());
  CHECK_THROWS_WITH(load_serve_config(with_upstream(tls + ", max_connections: 0}\n")),
                    Catch::Contains("max_connections") && Catch::Contains("out of range"));
  CHECK_THROWS_WITH(load_serve_config(with_upstream(https + ", max_connections: 65537}\n")),
                    Catch::Contains("max_connections") && Catch::Contains("out of range"));
  CHECK_THROWS_WITH(load_serve_config(with_upstream(tls + ", max_connections: many}\n")),
                    Catch::Contains("max_connections"));
}

TEST_CASE("https: absent = no DoH, defaults, the tls files, errors name the setting", "[serve][config][doh]") {
  using dnsarena::workers::load_serve_config;
  auto with_upstream = [](const std::string& yaml) { return write_file("upstreams: [127.0.0.1:5300]\n" + yaml); };
  CHECK_FALSE(load_serve_config(with_upstream("")).https.enabled());
  const std::string files = "tls: {certificate: /c.pem, key: /k.pem}\n";
  const auto defaults = load_serve_config(with_upstream(files + "https: {listen: [127.0.0.1:443]}\n"));
  REQUIRE(defaults.https.enabled());
  CHECK_FALSE(defaults.tls.enabled());  // files without tls.listen: no DoT
  CHECK(defaults.https.path == "/dns-query");
  CHECK(defaults.https.max_streams == 100);
  CHECK_NOTHROW(defaults.validate());
  const auto set = load_serve_config(with_upstream(files + "https: {listen: [\"[::1]:8443\"], path: /q, max_streams: 7}\n"));
  CHECK(set.https.listen[0].port() == 8443);
  CHECK(set.https.path == "/q");
  CHECK(set.https.max_streams == 7);
  auto invalid = [&](const std::string& yaml) { load_serve_config(with_upstream(yaml)).validate(); };
  CHECK_THROWS_WITH(invalid("https: {listen: [127.0.0.1:443]}\n"), Catch::Contains("set tls.certificate and tls.key"));
  CHECK_THROWS_WITH(invalid("listen: 127.0.0.1:443\n" + files + "https: {listen: [127.0.0.1:443]}\n"),
                    Catch::Contains("https.listen: '127.0.0.1:443' is also a plain listen address"));
  CHECK_THROWS_WITH(invalid("tls: {listen: [127.0.0.1:443], certificate: c, key: k}\nhttps: {listen: [127.0.0.1:443]}\n"),
                    Catch::Contains("is also a tls.listen address"));
  CHECK_THROWS_WITH(invalid(files + "https: {listen: [127.0.0.1:443], path: q}\n"), Catch::Contains("https.path"));
  CHECK_THROWS_WITH(invalid(files + "https: {listen: [127.0.0.1:443], path: \"/a b\"}\n"), Catch::Contains("https.path"));
  CHECK_THROWS_WITH(invalid(files + "https: {listen: [127.0.0.1:443], max_streams: 0}\n"),
                    Catch::Contains("https.max_streams"));
  CHECK_THROWS_WITH(invalid(files + "https: {listen: [127.0.0.1:443], paht: /q}\n"), Catch::Contains("paht"));
}

TEST_CASE("upstream_health: defaults, the keys of configs/serve.yaml, and errors that name the key",
          "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  const auto d = load_serve_config(write_file("workers: 1\n")).upstream_health;
  CHECK(d.rtt_band_ms == 400);
  CHECK(d.down_after_timeouts == 3);
  CHECK(d.down_backoff_initial_ms == 1000);
  CHECK(d.down_backoff_max_ms == 5000);
  const auto shipped = load_serve_config(DNSARENA_SOURCE_DIR "/configs/serve.yaml").upstream_health;
  CHECK(shipped.rtt_band_ms == d.rtt_band_ms);
  CHECK(shipped.down_after_timeouts == d.down_after_timeouts);
  CHECK(shipped.down_backoff_initial_ms == d.down_backoff_initial_ms);
  CHECK(shipped.down_backoff_max_ms == d.down_backoff_max_ms);
  const auto c = load_serve_config(write_file("upstream_health:\n  rtt_band_ms: 0\n  down_after_timeouts: 5\n"
                                              "  down_backoff_initial_ms: 250\n  down_backoff_max_ms: 4000\n"))
                     .upstream_health;
  CHECK(c.rtt_band_ms == 0);
  CHECK(c.down_after_timeouts == 5);
  CHECK(c.down_backoff_initial_ms == 250);
  CHECK(c.down_backoff_max_ms == 4000);
  const std::string zero = write_file("upstream_health:\n  down_after_timeouts: 0\n");
  CHECK_THROWS_WITH(load_serve_config(zero),
                    Catch::Contains(zero + ":2:24") && Catch::Contains("'upstream_health.down_after_timeouts'"));
  const std::string typo = write_file("upstream_health:\n  down_after: 2\n");
  CHECK_THROWS_WITH(load_serve_config(typo), Catch::Contains("'upstream_health.down_after': unknown key"));
  const std::string band = write_file("upstream_health:\n  rtt_band_ms: 999999\n");
  CHECK_THROWS_WITH(load_serve_config(band), Catch::Contains("'upstream_health.rtt_band_ms'"));
  auto inverted = load_serve_config(write_file(
      "upstreams: [127.0.0.1:53]\nupstream_health: {down_backoff_initial_ms: 5000, down_backoff_max_ms: 1000}\n"));
  CHECK_THROWS_WITH(inverted.validate(), Catch::Contains("down_backoff_initial_ms <= down_backoff_max_ms"));
}

TEST_CASE("query_timeout_ms: default 10 s, the shipped config's value, bounds named in the error", "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  CHECK(load_serve_config(write_file("workers: 1\n")).query_timeout_ms == 10000);
  CHECK(load_serve_config(DNSARENA_SOURCE_DIR "/configs/serve.yaml").query_timeout_ms == 10000);
  CHECK(load_serve_config(write_file("query_timeout_ms: 4000\n")).query_timeout_ms == 4000);
  const std::string zero = write_file("query_timeout_ms: 0\n");
  CHECK_THROWS_WITH(load_serve_config(zero), Catch::Contains("'query_timeout_ms'"));
  const std::string huge = write_file("query_timeout_ms: 600001\n");
  CHECK_THROWS_WITH(load_serve_config(huge), Catch::Contains("'query_timeout_ms'"));
  const std::string text = write_file("query_timeout_ms: soon\n");
  CHECK_THROWS_WITH(load_serve_config(text), Catch::Contains("'query_timeout_ms'"));
}

TEST_CASE("stats --json and /metrics report the workers' counters", "[serve][stats]") {
  const std::uint16_t metrics_port = free_port();
  Service s;
  s.serve.reset();
  s.start({"--metrics", "127.0.0.1:" + std::to_string(metrics_port)});
  for (int i = 0; i < 5; ++i) udp_exchange(s.port, make_query(static_cast<std::uint16_t>(i), "a.test", 1));
  const auto j = serve_stats(s.segment);
  CHECK(j["total"]["queries_udp"].get<std::uint64_t>() == 5);
  CHECK(j["total"]["upstream_queries"].get<std::uint64_t>() == 1);
  CHECK(j["entries"].get<std::uint64_t>() == 1);
  // TSC-timed user-space time: every UDP query is in a timed batch; a batch takes some
  // time and far less than a second.
  CHECK(j["total"]["user_ns_queries"].get<std::uint64_t>() == 5);
  CHECK(j["total"]["user_ns_per_query"].get<double>() > 0);
  CHECK(j["total"]["user_ns_per_query"].get<double>() < 1e9);
  const std::string metrics = run_command("bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(metrics_port) +
                                          " && printf \"GET /metrics HTTP/1.0\\r\\n\\r\\n\" >&3 && timeout 5 cat <&3'");
  INFO(metrics);
  CHECK(metrics.find("dnsarena_queries_udp_total{worker=\"0\"}") != std::string::npos);
  CHECK(metrics.find("dnsarena_upstream_queries_total") != std::string::npos);
  CHECK(metrics.find("dnsarena_cache_entries 1") != std::string::npos);
  CHECK(metrics.find("dnsarena_user_ns_per_query{worker=\"0\"}") != std::string::npos);
  // The upstream's health, per upstream: from the supervisor's table in /metrics, from its
  // snapshot file in stats (both the table and JSON).
  const std::string up = "{upstream=\"127.0.0.1:" + std::to_string(s.upstream.port()) + "\"}";
  CHECK(metrics.find("dnsarena_upstream_server_up" + up + " 1") != std::string::npos);
  CHECK(metrics.find("dnsarena_upstream_server_queries_total" + up + " 1") != std::string::npos);
  CHECK(metrics.find("dnsarena_upstream_server_timeouts_total" + up + " 0") != std::string::npos);
  CHECK(metrics.find("dnsarena_upstream_server_srtt_ms" + up) != std::string::npos);
  CHECK(metrics.find("dnsarena_upstream_server_rttvar_ms" + up) != std::string::npos);
  nlohmann::json row;
  for (int i = 0; i < 30 && row.is_null(); ++i) {  // published once a second
    const auto stats = serve_stats(s.segment);
    // The query is counted when it leaves and its round trip when the reply is taken: a
    // snapshot between the two has queries 1 and no RTT yet, so wait for the reply's (a
    // row that never gets one fails the REQUIRE below).
    if (stats.contains("upstreams") && !stats["upstreams"].empty() && stats["upstreams"][0]["queries"] == 1 &&
        stats["upstreams"][0]["rtt"]["count"] == 1 && stats["upstreams"][0]["srtt_ms"].is_number())
      row = stats["upstreams"][0];
    else std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(!row.is_null());
  CHECK(row["upstream"] == "127.0.0.1:" + std::to_string(s.upstream.port()));
  CHECK(row["state"] == "up");
  CHECK(row["srtt_ms"].get<double>() > 0);
  CHECK(row["timeouts"] == 0);
  const std::string table = run_command(dnsarena_binary() + " stats --interval 0 --segment " + s.segment);
  CHECK(table.find("upstreams (as of ") != std::string::npos);
  CHECK(table.find("127.0.0.1:" + std::to_string(s.upstream.port())) != std::string::npos);
  // A clean stop removes the snapshot: the table died with the service.
  REQUIRE(s.serve->stop() == 0);
  CHECK_FALSE(serve_stats(s.segment).contains("upstreams"));
  int status = 0;
  const std::string help = run_command(dnsarena_binary() + " stats --help", &status);
  CHECK(status == 0);
  CHECK(help.find("--segment") != std::string::npos);
}

TEST_CASE("/metrics runs in a process of its own: the supervisor has one thread, a killed one serves again",
          "[serve][stats]") {
  const std::uint16_t metrics_port = free_port();
  Service s;
  s.serve.reset();
  s.start({"--metrics", "127.0.0.1:" + std::to_string(metrics_port)});
  auto scrape = [&] {
    return run_command("bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(metrics_port) +
                       " && printf \"GET /metrics HTTP/1.0\\r\\n\\r\\n\" >&3 && timeout 5 cat <&3' 2>/dev/null");
  };
  REQUIRE(scrape().find("dnsarena_queries_udp_total") != std::string::npos);
  // Every process the supervisor forks later (a restarted worker above all) is forked
  // from a process with no other thread, so it holds no lock another thread held.
  const pid_t supervisor = s.serve->pid();
  CHECK(std::distance(std::filesystem::directory_iterator("/proc/" + std::to_string(supervisor) + "/task"),
                      std::filesystem::directory_iterator{}) == 1);
  pid_t metrics = 0;
  for (const pid_t pid : dnsarena::common::child_pids(supervisor)) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == dnsarena::workers::kMetricsProcessName) metrics = pid;
  }
  REQUIRE(metrics > 0);
  CHECK(s.serve->children().size() == 2);  // the two workers, not it
  // Killed, it is forked again (after a 1 s backoff) and serves the same figures.
  REQUIRE(::kill(metrics, SIGKILL) == 0);
  REQUIRE(eventually([&] { return scrape().find("dnsarena_queries_udp_total") != std::string::npos; }));
  CHECK(udp_exchange(s.port, make_query(7, "a.test", 1)).answered);  // the workers went on
  CHECK(s.serve->log().find("serving /metrics again") != std::string::npos);
}

TEST_CASE("a /metrics port that cannot be bound stops the start before any worker", "[serve][stats]") {
  const int taken = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = dnsarena::common::loopback_v4(0);
  REQUIRE(::bind(taken, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(taken, 1) == 0);
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  REQUIRE(::getsockname(taken, reinterpret_cast<sockaddr*>(&bound), &len) == 0);
  Service s;
  s.serve.reset();
  const std::uint16_t port = ntohs(bound.sin_port);
  // The DNS listeners open before /metrics, so start() may see serve ready for the moment
  // it takes the metrics process to fail: either way serve must exit 1 by itself.
  try {
    s.start({"--metrics", "127.0.0.1:" + std::to_string(port)});
  } catch (const std::runtime_error&) {
  }
  REQUIRE(s.serve);
  CHECK(s.serve->wait_exit(std::chrono::seconds(10)));
  ::close(taken);
  CHECK(s.serve->stop() == 1);
  const std::string log = s.serve->log();
  INFO(log);
  CHECK(log.find("metrics endpoint 127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK(log.find("descriptors per worker") == std::string::npos);  // each worker logs it at its start: none ran
  CHECK(log.find("serving DNS on") == std::string::npos);
}

TEST_CASE("access control rules: longest prefix wins, unmatched is refused, the default is loopback only",
          "[serve][config][access]") {
  using dnsarena::workers::AccessAction;
  using dnsarena::workers::AccessControl;
  using dnsarena::workers::AccessRule;
  auto addr = [](const char* text) {
    sockaddr_storage ss{};
    if (std::string(text).find(':') != std::string::npos) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
      a6->sin6_family = AF_INET6;
      REQUIRE(inet_pton(AF_INET6, text, &a6->sin6_addr) == 1);
    } else {
      auto* a4 = reinterpret_cast<sockaddr_in*>(&ss);
      a4->sin_family = AF_INET;
      REQUIRE(inet_pton(AF_INET, text, &a4->sin_addr) == 1);
    }
    return ss;
  };
  const AccessControl def;
  CHECK(def.check(addr("127.0.0.1")) == AccessAction::allow);
  CHECK(def.check(addr("127.9.8.7")) == AccessAction::allow);
  CHECK(def.check(addr("::1")) == AccessAction::allow);
  CHECK(def.check(addr("::ffff:127.0.0.1")) == AccessAction::allow);
  CHECK(def.check(addr("192.0.2.1")) == AccessAction::refuse);
  CHECK(def.check(addr("2001:db8::1")) == AccessAction::refuse);
  const AccessControl acl({AccessRule::parse("10.0.0.0/8 allow"), AccessRule::parse("10.1.0.0/16 deny"),
                           AccessRule::parse("10.1.2.3 allow"), AccessRule::parse("2001:db8::/32  refuse ")});
  CHECK(acl.check(addr("10.200.0.1")) == AccessAction::allow);
  CHECK(acl.check(addr("10.1.9.9")) == AccessAction::deny);
  CHECK(acl.check(addr("10.1.2.3")) == AccessAction::allow);
  CHECK(acl.check(addr("2001:db8:1::5")) == AccessAction::refuse);
  CHECK(acl.check(addr("11.0.0.1")) == AccessAction::refuse);
  CHECK_THROWS_WITH(AccessRule::parse("10.0.0.0/8"), Catch::Contains("SUBNET ACTION"));
  CHECK_THROWS_WITH(AccessRule::parse("10.0.0.0/33 allow"), Catch::Contains("prefix"));
  CHECK_THROWS_WITH(AccessRule::parse("10.0.0.0/8 permit"), Catch::Contains("unknown action"));
  CHECK_THROWS_WITH(AccessRule::parse("host.example allow"), Catch::Contains("not an IPv4 or IPv6"));
  // In a YAML file, a bad rule names file, line and column.
  using dnsarena::workers::ConfigError;
  const std::string bad = write_file("access_control:\n  - 127.0.0.0/8 allow\n  - 10.0.0.0/8 maybe\n");
  CHECK_THROWS_WITH(dnsarena::workers::load_serve_config(bad), Catch::Contains(":3:5: key 'access_control'"));
}

TEST_CASE("upstream transport: udp by default, tcp and tls per zone, TLS needs a name and trust anchors that load",
          "[serve][config][upstream-stream]") {
  using dnsarena::workers::load_serve_config;
  using dnsarena::workers::UpstreamTransport;
  const auto plain = load_serve_config(write_file("upstreams: [127.0.0.1:53]\n"));
  REQUIRE(plain.zones().size() == 1);
  CHECK(plain.zones()[0].transport == UpstreamTransport::udp);
  CHECK(plain.upstream_idle_timeout_ms == 8000);
  CHECK_FALSE(plain.zones()[0].trust_ad);

  const std::string empty = write_file("");
  const TestCertificate ca("dns.example");
  const auto c = load_serve_config(write_file(
      "upstreams: [127.0.0.1:853]\nupstreams_transport: tls\nupstreams_tls_auth_name: dns.example\n"
      "upstreams_tls_ca_file: " + ca.cert_path() + "\n"
      "upstream_idle_timeout_ms: 2500\n"
      "forward_zones:\n  - {zone: corp., upstreams: [10.0.0.1:53], transport: tcp}\n"));
  CHECK(c.upstream_idle_timeout_ms == 2500);
  const auto zones = c.zones();
  REQUIRE(zones.size() == 2);
  CHECK(zones[0].transport == UpstreamTransport::tcp);
  CHECK_FALSE(zones[0].trust_ad);
  CHECK(zones[1].transport == UpstreamTransport::tls);
  CHECK(zones[1].tls_auth_name == "dns.example");
  CHECK_FALSE(zones[1].trust_ad);  // an authenticated hop, not a validated answer: trust_ad alone decides
  CHECK(zones[1].tls_ca_file == ca.cert_path());
  CHECK_NOTHROW(c.validate());

  auto with = [&](const std::string& yaml) {
    auto cfg = load_serve_config(write_file(yaml));
    cfg.validate();
  };
  CHECK_THROWS_WITH(load_serve_config(write_file("upstreams: [127.0.0.1:53]\nupstreams_transport: quic\n")),
                    Catch::Contains("'upstreams_transport'") && Catch::Contains("udp, tcp or tls"));
  CHECK_THROWS_WITH(with("forward_zones:\n  - {zone: corp., upstreams: [10.0.0.1:853], transport: tls}\n"),
                    Catch::Contains("zone corp.") && Catch::Contains("needs tls_auth_name"));
  CHECK_THROWS_WITH(with("upstreams: [127.0.0.1:53]\nupstreams_tls_auth_name: dns.example\n"),
                    Catch::Contains("need transport: tls"));
  CHECK_THROWS_WITH(with("upstreams: [127.0.0.1:853]\nupstreams_transport: tls\nupstreams_tls_auth_name: x\n"
                         "upstreams_tls_ca_file: /nonexistent/ca.pem\n"),
                    Catch::Contains("tls_ca_file '/nonexistent/ca.pem'"));
  CHECK_THROWS_WITH(with("upstreams: [127.0.0.1:853]\nupstreams_transport: tls\nupstreams_tls_auth_name: x\n"
                         "upstreams_tls_ca_file: " + empty + "\n"),
                    Catch::Contains("tls_ca_file '" + empty + "'"));
  CHECK_THROWS_WITH(with("upstreams: [127.0.0.1:53]\nupstream_idle_timeout_ms: 0\n"),
                    Catch::Contains("upstream_idle_timeout_ms"));
}

TEST_CASE("policy.watch_interval_ms: 5000 by default, 0 turns it off, below 100 refused", "[serve][config][policy]") {
  using dnsarena::workers::load_serve_config;
  CHECK(load_serve_config(write_file("workers: 1\n")).policy.watch_interval_ms == 5000);
  CHECK(load_serve_config(write_file("policy: {watch_interval_ms: 0}\n")).policy.watch_interval_ms == 0);
  CHECK(load_serve_config(write_file("policy: {watch_interval_ms: 250}\n")).policy.watch_interval_ms == 250);
  CHECK_THROWS_WITH(load_serve_config(write_file("policy: {watch_interval_ms: 50}\n")),
                    Catch::Contains("policy.watch_interval_ms") && Catch::Contains("at least 100"));
  CHECK_THROWS_WITH(load_serve_config(write_file("policy: {watch_interval_ms: 3600001}\n")),
                    Catch::Contains("policy.watch_interval_ms"));
}

TEST_CASE("AD trust: which configs trust every name, and which reloads take trust from some name",
          "[serve][config]") {
  using dnsarena::workers::ad_trust_revoked;
  using dnsarena::workers::load_serve_config;
  using dnsarena::workers::trusts_every_name;
  const auto cfg = [](const std::string& text) { return load_serve_config(write_file(text)); };
  const auto root_trusted = cfg("upstreams: [127.0.0.1:53]\nupstreams_trust_ad: true\n");
  const auto root_plain = cfg("upstreams: [127.0.0.1:53]\n");
  const auto corp_plain = cfg("upstreams: [127.0.0.1:53]\nupstreams_trust_ad: true\n"
                              "forward_zones:\n  - {zone: corp., upstreams: [10.0.0.1:53]}\n");
  const auto corp_trusted = cfg("upstreams: [127.0.0.1:53]\nupstreams_trust_ad: true\n"
                                "forward_zones:\n  - {zone: corp., upstreams: [10.0.0.1:53], trust_ad: true}\n");
  const auto sub_plain = cfg("upstreams: [127.0.0.1:53]\nupstreams_trust_ad: true\n"
                             "forward_zones:\n  - {zone: corp., upstreams: [10.0.0.1:53], trust_ad: true}\n"
                             "  - {zone: a.b.corp., upstreams: [10.0.0.2:53]}\n");
  const auto only_corp = cfg("forward_zones:\n  - {zone: corp., upstreams: [10.0.0.1:53], trust_ad: true}\n");
  CHECK(trusts_every_name(root_trusted));
  CHECK(trusts_every_name(corp_trusted));
  CHECK_FALSE(trusts_every_name(root_plain));
  CHECK_FALSE(trusts_every_name(corp_plain));
  CHECK_FALSE(trusts_every_name(only_corp));  // names in no zone: not vouched for
  CHECK(ad_trust_revoked(root_trusted, root_plain));
  CHECK_FALSE(ad_trust_revoked(root_plain, root_trusted));  // trust given, none taken
  CHECK_FALSE(ad_trust_revoked(root_trusted, root_trusted));
  CHECK(ad_trust_revoked(root_trusted, corp_plain));         // a new zone without trust under a trusted one
  CHECK_FALSE(ad_trust_revoked(corp_plain, root_trusted));   // its names trusted again
  CHECK(ad_trust_revoked(corp_trusted, sub_plain));          // deeper down, found at the new apex
  CHECK(ad_trust_revoked(corp_trusted, only_corp));          // "." removed: its names in no zone
  CHECK_FALSE(ad_trust_revoked(only_corp, corp_trusted));
}

TEST_CASE("dnssec: validation is on with a trust anchor file, strict keys, bounds and anchor errors",
          "[serve][config][dnssec]") {
  using dnsarena::common::ConfigError;
  using dnsarena::workers::load_serve_config;
  const std::string anchor = write_file(
      "test. 3600 IN DS 12345 13 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
  {
    const auto c = load_serve_config(write_file("upstreams: [127.0.0.1:53]\n"));
    CHECK_FALSE(c.dnssec.validating());
  }
  {
    const auto c = load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor +
                                                "\n  negative_trust_anchors: [Broken.Example]\n"
                                                "  limits: {max_nsec3_iterations: 100, max_signature_validations: 8}\n"));
    REQUIRE(c.dnssec.validating());
    REQUIRE(c.dnssec.anchors);
    CHECK(c.dnssec.anchors->anchors().size() == 1);
    CHECK(c.dnssec.anchors->negative().size() == 1);
    CHECK(c.dnssec.limits.max_nsec3_iterations == 100);
    CHECK(c.dnssec.limits.max_signature_validations == 8);
    CHECK(c.dnssec.limits.max_key_tag_collisions == 4);  // the default stays
  }
  {
    const auto c = load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor + "\n  validate: false\n"));
    CHECK_FALSE(c.dnssec.validating());
  }
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  validate: true\n")),
                    Catch::Contains("dnssec.validate") && Catch::Contains("needs a trust_anchor_file"));
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  negative_trust_anchors: [a.example]\n")),
                    Catch::Contains("dnssec.negative_trust_anchors"));
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchor_file: /nonexistent/root.key\n")),
                    Catch::Contains(":2:22") && Catch::Contains("dnssec.trust_anchor_file") &&
                        Catch::Contains("/nonexistent/root.key"));
  const std::string bad_anchor = write_file("test. 3600 IN A 192.0.2.1\n");
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + bad_anchor + "\n")),
                    Catch::Contains(bad_anchor + ":1"));
  CHECK_THROWS_WITH(
      load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor + "\n  limits:\n    max_nsec3_hashes: 0\n")),
      Catch::Contains("dnssec.limits.max_nsec3_hashes") && Catch::Contains("out of range"));
  CHECK_THROWS_WITH(
      load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor + "\n  limits: {max_keys: 3}\n")),
      Catch::Contains("dnssec.limits.max_keys") && Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchors: x\n")),
                    Catch::Contains("dnssec.trust_anchors") && Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor +
                                                 "\n  negative_trust_anchors: [\"bad..name\"]\n")),
                    Catch::Contains("not a domain name"));
}

TEST_CASE("dnssec.aggressive_nsec: on by default when validating, a boolean", "[serve][config][dnssec]") {
  using dnsarena::workers::load_serve_config;
  const std::string anchor = write_file(
      "test. 3600 IN DS 12345 13 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
  CHECK(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor + "\n")).dnssec.aggressive_nsec);
  CHECK_FALSE(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor + "\n  aggressive_nsec: false\n"))
                  .dnssec.aggressive_nsec);
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor + "\n  aggressive_nsec: maybe\n")),
                    Catch::Contains("dnssec.aggressive_nsec") && Catch::Contains("expected true or false"));
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor + "\n  aggresive_nsec: true\n")),
                    Catch::Contains("dnssec.aggresive_nsec") && Catch::Contains("unknown key"));
}

TEST_CASE("dnssec.auto_update: off by default, needs one trust point, strict bounds", "[serve][config][dnssec]") {
  using dnsarena::workers::load_serve_config;
  const std::string anchor = write_file(
      "test. 3600 IN DS 12345 13 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
  const auto off = load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor + "\n"));
  CHECK_FALSE(off.dnssec.auto_update);
  CHECK(off.dnssec.auto_update_min_interval_s == 3600);
  CHECK(off.dnssec.auto_update_hold_down_s == 30 * 86400);
  const auto on = load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor +
                                               "\n  auto_update: true\n  auto_update_min_interval_s: 1\n"
                                               "  auto_update_hold_down_s: 5\n"));
  CHECK(on.dnssec.auto_update);
  CHECK(on.dnssec.auto_update_min_interval_s == 1);
  CHECK(on.dnssec.auto_update_hold_down_s == 5);
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  auto_update: true\n  validate: false\n")),
                    Catch::Contains("dnssec.auto_update") && Catch::Contains("need a trust_anchor_file"));
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor +
                                                 "\n  auto_update: true\n  auto_update_min_interval_s: 0\n")),
                    Catch::Contains("dnssec.auto_update_min_interval_s"));
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor +
                                                 "\n  auto_update_min_interval_s: 7200\n")),
                    Catch::Contains("dnssec.auto_update_min_interval_s"));
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor +
                                                 "\n  auto_update_hold_down_s: 0\n")),
                    Catch::Contains("dnssec.auto_update_hold_down_s"));
  const std::string two_zones = write_file(
      "test. 3600 IN DS 12345 13 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
      "other. 3600 IN DS 12345 13 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
  CHECK_THROWS_WITH(load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + two_zones + "\n  auto_update: true\n")),
                    Catch::Contains("dnssec.auto_update") && Catch::Contains("not one trust point"));
}

TEST_CASE("policy.rpz by zone transfer: primary, file, TSIG and notify_from read strictly, errors name the key",
          "[serve][config][policy]") {
  using dnsarena::workers::ConfigError;
  using dnsarena::workers::load_serve_config;
  auto error_of = [](const std::string& text) {
    try {
      const auto c = load_serve_config(write_file("upstreams: [127.0.0.1:53]\n" + text));
      c.validate();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string good = "upstreams: [127.0.0.1:53]\npolicy:\n  notify_listen: 127.0.0.1@5353\n  rpz:\n"
                           "    - {file: /tmp/block.rpz, name: block.test.}\n"
                           "    - zone: RPZ.Example\n      primary: 192.0.2.1@5300\n      file: xfr.zone\n"
                           "      tsig: {name: k1, secret: \"c2VjcmV0c2VjcmV0c2VjcmV0\"}\n"
                           "      notify_from: [192.0.2.0/28]\n      refresh: 60\n";
  const std::string path = write_file(good);
  const auto c = load_serve_config(path);
  REQUIRE(c.rpz_transfers.zones.size() == 1);
  const auto& z = c.rpz_transfers.zones[0];
  CHECK(z.zone == "rpz.example.");
  CHECK(z.primary.text == "192.0.2.1@5300");
  CHECK(z.tsig.name == "k1");
  CHECK(z.tsig.algorithm == "hmac-sha256");
  CHECK(z.refresh_s == 60);
  CHECK(z.notify_from.size() == 1);
  CHECK(z.file == (std::filesystem::path(path).parent_path() / "xfr.zone").string());
  REQUIRE(c.policy.rpz.size() == 2);  // the file zone, then the transferred one by its file
  CHECK_FALSE(c.policy.rpz[0].transferred);
  CHECK(c.policy.rpz[1].transferred);
  CHECK(c.policy.rpz[1].file == z.file);
  CHECK(c.rpz_transfers.notify_listen.text == "127.0.0.1@5353");
  CHECK_NOTHROW(c.validate());

  // Without notify_from: the primary's address alone may notify.
  const auto d = load_serve_config(write_file("policy:\n  rpz: [{zone: r.test, primary: 127.0.0.2, file: f}]\n"));
  REQUIRE(d.rpz_transfers.zones[0].notify_from.size() == 1);
  CHECK(d.rpz_transfers.zones[0].notify_from[0] == dnsarena::workers::Subnet::parse("127.0.0.2"));
  CHECK(d.rpz_transfers.zones[0].primary.text == "127.0.0.2");

  auto rpz = [](const std::string& entry) { return "policy:\n  rpz:\n    - " + entry + "\n"; };
  CHECK(error_of(rpz("{zone: r.test, primary: 300.1.1.1, file: f}")).find("primary") != std::string::npos);
  CHECK(error_of(rpz("{zone: r.test, primary: 127.0.0.1@0, file: f}")).find("port") != std::string::npos);
  CHECK(error_of(rpz("{zone: r.test, primary: 127.0.0.1}")).find("file") != std::string::npos);
  CHECK(error_of(rpz("{zone: r.test, primary: 127.0.0.1, file: f, tsig: {name: k, algorithm: hmac-foo, secret: "
                     "c2VjcmV0}}")).find("hmac-foo") != std::string::npos);
  CHECK(error_of(rpz("{zone: r.test, primary: 127.0.0.1, file: f, tsig: {name: k, secret: \"!!\"}}"))
            .find("secret") != std::string::npos);
  CHECK(error_of(rpz("{zone: r.test, primary: 127.0.0.1, file: f, tsig: {file: /nonexistent/key}}"))
            .find("tsig.file") != std::string::npos);
  CHECK(error_of(rpz("{zone: r.test, primary: 127.0.0.1, file: f, notify_from: [nowhere]}")).find("notify_from") !=
        std::string::npos);
  CHECK(error_of(rpz("{zone: r.test, primary: 127.0.0.1, file: f, refersh: 5}")).find("refersh") != std::string::npos);
  CHECK(error_of(rpz("{zone: r.test, primary: 127.0.0.1, file: f, timeout_ms: 5}")).find("timeout_ms") !=
        std::string::npos);
  CHECK(error_of("policy:\n  rpz:\n    - {zone: r.test, primary: 127.0.0.1, file: f}\n"
                 "    - {zone: R.test., primary: 127.0.0.2, file: g}\n").find("twice") != std::string::npos);
  CHECK(error_of("policy:\n  notify_listen: 127.0.0.1@5353\n").find("notify_listen") != std::string::npos);
  CHECK(error_of("policy:\n  notify_listen: nowhere\n  rpz: [{zone: r.test, primary: 127.0.0.1, file: f}]\n")
            .find("notify_listen") != std::string::npos);

  // A key file as keymgr / knsupdate write it: "algorithm:name:secret".
  const std::string key = write_file("hmac-sha512:k2:c2VjcmV0c2VjcmV0c2VjcmV0\n");
  const auto e = load_serve_config(write_file(rpz("{zone: r.test, primary: 127.0.0.1, file: f, tsig: {file: " + key + "}}")));
  CHECK(e.rpz_transfers.zones[0].tsig.name == "k2.");
  CHECK(e.rpz_transfers.zones[0].tsig.algorithm == "hmac-sha512");
}

TEST_CASE("RPZ transfer status: the snapshot read back, the stats lines and the /metrics series", "[serve][stats][policy]") {
  using namespace dnsarena::workers;
  const std::string segment = unique_segment("rpz-status");
  RpzZoneStatus ok;
  ok.zone = "rpz.test.";
  ok.primary = "127.0.0.1@53";
  ok.has_copy = true;
  ok.serial = 7;
  ok.records = 12;
  ok.last_kind = "IXFR";
  ok.last_transfer_unix_ms = 1'700'000'000'000;
  ok.transfers_ok = 3;
  RpzZoneStatus failed;
  failed.zone = "feed.\"x\".";
  failed.primary = "192.0.2.1@53";
  failed.last_error = "the primary answered NOTAUTH (TSIG BADSIG)";
  failed.transfers_failed = 2;
  REQUIRE(write_rpz_snapshot(segment, {ok, failed}, 5));
  const auto snap = read_rpz_snapshot(segment);
  remove_rpz_snapshot(segment);
  REQUIRE(snap);
  CHECK((*snap)["notifies_over_rate"] == 5);
  const std::string text = rpz_status_text(*snap);
  CHECK(text.find("rpz.test. from 127.0.0.1@53: serial 7, 12 records, last IXFR") != std::string::npos);
  CHECK(text.find("no copy yet") != std::string::npos);
  CHECK(text.find("last attempt failed: the primary answered NOTAUTH (TSIG BADSIG)") != std::string::npos);
  const std::string metrics = rpz_prometheus_text(*snap);
  CHECK(metrics.find("dnsarena_rpz_serial{zone=\"rpz.test.\"} 7\n") != std::string::npos);
  CHECK(metrics.find("dnsarena_rpz_last_transfer_timestamp_seconds{zone=\"rpz.test.\",kind=\"IXFR\"} 1700000000.000\n") !=
        std::string::npos);
  CHECK(metrics.find("dnsarena_rpz_last_attempt_failed{zone=\"feed.\\\"x\\\".\"} 1\n") != std::string::npos);
  CHECK(metrics.find("dnsarena_rpz_transfers_total{zone=\"feed.\\\"x\\\".\",result=\"failed\"} 2\n") != std::string::npos);
  CHECK(metrics.find("dnsarena_rpz_serial{zone=\"feed") == std::string::npos);  // no copy: no serial
  CHECK_FALSE(read_rpz_snapshot(segment));
}

TEST_CASE("recursion: strict keys and bounds, needs readable root hints and no `upstreams`", "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  const std::string hints = write_file(". 3600000 NS a.root-servers.net.\na.root-servers.net. 3600000 A 198.41.0.4\n");
  const auto on = load_serve_config(write_file("recursion:\n  enabled: true\n  root_hints: " + hints +
                                               "\n  max_in_flight: 8\n  attempt_timeout_ms: 250\n"
                                               "  max_queries: 20\n  qname_minimisation: false\n"
                                               "  max_queries_per_server: 0\n"));
  CHECK(on.recursion.enabled);
  CHECK(on.recursion.max_queries_per_server == 0);
  CHECK(load_serve_config(write_file("listen: 127.0.0.1:53\n")).recursion.max_queries_per_server == 1000);
  CHECK(on.recursion.max_in_flight == 8);
  CHECK(on.recursion.attempt_timeout_ms == 250);
  CHECK(on.recursion.max_queries == 20);
  CHECK_FALSE(on.recursion.qname_minimisation);
  CHECK_NOTHROW(on.validate());  // no upstream at all: every name is resolved
  CHECK_FALSE(load_serve_config(write_file("listen: 127.0.0.1:53\n")).recursion.enabled);  // off by default

  CHECK_THROWS_WITH(load_serve_config(write_file("recursion:\n  enabled: true\n  roots: x\n")),
                    Catch::Contains(":3:3") && Catch::Contains("recursion.roots") && Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(load_serve_config(write_file("recursion:\n  max_queries: 0\n")), Catch::Contains("recursion.max_queries"));
  CHECK_THROWS_WITH(load_serve_config(write_file("recursion:\n  max_queries_per_server: 1000001\n")),
                    Catch::Contains("recursion.max_queries_per_server"));
  CHECK_THROWS_WITH(load_serve_config(write_file("recursion:\n  max_queries_per_server: -1\n")),
                    Catch::Contains("recursion.max_queries_per_server"));
  CHECK_THROWS_WITH(load_serve_config(write_file("recursion:\n  attempt_timeout_ms: 5\n")),
                    Catch::Contains("recursion.attempt_timeout_ms"));
  CHECK_THROWS_WITH(load_serve_config(write_file("recursion:\n  enabled: maybe\n")), Catch::Contains("recursion.enabled"));

  auto no_hints = load_serve_config(write_file("recursion:\n  enabled: true\n"));
  CHECK_THROWS_WITH(no_hints.validate(), Catch::Contains("recursion.root_hints: needed"));
  auto missing = load_serve_config(write_file("recursion:\n  enabled: true\n  root_hints: /nonexistent/root.hints\n"));
  CHECK_THROWS_WITH(missing.validate(), Catch::Contains("recursion.root_hints") && Catch::Contains("/nonexistent/root.hints"));
  auto both = load_serve_config(write_file("upstreams: [127.0.0.1:5300]\nrecursion:\n  enabled: true\n  root_hints: " +
                                           hints + "\n"));
  CHECK_THROWS_WITH(both.validate(), Catch::Contains("recursion.enabled") && Catch::Contains("forward_zones"));
  // With DNSSEC validation too (the recursive path validates its answers).
  const std::string anchor = write_file(
      "test. 3600 IN DS 12345 13 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
  auto validating = load_serve_config(write_file("dnssec:\n  trust_anchor_file: " + anchor +
                                                 "\nrecursion:\n  enabled: true\n  root_hints: " + hints + "\n"));
  CHECK_NOTHROW(validating.validate());
  // Beside forward zones it is fine.
  auto beside = load_serve_config(write_file("forward_zones: [{zone: corp.example, upstreams: [127.0.0.1:5300]}]\n"
                                             "recursion:\n  enabled: true\n  root_hints: " + hints + "\n"));
  CHECK_NOTHROW(beside.validate());
}

TEST_CASE("recursion.local_root: the zone is loaded with the config and a bad file fails the key", "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  const std::string hints = write_file(". 3600000 NS a.root-servers.net.\na.root-servers.net. 3600000 A 198.41.0.4\n");
  const std::string zone = write_file(". 86400 IN SOA a.root-servers.net. x. 7 1800 900 604800 86400\n"
                                      ". 518400 IN NS a.root-servers.net.\na.root-servers.net. 518400 IN A 198.41.0.4\n");
  const auto on = load_serve_config(write_file("recursion:\n  enabled: true\n  root_hints: " + hints +
                                               "\n  local_root: " + zone + "\n"));
  REQUIRE(on.recursion.local_root_zone);
  CHECK(on.recursion.local_root_zone->serial() == 7);
  CHECK_NOTHROW(on.validate());
  CHECK_FALSE(load_serve_config(write_file("recursion:\n  enabled: true\n  root_hints: " + hints + "\n"))
                  .recursion.local_root_zone);  // none by default

  const std::string no_ns = write_file(". 86400 IN SOA a.root-servers.net. x. 7 1800 900 604800 86400\n");
  CHECK_THROWS_WITH(load_serve_config(write_file("recursion:\n  enabled: true\n  local_root: " + no_ns + "\n")),
                    Catch::Contains(":3:") && Catch::Contains("recursion.local_root") && Catch::Contains("no NS record"));
  const std::string broken = write_file(". 86400 IN SOA a.root-servers.net. x. 7 1800\n");
  CHECK_THROWS_WITH(load_serve_config(write_file("recursion:\n  enabled: true\n  local_root: " + broken + "\n")),
                    Catch::Contains("recursion.local_root") && Catch::Contains(broken + ":1"));
  CHECK_THROWS_WITH(load_serve_config(write_file("recursion:\n  enabled: true\n  local_root: /nonexistent/root.zone\n")),
                    Catch::Contains("recursion.local_root") && Catch::Contains("/nonexistent/root.zone"));
  auto without = load_serve_config(write_file("upstreams: [127.0.0.1:5300]\nrecursion:\n  local_root: " + zone + "\n"));
  CHECK_THROWS_WITH(without.validate(), Catch::Contains("recursion.local_root: needs recursion.enabled"));
}

TEST_CASE("recursion.local_root_zonemd: verify by default, require and off, anything else an error", "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  using dnsarena::workers::ZonemdCheck;
  const std::string zone = write_file(". 86400 IN SOA a.root-servers.net. x. 7 1800 900 604800 86400\n"
                                      ". 518400 IN NS a.root-servers.net.\na.root-servers.net. 518400 IN A 198.41.0.4\n");
  const std::string base = "recursion:\n  enabled: true\n  local_root: " + zone + "\n";
  CHECK(load_serve_config(write_file(base)).recursion.local_root_zonemd == ZonemdCheck::verify);
  CHECK(load_serve_config(write_file(base + "  local_root_zonemd: off\n")).recursion.local_root_zonemd == ZonemdCheck::off);
  // require: this copy has no ZONEMD, so the key fails, naming the file.
  CHECK_THROWS_WITH(load_serve_config(write_file(base + "  local_root_zonemd: require\n")),
                    Catch::Contains("recursion.local_root") && Catch::Contains(zone + ": no ZONEMD record at the root"));
  CHECK_THROWS_WITH(load_serve_config(write_file(base + "  local_root_zonemd: yes\n")),
                    Catch::Contains(":4:") && Catch::Contains("recursion.local_root_zonemd") &&
                        Catch::Contains("expected verify, require or off, got 'yes'"));
}

TEST_CASE("recursion.local_root_from: primaries read strictly, and a missing local_root file is then no error",
          "[serve][config]") {
  using dnsarena::workers::load_serve_config;
  const std::string hints = write_file(". 3600000 NS a.root-servers.net.\na.root-servers.net. 3600000 A 198.41.0.4\n");
  const std::string head = "recursion:\n  enabled: true\n  root_hints: " + hints + "\n";
  const std::string missing = "/nonexistent-dir/root.zone";
  auto on = load_serve_config(write_file(head + "  local_root: " + missing +
                                         "\n  local_root_from: [192.0.32.132, \"2001:500:200::b@5353\"]\n"));
  CHECK_FALSE(on.recursion.local_root_zone);  // not yet: the first transfer writes it
  REQUIRE(on.recursion.local_root_from.size() == 2);
  CHECK(on.recursion.local_root_from[0].text == "192.0.32.132");
  CHECK(on.recursion.local_root_from[1].text == "2001:500:200::b@5353");
  CHECK(on.recursion.local_root_refresh_min_s == 60);
  CHECK_NOTHROW(on.validate());
  // A file that is there is loaded, and one that does not load is still an error.
  const std::string zone = write_file(". 86400 IN SOA a.root-servers.net. x. 7 1800 900 604800 86400\n"
                                      ". 518400 IN NS a.root-servers.net.\na.root-servers.net. 518400 IN A 198.41.0.4\n");
  auto present = load_serve_config(write_file(head + "  local_root: " + zone + "\n  local_root_from: [192.0.32.132]\n"
                                              "  local_root_refresh_min_s: 1\n"));
  REQUIRE(present.recursion.local_root_zone);
  CHECK(present.recursion.local_root_zone->serial() == 7);
  CHECK(present.recursion.local_root_refresh_min_s == 1);
  const std::string no_ns = write_file(". 86400 IN SOA a.root-servers.net. x. 7 1800 900 604800 86400\n");
  CHECK_THROWS_WITH(load_serve_config(write_file(head + "  local_root: " + no_ns + "\n  local_root_from: [192.0.32.132]\n")),
                    Catch::Contains("recursion.local_root") && Catch::Contains("no NS record"));
  // Bad entries name the key and what is wrong.
  auto bad = [&](const std::string& value) {
    return write_file(head + "  local_root: " + missing + "\n  local_root_from: " + value + "\n");
  };
  CHECK_THROWS_WITH(load_serve_config(bad("[not-an-address]")),
                    Catch::Contains("recursion.local_root_from") && Catch::Contains("not an IPv4 or IPv6 address"));
  CHECK_THROWS_WITH(load_serve_config(bad("[192.0.2.1@0]")), Catch::Contains("recursion.local_root_from") && Catch::Contains("port"));
  CHECK_THROWS_WITH(load_serve_config(bad("[192.0.2.1, 192.0.2.1]")), Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(load_serve_config(bad("[]")), Catch::Contains("recursion.local_root_from") && Catch::Contains("empty"));
  CHECK_THROWS_WITH(load_serve_config(bad("192.0.2.1")), Catch::Contains("recursion.local_root_from") && Catch::Contains("list"));
  CHECK_THROWS_WITH(load_serve_config(bad("[[192.0.2.1]]")), Catch::Contains("ADDRESS[@PORT]"));
  std::string many = "[";
  for (int i = 1; i <= 33; ++i) many += (i > 1 ? ", 192.0.2." : "192.0.2.") + std::to_string(i);
  CHECK_THROWS_WITH(load_serve_config(bad(many + "]")), Catch::Contains("more than 32"));
  CHECK_THROWS_WITH(load_serve_config(write_file(head + "  local_root_refresh_min_s: 0\n")),
                    Catch::Contains("recursion.local_root_refresh_min_s"));
  CHECK_THROWS_WITH(load_serve_config(write_file(head + "  local_root_refresh_min_s: 86401\n")),
                    Catch::Contains("recursion.local_root_refresh_min_s"));
  // Without local_root there is no file to keep the copy in.
  auto no_file = load_serve_config(write_file(head + "  local_root_from: [192.0.32.132]\n"));
  CHECK_THROWS_WITH(no_file.validate(), Catch::Contains("recursion.local_root_from: needs recursion.local_root"));
  // Without local_root_from a missing file is an error, as before.
  CHECK_THROWS_WITH(load_serve_config(write_file(head + "  local_root: " + missing + "\n")),
                    Catch::Contains("recursion.local_root") && Catch::Contains(missing));
}
