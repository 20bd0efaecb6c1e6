"""Report of the host gemm benchmark (bench/pipeline/bench.ini, benchmark dgemm_host): per precision, n, stack and
operands, the library's gemm_ (as a user's program calls it) against the CPU BLAS's own in the same process: medians,
min .. max, the speedup CPU / library with the range the min and max times allow, and the check. Target (the issue's
point): dgemm n = 8192 from host memory in BLASOFFLOAD_MODE=auto, calibrated and without a policy file, >= 20x
faster than OpenBLAS (SkylakeX kernels, all cores) on fresh operands.
"""
import report as common

TARGET = 20.0
TARGET_N = 8192


def fmt_ms(v):
    return "-" if v is None else ("%.0f" % v if v >= 100 else "%.3g" % v)


def render(rows, contexts, args):
    points = [r for r in rows if r.get("bench") == "host_gemm"]
    skipped = [r for r in rows if "skipped" in r]
    if not points:
        return ["report.py: no host gemm points in %s" % args.path], 2
    out = ["## Host gemm through the library against the CPU BLAS (bench/pipeline, dgemm_host)", ""]
    out += ["- " + c for c in common.openblas_context(contexts)]
    seen = set()
    for c in contexts:
        if c.get("stack") in seen:
            continue
        seen.add(c.get("stack"))
        out.append("- stack %s: dgemm_ from %s; CPU BLAS dgemm_ from %s; LD_PRELOAD=%s" % (
            c.get("stack"), c.get("dgemm_from"), c.get("cpu_dgemm_from"), c.get("ld_preload") or "(none)"))
    out += ["",
            "C = A B (NN, square, beta 0) on malloc'd host memory, wall clock per call. lib: the program's gemm_ "
            "(libblasoffload.so preloaded); cpu: the CPU BLAS's own gemm_, called right after in the same process. "
            "fresh operands: A and B rewritten (untimed) before every call, so every call moves them; same: the same "
            "operands every call (device copies may serve them). speedup = cpu median / lib median; range = cpu min / "
            "lib max .. cpu max / lib min. check: max |C_lib - C_cpu| / (k eps), limit 30.", ""]
    body, targets = [], []
    key = lambda r: (r.get("precision") != "d", r.get("n", 0), r.get("operands") != "fresh", r.get("stack", ""))
    for r in sorted(points, key=key):
        sp = common.ratio(r.get("cpu_median_ms"), r.get("lib_median_ms"))
        lo = common.ratio(r.get("cpu_min_ms"), r.get("lib_max_ms"))
        hi = common.ratio(r.get("cpu_max_ms"), r.get("lib_min_ms"))
        warm = r.get("warmup_times_ms") or []
        policy = r.get("policy_file") or "none"
        body.append([r.get("routine"), r.get("n"), r.get("stack"), r.get("mode"), policy.rsplit("/", 1)[-1],
                     r.get("operands"),
                     "%s (%d)" % (fmt_ms(r.get("lib_median_ms")), r.get("lib_reps", 0)),
                     "%s .. %s" % (fmt_ms(r.get("lib_min_ms")), fmt_ms(r.get("lib_max_ms"))),
                     "%s (%d)" % (fmt_ms(r.get("cpu_median_ms")), r.get("cpu_reps", 0)),
                     "%s .. %s" % (fmt_ms(r.get("cpu_min_ms")), fmt_ms(r.get("cpu_max_ms"))),
                     common.fmt(r.get("lib_gflops"), "%.0f"), common.fmt(r.get("cpu_gflops"), "%.0f"),
                     "**%s**" % common.fmt_x(sp), "%s .. %s" % (common.fmt_x(lo), common.fmt_x(hi)),
                     "%d: %s" % (len(warm), ", ".join(fmt_ms(w) for w in warm[:6])),
                     "%s %s" % (r.get("check"), common.fmt(r.get("check_value"), "%.2g"))])
        if r.get("routine") == "dgemm" and r.get("n") == TARGET_N and r.get("mode") == "auto" and \
                r.get("operands") == "fresh":
            targets.append((r, sp, lo, hi))
    out += common.table(["routine", "n", "stack", "mode", "policy file", "operands", "lib ms (reps)", "lib min .. max",
                         "cpu ms (reps)", "cpu min .. max", "lib GFLOP/s", "cpu GFLOP/s", "speedup", "range",
                         "warm-up calls: ms", "check"], body)
    out.append("")
    for r in skipped:
        out.append("- not run: %s" % ", ".join("%s=%s" % kv for kv in sorted(r.items())))
    out += ["### Targets", ""]
    ok = bool(targets)
    for r, sp, lo, hi in targets:
        met = sp is not None and sp >= TARGET and r.get("check") == "ok"
        ok = ok and met
        cross = lo is not None and hi is not None and lo <= TARGET <= hi
        out.append("- dgemm n=%d, auto, stack %s: %s faster than the CPU BLAS (range %s .. %s%s), target >= %gx: %s" % (
            TARGET_N, r.get("stack"), common.fmt_x(sp), common.fmt_x(lo), common.fmt_x(hi),
            ", crosses the target" if cross else "", TARGET, "MET" if met else "MISSED"))
    if not targets:
        out.append("- dgemm n=%d in auto on fresh operands: NO DATA" % TARGET_N)
    failed = [r for r in points if r.get("check") not in ("ok", "not checked")]
    if failed:
        ok = False
        out.append("- failed checks: %s" % "; ".join("%s n=%s %s (%s)" % (r.get("routine"), r.get("n"),
                                                                          r.get("stack"), r.get("check_value"))
                                                    for r in failed))
    out += ["", "**Verdict: %s**" % ("PASS" if ok else "MISS"), ""]
    return out, 0 if ok else 1


def plot_points(rows):
    return [("%s %s %s %s" % (r.get("routine"), r.get("n"), r.get("stack"), r.get("operands")),
             {"lib ms": r.get("lib_median_ms") or 0, "cpu ms": r.get("cpu_median_ms") or 0})
            for r in rows if r.get("bench") == "host_gemm"]
