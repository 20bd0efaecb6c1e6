#!/usr/bin/env python3
"""ctest bench.report_misses: the mix report's per-miss classes (bench/common/report_misses.py) on made-up points, one
per class, and a run without cpu-aa (nothing is then within A/A).

Usage: check_report_misses.py BENCH_COMMON_DIR
"""
import sys

sys.path.insert(0, sys.argv[1])
import report_misses  # noqa: E402


def point(seconds, steal=0):
    return {"seconds": seconds, "steal_ms": steal}


def stacks(cpu, lib, aa=None, steal=None):
    out = {"cpu": {r + 1: point(s) for r, s in enumerate(cpu)},
           "bo-uncal": {r + 1: point(s, (steal or [0] * 3)[r]) for r, s in enumerate(lib)}}
    if aa:
        out["cpu-aa"] = {r + 1: point(s) for r, s in enumerate(aa)}
    return out


def classes(lines):
    """class name -> the routines listed under it."""
    got, cls = {}, None
    for line in lines:
        if line.startswith("- ") and line.endswith("stack-points"):
            cls = line[2:line.index(":")]
            got[cls] = []
        elif line.startswith("  - ") and cls:
            got[cls].append(line.split()[2])
    return got


def main():
    us, ms = 1e-6, 1e-3
    pts = {
        ("calls", "dgemm", 8, 0): stacks([0.05 * us] * 3, [0.1 * us] * 3, [0.05 * us] * 3),
        ("calls", "spotrs", 64, 64): stacks([20 * us] * 3, [21 * us, 6 * ms, 20 * us], [20 * us] * 3, [0, 60, 0]),
        ("calls", "dgetrs", 64, 64): stacks([20 * us] * 3, [21 * us, 6 * ms, 20 * us], [20 * us] * 3),  # no steal
        ("calls", "sgetrs", 8192, 1): stacks([20 * ms] * 3, [2 * ms] * 3, [20 * ms] * 3),
        ("calls", "dgemv", 1024, 0): stacks([60 * us] * 3, [72 * us] * 3, [60 * us, 75 * us, 60 * us]),
        ("calls", "dnrm2", 10000000, 0): stacks([11 * ms] * 3, [14 * ms] * 3, [11 * ms, 12 * ms, 11 * ms]),
    }
    def miss(targets, best="cpu"):
        return {"targets": set(targets), "best": best}

    missed = {("calls", "dgemm", 8, 0, "bo-uncal"): miss("ab"),
              ("calls", "spotrs", 64, 64, "bo-uncal"): miss("ac"),
              ("calls", "dgetrs", 64, 64, "bo-uncal"): miss("c"),
              ("calls", "sgetrs", 8192, 1, "bo-uncal"): miss("b", "bo-cal"),
              ("calls", "dgemv", 1024, 0, "bo-uncal"): miss("a"),
              ("calls", "dnrm2", 10000000, 0, "bo-uncal"): miss("ad")}
    where = {("calls", "sgetrs", 8192, 1, "bo-uncal"): {"gpu"}}
    got = classes(report_misses.section(pts, missed, where))
    want = {"under 1 us": ["dgemm"], "steal mode": ["spotrs"], "behind the other stack": ["sgetrs"],
            "within A/A": ["dgemv"], "beyond A/A": ["dgetrs", "dnrm2"]}
    failures = []
    if got != want:
        failures.append("classes %s, expected %s" % (got, want))
    # Without cpu-aa the same dgemv miss is beyond A/A, and the section says why.
    no_aa = {k: {s: v for s, v in st.items() if s != "cpu-aa"} for k, st in pts.items()}
    lines = report_misses.section(no_aa, {("calls", "dgemv", 1024, 0, "bo-uncal"): miss("a")}, {})
    if classes(lines).get("beyond A/A") != ["dgemv"] or not any("no cpu-aa" in line for line in lines):
        failures.append("without cpu-aa: %s" % lines)
    # Missing only (b) where the CPU alone was the best (the medians of seconds and of ratios disagree): not behind
    # the other stack.
    got = classes(report_misses.section(pts, {("calls", "sgetrs", 8192, 1, "bo-uncal"): miss("b")}, where))
    if got.get("behind the other stack"):
        failures.append("(b) with the CPU best taken for behind the other stack: %s" % got)
    if report_misses.section(pts, {}, {}) != []:
        failures.append("no misses should give no section")
    for f in failures:
        print("FAIL:", f)
    print("bench.report_misses: %s" % ("FAIL" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
