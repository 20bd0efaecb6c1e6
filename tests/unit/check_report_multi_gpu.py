#!/usr/bin/env python3
"""ctest bench.report_multi_gpu: the several-GPU report (bench/common/reports/multi_gpu.py) on made-up points: each
stack's speedup is over the one-GPU stack of the same variant (gpus2-columns over gpus1-columns, gpus2 over gpus1),
a variant whose one-GPU stack was not run (gpus2-own-panels) and two shares of one GPU (lanes2) are over gpus1, the
dgemm target's verdict follows the default stacks only, and dgetrf 131072 on 4 GPUs is judged against OpenBLAS's own
time at 32768 scaled by n^3 (no speedup over one GPU for the CPU's row).

Usage: check_report_multi_gpu.py BENCH_COMMON_DIR
"""
import sys

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/reports")
import multi_gpu  # noqa: E402


def row(stack, ms, rnd):
    return {"bench": "host_gemm", "routine": "dgemm", "n": 32768, "stack": stack, "round": rnd,
            "lib_median_ms": ms, "lib_gflops": 1.0, "check": "ok", "check_value": 0.5}


class Args:
    path = "made-up.jsonl"


def speedups(lines):
    """stack -> the speedup column of its row."""
    out = {}
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 7 and cells[0] == "dgemm":
            out[cells[2]] = cells[7].strip("*")
    return out


def main():
    rows = []
    for rnd in (1, 2):
        rows += [row("gpus1", 1440, rnd), row("gpus2", 800, rnd), row("gpus1-columns", 2000, rnd),
                 row("gpus2-columns", 1000, rnd), row("gpus2-own-panels", 960, rnd), row("lanes2", 1600, rnd)]
    lines, status = multi_gpu.render(rows, [], Args())
    got = speedups(lines)
    want = {"gpus1": "1.00x", "gpus2": "1.80x", "gpus1-columns": "1.00x", "gpus2-columns": "2.00x",
            "gpus2-own-panels": "1.50x", "lanes2": "0.90x"}
    bad = [s for s in want if got.get(s) != want[s]]
    if bad or status != 0:
        print("\n".join(lines))
        print("FAIL: speedups %s (want %s), exit %d (want 0: gpus2 meets 1.8x)" % (got, want, status))
        return 1
    # gpus2 below its target while a variant is above it: the verdict is the default stack's.
    rows = [dict(r, lib_median_ms=900) if r["stack"] == "gpus2" else r for r in rows]
    lines, status = multi_gpu.render(rows, [], Args())
    if status != 1 or not any("MISSED" in l for l in lines):
        print("\n".join(lines))
        print("FAIL: gpus2 at 1.60x should miss the 1.8x target (exit %d)" % status)
        return 1
    # dgetrf 131072 on 4 GPUs against OpenBLAS's 32768 x 64: 20 s x 64 = 1280 s; 60 s is 21.3x (met), 70 s 18.3x.
    def lu(stack, n, seconds):
        return {"driver": "getrf", "precision": "d", "n": n, "stack": stack, "seconds": seconds, "info": 0,
                "check": "ok", "check_ratio": 1e-6}

    for gpu_s, want_status, want_word in ((60.0, 0, "21.33x, target >= 20x: MET"),
                                          (70.0, 1, "18.29x, target >= 20x: MISSED")):
        lines, status = multi_gpu.render([lu("openblas", 32768, 20.0), lu("gpus4", 131072, gpu_s)], [], Args())
        cpu_row = [l for l in lines if l.startswith("| dgetrf | 32768 | openblas")]
        if status != want_status or not any(want_word in l for l in lines) or not cpu_row or "**-**" not in cpu_row[0]:
            print("\n".join(lines))
            print("FAIL: dgetrf 131072 in %g s: want exit %d and '%s', the openblas row without a GPU speedup" % (
                gpu_s, want_status, want_word))
            return 1
    lines, status = multi_gpu.render([lu("gpus4", 131072, 60.0)], [], Args())
    if status != 1 or not any("NO DATA" in l for l in lines):
        print("\n".join(lines))
        print("FAIL: without OpenBLAS's time the 131072 target has no data (exit %d)" % status)
        return 1
    print("ok: speedups %s; the target follows gpus2; dgetrf 131072 against OpenBLAS scaled" % got)
    return 0


if __name__ == "__main__":
    sys.exit(main())
