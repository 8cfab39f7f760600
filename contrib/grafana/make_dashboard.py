#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes contrib/grafana/dnsarena.json, the Grafana dashboard for dnsarena's /metrics.

The dashboard is generated so that every panel uses the same datasource variable, the
same per-worker legend and metric names that exist (workers/metrics_server.cpp; the
README lists them). Run it after changing a panel:  python3 contrib/grafana/make_dashboard.py
"""
import json
import os

DS = {"type": "prometheus", "uid": "${datasource}"}


def panel(pid, title, exprs, unit, x, y, w=12, h=8, kind="timeseries", description=""):
    p = {
        "id": pid,
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DS,
        "gridPos": {"x": x, "y": y, "w": w, "h": h},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom"}} if kind == "timeseries" else {},
        "targets": [{"datasource": DS, "expr": e, "legendFormat": legend, "refId": chr(65 + i)}
                    for i, (e, legend) in enumerate(exprs)],
    }
    if kind == "heatmap":  # the buckets as Prometheus counts them, not recalculated by Grafana
        for t in p["targets"]:
            t["format"] = "heatmap"
        p["options"] = {"calculate": False, "yAxis": {"unit": unit}, "cellGap": 1,
                        "color": {"mode": "scheme", "scheme": "Oranges"}}
    return p


def quantiles(metric, by, legend):
    """p50, p90 and p99 of a histogram, per `by` label, as histogram_quantile estimates them."""
    return [(f'histogram_quantile({q}, sum by (le, {by}) (rate({metric}_bucket{{{WI}}}[$__rate_interval])))',
             f"p{int(q * 100)} {legend}") for q in (0.5, 0.9, 0.99)]


W = '{instance=~"$instance"}'
WI = 'instance=~"$instance"'
panels = [
    panel(1, "Queries per second, per worker",
          [(f'sum by (worker) (rate(dnsarena_queries_udp_total{{{WI}}}[$__rate_interval]) + '
            f'rate(dnsarena_queries_tcp_total{{{WI}}}[$__rate_interval]))', "worker {{worker}}")],
          "reqps", 0, 0, description="UDP + TCP queries received"),
    panel(2, "Cache hit rate, per worker",
          [(f'sum by (worker) (rate(dnsarena_hits_total{{{WI}}}[$__rate_interval])) / '
            f'sum by (worker) (rate(dnsarena_lookups_total{{{WI}}}[$__rate_interval]))', "worker {{worker}}")],
          "percentunit", 12, 0, description="hits / lookups"),
    panel(3, "Live entries", [(f"dnsarena_cache_entries{W}", "entries"),
                              (f"dnsarena_cache_max_entries{W}", "capacity")], "short", 0, 8),
    panel(4, "Bytes per entry",
          [(f"dnsarena_cache_arena_bytes_per_entry{W}", "arena per live entry"),
           (f"dnsarena_cache_index_bytes{W} / dnsarena_cache_max_entries{W}", "index per entry at capacity"),
           (f"dnsarena_cache_bytes_per_entry{W}", "everything / live entries")],
          "bytes", 12, 8, description="The index is preallocated: at low fill the last line is mostly index"),
    panel(5, "Evictions and expirations per second",
          [(f'sum(rate(dnsarena_evictions_total{{{WI}}}[$__rate_interval]))', "evictions"),
           (f'sum(rate(dnsarena_conflict_evictions_total{{{WI}}}[$__rate_interval]))', "index conflicts"),
           (f'sum(rate(dnsarena_expirations_total{{{WI}}}[$__rate_interval]))', "expirations"),
           (f'sum(rate(dnsarena_second_chances_total{{{WI}}}[$__rate_interval]))', "second chances")],
          "ops", 0, 16),
    panel(6, "Upstream latency (mean), per worker",
          [(f'sum by (worker) (rate(dnsarena_upstream_latency_us_total{{{WI}}}[$__rate_interval])) / 1000 / '
            f'(sum by (worker) (rate(dnsarena_upstream_queries_total{{{WI}}}[$__rate_interval])) - '
            f'sum by (worker) (rate(dnsarena_upstream_timeouts_total{{{WI}}}[$__rate_interval])))',
            "worker {{worker}}")],
          "ms", 12, 16, description="upstream round-trip time of answered upstream queries"),
    panel(7, "Upstream queries and timeouts per second",
          [(f'sum by (worker) (rate(dnsarena_upstream_queries_total{{{WI}}}[$__rate_interval]))', "queries w{{worker}}"),
           (f'sum by (worker) (rate(dnsarena_upstream_timeouts_total{{{WI}}}[$__rate_interval]))', "timeouts w{{worker}}")],
          "ops", 0, 24),
    panel(8, "Errors, rate limiting and cookies per second",
          [(f'sum(rate(dnsarena_servfail_total{{{WI}}}[$__rate_interval]))', "SERVFAIL"),
           (f'sum(rate(dnsarena_formerr_total{{{WI}}}[$__rate_interval]))', "FORMERR"),
           (f'sum(rate(dnsarena_refused_total{{{WI}}}[$__rate_interval]))', "refused (ACL)"),
           (f'sum(rate(dnsarena_rate_limited_total{{{WI}}}[$__rate_interval]))', "rate limited"),
           (f'sum(rate(dnsarena_cookie_badcookie_total{{{WI}}}[$__rate_interval]))', "BADCOOKIE"),
           (f'sum(rate(dnsarena_cookie_valid_total{{{WI}}}[$__rate_interval]))', "valid cookies (not rate limited)"),
           (f'sum(rate(dnsarena_writer_lock_unavailable_total{{{WI}}}[$__rate_interval]))', "writes skipped (lock)")],
          "ops", 12, 24),
    panel(9, "Workers running and restarts",
          [(f"dnsarena_workers_running{W}", "running"),
           (f'sum(increase(dnsarena_restarts_total{{{WI}}}[$__range]))', "restarts in range"),
           (f'sum(increase(dnsarena_workers_killed_silent_total{{{WI}}}[$__range]))', "killed silent in range")],
          "short", 0, 32, w=24, h=6, kind="stat"),
    panel(10, "Upstream smoothed RTT and RTO, per upstream",
          [(f"dnsarena_upstream_server_srtt_ms{W}", "srtt {{upstream}}"),
           (f"dnsarena_upstream_server_rttvar_ms{W}", "rttvar {{upstream}}"),
           (f"dnsarena_upstream_server_rto_ms{W}", "rto {{upstream}}")],
          "ms", 0, 38, description="shared by every worker (workers/upstream_health.hpp); "
                                   "srtt and rttvar appear once the upstream replied"),
    panel(11, "Upstreams up (1) or down (0)",
          [(f"dnsarena_upstream_server_up{W}", "{{upstream}}"),
           (f"dnsarena_upstream_server_consecutive_failures{W}", "silent attempts in a row {{upstream}}")],
          "short", 12, 38, description="down: skipped by misses, probed once per interval until it answers"),
    panel(12, "Upstream queries, timeouts, refusals and probes per second, per upstream",
          [(f'rate(dnsarena_upstream_server_queries_total{{{WI}}}[$__rate_interval])', "queries {{upstream}}"),
           (f'rate(dnsarena_upstream_server_timeouts_total{{{WI}}}[$__rate_interval])', "timeouts {{upstream}}"),
           (f'rate(dnsarena_upstream_server_refusals_total{{{WI}}}[$__rate_interval])', "refusals {{upstream}}"),
           (f'rate(dnsarena_upstream_server_probes_total{{{WI}}}[$__rate_interval])', "probes {{upstream}}")],
          "ops", 0, 46),
    panel(13, "Misses that skipped a down upstream, trials of unproven ones, and times marked down",
          [(f'sum(rate(dnsarena_upstream_down_skips_total{{{WI}}}[$__rate_interval]))', "skips per second"),
           (f'sum(rate(dnsarena_upstream_trials_total{{{WI}}}[$__rate_interval]))', "trials per second"),
           (f'increase(dnsarena_upstream_server_downs_total{{{WI}}}[$__range])', "downs in range {{upstream}}")],
          "short", 12, 46),
    panel(14, "When the upstream fails: stale answers, failure cache, deadline answers per second",
          [(f'sum(rate(dnsarena_stale_answers_total{{{WI}}}[$__rate_interval]))', "stale answers"),
           (f'sum(rate(dnsarena_failure_cached_total{{{WI}}}[$__rate_interval]))', "answered from the failure cache"),
           (f'sum(rate(dnsarena_deadline_answers_total{{{WI}}}[$__rate_interval]))', "answered at the response deadline")],
          "ops", 0, 54),
    panel(15, "Prefetches and misses that joined another worker's upstream query, per second",
          [(f'sum(rate(dnsarena_prefetches_total{{{WI}}}[$__rate_interval]))', "prefetches"),
           (f'sum(rate(dnsarena_upstream_joined_total{{{WI}}}[$__rate_interval]))', "joined")],
          "ops", 12, 54),
    panel(16, "Client latency: p50, p90, p99 of hits and of misses",
          quantiles("dnsarena_answer_latency_seconds", "kind", "{{kind}}"),
          "s", 0, 62, description="hit: the UDP batch (or TCP message) answered from the cache; miss: arrival to "
                                  "answer for a client that waited on an upstream (workers/answer_metrics.hpp)"),
    panel(17, "Upstream RTT: p50, p90, p99 per upstream",
          quantiles("dnsarena_upstream_rtt_seconds", "upstream", "{{upstream}}"),
          "s", 12, 62, description="one sample per UDP reply (queries, trials, probes)"),
    panel(18, "Miss latency (heatmap)",
          [(f'sum by (le) (increase(dnsarena_answer_latency_seconds_bucket{{kind="miss",{WI}}}[$__rate_interval]))',
            "{{le}}")],
          "s", 0, 70, kind="heatmap"),
    panel(19, "Hit latency (heatmap)",
          [(f'sum by (le) (increase(dnsarena_answer_latency_seconds_bucket{{kind="hit",{WI}}}[$__rate_interval]))',
            "{{le}}")],
          "s", 12, 70, kind="heatmap"),
    panel(20, "Answers per second by RCODE",
          [(f'sum by (rcode) (rate(dnsarena_answer_rcodes_total{{{WI}}}[$__rate_interval]))', "{{rcode}}")],
          "reqps", 0, 78),
    panel(21, "Answers per second by question type",
          [(f'sum by (qtype) (rate(dnsarena_answer_qtypes_total{{{WI}}}[$__rate_interval]))', "{{qtype}}")],
          "reqps", 12, 78),
    panel(22, "dnstap frames sent and dropped per second",
          [(f'sum(rate(dnsarena_dnstap_sent_total{{{WI}}}[$__rate_interval]))', "sent"),
           (f'sum(rate(dnsarena_dnstap_dropped_total{{{WI}}}[$__rate_interval]))', "dropped (queue full)")],
          "ops", 0, 86, description="dropped: the collector or the writer thread is slower than the traffic; "
                                    "answers are not affected (docs/operator-guide.md: dnstap)"),
    panel(23, "Response policy: matches per second by action",
          [(f'sum(rate(dnsarena_policy_blocked_total{{{WI}}}[$__rate_interval]))', "blocked (NXDOMAIN, NODATA, REFUSED)"),
           (f'sum(rate(dnsarena_policy_local_data_total{{{WI}}}[$__rate_interval]))', "local data"),
           (f'sum(rate(dnsarena_policy_passthru_total{{{WI}}}[$__rate_interval]))', "passthru"),
           (f'sum(rate(dnsarena_policy_dropped_total{{{WI}}}[$__rate_interval]))', "dropped (no answer)")],
          "reqps", 12, 86, description="queries a local zone, local data or RPZ rule matched, by what the rule did "
                                       "(docs/operator-guide.md: Response policy)"),
]

dashboard = {
    "title": "dnsarena",
    "uid": "dnsarena",
    "description": "dnsarena serve: queries, cache, upstream, per worker (docs/operator-guide.md: metrics)",
    "tags": ["dns", "dnsarena"],
    "timezone": "browser",
    "schemaVersion": 38,
    "version": 1,
    "refresh": "30s",
    "time": {"from": "now-1h", "to": "now"},
    "templating": {"list": [
        {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus"},
        {"name": "instance", "type": "query", "datasource": DS, "label": "instance", "includeAll": True,
         "multi": True, "refresh": 2, "query": {"query": "label_values(dnsarena_cache_entries, instance)",
                                                  "refId": "instances"},
         "definition": "label_values(dnsarena_cache_entries, instance)"},
    ]},
    "panels": panels,
}

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dnsarena.json")
with open(out, "w") as f:
    json.dump(dashboard, f, indent=2)
    f.write("\n")
print(out)
