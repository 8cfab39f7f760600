// SPDX-License-Identifier: GPL-3.0-or-later
// What the clients of one `dnsarena serve` were answered, and how fast: latency
// histograms (latency_histogram.hpp) of cache hits and of misses, and counts of answers
// by RCODE and by question type.
//
// Memory: one anonymous shared mapping (MAP_SHARED | MAP_ANONYMOUS) that the supervisor
// makes before it forks the first worker, beside the upstream health table
// (upstream_health.hpp, which holds the per-upstream RTT histograms). Like that table it
// is not in the cache segment (whose format it does not touch), has no name and no
// version, and lives exactly as long as the service's processes: a worker killed and
// forked again keeps adding to its predecessor's figures. Nothing inside is a pointer.
//
//   offset          size   field    meaning
//   0               4      rows     rows mapped: three per worker index (the rows of
//                                   in_flight_names.hpp: worker i writes row i,
//                                   i + workers or i + 2 x workers, a free one at each reload)
//   4               60     (zero)   so that row 0 starts on a cache line
//   64 + r*1152     1152   row r    one worker's figures (below)
//
// A row (eighteen cache lines; every field a u64 count):
//
//   offset size field    meaning
//   0      136  hit      LatencyHistogram: UDP, recvmmsg's return to the sendmmsg call of
//                        the batch that answered it from the cache; TCP, the message read
//                        to its answer written
//   136    136  miss     LatencyHistogram: the query's arrival to its answer sent, for a
//                        client whose answer waited on an upstream query (its worker's, or
//                        another worker's it joined), including answers at the deadline
//   272    840  answers  [7][15]: answers sent, by header RCODE (row: NOERROR, FORMERR,
//                        SERVFAIL, NXDOMAIN, NOTIMP, REFUSED, other; an extended RCODE
//                        such as BADVERS counts by the 4 bits in the header) and by their
//                        question's type (column: A, AAAA, CNAME, MX, TXT, NS, SOA, PTR,
//                        SRV, HTTPS, SVCB, DS, DNSKEY, ANY, other, which also takes
//                        answers without a question: a FORMERR to a broken packet). One
//                        count per answer; readers add up rows and columns.
//   1112   40   proxy    [5]: PROXY v2 headers by outcome (proxy_counts.hpp: accepted,
//                        local, and dropped: no_header, malformed, unlisted)
//
// A hit is an answer from the cache: a UDP batch's hits are the rise of the worker's
// `hits` stat counter across the batch (exact while the worker owns its stat slot; when
// every slot is taken and the last is shared, another process's hits can land in it).
// Answers that are neither hits nor misses (FORMERR, REFUSED, the failure cache's
// SERVFAIL, a stale answer given first) are counted by RCODE and type only. Queries
// dropped without an answer are counted nowhere here (the stat slots count them), but
// for those a PROXY header decided (`proxy`).
//
// Concurrency: a row has one writer at a time, the live worker of its row (the
// supervisor hands rows out as in_flight_names.hpp says: a retiring worker and its
// successor never share one; a dead worker writes nothing), so writes are a relaxed
// load and store, no locked instruction (a hit is a few hundred nanoseconds: a locked
// add costs a measurable share). Readers sum the rows with relaxed loads: a sum may mix
// moments, which is benign for statistics. A worker's death loses nothing it wrote.
// Costs: per UDP batch one histogram update for all its hits (they share the batch's
// time); per answer one count (the question's type is the query's, known without a
// walk over the name). The mapping is 64 + rows x 1152 bytes.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/anonymous_mapping.hpp"
#include "workers/dnssec_counters.hpp"
#include "workers/latency_histogram.hpp"
#include "workers/policy_counters.hpp"
#include "workers/proxy_counts.hpp"

namespace dnsarena::workers {

inline constexpr std::size_t kRcodeKinds = 7;
inline constexpr std::array<std::string_view, kRcodeKinds> kRcodeNames = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
                                                                         "NOTIMP",  "REFUSED", "other"};
inline constexpr std::size_t kQtypeKinds = 15;
inline constexpr std::array<std::string_view, kQtypeKinds> kQtypeNames = {
    "A", "AAAA", "CNAME", "MX", "TXT", "NS", "SOA", "PTR", "SRV", "HTTPS", "SVCB", "DS", "DNSKEY", "ANY", "other"};

// The index into kRcodeNames of a header RCODE (4 bits).
constexpr unsigned rcode_kind(unsigned rcode) { return rcode <= 5 ? rcode : kRcodeKinds - 1; }
// The index into kQtypeNames of each question type below 256 (every named one is).
inline constexpr std::array<std::uint8_t, 256> kQtypeKindTable = [] {
  std::array<std::uint8_t, 256> t{};
  t.fill(kQtypeKinds - 1);
  const std::uint8_t types[kQtypeKinds - 1] = {1, 28, 5, 15, 16, 2, 6, 12, 33, 65, 64, 43, 48, 255};
  for (std::uint8_t k = 0; k < kQtypeKinds - 1; ++k) t[types[k]] = k;
  return t;
}();
// The index into kQtypeNames of a question type (one table load: it is on the hit path).
constexpr unsigned qtype_kind(std::uint16_t qtype) { return qtype < 256 ? kQtypeKindTable[qtype] : kQtypeKinds - 1; }
// The question type of a DNS message, -1 without a (readable) question.
int message_qtype(const std::uint8_t* wire, std::size_t len);

enum class AnswerKind { other, hit, miss };

class AnswerMetrics {
public:
  // Maps `rows` rows (shared across fork() when `shared`, else private to this process).
  // Throws std::system_error when mmap fails.
  AnswerMetrics(unsigned rows, bool shared);
  unsigned rows() const { return header_->rows; }

  struct alignas(64) Row {
    LatencyHistogram hit;
    LatencyHistogram miss;
    std::atomic<std::uint64_t> answers[kRcodeKinds][kQtypeKinds];
    std::atomic<std::uint64_t> proxy[kProxyOutcomes];

    // REQUIRES (every writer below): the caller is this row's only writer (above).
    // One answer of `len` (>= 12) bytes sent; `qtype`: its question's type when the
    // caller knows it, -1 to read it from the answer.
    void count(const std::uint8_t* wire, std::size_t len, int qtype) {
      if (qtype < 0) qtype = message_qtype(wire, len);
      const unsigned q = qtype < 0 ? kQtypeKinds - 1 : qtype_kind(static_cast<std::uint16_t>(qtype));
      bump(answers[rcode_kind(wire[3] & 0x0F)][q]);
    }
    static void bump(std::atomic<std::uint64_t>& c) {
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  };
  // Row `row` (< rows()).
  Row& row(unsigned i) const { return rows_[i]; }

  // The sum over every row.
  struct Totals {
    LatencyCounts hit, miss;
    std::array<std::uint64_t, kRcodeKinds> rcodes{};
    std::array<std::uint64_t, kQtypeKinds> qtypes{};
    std::vector<PolicyCounters::Zone> policy;  // policy matches per zone and trigger kind
    std::array<std::uint64_t, kDnssecCounters> dnssec{};  // validation (dnssec_counters.hpp)
    std::array<std::uint64_t, kProxyOutcomes> proxy{};  // PROXY v2 headers by outcome
  };
  Totals totals() const;

  // The response policy's matches per zone (policy_counters.hpp), rows as above.
  PolicyCounters& policy() { return policy_; }
  const PolicyCounters& policy() const { return policy_; }
  // DNSSEC validation's counts (dnssec_counters.hpp), rows as above.
  DnssecCounters& dnssec() { return dnssec_; }

private:
  struct Header {
    std::uint32_t rows;
    std::uint8_t zero[60];
  };
  static_assert(sizeof(Header) == 64, "row 0 starts on its own cache line");
  static_assert(sizeof(Row) == 1152, "a row is whole cache lines: two workers never share one");
  static_assert(offsetof(Row, miss) == 136 && offsetof(Row, answers) == 272 && offsetof(Row, proxy) == 1112,
                "the row layout above");

  common::AnonymousMapping map_;
  Header* header_ = nullptr;
  Row* rows_ = nullptr;
  PolicyCounters policy_;
  DnssecCounters dnssec_;
};

// A worker's writer: its row of the host's table, or of a private one-row table when it
// has none (a worker run alone). The UDP calls are inline: they run for every hit.
class AnswerMeter {
public:
  AnswerMeter(AnswerMetrics* host, unsigned row);
  // One answer of `len` (>= 12) bytes sent; `ns`: its latency, for a hit or a miss.
  void answered(const std::uint8_t* wire, std::size_t len, AnswerKind kind = AnswerKind::other, std::uint64_t ns = 0);
  // One answer of a UDP batch (`qtype` as Row::count), then the batch's hits, each after
  // `batch_ns` (they share the batch's time).
  void udp_answer(const std::uint8_t* wire, std::size_t len, int qtype) { row_->count(wire, len, qtype); }
  void udp_hits(std::uint64_t hits, std::uint64_t batch_ns) {
    if (hits) row_->hit.add_owned(batch_ns, hits);
  }
  // A PROXY v2 header's outcome (proxy_protocol.hpp).
  void proxy(ProxyOutcome o) { AnswerMetrics::Row::bump(row_->proxy[static_cast<std::size_t>(o)]); }
  // A response policy match in zone `zone` on a trigger of kind `kind` (policy_counters.hpp).
  void policy_hit(unsigned zone, unsigned kind) { metrics_->policy().count(row_index_, zone, kind); }
  // This worker's row of DNSSEC validation counts (dnssec_counters.hpp).
  DnssecCounters::Row& dnssec_row() { return metrics_->dnssec().row(row_index_); }

private:
  std::unique_ptr<AnswerMetrics> own_;
  AnswerMetrics::Row* row_;
  AnswerMetrics* metrics_;
  unsigned row_index_;
};

}  // namespace dnsarena::workers
