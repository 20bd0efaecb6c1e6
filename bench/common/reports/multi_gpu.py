"""Report of the several-GPU benchmarks (`pipeline:multi_gpu`: gemm; `pipeline:multi_gpu_level3`: trsm, syrk;
`lapack:multi_gpu`: getrf and potrf): per routine, order and stack (1, 2 or 4 GPUs named by BLASOFFLOAD_DEVICES), the
library's call on host operands as a program makes it, each round's time, the A/A spread between rounds, the speedup
over one GPU (median of the rounds over the one-GPU stack's: gpus1, or gpus1-X for a stack gpusN-X) and, where a run
called the CPU BLAS too, over it.
Targets (issue 42): dgemm n = 32768 on 2 GPUs >= 1.8x one GPU, on 4 GPUs >= 3.2x; dgetrf and dpotrf n = 65536 on 2
GPUs >= 1.6x; dgetrf n = 131072 on 4 GPUs >= 20x OpenBLAS's own (its time at 32768, the `openblas` stack, scaled by
n^3: a call of 131072 takes over an hour on the CPU).
"""
import re
import statistics

import report as common

TARGETS = {("dgemm", "gpus2", 32768): 1.8, ("dgemm", "gpus4", 32768): 3.2, ("dgetrf", "gpus2", 65536): 1.6,
           ("dpotrf", "gpus2", 65536): 1.6}
# Against the CPU: (routine, stack, n) -> (target, the CPU stack, the order it ran at; its time is scaled by n^3).
CPU_TARGETS = {("dgetrf", "gpus4", 131072): (20.0, "openblas", 32768)}


def is_gpu_stack(stack):
    return bool(re.match(r"^(gpus|lanes)\d+", stack or ""))


def normalise(r):
    """A lapack_drivers line as a host_gemm one: routine, lib_median_ms, check."""
    if "driver" in r and "seconds" in r:
        r = dict(r, routine=r.get("precision", "d") + r["driver"], lib_median_ms=1e3 * r["seconds"],
                 lib_gflops=r.get("gflops"), check_value=r.get("check_ratio"))
        r["check"] = r.get("check") if r.get("info", 0) == 0 else "info %s" % r.get("info")
    return r


def base(stack):
    """A stack's one-GPU baseline: gpus1 with the same suffix (gpus2-columns against gpus1-columns: an A/B's
    variants; lanes2, two shares of one GPU, against gpus1). render falls back to gpus1 where that stack was not run (a
    variant that changes nothing on one GPU, such as gpus2-own-panels)."""
    return re.sub(r"^(gpus|lanes)\d+", "gpus1", stack or "")


def timed_medians(g):
    """The library's medians of a group's rounds: its lines without a CPU BLAS call (those time one call beside it),
    or all of them where every line has one."""
    meds = [r.get("lib_median_ms") for r in g if r.get("lib_median_ms")]
    return [r.get("lib_median_ms") for r in g if r.get("lib_median_ms") and not r.get("cpu_reps")] or meds


def render(rows, contexts, args):
    rows = [normalise(r) for r in rows]
    points = [r for r in rows if r.get("bench") == "host_gemm" or "driver" in r and "seconds" in r]
    skipped = [r for r in rows if "skipped" in r]
    if not points:
        return ["report.py: no multi_gpu points in %s" % args.path], 2
    # The GPUs a stack named (a program's context line carries its BLASOFFLOAD_* environment where it prints one).
    devices = {c.get("stack"): (c.get("env") or {}).get("BLASOFFLOAD_DEVICES", "-") for c in contexts}
    out = ["## Several GPUs from host memory (multi_gpu)", "",
           "Wall clock per call on malloc'd host memory, BLASOFFLOAD_MODE=auto without a policy file; the stack names "
           "the GPUs (BLASOFFLOAD_DEVICES). gemm: C = A B (NN, square, beta 0), operands rewritten before every call; "
           "check: two columns of C against a long-double product, max difference / (k eps), limit 30. getrf, potrf: "
           "bench/lapack's sampled residual checks, limit 30. trsm (B := L^-1 B, lower, L's diagonal n) and syrk (C's lower "
           "triangle := A A^T, beta 0), square: the residual of two columns of B, or two columns of C, against long double, "
           "relative to each element's magnitudes, / (k eps), limit 30; CPU BLAS: the same call through the CPU BLAS in "
           "a process of its own (one call), compared with the library's there: syrk relative to sqrt(|A_i.|^2 |A_j.|^2).", ""]
    groups = {}
    for r in points:
        groups.setdefault((r.get("routine"), r.get("n"), r.get("stack")), []).append(r)
    one = {}
    for (routine, n, stack), g in groups.items():
        meds = timed_medians(g)
        if stack == base(stack) and is_gpu_stack(stack) and meds:
            one[(routine, n, stack)] = statistics.median(meds)
    body, ok, verdicts = [], True, []
    for (routine, n, stack), g in sorted(groups.items(), key=lambda kv: ("dzcs".find(kv[0][0][:1]), kv[0][1],
                                                                          kv[0][2])):
        meds = timed_medians(g)
        med = statistics.median(meds) if meds else None
        sp = common.ratio(one.get((routine, n, base(stack)), one.get((routine, n, "gpus1"))), med) if is_gpu_stack(
            stack) else None
        checks = ", ".join("%s %s" % (r.get("check"), common.fmt(r.get("check_value"), "%.2g")) for r in g)
        # The CPU BLAS's time where a run of the group called it (its own line: multi_gpu_level3's `cpu` part).
        cpus = [r.get("cpu_median_ms") for r in g if r.get("cpu_reps")]
        cpu = statistics.median(cpus) if cpus else None
        body.append([routine, n, stack, devices.get(stack, "?"), ", ".join("%.0f" % m for m in meds),
                     "%.1f %%" % (100.0 * (max(meds) / min(meds) - 1)) if len(meds) > 1 else "-", common.fmt(g[0].get("lib_gflops"), "%.0f"),
                     "**%s**" % common.fmt_x(sp), common.fmt(cpu, "%.0f"), common.fmt_x(common.ratio(cpu, med)),
                     checks])
        target = TARGETS.get((routine, stack, n))
        if target:
            met = sp is not None and sp >= target and all(r.get("check") == "ok" for r in g)
            ok = ok and met
            verdicts.append("- %s n=%d on %s (%s): %s one GPU, target >= %gx: %s" % (
                routine, n, stack, devices.get(stack, "?"), common.fmt_x(sp), target, "MET" if met else "MISSED"))
        cpu_target = CPU_TARGETS.get((routine, stack, n))
        if cpu_target:
            goal, cpu_stack, cpu_n = cpu_target
            cpu_meds = timed_medians(groups.get((routine, cpu_n, cpu_stack), []))
            cpu_med = statistics.median(cpu_meds) if cpu_meds else None
            est = cpu_med * (float(n) / cpu_n) ** 3 if cpu_med is not None else None
            x = common.ratio(est, med)
            met = x is not None and x >= goal and all(r.get("check") == "ok" for r in g)
            ok = ok and met
            verdicts.append("- %s n=%d on %s (%s): %s ms against %s's own at n=%d, %s ms, scaled by n^3 to %s ms: %s, "
                            "target >= %gx: %s" % (routine, n, stack, devices.get(stack, "?"), common.fmt(med, "%.0f"),
                                                   cpu_stack, cpu_n, common.fmt(cpu_med, "%.0f"),
                                                   common.fmt(est, "%.0f"), common.fmt_x(x), goal,
                                                   "MET" if met else ("NO DATA" if est is None else "MISSED")))
        if any(r.get("check") not in ("ok", "not checked") for r in g):
            ok = False
    out += common.table(["routine", "n", "stack", "devices", "rounds' medians ms", "A/A spread", "GFLOP/s (r1)",
                         "vs one GPU", "CPU BLAS ms", "vs CPU BLAS", "checks"], body)
    out += [""] + ["- not run: %s" % ", ".join("%s=%s" % kv for kv in sorted(r.items())) for r in skipped]
    # trsm and syrk have no target: a run of them alone is judged by its checks.
    targeted = any(routine in {t[0] for t in TARGETS} for (routine, _, _) in groups)
    out += ["### Targets", ""] + (verdicts or ["- no target point measured: NO DATA" if targeted else
                                               "- no target for these routines: the checks decide"])
    ok = ok and (bool(verdicts) or not targeted)
    out += ["", "**Verdict: %s**" % ("PASS" if ok else "MISS"), ""]
    return out, 0 if ok else 1


def plot_points(rows):
    rows = [normalise(r) for r in rows]
    return [("%s %s %s r%s" % (r.get("routine"), r.get("n"), r.get("stack"), r.get("round")),
             {"lib ms": r.get("lib_median_ms") or 0}) for r in rows if r.get("lib_median_ms")]
