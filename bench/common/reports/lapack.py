"""Report of the LAPACK benchmark (bench/lapack/bench.ini): seconds per factorization and stack, the ratios to the
CPU alone, and the targets.

Rows are driver x n; columns the stacks (cpu = reference LAPACK + OpenBLAS, auto / gpu = cpu with libblasoffload.so
preloaded, openblas = OpenBLAS's own LAPACK, nvblas = cpu with NVBLAS preloaded). Targets: auto / cpu <= 1.05 at every
point, and auto faster than cpu wherever forced gpu is (gpu / cpu < 0.95, so that noise does not count as faster).
Every factorization must pass its check. The raw folder's summary-<stack>-n<n>.log show where the BLAS calls went.
"""
import glob
import os
import re

import report as common

STACKS = ["cpu", "auto", "gpu", "openblas", "nvblas"]
# Double precision drivers are named with their letter (dgetrf); single precision ones without (the older results').
DRIVERS = ["getrf", "getrf_dominant", "gesv", "geqrf", "potrf"]
DRIVERS += ["d" + d for d in DRIVERS]
AUTO_TARGET = 1.05
GPU_FASTER = 0.95
# What each stack's context must show for its numbers to mean what the column says.
EXPECT = {
    "cpu": ("sgetrf_from", "/lapack/liblapack", "reference LAPACK"),
    "auto": ("sgemm_from", "libblasoffload", "blasoffload's sgemm_"),
    "gpu": ("sgemm_from", "libblasoffload", "blasoffload's sgemm_"),
    "openblas": ("sgetrf_from", "libopenblas", "OpenBLAS's sgetrf_"),
    "nvblas": ("sgemm_from", "nvblas", "NVBLAS's sgemm_"),
}


def fmt_s(v):
    if v is None:
        return "-"
    return "%.3g" % v if v < 100 else "%.0f" % v


def render(rows, context_list, args):
    points, notes, contexts = {}, {}, {}
    for ctx in context_list:
        contexts.setdefault(ctx.get("stack"), ctx)
    for obj in rows:
        driver = ("d" if obj.get("precision") == "d" else "") + str(obj.get("driver"))
        if "skipped" in obj:
            notes[(driver, obj.get("n"), obj.get("stack"))] = obj["skipped"]
        elif "seconds" in obj:
            points[(driver, obj["n"], obj["stack"])] = obj
    if not points:
        return ["report.py: no measurements in %s" % args.path], 2

    stacks = [s for s in STACKS if any(k[2] == s for k in points) or any(k[2] == s for k in notes)]
    stacks += sorted({k[2] for k in points} - set(STACKS))
    ns = sorted({k[1] for k in points} | {k[1] for k in notes})
    drivers = [d for d in DRIVERS if any(k[0] == d for k in points)]
    drivers += sorted({k[0] for k in points} - set(DRIVERS))

    def why_missing(d, n, s):
        # "all": a whole run (the runner's note) or an order (the program's, "dall" in double precision)
        return notes.get((d, n, s)) or notes.get(("dall" if d.startswith("d") else "all", n, s)) or \
            notes.get(("all", n, s))

    out = ["## LAPACK drivers under five stacks (reference LAPACK unless noted)", ""]
    ctx = next(iter(contexts.values()), {})
    out.append("- OpenBLAS core: %s; %s; threads %s" % (ctx.get("openblas_corename", "?"),
                                                        ctx.get("openblas_config", "?"),
                                                        ctx.get("openblas_threads", "?")))
    for s in stacks:
        c = contexts.get(s)
        if not c:
            out.append("- %s: no run reported its context" % s)
            continue
        key, needle, what = EXPECT.get(s, ("sgemm_from", "", ""))
        ok = needle in c.get(key, "")
        out.append("- %s: sgetrf_ from %s, sgemm_ from %s%s" % (
            s, c.get("sgetrf_from", "?"), c.get("sgemm_from", "?"),
            "" if ok or not needle else " -- WARNING: expected %s" % what))
    out += ["",
            "Seconds per factorization (wall clock; median of the repetitions: 9 up to n = 2048, 5 at 4096, 2 at "
            "8192, 1 above, unless --reps said otherwise); auto/cpu and gpu/cpu "
            "are ratios of those times (< 1: faster than the CPU alone). A check that failed is marked FAIL.", "",
            "| driver | n | " + " | ".join(stacks) + " | auto/cpu | gpu/cpu | auto faster where gpu is |",
            "|---|---|" + "---|" * len(stacks) + "---|---|---|"]
    auto_miss, faster_miss, check_fail, other_fail, missing = [], [], [], [], []
    for d in drivers:
        for n in ns:
            cells = []
            for s in stacks:
                p = points.get((d, n, s))
                if p is None:
                    w = why_missing(d, n, s)
                    cells.append("(%s)" % w if w else "-")
                    if s in ("cpu", "auto"):
                        missing.append("%s n=%d %s" % (d, n, s))
                    continue
                cell = fmt_s(p["seconds"])
                if p.get("check") != "ok":
                    cell += " FAIL"
                    failed = "%s n=%d %s (info %s, ratio %s)" % (d, n, s, p.get("info"), p.get("check_ratio"))
                    (check_fail if s in ("cpu", "auto", "gpu") else other_fail).append(failed)
                cells.append(cell)
            t = {s: points[(d, n, s)]["seconds"] for s in stacks if (d, n, s) in points}
            ra = t["auto"] / t["cpu"] if "auto" in t and "cpu" in t else None
            rg = t["gpu"] / t["cpu"] if "gpu" in t and "cpu" in t else None
            if ra is not None and ra > AUTO_TARGET:
                auto_miss.append((d, n, ra))
            faster = "n.a."
            if rg is not None and ra is not None and rg < GPU_FASTER:
                faster = "yes" if ra < 1.0 else "NO"
                if ra >= 1.0:
                    faster_miss.append((d, n, ra, rg))
            out.append("| %s | %d | %s | %s | %s | %s |" % (
                d, n, " | ".join(cells), "-" if ra is None else "%.2f" % ra, "-" if rg is None else "%.2f" % rg,
                faster))
    out.append("")

    if args.raw:
        rows = []
        for path in sorted(glob.glob(os.path.join(args.raw, "summary-*-n*.log"))):
            m = re.match(r"summary-(\w+)-n(\d+)(-d)?\.log$", os.path.basename(path))
            if not m:
                continue
            table, gpu_line = common.parse_summary(path)
            for routine, v in sorted(table.items()):
                if v.get("calls", 0):
                    rows.append((int(m.group(2)), m.group(1) + (" (d)" if m.group(3) else ""), routine, v,
                                 gpu_line[4:].strip()))
        if rows:
            out += ["### Where blasoffload sent LAPACK's BLAS calls (BLASOFFLOAD_LOG=summary, all drivers of one run)",
                    "", "| n | mode | routine | calls | cpu | gpu | fallback | GPU |",
                    "|---|---|---|---|---|---|---|---|"]
            for n, mode, routine, v, g in sorted(rows):
                out.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                    n, mode, routine, v.get("calls", "-"), v.get("cpu", "-"), v.get("gpu", "-"),
                    v.get("fallback", "-"), g))
            out.append("")

    out += ["### Targets", ""]
    auto_ok = not auto_miss and not missing
    out.append("- auto / cpu <= %.2f at every n: %s%s" % (
        AUTO_TARGET, "PASS" if auto_ok else "MISS",
        "".join([" (over: %s)" % ", ".join("%s n=%d %.2f" % m for m in auto_miss) if auto_miss else "",
                 " (not measured: %s)" % ", ".join(missing) if missing else ""])))
    out.append("- auto faster than cpu wherever forced gpu is (gpu/cpu < %.2f): %s%s" % (
        GPU_FASTER, "PASS" if not faster_miss else "MISS",
        " (%s)" % ", ".join("%s n=%d auto %.2f gpu %.2f" % m for m in faster_miss) if faster_miss else ""))
    out.append("- every check of the cpu, auto and gpu stacks passes: %s%s" % (
        "PASS" if not check_fail else "MISS", " (%s)" % "; ".join(check_fail) if check_fail else ""))
    if other_fail:
        out.append("- checks that failed under the other stacks (not a target here; NVBLAS without a usable GPU "
                   "returns wrong results): %s" % "; ".join(other_fail))
    verdict = "PASS" if auto_ok and not faster_miss and not check_fail else "MISS"
    out += ["", "**Verdict: %s**" % verdict, ""]
    return out, 0 if verdict == "PASS" else 1
