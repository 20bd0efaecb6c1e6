"""Report of the host gemm benchmarks (bench/pipeline/bench.ini, benchmarks dgemm_host and complex_host): per
precision, n, stack, operands and round, the library's gemm_ (as a user's program calls it) against the CPU BLAS's own
in the same process: medians, min .. max, the speedup CPU / library with the range the min and max times allow, and
the check; where a stack ran in several rounds (one process each, the A/A repeat), each side's spread between them.
Targets (the issues' points): n = 8192 from host memory in BLASOFFLOAD_MODE=auto, on fresh operands, against OpenBLAS
(SkylakeX kernels, all cores): dgemm >= 20x (calibrated and without a policy file), zgemm >= 30x and cgemm >= 15x
(default settings); with rounds, the median of the rounds' speedups.
"""
import statistics

import report as common

TARGETS = {"dgemm": 20.0, "zgemm": 30.0, "cgemm": 15.0}
TARGET_N = 8192


def fmt_ms(v):
    return "-" if v is None else ("%.0f" % v if v >= 100 else "%.3g" % v)


def render(rows, contexts, args):
    points = [r for r in rows if r.get("bench") == "host_gemm"]
    skipped = [r for r in rows if "skipped" in r]
    if not points:
        return ["report.py: no host gemm points in %s" % args.path], 2
    out = ["## Host gemm through the library against the CPU BLAS (bench/pipeline: %s)" % ", ".join(
        sorted({"complex_host" if r.get("precision") in ("c", "z") else "dgemm_host" for r in points})), ""]
    out += ["- " + c for c in common.openblas_context(contexts)]
    seen = set()
    for c in contexts:
        if c.get("stack") in seen:
            continue
        seen.add(c.get("stack"))
        out.append("- stack %s: dgemm_ from %s%s; CPU BLAS dgemm_ from %s; LD_PRELOAD=%s" % (
            c.get("stack"), c.get("dgemm_from"), "; zgemm_ from %s" % c["zgemm_from"] if c.get("zgemm_from") else "",
            c.get("cpu_dgemm_from"), c.get("ld_preload") or "(none)"))
    out += ["",
            "C = A B (NN, square, beta 0) on malloc'd host memory, wall clock per call. lib: the program's gemm_ "
            "(libblasoffload.so preloaded); cpu: the CPU BLAS's own gemm_, called right after in the same process. "
            "fresh operands: A and B rewritten (untimed) before every call, so every call moves them; same: the same "
            "operands every call (device copies may serve them). speedup = cpu median / lib median; range = cpu min / "
            "lib max .. cpu max / lib min. check: max |C_lib - C_cpu| / (k eps), limit 30 (complex: each part, "
            "k = 2n).", ""]
    body, groups = [], {}
    rounds = any(r.get("round") for r in points)
    key = lambda r: ("dzcs".find(r.get("precision", "d")), r.get("n", 0), r.get("operands") != "fresh",
                     r.get("stack", ""), r.get("round", 0))
    for r in sorted(points, key=key):
        sp = common.ratio(r.get("cpu_median_ms"), r.get("lib_median_ms"))
        lo = common.ratio(r.get("cpu_min_ms"), r.get("lib_max_ms"))
        hi = common.ratio(r.get("cpu_max_ms"), r.get("lib_min_ms"))
        warm = r.get("warmup_times_ms") or []
        policy = r.get("policy_file") or "none"
        body.append([r.get("routine"), r.get("n"), r.get("stack")] + ([r.get("round", "-")] if rounds else []) + [
                     r.get("mode"), policy.rsplit("/", 1)[-1], r.get("operands"),
                     "%s (%d)" % (fmt_ms(r.get("lib_median_ms")), r.get("lib_reps", 0)),
                     "%s .. %s" % (fmt_ms(r.get("lib_min_ms")), fmt_ms(r.get("lib_max_ms"))),
                     "%s (%d)" % (fmt_ms(r.get("cpu_median_ms")), r.get("cpu_reps", 0)),
                     "%s .. %s" % (fmt_ms(r.get("cpu_min_ms")), fmt_ms(r.get("cpu_max_ms"))),
                     common.fmt(r.get("lib_gflops"), "%.0f"), common.fmt(r.get("cpu_gflops"), "%.0f"),
                     "**%s**" % common.fmt_x(sp), "%s .. %s" % (common.fmt_x(lo), common.fmt_x(hi)),
                     "%d: %s" % (len(warm), ", ".join(fmt_ms(w) for w in warm[:6])),
                     "%s %s" % (r.get("check"), common.fmt(r.get("check_value"), "%.2g"))])
        # the rounds of one stack and point: one group (the A/A repeat)
        groups.setdefault((r.get("routine"), r.get("n"), r.get("stack"), r.get("mode"), policy, r.get("operands")),
                          []).append((r, sp, lo, hi))
    out += common.table(["routine", "n", "stack"] + (["round"] if rounds else []) + [
        "mode", "policy file", "operands", "lib ms (reps)", "lib min .. max", "cpu ms (reps)", "cpu min .. max",
        "lib GFLOP/s", "cpu GFLOP/s", "speedup", "range", "warm-up calls: ms", "check"], body)
    out.append("")
    out += aa_section(groups)
    for r in skipped:
        out.append("- not run: %s" % ", ".join("%s=%s" % kv for kv in sorted(r.items())))
    out += ["### Targets", ""]
    targets = {k: g for k, g in groups.items() if k[0] in TARGETS and k[1] == TARGET_N and k[3] == "auto" and
               k[5] == "fresh"}
    ok = bool(targets)
    for k, g in targets.items():
        target = TARGETS[k[0]]
        sps = [sp for _, sp, _, _ in g if sp is not None]
        sp = statistics.median(sps) if sps else None
        lo = min((x for _, _, x, _ in g if x is not None), default=None)
        hi = max((x for _, _, _, x in g if x is not None), default=None)
        met = sp is not None and sp >= target and all(r.get("check") == "ok" for r, _, _, _ in g)
        ok = ok and met
        cross = lo is not None and hi is not None and lo <= target <= hi
        each = "; rounds %s" % ", ".join(common.fmt_x(x) for x in sps) if len(g) > 1 else ""
        out.append("- %s n=%d, auto, stack %s: %s faster than the CPU BLAS (range %s .. %s%s%s), target >= %gx: %s" % (
            k[0], TARGET_N, k[2], common.fmt_x(sp), common.fmt_x(lo), common.fmt_x(hi), each,
            ", crosses the target" if cross else "", target, "MET" if met else "MISSED"))
    # a targeted routine the run measured or tried (a skipped process) without a target point: no data
    tried = {r.get("routine") for r in points + skipped}
    missing = [r for r in sorted(TARGETS) if r in tried and not any(k[0] == r for k in targets)]
    for routine in missing or ([] if targets else ["dgemm"]):  # nothing targeted tried: the first benchmark's point
        ok = False
        out.append("- %s n=%d in auto on fresh operands: NO DATA" % (routine, TARGET_N))
    failed = [r for r in points if r.get("check") not in ("ok", "not checked")]
    if failed:
        ok = False
        out.append("- failed checks: %s" % "; ".join("%s n=%s %s (%s)" % (r.get("routine"), r.get("n"),
                                                                          r.get("stack"), r.get("check_value"))
                                                    for r in failed))
    out += ["", "**Verdict: %s**" % ("PASS" if ok else "MISS"), ""]
    return out, 0 if ok else 1


def aa_section(groups):
    """The A/A repeat: per stack and point run in several rounds, each side's median per round and their spread
    (max / min - 1), and the speedups."""
    rows = []
    for k, g in sorted(groups.items(), key=lambda kv: "dzcs".find(kv[0][0][:1])):
        if len(g) < 2:
            continue
        lib = [r.get("lib_median_ms") for r, _, _, _ in g]
        cpu = [r.get("cpu_median_ms") for r, _, _, _ in g]
        sps = [sp for _, sp, _, _ in g]

        def spread(v):
            v = [x for x in v if x]
            return "%.1f %%" % (100.0 * (max(v) / min(v) - 1)) if len(v) > 1 else "-"
        rows.append([k[0], k[1], k[2], k[5], len(g), ", ".join(fmt_ms(x) for x in lib), spread(lib),
                     ", ".join(fmt_ms(x) for x in cpu), spread(cpu), ", ".join(common.fmt_x(x) for x in sps),
                     spread(sps)])
    if not rows:
        return []
    return ["### A/A: the same stack in several processes (rounds)", "",
            "Spread: max / min - 1 of the rounds' medians; the speedups' spread is the noise a ratio carries here.",
            ""] + common.table(["routine", "n", "stack", "operands", "rounds", "lib ms", "lib spread", "cpu ms",
                                "cpu spread", "speedups", "speedup spread"], rows) + [""]


def plot_points(rows):
    return [("%s %s %s %s" % (r.get("routine"), r.get("n"), r.get("stack"), r.get("operands")),
             {"lib ms": r.get("lib_median_ms") or 0, "cpu ms": r.get("cpu_median_ms") or 0})
            for r in rows if r.get("bench") == "host_gemm"]
