// SPDX-License-Identifier: GPL-3.0-or-later
// The recursive resolver's sockets, timers and completion (recursive_client.hpp).
#include "workers/recursive_client.hpp"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <utility>

#include <ctime>

#include <spdlog/spdlog.h>

#include "common/monotonic_clock.hpp"
#include "common/random_bytes.hpp"
#include "dns/query_builder.hpp"
#include "dnssec/rrset.hpp"
#include "recursion/result_message.hpp"
#include "workers/live_failure.hpp"
#include "workers/authority_outcomes.hpp"
#include "workers/local_root.hpp"

namespace dnsarena::workers {

using common::monotonic_us;

namespace {

constexpr std::uint64_t kResolutionTokenMask = (1ull << 48) - 1;

// The name with each letter's case picked at random (0x20).
common::Bytes random_case(const common::Bytes& name) {
  common::Bytes out = name;
  std::uint8_t bits[32];  // one per letter: a name has fewer letters than bytes
  const std::size_t letters_max = std::min(sizeof bits * 8, out.size());
  common::random_fill(bits, (letters_max + 7) / 8);
  std::size_t letter = 0;
  for (std::size_t i = 0; i < out.size() && out[i]; i += out[i] + 1u)
    for (std::size_t k = i + 1; k <= i + out[i] && k < out.size(); ++k)
      if (out[k] >= 'a' && out[k] <= 'z') {
        const std::size_t bit = letter++ % (8 * sizeof bits);
        if ((bits[bit / 8] >> (bit % 8)) & 1) out[k] = static_cast<std::uint8_t>(out[k] - 32);
      }
  return out;
}

// What makes two UDP queries of the state machine the same query: the server, the
// question, the cut it is asked as, and EDNS (DO goes with EDNS when validating). The
// name is lowercase wire, self-delimiting.
std::string outgoing_key(const recursion::Query& q, bool edns) {
  std::string k;
  k.reserve(9 + q.qname.size() + q.zone.size());
  k.append(reinterpret_cast<const char*>(q.server.v4.data()), q.server.v4.size());
  k.push_back(static_cast<char>(q.server.port >> 8));
  k.push_back(static_cast<char>(q.server.port));
  k.push_back(static_cast<char>(q.qtype >> 8));
  k.push_back(static_cast<char>(q.qtype));
  k.push_back(edns ? 1 : 0);
  k.append(reinterpret_cast<const char*>(q.qname.data()), q.qname.size());
  k.append(reinterpret_cast<const char*>(q.zone.data()), q.zone.size());
  return k;
}

}  // namespace

struct RecursiveClient::Resolution {
  std::uint64_t token = 0;
  std::string key;
  common::Bytes qname;  // lowercase
  std::uint16_t qtype = 0;
  std::uint8_t key_flags = 0;
  std::uint64_t name_hash = 0;
  UpstreamClaims::Claim claim;  // host-wide: this worker resolves the question (value 0: not claimed)
  std::unique_ptr<recursion::IterativeResolution> machine;
  std::vector<Waiter> waiters;  // in arrival order: their response timer runs
  std::vector<Waiter> held;     // the response timer passed with nothing stale
  std::uint64_t ends_us = 0;  // query_timeout_ms after the start
  bool done = false;          // the state machine said done (else: out of time)
  bool got_reply = false;     // some server answered: a failure is an error, not a timeout
  // The current query: its server, the message as sent (ID and case), the socket.
  recursion::Query query;
  bool edns = true;       // the query carries an OPT record (authority_outcomes.hpp)
  std::uint64_t sent_us = 0;
  common::Bytes sent;
  std::size_t question_bytes = 0;
  int fd = -1;
  bool tcp = false;
  common::Bytes tcp_out;  // with its length prefix
  std::size_t tcp_out_done = 0;
  common::Bytes tcp_in;
  unsigned generation = 0;  // bumped per socket: a deadline names the socket it is for
  // Coalescing (OutgoingQueries): the resolution whose identical UDP query is out and whose
  // reply this one takes (0: none), or those that take this one's reply.
  std::uint64_t leader = 0;
  std::vector<std::uint64_t> followers;
  std::string out_key;  // while this resolution's UDP query is out and may be followed

  // The reply's QR, ID and question bytes (the name's case included) are the query's.
  bool echoes(const std::uint8_t* wire, std::size_t len) const {
    return len >= 12 + question_bytes && (wire[2] & 0x80) && wire[0] == sent[0] && wire[1] == sent[1] &&
           std::memcmp(wire + 12, sent.data() + 12, question_bytes) == 0;
  }
};

RecursiveClient::RecursiveClient(int epoll_fd, std::uint64_t tag, const ServeConfig& cfg, cache::Cache& cache,
                                 UpstreamClient::Completion done, UpstreamClient::DeadlinePassed deadline_passed,
                                 const UpstreamClient::HostTables& host)
    : epoll_fd_(epoll_fd),
      tag_(tag),
      cfg_(cfg),
      cache_(cache),
      done_(std::move(done)),
      deadline_passed_(std::move(deadline_passed)),
      timers_(ClientTimers::of(cfg)),
      failures_(host.failures),
      ntas_(cfg.dnssec.anchors, host.ntas),
      claims_(host.claims),
      claims_row_(host.row),
      infra_(host.infra),
      authority_rate_(host.authority_rates, cfg.recursion.max_queries_per_server),
      enabled_(cfg.recursion.enabled),
      dnssec_(cfg.dnssec.validating()),
      store_(cache, cfg.ttl_ceiling),
      referral_ds_(cache, ttl_) {
  if (enabled_) hints_ = recursion::read_root_hints(cfg.recursion.root_hints);
  if (!infra_) own_infra_ = std::make_unique<InfraTable>(enabled_ ? InfraTable::kDefaultBuckets : 1, false);
  ranking_ = std::make_unique<InfraRanking>(infra());
  limits_.max_queries = cfg.recursion.max_queries;
  limits_.qname_minimisation = cfg.recursion.qname_minimisation;
  ttl_ = {cfg.ttl_floor, cfg.ttl_ceiling, cfg.negative_ttl_ceiling};
  answer_.set_private_addresses(&cfg.private_addresses);
}

RecursiveClient::~RecursiveClient() {
  for (auto& [token, r] : active_)
    if (r->fd >= 0) ::close(r->fd);
}

RecursiveClient::Started RecursiveClient::resolve(const cache::CacheKey& plain_key, Waiter& w,
                                                  UpstreamClient::ForwardDetail* detail) {
  return start(plain_key, &w, detail);
}

bool RecursiveClient::refresh(const cache::CacheKey& plain_key) {
  if (!enabled_) return false;
  UpstreamClient::ForwardDetail ignored;
  return start(plain_key, nullptr, &ignored) == Started::yes;
}

RecursiveClient::Started RecursiveClient::start(const cache::CacheKey& plain_key, Waiter* w,
                                                UpstreamClient::ForwardDetail* detail) {
  std::string key(reinterpret_cast<const char*>(plain_key.blob().data()), plain_key.blob().size());
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    Resolution& r = *active_.at(it->second);
    if (!w) return Started::overloaded;  // a refresh: the resolution in flight will do
    if (r.waiters.size() + r.held.size() >= kWaitersPerResolution) {
      cache_.count(cache::Counter::upstream_overload);
      return Started::overloaded;
    }
    r.waiters.push_back(std::move(*w));
    if (r.waiters.size() == 1) arm_client(r);
    return Started::yes;
  }
  const std::uint64_t now_us = monotonic_us();
  if (failures_)
    if (const auto f = live_failure(*failures_, ntas_, plain_key.hash(), plain_key.qname(), now_us / 1000)) {
      detail->failure = f->kind;
      return Started::failed;
    }
  if (active_.size() >= cfg_.recursion.max_in_flight) {
    cache_.count(cache::Counter::upstream_overload);
    return Started::overloaded;
  }
  UpstreamClaims::Claim claim;
  if (claims_) {
    switch (claims_->claim(std::hash<std::string>{}(key), claims_row_, now_us / 1000, cfg_.query_timeout_ms, &claim)) {
      case UpstreamClaims::Outcome::claimed: break;
      case UpstreamClaims::Outcome::held: detail->claim = claim; return Started::joined;
      case UpstreamClaims::Outcome::unavailable: claim = {}; break;
    }
  }
  auto r = std::make_unique<Resolution>();
  r->token = next_token_++ & kResolutionTokenMask;
  r->key = key;
  const auto qn = plain_key.qname();
  r->qname.assign(qn.begin(), qn.end());
  r->qtype = plain_key.qtype();
  r->key_flags = plain_key.flags();
  r->name_hash = plain_key.hash();
  r->claim = claim;
  r->ends_us = now_us + std::uint64_t{cfg_.query_timeout_ms} * 1000;
  r->machine = std::make_unique<recursion::IterativeResolution>(r->qname, r->qtype, hints_, store_, limits_);
  r->machine->use_servers(ranking_.get());
  if (w) r->waiters.push_back(std::move(*w));
  Resolution& ref = *r;
  by_key_.emplace(std::move(key), ref.token);
  active_.emplace(ref.token, std::move(r));
  arm_client(ref);
  step(ref, now_us);
  return Started::yes;
}

void RecursiveClient::step(Resolution& r, std::uint64_t now_us) {
  bool local = false;
  while (now_us < r.ends_us) {
    if (r.machine->need(r.query) == recursion::IterativeResolution::Step::done) {
      r.done = true;
      // Answered by the local root alone: finished at the next on_timeouts, never inside
      // the resolve() or refresh() that started it (its caller is not ready for the answer).
      if (local) return deferred_.push_back(r.token);
      break;
    }
    if (const LocalRoot* root = cfg_.recursion.local_root_zone.get())  // RFC 8806: the root's answers stay here
      if (const auto reply = root->answer(r.query, std::time(nullptr))) {
        if (dnssec_) referral_ds_.keep(*reply, r.query.zone);  // as take_reply() does
        r.machine->provide(*reply);
        local = true;
        continue;
      }
    if (send_current(r, now_us)) return;
    r.machine->provide_failure();  // no socket for this server: the next one
  }
  finish(r);
}

bool RecursiveClient::send_current(Resolution& r, std::uint64_t now_us) {
  r.edns = query_with_edns(infra(), r.query.server, now_us);
  std::string key = outgoing_key(r.query, r.edns);
  if (const auto out = out_queries_.find(key); out != out_queries_.end()) {
    const auto found = active_.find(out->second);
    Resolution* leader = found == active_.end() ? nullptr : found->second.get();
    if (leader && leader != &r && leader->fd >= 0 && leader->followers.size() < kFollowersPerQuery) {
      r.leader = leader->token;
      leader->followers.push_back(r.token);
      ++r.generation;
      arm(r, r.ends_us);  // its own time, should the leader's attempt outlast it
      return true;
    }
  }
  if (!authority_rate_.admit(r.query.server, cache::wall_clock_now())) {
    cache_.count(cache::Counter::authority_rate_limited);
    return false;  // this server is asked enough this second: the cut's next one
  }
  if (!send_udp(r, now_us)) return false;
  out_queries_.try_emplace(key, r.token);
  r.out_key = std::move(key);
  return true;
}

void RecursiveClient::unfollow(Resolution& r) {
  if (!r.leader) return;
  if (const auto it = active_.find(r.leader); it != active_.end()) std::erase(it->second->followers, r.token);
  r.leader = 0;
}

void RecursiveClient::release(std::uint64_t token, std::uint64_t now_us) {
  const auto it = active_.find(token);
  if (it == active_.end()) return;
  Resolution& r = *it->second;
  r.leader = 0;
  ++r.generation;
  if (now_us >= r.ends_us || !send_current(r, now_us)) {
    r.machine->provide_failure();
    step(r, now_us);
  }
}

void RecursiveClient::hand_over(const std::vector<std::uint64_t>& followers, const dnssec::Response* reply,
                                bool no_reply, std::uint64_t now_us) {
  for (const std::uint64_t token : followers) {
    const auto it = active_.find(token);
    if (it == active_.end()) continue;
    Resolution& f = *it->second;
    f.leader = 0;
    ++f.generation;  // its own deadline is stale: the next attempt arms one
    if (reply) {
      f.got_reply = true;
      f.machine->provide(*reply);
    } else {
      f.machine->provide_failure(no_reply);
    }
    step(f, now_us);
  }
}

void RecursiveClient::arm(Resolution& r, std::uint64_t at_us) {
  deadlines_.push({std::min(at_us, r.ends_us), r.token, r.generation});
}

// A fresh ID and case for the current query, in r.sent.
void RecursiveClient::write_query(Resolution& r) {
  const common::Bytes name = random_case(r.query.qname);
  r.sent = dns::build_query(
      {.id = common::random_u16(),
       .qname = name,
       .qtype = r.query.qtype,
       .edns = r.edns,
       .do_bit = dnssec_ && r.edns});  // no DO where EDNS is broken: DO travels in the OPT record
  r.sent[2] &= static_cast<std::uint8_t>(~0x01);  // RD clear: an iterative query
  r.question_bytes = name.size() + 4;
}

bool RecursiveClient::open_socket(Resolution& r, int type, std::uint32_t events, std::uint64_t now_us) {
  const int fd = ::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const sockaddr_in sa = r.query.server.to_sockaddr();
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag_ | r.token;
  const bool udp = type == SOCK_DGRAM;
  const int connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
  if ((connected != 0 && (udp || errno != EINPROGRESS)) ||
      (udp && ::send(fd, r.sent.data(), r.sent.size(), 0) != static_cast<ssize_t>(r.sent.size())) ||
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    ::close(fd);
    return false;
  }
  r.fd = fd;
  r.tcp = !udp;
  r.sent_us = now_us;
  ++r.generation;
  cache_.count(cache::Counter::upstream_queries);
  arm(r, now_us + attempt_timeout_us(infra(), r.query.server, cfg_.recursion.attempt_timeout_ms, now_us));
  return true;
}

bool RecursiveClient::send_udp(Resolution& r, std::uint64_t now_us) {
  write_query(r);
  return open_socket(r, SOCK_DGRAM, EPOLLIN, now_us);
}

bool RecursiveClient::start_tcp(Resolution& r, std::uint64_t now_us) {
  write_query(r);
  r.tcp_out = {static_cast<std::uint8_t>(r.sent.size() >> 8), static_cast<std::uint8_t>(r.sent.size())};
  r.tcp_out += r.sent;
  r.tcp_out_done = 0;
  r.tcp_in.clear();
  return open_socket(r, SOCK_STREAM, EPOLLIN | EPOLLOUT, now_us);
}

void RecursiveClient::on_event(std::uint64_t data, std::uint32_t events, std::uint64_t now_us) {
  const auto it = active_.find(data & kResolutionTokenMask);
  if (it == active_.end() || it->second->fd < 0) return;
  Resolution& r = *it->second;
  if (r.tcp) on_tcp(r, events, now_us);
  else on_udp(r, now_us);
}

void RecursiveClient::on_udp(Resolution& r, std::uint64_t now_us) {
  std::uint8_t buf[65535];
  for (;;) {
    const ssize_t n = ::recv(r.fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      record_no_reply(infra(), r.query.server, r.edns, now_us);
      return fail_attempt(r, now_us);  // ICMP refusal
    }
    if (r.echoes(buf, static_cast<std::size_t>(n))) return take_reply(r, buf, static_cast<std::size_t>(n), now_us);
    // Not the reply to this query (a forgery, a stray): keep waiting.
  }
}

void RecursiveClient::on_tcp(Resolution& r, std::uint32_t events, std::uint64_t now_us) {
  if (r.tcp_out_done < r.tcp_out.size() && (events & EPOLLOUT)) {
    const ssize_t n = ::send(r.fd, r.tcp_out.data() + r.tcp_out_done, r.tcp_out.size() - r.tcp_out_done, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN) return fail_attempt(r, now_us);
    if (n > 0) r.tcp_out_done += static_cast<std::size_t>(n);
    if (r.tcp_out_done == r.tcp_out.size()) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = tag_ | r.token;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, r.fd, &ev);
    }
  }
  if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
  std::uint8_t buf[16384];
  for (;;) {
    const ssize_t n = ::recv(r.fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail_attempt(r, now_us);  // reset, or closed before the whole reply
    r.tcp_in.append(buf, buf + n);
    if (r.tcp_in.size() > 2 + 65535) return fail_attempt(r, now_us);
    if (r.tcp_in.size() < 2) continue;
    const std::size_t len = (std::size_t{r.tcp_in[0]} << 8) | r.tcp_in[1];
    if (r.tcp_in.size() < 2 + len) continue;
    if (!r.echoes(r.tcp_in.data() + 2, len)) return fail_attempt(r, now_us);
    const common::Bytes reply = r.tcp_in.substr(2, len);
    return take_reply(r, reply.data(), reply.size(), now_us);
  }
}

void RecursiveClient::take_reply(Resolution& r, const std::uint8_t* wire, std::size_t len, std::uint64_t now_us) {
  dnssec::Response reply;
  std::string error;
  if (!dnssec::parse_response({wire, len}, reply, error)) return fail_attempt(r, now_us);
  r.got_reply = true;
  if (dnssec_) referral_ds_.keep(reply, r.query.zone);
  const bool tcp = r.tcp;
  close_socket(r);
  // Whoever followed this query (UDP only) takes the same reply, after r: r's step may
  // end r, so they are held here, by token.
  const std::vector<std::uint64_t> followers = std::exchange(r.followers, {});
  const auto rtt_us = static_cast<std::uint32_t>(tcp ? 0 : std::min<std::uint64_t>(now_us - r.sent_us, UINT32_MAX));
  bool usable = true;  // the reply as it is answers the query the followers asked
  if (record_reply(infra(), r.query.server, r.edns, reply.rcode, rtt_us, now_us) == ReplyUse::retry_without_edns) {
    r.edns = false;
    usable = false;
    if (tcp ? start_tcp(r, now_us) : send_udp(r, now_us)) {
      for (const std::uint64_t token : followers) release(token, now_us);
      return;
    }
  }
  if (reply.tc) {
    usable = false;
    if (!r.tcp && start_tcp(r, now_us)) {
      for (const std::uint64_t token : followers) release(token, now_us);  // each goes its own way to TCP
      return;
    }
    r.machine->provide_failure();  // TC over TCP, or no connection: this server failed
  } else {
    r.machine->provide(reply);
  }
  step(r, now_us);
  if (usable) hand_over(followers, &reply, false, now_us);
  else
    for (const std::uint64_t token : followers) release(token, now_us);
}

void RecursiveClient::fail_attempt(Resolution& r, std::uint64_t now_us, bool no_reply) {
  close_socket(r);
  const std::vector<std::uint64_t> followers = std::exchange(r.followers, {});
  // r's own time ran out: the server was not given its full attempt, so the followers ask
  // it themselves; else they fail as r did (the server is the same).
  const bool cut_short = now_us >= r.ends_us;
  r.machine->provide_failure(no_reply);
  step(r, now_us);
  if (cut_short)
    for (const std::uint64_t token : followers) release(token, now_us);
  else
    hand_over(followers, nullptr, no_reply, now_us);
}

void RecursiveClient::close_socket(Resolution& r) {
  if (!r.out_key.empty()) {
    if (const auto it = out_queries_.find(r.out_key); it != out_queries_.end() && it->second == r.token)
      out_queries_.erase(it);
    r.out_key.clear();
  }
  if (r.fd < 0) return;
  ::close(r.fd);  // also leaves the epoll set
  r.fd = -1;
  ++r.generation;  // its deadline is stale now
}

void RecursiveClient::arm_client(const Resolution& r) {
  if (!r.waiters.empty()) client_deadlines_.push({timers_.next_us(r.waiters.front().arrived_us, false), r.token, 0});
}

void RecursiveClient::describe(const Resolution& r, Pending& p) const {
  std::copy(r.qname.begin(), r.qname.end(), p.qname.begin());
  p.qname_len = static_cast<std::uint8_t>(r.qname.size());
  p.qtype = r.qtype;
  p.key_flags = r.key_flags;
  p.name_hash = r.name_hash;
  p.ends_us = r.ends_us;
  p.dnssec = dnssec_;  // a validation job judges it first, unless the key has CD
  p.got_reply = r.got_reply;
  p.claim = r.claim;
}

void RecursiveClient::expire_waiters(Resolution& r, std::uint64_t now_us) {
  std::size_t due = 0;
  while (due < r.waiters.size() && timers_.stale_due(r.waiters[due].arrived_us, now_us)) ++due;
  if (due == 0) return arm_client(r);
  Pending p;
  describe(r, p);
  for (std::size_t i = 0; i < due; ++i)
    if (!deadline_passed_(p, r.waiters[i], false)) r.held.push_back(std::move(r.waiters[i]));
  r.waiters.erase(r.waiters.begin(), r.waiters.begin() + static_cast<long>(due));
  arm_client(r);
}

void RecursiveClient::on_timeouts(std::uint64_t now_us) {
  for (const std::uint64_t token : std::exchange(deferred_, {}))
    if (const auto it = active_.find(token); it != active_.end()) finish(*it->second);
  while (!client_deadlines_.empty() && client_deadlines_.top().at_us <= now_us) {
    const std::uint64_t token = client_deadlines_.top().token;
    client_deadlines_.pop();
    if (const auto it = active_.find(token); it != active_.end()) expire_waiters(*it->second, now_us);
  }
  while (!deadlines_.empty() && deadlines_.top().at_us <= now_us) {
    const TokenDeadline d = deadlines_.top();
    deadlines_.pop();
    const auto it = active_.find(d.token);
    if (it == active_.end() || it->second->generation != d.generation) continue;
    if (it->second->leader) {  // its own time ran out while it followed another's query
      unfollow(*it->second);
      fail_attempt(*it->second, now_us, true);
      continue;
    }
    if (it->second->fd < 0) continue;
    cache_.count(cache::Counter::upstream_timeouts);
    record_no_reply(infra(), it->second->query.server, it->second->edns, now_us);
    fail_attempt(*it->second, now_us, true);
  }
}

int RecursiveClient::next_timeout_ms(std::uint64_t now_us) const {
  if (!deferred_.empty()) return 0;
  if (deadlines_.empty() && client_deadlines_.empty()) return -1;
  std::uint64_t at = deadlines_.empty() ? UINT64_MAX : deadlines_.top().at_us;
  if (!client_deadlines_.empty()) at = std::min(at, client_deadlines_.top().at_us);
  return at <= now_us ? 0 : static_cast<int>((at - now_us + 999) / 1000);
}

void RecursiveClient::finish(Resolution& r) {
  unfollow(r);
  close_socket(r);
  const std::vector<std::uint64_t> orphans = std::exchange(r.followers, {});  // none: a leader finishes after its attempt
  auto node = active_.extract(r.token);
  by_key_.erase(r.key);
  std::unique_ptr<Resolution> owned = std::move(node.mapped());
  const recursion::Result& result = owned->machine->result();
  bool ok = owned->done && (result.rcode == 0 || result.rcode == 3);
  if (ok) {
    const common::Bytes msg = recursion::result_message(owned->qname, owned->qtype, result);
    const UpstreamQuestion asked{0, owned->qname, owned->qtype, dnssec_ || (owned->key_flags & cache::kKeyDo) != 0,
                                 {}, {}, false};
    ok = answer_.parse(msg.data(), msg.size(), asked, ttl_) == UpstreamAnswer::Verdict::accept;
  }
  if (!ok)
    spdlog::debug("recursion: {} type {} failed after {} queries: {}", dnssec::name_text(owned->qname),
                  owned->qtype, owned->machine->queries_sent(), owned->done ? result.why : "query_timeout_ms");
  if (failures_) {
    if (ok) failures_->clear(owned->name_hash);
    else
      failures_->record(owned->name_hash, owned->got_reply ? FailureKind::error : FailureKind::timeout,
                        monotonic_us() / 1000, cfg_.failure_min_s * 1000, cfg_.failure_max_s * 1000);
  }
  Pending p;
  describe(*owned, p);  // its claim is released by the completion once the answer is where waiting workers look
  p.waiters = std::move(owned->held);  // every client still waiting, those held past their response timer first
  p.waiters.insert(p.waiters.end(), std::make_move_iterator(owned->waiters.begin()),
                   std::make_move_iterator(owned->waiters.end()));
  done_(p, ok ? &answer_ : nullptr);
  for (const std::uint64_t token : orphans) release(token, monotonic_us());
}

}  // namespace dnsarena::workers
