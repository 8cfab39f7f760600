// SPDX-License-Identifier: GPL-3.0-or-later
// DNSSEC validation of forwarded answers in a worker, without blocking its event loop.
//
// Answers resolved from the root by the worker (recursive_client.hpp) come the same way:
// its queries to the authoritatives carry DO while validating, and its results keep the
// RRSIGs and the denial proofs (recursion/result_message.hpp).
//
// When the config validates (dnssec_config.hpp), every upstream query carries DO and CD
// (upstream_client.cpp, Pending::dnssec): a validating upstream then passes bogus data
// for us to judge, and RRSIGs come back whatever the client asked. An answer to a query
// whose key has no CD (a client's, a prefetch's) is not cached or answered at once: it
// becomes a job here, holding the query's waiters, its host-wide claim (so that other
// workers waiting on it look only once the verdict is in the cache) and the encoded
// entry. The job runs a dnssec::Validation (dnssec/validator.hpp); each set it needs (a
// DS or DNSKEY set, by name) is
//
//   1. looked up in the shared cache under (name, type, DO|CD): sets fetched by any
//      worker are cached like other entries (as CD data: unvalidated, re-verified by
//      every validation that reads them);
//   2. else joined to this worker's fetch in flight for the same set;
//   3. else fetched: an internal query (no client attached, DO|CD) through the SetFetcher
//      (set_fetcher.hpp: the upstream client for a name a forward zone holds, else the
//      recursive resolver), whose completion (on_fetched, called from the pipeline's
//      upstream completion) resumes every job that waits on it. A fetch that
//      cannot start (another worker holds the question, a bound refused it) is looked
//      up again every kPollMs until the job's deadline.
//
// A new job's first step and every reply are handed to their jobs in run() (from the
// event loop's timer step), never from inside the upstream client's completion, so a job
// may start its next fetch safely. A finished job goes back to the pipeline (Done) with its verdict:
// every verdict is stored in the entry (cache/entry_format.hpp, EntryVerdict); secure ->
// the entry re-encoded with AD and its TTLs capped at the validation's max_ttl;
// insecure, indeterminate -> the entry as it came but for the verdict (AD clear: the
// upstream's is never trusted while validating); bogus -> no entry, SERVFAIL with the outcome's EDE, and the
// name (its key's qname, qtype, DO) goes into the host's failure cache (FailureKind::bogus:
// SERVFAIL with EDE 6 and no upstream query until its window ends; CD keys are apart).
//
// Key cache: the zones each validation established (secure with their DNSKEY RDATA,
// insecure with their reason) are kept per worker until their max_ttl (at most
// ttl_ceiling), and seed later validations (Validation::trust_secure / trust_insecure)
// for the zones above the names of their response: a warm miss costs one RRSIG
// verification per set and no fetch.
//
// Bounds (an attacker who can make a worker validate must not exhaust it):
//   kMaxJobs jobs per worker: past it an answer to validate ends bogus at once ("validation
//     overloaded"), never insecure; counted (overloaded);
//   fetches per job: at most dnssec::Validation::kMaxSteps (its own bound on steps);
//   each job ends by its query's resolution timer (query_timeout_ms after the query
//     started; at least upstream_timeout_ms after the job did): bogus ("validation timed out");
//   the crypto of each job: dnssec::Limits (KeyTrap, NSEC3 floods), counted when hit;
//   kMaxKeyCacheZones zones in the key cache (expired ones dropped first, then the
//     first in order).
// Memory: a job holds its Pending (the waiters), its entry and the Validation's parsed
// response; at kMaxJobs and 64 KiB entries, about 40 MB at the very worst.
//
// Aggressive NSEC (RFC 8198; aggressive_nsec.hpp): a finished job's response and verdict
// go to the pipeline, which learns the ranges of a secure denial before the job releases
// anything. A job for a denial that has to wait for a set holds its zone's denial claim
// (denial_claims.hpp) from its first wait to its end, so that misses under that zone wait
// for its proofs instead of going upstream.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/cache.hpp"
#include "dnssec/validator.hpp"
#include "workers/denial_claims.hpp"
#include "workers/dnssec_counters.hpp"
#include "workers/serve_config.hpp"
#include "workers/set_fetcher.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

class ValidationJobs {
public:
  static constexpr std::size_t kMaxJobs = 512;
  static constexpr std::size_t kMaxKeyCacheZones = 4096;
  static constexpr std::uint64_t kPollMs = 20;

  // A job's end, handed to the pipeline.
  struct Finished {
    Pending& query;                       // its waiters, claim, key flags, ECS
    const cache::CacheKey& key;           // the entry's key
    std::span<const std::uint8_t> entry;  // for the verdict, padded; empty: bogus (or unusable)
    std::size_t entry_len = 0;            // its length unpadded
    bool cacheable = false;
    std::uint8_t scope = 0;
    const dnssec::Outcome& outcome;
    const dnssec::Validation* validation = nullptr;  // its response (aggressive_nsec.hpp); null: none ran
  };
  using Done = std::function<void(Finished&)>;

  // REQUIRES: cfg.dnssec.validating() (else wants() is always false and nothing runs);
  // the caller is `counters`' only writer (this worker's row, dnssec_counters.hpp).
  // `upstream`: its failure cache and run-time NTAs; `fetcher`: where sets are fetched;
  // `denials`: where a job that waits claims its denial's zone (denial_claims.hpp;
  // nullptr: none claimed, as without aggressive NSEC).
  ValidationJobs(const ServeConfig& cfg, cache::Cache& cache, UpstreamClient& upstream, SetFetcher& fetcher,
                 DnssecCounters::Row& counters, Done done, DenialClaims* denials = nullptr);
  ~ValidationJobs();

  // Whether the answer to `p` must be validated before it is cached or answered.
  bool wants(const Pending& p) const { return on_ && !(p.key_flags & cache::kKeyCd); }
  // Starts a job for `p`'s answer `a` (encoded for `key` as `entry`, padded): it takes
  // p's waiters and claim. Past kMaxJobs, Done is called at
  // once with a bogus outcome. The job ends by p's resolution timer (Pending::ends_us),
  // or one upstream_timeout_ms from now if that is later.
  void start(Pending& p, const UpstreamAnswer& a, const cache::CacheKey& key, std::span<const std::uint8_t> entry,
             bool cacheable, std::uint8_t scope, std::uint64_t now_us);
  // Any upstream query ended (a = nullptr: failed): the jobs waiting on its set get it.
  void on_fetched(const Pending& p, const UpstreamAnswer* a);
  // Resumes jobs with a reply or a poll due, ends those past their deadline.
  void run(std::uint64_t now_us);
  int next_timeout_ms(std::uint64_t now_us) const;
  std::size_t in_flight() const { return jobs_.size(); }

private:
  struct Job;
  using SetKey = std::pair<dnssec::Bytes, std::uint16_t>;  // (lowercase name, DS or DNSKEY)
  // Runs `j` until it waits (a fetch, a poll) or finishes.
  void step(Job& j, std::uint64_t now_us);
  // `j` waits for a set: its denial's zone is claimed (denial_claims.hpp), once.
  void claim_denial(Job& j, std::uint64_t now_us);
  // A cached set for the need, read into `out`; false: none fresh.
  bool cached_set(const dnssec::Need& n, dnssec::Response& out);
  void seed(dnssec::Validation& v, const dnssec::Response& r, std::uint32_t now);
  void learn(const dnssec::Validation& v, std::uint32_t now);
  // A name judged bogus whose cached answer was insecure (a run-time NTA that ended, a
  // zone signed since): that answer is removed, so that serve-stale (stale_answer.hpp)
  // does not hand it out in place of the verdict. One peek per bogus verdict.
  void drop_stale_insecure(const cache::CacheKey& key);
  void finish(Job& j, const dnssec::Outcome& o);

  const ServeConfig& cfg_;
  cache::Cache& cache_;
  UpstreamClient& upstream_;
  SetFetcher& fetcher_;
  Done done_;
  DenialClaims* denials_;
  bool on_;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::unique_ptr<Job>> jobs_;
  std::map<SetKey, std::vector<std::uint64_t>> waiting_;  // fetches in flight -> the jobs that wait
  std::deque<std::uint64_t> ready_;                         // jobs with a reply to take
  struct KnownZone {
    dnssec::Outcome outcome;
    std::vector<dnssec::Bytes> dnskeys;  // secure: the zone's trusted keys
    std::uint32_t expires = 0;           // wall-clock second
  };
  std::map<dnssec::Bytes, KnownZone> zones_;  // the key cache
  std::shared_ptr<const dnssec::TrustAnchors> anchors_seen_;  // the key cache was filled under these
  std::unique_ptr<cache::EntryCopy> copy_;
  std::vector<std::uint8_t> encoded_;  // a finished job's re-encoded entry
  DnssecCounters::Row& counters_;
};

}  // namespace dnsarena::workers
