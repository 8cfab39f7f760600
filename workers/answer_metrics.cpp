// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/answer_metrics.hpp"

namespace dnsarena::workers {

int message_qtype(const std::uint8_t* wire, std::size_t len) {
  if (len < 12 || (wire[4] | wire[5]) == 0) return -1;  // no question
  std::size_t i = 12;
  for (;;) {
    if (i >= len) return -1;
    const std::uint8_t l = wire[i];
    if (l == 0) {
      ++i;
      break;
    }
    if ((l & 0xC0) == 0xC0) {  // a compression pointer ends the name
      i += 2;
      break;
    }
    if (l & 0xC0) return -1;
    i += 1u + l;
  }
  if (i + 2 > len) return -1;
  return wire[i] << 8 | wire[i + 1];
}

AnswerMetrics::AnswerMetrics(unsigned rows, bool shared) : policy_(rows, shared), dnssec_(rows, shared) {
  if (rows == 0) rows = 1;
  map_ = common::AnonymousMapping(sizeof(Header) + static_cast<std::size_t>(rows) * sizeof(Row), shared,
                                  "answer metrics table");
  header_ = static_cast<Header*>(map_.data());  // zero-filled: every count 0
  header_->rows = rows;
  rows_ = reinterpret_cast<Row*>(static_cast<std::uint8_t*>(map_.data()) + sizeof(Header));
}

AnswerMetrics::Totals AnswerMetrics::totals() const {
  Totals t;
  for (unsigned i = 0; i < rows(); ++i) {
    const Row& r = rows_[i];
    t.hit.merge(read_latency(r.hit));
    t.miss.merge(read_latency(r.miss));
    for (std::size_t rc = 0; rc < kRcodeKinds; ++rc)
      for (std::size_t q = 0; q < kQtypeKinds; ++q) {
        const std::uint64_t n = r.answers[rc][q].load(std::memory_order_relaxed);
        t.rcodes[rc] += n;
        t.qtypes[q] += n;
      }
    for (std::size_t o = 0; o < kProxyOutcomes; ++o) t.proxy[o] += r.proxy[o].load(std::memory_order_relaxed);
  }
  t.policy = policy_.totals();
  t.dnssec = dnssec_.totals();
  return t;
}

AnswerMeter::AnswerMeter(AnswerMetrics* host, unsigned row) {
  if (!host || row >= host->rows()) {
    own_ = std::make_unique<AnswerMetrics>(1, false);
    host = own_.get();
    row = 0;
  }
  row_ = &host->row(row);
  metrics_ = host;
  row_index_ = row;
}

void AnswerMeter::answered(const std::uint8_t* wire, std::size_t len, AnswerKind kind, std::uint64_t ns) {
  if (len < 12) return;
  row_->count(wire, len, -1);
  if (kind == AnswerKind::hit) row_->hit.add_owned(ns);
  else if (kind == AnswerKind::miss) row_->miss.add_owned(ns);
}

}  // namespace dnsarena::workers
