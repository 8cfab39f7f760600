// SPDX-License-Identifier: GPL-3.0-or-later
// One upstream responder plus one `dnsarena serve` on a free port with a private segment,
// removed at the end of the test.
#pragma once
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cache/segment.hpp"
#include "tests/workers/serve_harness.hpp"
#include "tests/workers/test_upstream.hpp"

namespace dnsarena::test {

struct Service {
  TestUpstream upstream;
  std::uint16_t port;
  std::string segment = unique_segment("serve");
  std::unique_ptr<ServeProcess> serve;

  // `listen_port`: a port the caller chose (its --listen addresses in `extra` use it).
  explicit Service(std::vector<std::string> extra = {}, unsigned workers = 2, std::uint16_t listen_port = 0)
      : port(listen_port ? listen_port : free_port()) {
    start(extra, workers);
  }
  ~Service() {
    serve.reset();
    cache::Segment::remove(segment);
  }
  void start(std::vector<std::string> extra = {}, unsigned workers = 2) {
    auto has = [&](const std::string& flag) { return std::find(extra.begin(), extra.end(), flag) != extra.end(); };
    std::vector<std::string> args{"--segment", segment, "--workers", std::to_string(workers), "--max-entries", "10000",
                                  "--arena-bytes", "8M"};
    if (!has("--log-level")) args.insert(args.end(), {"--log-level", "info"});
    // `extra`'s own --listen addresses replace 127.0.0.1:port (one of them must take TCP
    // on 127.0.0.1:port, which wait_ready asks).
    if (!has("--listen")) args.insert(args.end(), {"--listen", "127.0.0.1:" + std::to_string(port)});
    if (!has("--upstream-timeout-ms")) args.insert(args.end(), {"--upstream-timeout-ms", "300"});
    if (!has("--upstream") && !has("--forward-zone")) args.insert(args.end(), {"--upstream", "127.0.0.1:" + std::to_string(upstream.port())});
    if (!has("--metrics")) args.push_back("--no-metrics");
    args.insert(args.end(), extra.begin(), extra.end());
    serve = std::make_unique<ServeProcess>(args, port);
    if (!serve->wait_ready()) throw std::runtime_error("serve did not start: " + serve->log());
    // The supervisor listens before it forks: wait (up to 10 s) until every worker is
    // forked too, so that a test's children() sees them all.
    for (int i = 0; i < 500 && serve->children().size() < workers; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::uint64_t total(const char* counter) { return serve_stats(segment)["total"][counter].get<std::uint64_t>(); }
};

}  // namespace dnsarena::test
