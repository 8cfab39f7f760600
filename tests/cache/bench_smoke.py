#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""`dnsarena bench` runs end to end on a small cache (the CI builds and runs the benchmark,
not only its parts): --json is one object on stdout with every figure and target, the
lookups all hit, the sizes are sane. Figures are not judged here (speed targets live in the
benchmark's own output); only what must hold on any machine.
Usage: bench_smoke.py DNSARENA"""
import json
import subprocess
import sys

out = subprocess.run([sys.argv[1], "bench", "--entries", "20000", "--lookups", "20000", "--json"],
                     check=True, capture_output=True, text=True, timeout=240).stdout
d = json.loads(out)  # the whole of stdout
for k in ["bytes_per_entry", "insert_per_s", "evict_insert_per_s", "lookup_ns_p50", "lookup_batched_ns", "segment_huge_page_share",
          "lookup_batched_hot_ns", "lookup_batched_hot_over_mlp", "lookup_zipf_hot_ns_p50", "mlp_ns", "dram_ns",
          "lookup_batched_memory_ns", "lookup_batched_memory_over_mlp", "lookup_batched_lines",
          "lookup_2proc_speedup", "targets"]:
    assert k in d, f"missing {k}"
assert d["hit_ratio"] == 1.0, d["hit_ratio"]
assert 0 <= d["segment_huge_page_share"] <= 1, d["segment_huge_page_share"]
assert 20 < d["bytes_per_entry"] < 400, d["bytes_per_entry"]
assert d["entries"] > 19000, d["entries"]
# Every hit reads its two bucket lines (one when they share a line) and the entry's 1-6
# lines (the seed mix's entries are 40-330 bytes): a count outside means the footprint
# missed entries or counted wrong lines.
assert 3 < d["lookup_batched_lines"] < 8, d["lookup_batched_lines"]
for k in ["lookup_batched_ns", "lookup_batched_hot_ns", "lookup_batched_memory_ns", "mlp_ns", "insert_per_s",
          "evict_insert_per_s"]:
    assert d[k] > 0, (k, d[k])
for name, t in d["targets"].items():
    assert {"value", "target", "met"} <= t.keys(), name
print(f"bench: {d['entries']} entries, {d['bytes_per_entry']:.1f} B/entry, batched {d['lookup_batched_ns']:.0f} ns "
      f"(in-cache {d['lookup_batched_hot_ns']:.0f} ns), {len(d['targets'])} targets reported")
