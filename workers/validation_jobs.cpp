// SPDX-License-Identifier: GPL-3.0-or-later
// A worker's DNSSEC validation jobs (validation_jobs.hpp).
#include "workers/validation_jobs.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "common/monotonic_clock.hpp"
#include "workers/dnssec_response.hpp"
#include "workers/failure_cache.hpp"

namespace dnsarena::workers {

using dnssec::Bytes;
using dnssec::Outcome;
using dnssec::Verdict;

struct ValidationJobs::Job {
  std::uint64_t id = 0;
  Pending query;
  cache::CacheKey key;
  std::vector<std::uint8_t> entry;  // padded
  bool cacheable = false;
  std::uint8_t scope = 0;
  std::uint32_t now_s = 0;  // the validation time (RRSIG windows)
  std::shared_ptr<const dnssec::TrustAnchors> anchors;  // v's, run-time NTAs included (outlives v)
  std::unique_ptr<dnssec::Validation> v;
  std::uint64_t deadline_us = 0;
  std::uint64_t poll_us = 0;  // a fetch that could not start: look again then (0: not polling)
  bool has_reply = false;     // a reply to v->need() arrived (reply_ok: with a usable answer)
  bool reply_ok = false;
  dnssec::Response reply;
  unsigned fetches = 0;
  Bytes denial_zone;                   // the signer of its denial's NSEC / NSEC3 records (empty: not a denial)
  UpstreamClaims::Claim denial_claim;  // held while it waits (value 0: none)
};

namespace {

// The zone whose NSEC / NSEC3 records deny r's question (their RRSIG's signer): r is
// NXDOMAIN, or NOERROR without answer records. Empty: no such denial.
Bytes denial_signer(const dnssec::Response& r) {
  if (r.rcode != 3 && !(r.rcode == 0 && r.answer.empty())) return {};
  for (const dnssec::Rrset& s : r.authority) {
    if ((s.type != dnssec::kTypeNsec && s.type != dnssec::kTypeNsec3) || s.rrsigs.empty()) continue;
    if (const auto f = dnssec::parse_rrsig(s.rrsigs.front())) return f->signer;
  }
  return {};
}

}  // namespace

ValidationJobs::ValidationJobs(const ServeConfig& cfg, cache::Cache& cache, UpstreamClient& upstream,
                               SetFetcher& fetcher, DnssecCounters::Row& counters, Done done,
                               DenialClaims* denials)
    : cfg_(cfg),
      cache_(cache),
      upstream_(upstream),
      fetcher_(fetcher),
      done_(std::move(done)),
      denials_(denials),
      on_(cfg.dnssec.validating()),
      copy_(std::make_unique<cache::EntryCopy>()),
      counters_(counters) {}

ValidationJobs::~ValidationJobs() = default;

void ValidationJobs::start(Pending& p, const UpstreamAnswer& a, const cache::CacheKey& key,
                           std::span<const std::uint8_t> entry, bool cacheable,
                           std::uint8_t scope, std::uint64_t now_us) {
  const std::uint32_t now = cache::wall_clock_now();
  if (jobs_.size() >= kMaxJobs) {
    counters_.add(DnssecCounter::overloaded);
    counters_.add(DnssecCounter::bogus);
    const Outcome o = Outcome::bogus(dnssec::Ede::dnssec_bogus, "validation overloaded");
    Finished f{p, key, {}, 0, false, scope, o};
    done_(f);
    return;
  }
  auto job = std::make_unique<Job>();
  Job& j = *job;
  j.id = next_id_++;
  j.query = std::move(p);
  p.claim.value = 0;  // the job releases it (through Done), not the upstream client
  j.key = key;
  j.entry.assign(entry.begin(), entry.end());
  j.cacheable = cacheable;
  j.scope = scope;
  j.now_s = now;
  j.deadline_us = std::max(j.query.ends_us, now_us + std::uint64_t{cfg_.upstream_timeout_ms} * 1000);
  j.anchors = upstream_.runtime_ntas().current(now);
  if (j.anchors != anchors_seen_) {  // an NTA came or went: the key cache's verdicts may be void
    zones_.clear();
    anchors_seen_ = j.anchors;
  }
  j.v = std::make_unique<dnssec::Validation>(*j.anchors, cfg_.dnssec.limits, now);
  dnssec::Response r = to_dnssec_response(a.answer(), {j.query.qname.data(), j.query.qname_len}, j.query.qtype);
  seed(*j.v, r, now);
  if (denials_) j.denial_zone = denial_signer(r);
  j.v->start(std::move(r));
  jobs_.emplace(j.id, std::move(job));
  // Its first step (a cache lookup, a fetch to start) in run(): never inside the upstream
  // client's completion, which may be making room for a query of its own (a jostle).
  ready_.push_back(j.id);
}

void ValidationJobs::on_fetched(const Pending& p, const UpstreamAnswer* a) {
  if (!on_ || waiting_.empty() || p.key_flags != (cache::kKeyDo | cache::kKeyCd) || p.ecs.present) return;
  auto it = waiting_.find(SetKey(Bytes(p.qname.data(), p.qname.data() + p.qname_len), p.qtype));
  if (it == waiting_.end()) return;
  std::optional<dnssec::Response> reply;
  if (a) reply = to_dnssec_response(a->answer(), {p.qname.data(), p.qname_len}, p.qtype);
  for (const std::uint64_t id : it->second) {
    auto j = jobs_.find(id);
    if (j == jobs_.end()) continue;  // ended meanwhile (deadline)
    j->second->has_reply = true;
    j->second->reply_ok = reply.has_value();
    if (reply) j->second->reply = *reply;
    ready_.push_back(id);
  }
  waiting_.erase(it);
}

void ValidationJobs::run(std::uint64_t now_us) {
  while (!ready_.empty()) {
    const std::uint64_t id = ready_.front();
    ready_.pop_front();
    auto it = jobs_.find(id);
    if (it != jobs_.end()) step(*it->second, now_us);
  }
  if (jobs_.empty()) return;
  std::vector<std::uint64_t> due;
  for (const auto& [id, j] : jobs_)
    if (j->deadline_us <= now_us || (j->poll_us && j->poll_us <= now_us)) due.push_back(id);
  for (const std::uint64_t id : due) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    Job& j = *it->second;
    if (j.deadline_us <= now_us) {
      counters_.add(DnssecCounter::timeouts);
      finish(j, Outcome::bogus(dnssec::Ede::dnssec_bogus, "validation timed out"));
    } else {
      j.poll_us = 0;
      step(j, now_us);
    }
  }
}

int ValidationJobs::next_timeout_ms(std::uint64_t now_us) const {
  if (!ready_.empty()) return 0;
  std::uint64_t next = UINT64_MAX;
  for (const auto& [id, j] : jobs_) {
    next = std::min(next, j->deadline_us);
    if (j->poll_us) next = std::min(next, j->poll_us);
  }
  if (next == UINT64_MAX) return -1;
  return next <= now_us ? 0 : static_cast<int>(std::min<std::uint64_t>((next - now_us + 999) / 1000, 1000));
}

void ValidationJobs::step(Job& j, std::uint64_t now_us) {
  dnssec::Response set;
  while (!j.v->finished()) {
    const dnssec::Need& need = *j.v->need();
    if (j.has_reply) {
      j.has_reply = false;
      j.v->provide(j.reply_ok ? &j.reply : nullptr);
      continue;
    }
    if (cached_set(need, set)) {
      counters_.add(DnssecCounter::fetch_cache_hits);
      j.v->provide(&set);
      continue;
    }
    claim_denial(j, now_us);  // it waits from here: for a fetch, a poll or another job's fetch
    SetKey sk(need.name, need.type);
    if (auto w = waiting_.find(sk); w != waiting_.end()) {
      w->second.push_back(j.id);
      return;
    }
    if (j.fetches >= dnssec::Validation::kMaxSteps) {
      j.v->provide(nullptr);  // bogus: a chain this long is an attack or a loop
      continue;
    }
    bool started = false;
    try {
      started = fetcher_.fetch(cache::CacheKey(need.name, need.type, cache::kKeyDo | cache::kKeyCd));
    } catch (const std::invalid_argument&) {
      j.v->provide(nullptr);
      continue;
    }
    if (started) {
      ++j.fetches;
      counters_.add(DnssecCounter::fetches);
      waiting_[std::move(sk)].push_back(j.id);
    } else {
      j.poll_us = now_us + kPollMs * 1000;
    }
    return;
  }
  finish(j, j.v->outcome());
}

void ValidationJobs::claim_denial(Job& j, std::uint64_t now_us) {
  if (!denials_ || j.denial_zone.empty() || j.denial_claim.value) return;
  j.denial_claim = denials_->claim(j.denial_zone, now_us / 1000);
  if (j.denial_claim.value) counters_.add(DnssecCounter::denial_claims);
}

void ValidationJobs::drop_stale_insecure(const cache::CacheKey& key) {
  if (cache_.peek(key, cache::wall_clock_now(), *copy_) == cache::LookupStatus::miss) return;
  const cache::EntryReader entry(copy_->span());
  if (entry.valid() && entry.verdict() == cache::EntryVerdict::insecure) cache_.erase(key);
}

bool ValidationJobs::cached_set(const dnssec::Need& n, dnssec::Response& out) {
  cache::CacheKey key;
  if (!key.assign(n.name, n.type, cache::kKeyDo | cache::kKeyCd)) return false;
  if (cache_.peek(key, cache::wall_clock_now(), *copy_) != cache::LookupStatus::hit) return false;
  cache::EntryReader entry(copy_->span());
  return entry.valid() && to_dnssec_response(entry, out);
}

void ValidationJobs::seed(dnssec::Validation& v, const dnssec::Response& r, std::uint32_t now) {
  if (zones_.empty()) return;
  std::set<Bytes> names{r.qname};
  for (const auto* section : {&r.answer, &r.authority})
    for (const dnssec::Rrset& s : *section) {
      names.insert(s.owner);
      for (const Bytes& sig : s.rrsigs)
        if (auto f = dnssec::parse_rrsig(sig)) names.insert(f->signer);
    }
  std::set<Bytes> seeded;
  for (const Bytes& name : names) {
    const unsigned labels = dnssec::label_count(name);
    for (unsigned strip = 0; strip <= labels; ++strip) {
      Bytes zone = dnssec::strip_labels(name, strip);
      // A DS set and its denial belong to the parent: a seed at or below the asked name
      // would judge them by the child's trust (response_check.cpp looks the name's zone up).
      if (r.qtype == dnssec::kTypeDs && dnssec::is_subdomain(zone, r.qname)) continue;
      auto it = zones_.find(zone);
      if (it == zones_.end() || it->second.expires <= now) continue;
      // The closest known zone is where the walk starts: those above it are not needed
      // (each secure seed costs an import of its keys).
      if (seeded.insert(zone).second) {
        if (it->second.outcome.verdict == Verdict::secure) v.trust_secure(zone, it->second.dnskeys);
        else v.trust_insecure(zone, it->second.outcome);
        counters_.add(DnssecCounter::key_cache_seeds);
      }
      break;
    }
  }
}

void ValidationJobs::learn(const dnssec::Validation& v, std::uint32_t now) {
  for (const auto& [zone, trust] : v.zones()) {
    const Verdict verdict = trust.outcome.verdict;
    if (verdict != Verdict::secure && verdict != Verdict::insecure) continue;
    if (verdict == Verdict::secure && trust.keys.size() == 0) continue;
    if (zones_.size() >= kMaxKeyCacheZones && !zones_.contains(zone)) {
      std::erase_if(zones_, [now](const auto& z) { return z.second.expires <= now; });
      if (zones_.size() >= kMaxKeyCacheZones) zones_.erase(zones_.begin());
    }
    const std::uint32_t ttl = std::min(trust.outcome.max_ttl, cfg_.ttl_ceiling);
    if (ttl == 0) continue;
    KnownZone& k = zones_[zone];
    k.outcome = trust.outcome;
    k.dnskeys = verdict == Verdict::secure ? trust.keys.rdata() : std::vector<Bytes>{};
    k.expires = now + ttl;
  }
}

void ValidationJobs::finish(Job& j, const Outcome& o) {
  const dnssec::WorkCounters& c = j.v->counters();
  counters_.add(static_cast<DnssecCounter>(o.verdict));  // the verdicts come first, in dnssec::Verdict's order
  counters_.add(DnssecCounter::signature_validations, c.signature_validations);
  counters_.add(DnssecCounter::nsec3_hashes, c.nsec3_hashes);
  counters_.add(DnssecCounter::key_tag_collisions_skipped, c.key_tag_collisions_skipped);
  counters_.add(DnssecCounter::signature_limit, c.signature_limit_hit);
  counters_.add(DnssecCounter::nsec3_hash_limit, c.nsec3_hash_limit_hit);
  counters_.add(DnssecCounter::nsec3_iteration_limit, c.nsec3_iterations_over);
  if (o.verdict != Verdict::bogus) learn(*j.v, j.now_s);
  // A bogus name is not asked again for a while (RFC 9520; failure_cache.hpp): its
  // clients get SERVFAIL with EDE 6 from the failure cache. Only for the validation's own
  // verdict, not for a job that ran out of time (v unfinished): the upstream was slow.
  if (o.verdict == Verdict::bogus && j.v->finished()) {
    upstream_.failures().record(j.query.name_hash, FailureKind::bogus, common::monotonic_us() / 1000,
                                cfg_.failure_min_s * 1000, cfg_.failure_max_s * 1000);
    drop_stale_insecure(j.key);
  }
  std::span<const std::uint8_t> entry;
  std::size_t entry_len = 0;
  if (o.verdict != Verdict::bogus) {
    // Insecure by a run-time NTA: cached no longer than the NTA lasts.
    const std::uint32_t max_ttl = o.verdict == Verdict::secure ? o.max_ttl
        : upstream_.runtime_ntas().ttl_cap({j.query.qname.data(), j.query.qname_len}, j.now_s);
    entry_len = with_verdict(j.entry, j.key, o.verdict, max_ttl, j.now_s, encoded_);
    if (entry_len) entry = encoded_;
  }
  Finished f{j.query, j.key, entry, entry_len, j.cacheable && !entry.empty(), j.scope, o, j.v.get()};
  const std::uint64_t id = j.id;
  const UpstreamClaims::Claim denial = j.denial_claim;
  done_(f);  // the pipeline learns the proofs, then the denial's waiters may look
  if (denial.value) denials_->release(denial);
  jobs_.erase(id);  // waiting_ and ready_ drop its id lazily
}

}  // namespace dnsarena::workers
