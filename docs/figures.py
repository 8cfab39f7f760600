#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Print README.md's table of headline figures from `dnsarena bench --json` runs.

    python3 docs/figures.py                      # one run of build/dnsarena, 1,000,000 entries
    python3 docs/figures.py --runs 3             # the median of three runs (about 3 minutes)
    python3 docs/figures.py --bin PATH --entries N

Each run is `DNSARENA bench --entries N --json` (a private segment; nothing else is
touched). The table goes to standard output as Markdown, ready to replace the one in
README.md; the bench's progress and the machine's load average go to standard error.
A figure the binary does not report prints as "-".
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run_bench(binary, entries):
    cmd = [binary, "bench", "--entries", str(entries), "--json"]
    print("running: " + " ".join(cmd), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def median_of(runs, *path):
    """The median over runs of the value at path (keys into nested objects), or None."""
    values = []
    for r in runs:
        v = r
        for key in path:
            v = v.get(key) if isinstance(v, dict) else None
        if isinstance(v, (int, float)):
            values.append(float(v))
    return statistics.median(values) if values else None


def fmt(v, pattern):
    return "-" if v is None else pattern.format(v)


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def target(runs, metric):
    """'met' / 'missed' / 'met in k of n' from the bench's own verdicts."""
    verdicts = [r.get("targets", {}).get(metric, {}).get("met") for r in runs]
    verdicts = [v for v in verdicts if isinstance(v, bool)]
    if not verdicts:
        return "-"
    rule = runs[0]["targets"][metric]["target"]
    met = sum(verdicts)
    if met == len(verdicts):
        return rule + ": met"
    if met == 0:
        return rule + ": missed"
    return "{}: met in {} of {}".format(rule, met, len(verdicts))


def same_run(runs, num, den, pattern):
    """' (naive heap cache: X)': num / den computed within each run, then the median, so
    the machine's speed in that run cancels out. Paths are a key or a tuple of keys."""
    num = num if isinstance(num, tuple) else (num,)
    den = den if isinstance(den, tuple) else (den,)
    ratios = []
    for r in runs:
        a, b = r, r
        for k in num:
            a = a.get(k) if isinstance(a, dict) else None
        for k in den:
            b = b.get(k) if isinstance(b, dict) else None
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
            ratios.append(a / b)
    if not ratios:
        return ""
    return " (naive heap cache, same run: " + pattern.format(statistics.median(ratios)) + ")"


def machine():
    """The machine a run was made on: CPU model, cores, memory (for the table's caption)."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            mem_kib = int(f.readline().split()[1])
    except OSError:
        mem_kib = 0
    return "{}, {} cores, {:.0f} GiB".format(model, os.cpu_count(), mem_kib / 2**20)


def table(runs, entries):
    m = lambda *p: median_of(runs, *p)
    bpe, heap = m("bytes_per_entry"), m("baseline", "bytes_per_entry")
    rows = [
        ("bytes/entry (index + arena + header, at capacity)",
         fmt(bpe, "{:.1f}") + ("" if heap is None else " (naive heap cache {:.1f}: {:.1f}x)".format(heap, heap / bpe)),
         target(runs, "bytes_per_entry")),
        ("resident bytes/entry (RssShmem + RssAnon)", fmt(m("rss_per_entry"), "{:.1f}"), "-"),
        ("inserts/s (fill, 64 per lock)",
         fmt(m("insert_per_s"), "{:,.0f}") + same_run(runs, "insert_per_s", ("baseline", "insert_per_s"), "{:.1f}x"),
         target(runs, "insert_per_s")),
        ("evicting inserts/s (full cache)", fmt(m("evict_insert_per_s"), "{:,.0f}"), target(runs, "evict_insert_per_s")),
        ("lookup p50 / pointer-chase DRAM latency",
         "{} / {} ns = {}x".format(fmt(m("lookup_ns_p50"), "{:.0f}"), fmt(m("dram_ns"), "{:.0f}"),
                                   fmt(m("lookup_over_dram"), "{:.2f}"))
         + same_run(runs, ("baseline", "lookup_ns_p50"), "lookup_ns_p50", "{:.1f}x faster"),
         target(runs, "lookup_ns_p50 / dram_ns")),
        ("batched lookup / memory-level parallelism (mlp_ns)",
         "{} / {} ns = {}x".format(fmt(m("lookup_batched_ns"), "{:.0f}"), fmt(m("mlp_ns"), "{:.1f}"),
                                   fmt(m("lookup_batched_over_mlp"), "{:.1f}")),
         target(runs, "lookup_batched_ns / mlp_ns")),
        ("Zipf(0.9) lookup p50, all entries", fmt(m("lookup_zipf_ns_p50"), "{:.0f} ns"), target(runs, "lookup_zipf_ns_p50")),
        ("Zipf(0.9) lookup p50, 1,024 hottest", fmt(m("lookup_zipf_hot_ns_p50"), "{:.0f} ns"),
         target(runs, "lookup_zipf_hot_ns_p50")),
        ("lookups/s, 2 processes / 1 process", fmt(m("lookup_2proc_speedup"), "{:.2f}x"), target(runs, "lookup_2proc_speedup")),
        ("share of the segment on 2 MiB pages", fmt(m("segment_huge_page_share"), "{:.0%}"), "-"),
    ]
    label = "median of {} runs".format(len(runs)) if len(runs) > 1 else "one run"
    lines = [
        "| figure ({:,} entries, {}) | value | target |".format(entries, label),
        "|---|---|---|",
    ]
    lines += ["| {} | {} | {} |".format(*r) for r in rows]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default="build/dnsarena", help="the dnsarena binary (default build/dnsarena)")
    p.add_argument("--entries", type=int, default=1_000_000, help="bench --entries (default 1,000,000)")
    p.add_argument("--runs", type=int, default=1, help="runs; the table shows medians (default 1)")
    a = p.parse_args()
    if a.runs < 1:
        p.error("--runs must be at least 1")
    if not os.access(a.bin, os.X_OK):
        p.error("{} is not an executable; build dnsarena first (README)".format(a.bin))
    runs = []
    loads = [os.getloadavg()[0]]
    for _ in range(a.runs):
        runs.append(run_bench(a.bin, a.entries))
        loads.append(os.getloadavg()[0])
        print("load average: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), file=sys.stderr)
    print(table(runs, a.entries))
    print()
    print("Machine: {}; 1-minute load average {:.1f} before and {:.1f} at most during the runs.".format(
        machine(), loads[0], max(loads[1:])))


if __name__ == "__main__":
    main()
