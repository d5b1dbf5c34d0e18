#!/usr/bin/env python3
"""Summary of `scripts/bench.sh ab OUT`: for each mode (closed loop, paced)
and side (A: this tree, B: BENCH_B), the median over trials of hybrid's
throughput, write and read P50/P99 and client CPU per operation, and the
B/A ratios.  Reads OUT/<mode>-<side>-<trial>/results.json; prints markdown."""
import glob
import json
import os
import statistics
import sys

out = sys.argv[1]
FIELDS = [
    ("throughput (ops/s)", lambda p: p["median"]["throughput"]),
    ("write P50 (ms)", lambda p: p["median"]["write"]["p50"]),
    ("write P99 (ms)", lambda p: p["median"]["write"]["p99"]),
    ("read P50 (ms)", lambda p: p["median"]["read"]["p50"]),
    ("read P99 (ms)", lambda p: p["median"]["read"]["p99"]),
    ("client CPU per op (us)", lambda p: p["median"]["cpu_us_per_op"]),
    ("syncs per read", lambda p: syncs_per_read(p)),
]

def syncs_per_read(p):
    """Syncs sent over reads served, summed over the trials' windows."""
    syncs = sum(t.get("syncs") or 0 for t in p["trials"])
    reads = sum(t.get("member_reads") or 0 for t in p["trials"])
    return syncs / reads if reads else float("nan")

def runs(mode, side):
    vals = []
    for path in sorted(glob.glob(os.path.join(out, f"{mode}-{side}-*", "results.json"))):
        with open(path) as f:
            r = json.load(f)
        pol = [p for p in r["policies"] if p["name"] == "hybrid"]
        if pol and pol[0]["trials_run"] > 0:
            vals.append(pol[0])
    return vals

status = 0
modes = sys.argv[2].split() if len(sys.argv) > 2 else ["loop", "paced"]
for mode in modes:
    a, b = runs(mode, "A"), runs(mode, "B")
    if not a or not b:
        print(f"{mode}: no results (A {len(a)}, B {len(b)})")
        status = 1
        continue
    print(f"\n### {mode} ({len(a)} trials of A, {len(b)} of B, interleaved)\n")
    print("| | A (this tree) | B | B / A |")
    print("| --- | --: | --: | --: |")
    for name, get in FIELDS:
        # A figure a run does not have (write latencies at 100 % reads):
        # a dash, not a crash.
        va = [v for v in (get(p) for p in a) if v is not None]
        vb = [v for v in (get(p) for p in b) if v is not None]
        if not va or not vb:
            print(f"| {name} | - | - | - |")
            continue
        ma, mb = statistics.median(va), statistics.median(vb)
        ratio = mb / ma if ma else float("nan")
        print(f"| {name} | {ma:.3f} | {mb:.3f} | {ratio:.3f} |")
sys.exit(status)
