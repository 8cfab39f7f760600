// SPDX-License-Identifier: GPL-3.0-or-later
// UpstreamClient::refresh in one process: a refresh (prefetch, stale-first) asks the
// upstream only while no fresh entry newer than the one that prompted it is cached. Across
// workers the entry can be refreshed between a worker's lookup and its claim; the
// re-check after the claim is what keeps that to one upstream query per name.
#include <sys/epoll.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "cache/entry_codec.hpp"
#include "tests/cache/test_answers.hpp"
#include "tests/cache/test_segment.hpp"
#include "tests/workers/test_upstream.hpp"
#include "workers/upstream_client.hpp"

using namespace dnsarena;
using namespace dnsarena::test;
using workers::Endpoint;
using workers::ServeConfig;
using workers::UpstreamClient;

namespace {

struct EpollFd {
  int fd = ::epoll_create1(EPOLL_CLOEXEC);
  ~EpollFd() { ::close(fd); }
};

// Inserts an A answer (TTL 10) for `key` as of `inserted`, and checks the entry says so.
void insert_a(cache::Cache& c, const cache::CacheKey& key, std::uint32_t inserted) {
  OwnedAnswer a;
  a.ttl = 10;
  a.add(cache::kAnswer, {}, kA, 10, bytes_of({192, 0, 2, 1}));
  REQUIRE(c.insert(key, a.answer(), inserted) == cache::InsertStatus::inserted);
  cache::EntryCopy copy;
  REQUIRE(c.peek(key, inserted, copy) == cache::LookupStatus::hit);
  REQUIRE(cache::EntryReader(copy.span()).inserted() == inserted);
}

bool upstream_got(const TestUpstream& up, std::uint64_t n) {
  for (int i = 0; i < 200 && up.queries() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return up.queries() == n;
}

}  // namespace

TEST_CASE("refresh: no upstream query once a fresh entry newer than the one that prompted it is cached",
          "[workers][prefetch]") {
  TestUpstream up;
  TestSegment ts(tiny_geometry(1000, 65536, 8), "refresh");
  cache::Cache cache(ts.seg);
  ServeConfig cfg;
  cfg.upstreams = {Endpoint::parse("127.0.0.1:" + std::to_string(up.port()))};
  EpollFd ep;
  REQUIRE(ep.fd >= 0);
  UpstreamClient client(
      ep.fd, 0, cfg, cache, [](workers::Pending&, const workers::UpstreamAnswer*) {},
      [](const workers::Pending&, workers::Waiter&, bool) { return true; }, {});
  const std::uint32_t now = cache::wall_clock_now();

  // Prefetch: a worker saw an entry inserted 5 s before the one cached now (someone
  // else's refresh landed in between, whatever expiry its answer carried): nothing sent.
  const Bytes fresh_name = wire_name("a.test.");
  const cache::CacheKey fresh(fresh_name, kA);
  insert_a(cache, fresh, now);
  CHECK_FALSE(client.refresh(fresh, {}, now - 5));
  CHECK(upstream_got(up, 0));
  // The entry seen is still the one cached: the refresh goes out, once.
  CHECK(client.refresh(fresh, {}, now));
  CHECK(upstream_got(up, 1));
  CHECK_FALSE(client.refresh(fresh, {}, now));  // in flight here already

  // Stale-first (seen 0): an expired entry is no refresh, so it is asked...
  const Bytes stale_name = wire_name("aaaa.test.");
  const cache::CacheKey stale(stale_name, kAAAA);
  OwnedAnswer old;
  old.ttl = 10;
  old.add(cache::kAnswer, {}, kAAAA, 10, Bytes(16, 1));
  REQUIRE(cache.insert(stale, old.answer(), now - 60) == cache::InsertStatus::inserted);
  CHECK(client.refresh(stale, {}, 0));
  CHECK(upstream_got(up, 2));
  // ... and a fresh one is: nothing sent.
  const Bytes landed_name = wire_name("txt.test.");
  const cache::CacheKey landed(landed_name, kA);
  insert_a(cache, landed, now);
  CHECK_FALSE(client.refresh(landed, {}, 0));
  CHECK(upstream_got(up, 2));

  // Nothing cached under the key at all: asked.
  const Bytes absent_name = wire_name("nodata.test.");
  CHECK(client.refresh(cache::CacheKey(absent_name, kTXT), {}, 0));
  CHECK(upstream_got(up, 3));
}
