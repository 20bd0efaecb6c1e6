#!/usr/bin/env python3
"""Reads Google Benchmark JSON from bench_forwarding_overhead (run with repetitions) and prints, per case,
the median time through blasoffload minus the median time calling the CPU BLAS directly."""
import json
import statistics
import sys


def main(path):
    data = json.load(open(path))
    runs = {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        runs.setdefault(b["run_name"], []).append(b["real_time"])  # ns per call
    rows, added = [], []
    for name in sorted(runs):
        if "/direct" not in name:
            continue
        ours = name.replace("/direct", "/blasoffload")
        if ours not in runs:
            continue
        d, o = statistics.median(runs[name]), statistics.median(runs[ours])
        spread = max(runs[ours]) - min(runs[ours])
        added.append(o - d)
        rows.append(f"{name.replace('/direct', ''):<16} direct {d:8.1f} ns  blasoffload {o:8.1f} ns  "
                    f"added {o - d:6.1f} ns  (spread of ours {spread:.1f} ns)")
    print(f"context: {data['context'].get('host_name')} {data['context'].get('date')} "
          f"{data['context'].get('num_cpus')} cpus")
    print("\n".join(rows))
    print(f"median added cost over {len(added)} cases: {statistics.median(added):.1f} ns; "
          f"max {max(added):.1f} ns")
    return 0 if statistics.median(added) < 50 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
