// SPDX-License-Identifier: GPL-3.0-or-later
// UpstreamClient's side of the host-wide upstream health table (upstream_health.hpp):
// which upstream an attempt asks, how long it waits, what it reports, and the probes of
// down upstreams. upstream_client.cpp calls in from start_attempt (pick_upstream),
// watch (attempt_timeout), the reply and failure paths (report_*) and take_reply (a
// probe's reply); the policy itself (ranks, band, down, backoff) is upstream_health.cpp's.
//
// A probe is a Pending of its own, with no waiters: the zone's SOA asked of the down
// upstream over UDP, once, with the configured timeout (a down upstream's RTO is backed
// off to it anyway). It is not in by_key_ (no client joins it), nor in started_ (never
// jostled), holds no per-name count, and never reaches finish() or the completion: its
// answer is only a sign of life and is not cached. Its token is given back when it ends
// (reply, timeout, refusal, or this client's destruction); a killed worker's expires.
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/random_bytes.hpp"
#include "wire/constants.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

void UpstreamClient::init_health(UpstreamHealth* shared) {
  health_ = shared;
  if (!health_) {
    std::size_t endpoints = 0;
    for (const ForwardZone& z : zones_) endpoints += z.upstreams.size();
    own_health_ = std::make_unique<UpstreamHealth>(static_cast<unsigned>(endpoints), false);
    health_ = own_health_.get();
    for (const ForwardZone& z : zones_)
      for (const Endpoint& e : z.upstreams) health_->add(e);
  }
  zone_rows_.resize(zones_.size());
  zone_trials_.resize(zones_.size());
  zone_rescues_.resize(zones_.size());
  for (std::size_t z = 0; z < zones_.size(); ++z)
    for (const Endpoint& e : zones_[z].upstreams) {
      const int row = health_->find(e);
      // The supervisor adds every endpoint of the config before it forks: absent only
      // when a reload found the table full (logged there).
      zone_rows_[z].push_back(row);
      zone_trials_[z].push_back(0);
      zone_rescues_[z].push_back(0);
    }
}

bool UpstreamClient::pick_upstream(Pending& p, std::uint64_t now_us) {
  if (p.picked_for == p.attempt) return true;  // the same attempt again (0x20 fallback)
  const std::vector<int>& rows = zone_rows_[p.zone];
  // Probes first: a down upstream whose interval has run out gets one, on the side.
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || !health_->down(static_cast<unsigned>(rows[i]))) continue;
    if (const std::uint64_t token =
            health_->take_probe(static_cast<unsigned>(rows[i]), now_us, 2 * cfg_.upstream_timeout_ms))
      start_probe(p.zone, static_cast<unsigned>(i), token, now_us);
  }
  unsigned down = 0;
  int pick = choose_upstream(*health_, rows, p.tried, cfg_.upstream_health.rtt_band_ms * 1000u, common::random_u32(),
                                   &down);
  if (down > 0) cache_.count(cache::Counter::upstream_down_skips);
  p.trial_upstream = ~0u;
  if (pick < 0) {  // every upstream of the zone is down: the last resort, if any
    pick = rescue_upstream(p);
    if (pick < 0) return false;
    p.rescue = true;
    ++zone_rescues_[p.zone][static_cast<std::size_t>(pick)];
  }
  if (const int partner = trial_partner(*health_, rows, p.tried, pick); partner >= 0) {
    // The picked upstream is on trial: the client's query goes to the partner and a copy
    // to it, while it has fewer than down_after_timeouts trials in flight from this
    // worker. Past that, the client's query goes to the partner alone when that one is
    // proven, else (neither is) to the picked one, as without trials.
    const std::size_t picked = static_cast<std::size_t>(pick);
    if (zone_trials_[p.zone][picked] < cfg_.upstream_health.down_after_timeouts) {
      p.trial_upstream = static_cast<unsigned>(pick);
      pick = partner;
    } else if (rows[static_cast<std::size_t>(partner)] < 0 ||
               health_->proven(static_cast<unsigned>(rows[static_cast<std::size_t>(partner)]))) {
      pick = partner;
    }
  }
  p.upstream = static_cast<unsigned>(pick);
  p.health_row = rows[p.upstream];
  if (p.upstream < 64) p.tried |= 1ull << p.upstream;
  p.picked_for = p.attempt;
  p.failover = false;
  for (std::size_t i = 0; i < rows.size() && i < 64 && !p.failover && !p.rescue; ++i)
    p.failover = !(p.tried >> i & 1) && (rows[i] < 0 || !health_->down(static_cast<unsigned>(rows[i])));
  return true;
}

int UpstreamClient::rescue_upstream(const Pending& p) const {
  const std::vector<int>& rows = zone_rows_[p.zone];
  int best = -1;
  std::uint64_t best_reply = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || zone_rescues_[p.zone][i] >= cfg_.upstream_health.down_after_timeouts) continue;
    const std::uint64_t at = health_->last_reply_us(static_cast<unsigned>(rows[i]));
    if (at > best_reply) {
      best = static_cast<int>(i);
      best_reply = at;
    }
  }
  return best;
}

void UpstreamClient::end_rescue(Pending& p) {
  if (!p.rescue) return;
  --zone_rescues_[p.zone][p.upstream];
  p.rescue = false;
}

void UpstreamClient::start_probe(unsigned zone, unsigned upstream, std::uint64_t token, std::uint64_t now_us) {
  const int row = zone_rows_[zone][upstream];
  if (sockets_in_use() >= cfg_.upstream_max_in_flight) {  // no room: the next miss may try
    health_->end_probe(static_cast<unsigned>(row), token, UpstreamHealth::ProbeEnd::cancelled, now_us,
                       cfg_.upstream_health);
    return;
  }
  const std::uint64_t id = next_token_++ & ((1ull << 48) - 1);
  Pending& p = pending_[id];
  p.token = id;
  p.probe = true;
  p.probe_token = token;
  p.zone = zone;
  p.zone_name = {zones_[zone].name.data(), zones_[zone].name.size()};
  std::memcpy(p.qname.data(), zones_[zone].name.data(), zones_[zone].name.size());
  p.qname_len = static_cast<std::uint8_t>(zones_[zone].name.size());
  p.qtype = wire::kTypeSoa;
  p.upstream = upstream;
  p.health_row = row;
  p.picked_for = 0;
  if (!send_query(p, upstream, now_us)) {
    retire_probe(p, now_us);
    return;
  }
  cache_.count(cache::Counter::upstream_probes);
  report_sent(p);
}

void UpstreamClient::start_trial(Pending& p, std::uint64_t now_us) {
  const unsigned upstream = p.trial_upstream;
  p.trial_upstream = ~0u;
  if (upstream == ~0u || sockets_in_use() >= cfg_.upstream_max_in_flight) return;
  const std::uint64_t id = next_token_++ & ((1ull << 48) - 1);
  Pending& t = pending_[id];
  t.token = id;
  t.trial = true;
  t.trial_of = p.token;
  t.zone = p.zone;
  t.zone_name = p.zone_name;
  t.trust_ad = p.trust_ad;
  t.dnssec = p.dnssec;
  t.qname = p.qname;
  t.qname_len = p.qname_len;
  t.qtype = p.qtype;
  t.key_flags = p.key_flags;
  t.ecs = p.ecs;
  t.case_fallback = p.case_fallback;
  t.upstream = upstream;
  t.health_row = zone_rows_[p.zone][upstream];
  t.picked_for = 0;
  t.failover = true;  // it waits the upstream's RTO: the client's query does not wait on it
  if (!send_query(t, upstream, now_us)) {
    close_socket(t);
    pending_.erase(id);
    return;
  }
  ++zone_trials_[t.zone][upstream];
  cache_.count(cache::Counter::upstream_queries);
  cache_.count(cache::Counter::upstream_trials);
  report_sent(t);
}

bool UpstreamClient::take_trial_reply(Pending& t, const std::uint8_t* wire, std::size_t len, std::uint64_t now_us) {
  const UpstreamAnswer::Verdict verdict = answer_.parse(wire, len, t.question(), ttl_);
  if (verdict == UpstreamAnswer::Verdict::ignore) return false;  // not its reply (late, forged)
  report_reply(t, now_us);                                      // any rcode, any case: the server is alive
  if (verdict == UpstreamAnswer::Verdict::accept && !answer_.truncated()) {
    // First past the post: the raced query's clients get this answer (when it is still
    // waiting; its own answer may have come first). The raced query's socket is closed
    // with it: what it would have learned of its upstream is lost, not wrong.
    const std::uint64_t raced = t.trial_of;
    const std::uint64_t trial = t.token;
    if (pending_.contains(raced)) {
      cache_.count(cache::Counter::upstream_latency_us, now_us - t.sent_us);
      finish(raced, &answer_);
    }
    if (auto it = pending_.find(trial); it != pending_.end()) retire_trial(it->second);  // finish() kept it
    return true;
  }
  retire_trial(t);  // an error rcode, TC or a case mismatch: alive, but no answer for the race
  return true;
}

void UpstreamClient::retire_trial(Pending& t) {
  --zone_trials_[t.zone][t.upstream];
  close_socket(t);
  pending_.erase(t.token);
}

bool UpstreamClient::take_probe_reply(Pending& p, const std::uint8_t* wire, std::size_t len, std::uint64_t now_us) {
  if (answer_.parse(wire, len, p.question(), ttl_) == UpstreamAnswer::Verdict::ignore) return false;  // not its reply
  report_reply(p, now_us);  // any rcode, any case: the server is alive
  retire_probe(p, now_us);
  return true;
}

void UpstreamClient::retire_probe(Pending& p, std::uint64_t now_us) {
  if (p.probe_token)
    health_->end_probe(static_cast<unsigned>(p.health_row), p.probe_token, UpstreamHealth::ProbeEnd::cancelled, now_us,
                       cfg_.upstream_health);
  close_socket(p);
  pending_.erase(p.token);
}

void UpstreamClient::report_sent(Pending& p) {
  if (p.health_row >= 0) health_->sent(static_cast<unsigned>(p.health_row));
}

void UpstreamClient::report_reply_row(int health_row, std::uint64_t rtt_us, std::uint64_t now_us, bool probe) {
  if (health_row < 0) return;
  const unsigned row = static_cast<unsigned>(health_row);
  if (health_->replied(row, rtt_us, now_us))
    spdlog::info("upstream {} is back: it answered {}; misses go to it again", health_->endpoint_text(row),
                 probe ? "a probe" : "a query");
}

void UpstreamClient::report_reply(Pending& p, std::uint64_t now_us) {
  if (p.health_row < 0) return;
  const unsigned row = static_cast<unsigned>(p.health_row);
  // A TCP exchange's time includes the handshake: no RTT sample, only a sign of life.
  // A query on a kept connection that was ready: the server's RTT.
  const std::uint64_t rtt_us = p.tcp && !p.stream_warm ? 0 : std::max<std::uint64_t>(now_us - p.sent_us, 1);
  report_reply_row(p.health_row, rtt_us, now_us, p.probe);
  if (p.probe_token) {
    health_->end_probe(row, p.probe_token, UpstreamHealth::ProbeEnd::alive, now_us, cfg_.upstream_health);
    p.probe_token = 0;
  }
}

void UpstreamClient::report_failure(Pending& p, UpstreamHealth::Failure f, std::uint64_t now_us) {
  if (p.health_row < 0) return;
  const unsigned row = static_cast<unsigned>(p.health_row);
  // A TCP failure says nothing of the server's UDP; a probe's belongs to the probe.
  // Over a kept connection (transport tcp/tls) it is the server's only path: it counts.
  const bool counts = (!p.tcp || p.streamed) && !p.probe;
  if (health_->failed(row, f, p.sent_us, p.attempt_rto_us, now_us, cfg_.upstream_health, counts))
    spdlog::warn("upstream {} is down: {} attempts in a row got no reply; misses skip it, and it is probed "
                 "every {} ms (doubling, up to {} ms) until it answers",
                 health_->endpoint_text(row), cfg_.upstream_health.down_after_timeouts,
                 cfg_.upstream_health.down_backoff_initial_ms, cfg_.upstream_health.down_backoff_max_ms);
  if (p.probe_token) {
    health_->end_probe(row, p.probe_token, UpstreamHealth::ProbeEnd::dead, now_us, cfg_.upstream_health);
    p.probe_token = 0;
  }
}

std::uint64_t UpstreamClient::attempt_timeout(Pending& p) {
  const std::uint64_t cap_us = cfg_.upstream_timeout_ms * 1000ull << std::min(p.attempt, 2u);
  p.attempt_rto_us = p.health_row >= 0 ? health_->rto_us(static_cast<unsigned>(p.health_row))
                                       : UpstreamHealth::kUnknownRtoUs;
  // The RTO only where a timeout leads to another upstream (upstream_health.hpp). A probe
  // waits the whole first-attempt timeout (a down upstream's RTO is backed off to about
  // that anyway), and so does TCP: its exchange takes a handshake more than the RTO.
  const bool last = p.attempt + 1 >= cfg_.attempts(zones_[p.zone]);
  if (p.probe || (p.tcp && !p.stream_warm) || !p.failover || last) return cap_us;
  return attempt_timeout_us(p.attempt_rto_us, cap_us);
}

}  // namespace dnsarena::workers
