// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/answer_snapshot.hpp"

#include <unistd.h>

#include "workers/snapshot_file.hpp"

namespace dnsarena::workers {

std::string answer_snapshot_path(const std::string& segment) { return snapshot_path(segment, "answers"); }

nlohmann::json answer_metrics_json(const AnswerMetrics::Totals& t) {
  nlohmann::json rcodes = nlohmann::json::object(), qtypes = nlohmann::json::object();
  for (std::size_t k = 0; k < kRcodeKinds; ++k) rcodes[std::string(kRcodeNames[k])] = t.rcodes[k];
  for (std::size_t k = 0; k < kQtypeKinds; ++k) qtypes[std::string(kQtypeNames[k])] = t.qtypes[k];
  nlohmann::json policy = nlohmann::json::object();
  for (const PolicyCounters::Zone& z : t.policy)
    for (std::size_t k = 0; k < kPolicyKinds; ++k) policy[z.name][std::string(kPolicyKindNames[k])] = z.hits[k];
  nlohmann::json dnssec = nlohmann::json::object();
  for (std::size_t k = 0; k < kDnssecCounters; ++k) dnssec[std::string(kDnssecCounterNames[k])] = t.dnssec[k];
  nlohmann::json proxy = nlohmann::json::object();
  for (std::size_t k = 0; k < kProxyOutcomes; ++k) proxy[std::string(kProxyOutcomeNames[k])] = t.proxy[k];
  return {{"hit", latency_json(t.hit)}, {"miss", latency_json(t.miss)}, {"rcodes", rcodes}, {"qtypes", qtypes},
          {"policy", policy}, {"proxy", proxy}, {"dnssec", dnssec}};
}

bool write_answer_snapshot(const std::string& segment, const AnswerMetrics& metrics) {
  return write_snapshot(answer_snapshot_path(segment),
                        {{"latency_le_ms", latency_bounds_ms_json()}, {"answers", answer_metrics_json(metrics.totals())}});
}

void remove_answer_snapshot(const std::string& segment) { ::unlink(answer_snapshot_path(segment).c_str()); }

std::optional<nlohmann::json> read_answer_snapshot(const std::string& segment) {
  return read_snapshot(answer_snapshot_path(segment), "answers");
}

}  // namespace dnsarena::workers
