"""Report of the sgemm engine benchmark (bench/pipeline/bench.ini, benchmark engine): context, the targets met or
missed with the measured ratio and its spread, and per-case tables with the engine's per-stage statistics.
Exit status: 0 every target met and every check passed, 1 otherwise, 2 no measurement at all.
"""

CASES = ["sgemm_host", "rank_update", "out_of_core", "multi_gpu"]
# Other runs on the lent H100 (../shared/anchors/README.md), shown for orientation only: ratios count within one run.
ANCHORS = ("Anchors from another run (H100, 2026-11-21), for orientation only: pageable cudaMemcpy + cuBLAS + copy "
           "back 27 / 114 / 515 ms at n = 4096 / 8192 / 16384; NVBLAS 23.5 / 171 ms at 4096 / 8192; OpenBLAS "
           "SkylakeX 113 / 974 ms at 4096 / 8192.")


def f_ms(v):
    if v is None:
        return "-"
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v


def f_num(v, fmt="%.1f"):
    return "-" if v is None else fmt % v


def f_ratio(v):
    return "-" if v is None else "%.2fx" % v


def div(a, b):
    return a / b if a is not None and b not in (None, 0) else None


class Target:
    """One target: its verdict on the median, the measured value and the range its spread allows."""

    def __init__(self, text, value, ok, detail, lo=None, hi=None, threshold=None):
        self.text, self.value, self.ok, self.detail = text, value, ok, detail
        self.lo, self.hi, self.threshold = lo, hi, threshold

    def verdict(self):
        if self.value is None:
            return "NO DATA"
        return "MET" if self.ok else "MISSED"

    def spread(self):
        if self.lo is None or self.hi is None:
            return "-"
        s = "%s .. %s" % (self.fmt(self.lo), self.fmt(self.hi))
        if self.threshold is not None and min(self.lo, self.hi) <= self.threshold <= max(self.lo, self.hi):
            s += " (crosses the target)"
        return s

    fmt = staticmethod(f_ratio)


class MsTarget(Target):
    fmt = staticmethod(lambda v: f_ms(v) + " ms")


def context_lines(contexts):
    if not contexts:
        return ["- (no context line: the program did not start)"]
    c = contexts[0]
    out = []
    gpus = ", ".join(c.get("gpus", [])) or c.get("gpu_error", "none")
    out.append("- GPU: %s (%s device(s), driver %s)" % (c.get("gpu", "?"), c.get("gpu_count", 0),
                                                        c.get("driver_version", "?")))
    if c.get("gpu_count", 0) > 1:
        out.append("- GPUs: %s" % gpus)
    mods = sorted({x.get("module", "") for x in contexts if x.get("module")})
    out.append("- module: %s%s" % ("; ".join(mods) or "not loaded",
                                   " (%s)" % c["module_path"] if c.get("module_path") else ""))
    out.append("- date: %s; commit: %s; host: %s, %s cores, %.0f GiB available" % (
        c.get("date", "?"), c.get("commit", "?"), c.get("host", "?"), c.get("cores", "?"),
        c.get("mem_available_gib") or 0))
    out.append("- CPU BLAS: %s; OpenBLAS core %s (OPENBLAS_CORETYPE=%s), %s threads (OPENBLAS_NUM_THREADS=%s)" % (
        c.get("cpu_blas", "?"), c.get("openblas_corename") or "?", c.get("OPENBLAS_CORETYPE", "?"),
        c.get("openblas_threads", "?"), c.get("OPENBLAS_NUM_THREADS", "?")))
    if c.get("OPENBLAS_CORETYPE", "(unset)") == "(unset)":
        out.append("- **warning**: OPENBLAS_CORETYPE unset: on the lent Xeon OpenBLAS 0.3.21 then runs its generic "
                   "kernels (5x slower; anchors README) and every CPU ratio flatters the GPU")
    env = c.get("env") or {}
    out.append("- engine knobs in the environment: %s" % (
        ", ".join("%s=%s" % kv for kv in sorted(env.items())) or "none (defaults)"))
    if any(x.get("stand_in") for x in contexts):
        out.append("- **CPU STAND-IN RUN**: the \"engine\" points ran the CPU BLAS (testing the benchmark, not the "
                   "engine); no GPU number here means anything")
    return out


def points_table(rows):
    out = ["| shape | beta | variant | share | median ms | min .. max ms | reps | GFLOP/s | path, GPUs "
           "| tile, k passes | tiles (cpu) | panels | H2D GB | H2D GB/s busy / wall | D2H GB/s busy / wall "
           "| busy h2d / kernel / d2h ms | first kernel ms | pack / unpack ms | cpu part ms | check |",
           "|" + "---|" * 20]
    for r in rows:
        shape = "%dx%dx%d" % (r.get("m", 0), r.get("n", 0), r.get("k", 0))
        head = [shape, f_num(r.get("beta"), "%g"), r.get("variant", "?"),
                f_num(r.get("cpu_share"), "%.2f") if r.get("variant") == "hybrid" else "-"]
        if "skipped" in r:
            out.append("| " + " | ".join(head) + " | skipped: %s |" % r["skipped"] + " |" * 15)
            continue
        if "error" in r:
            out.append("| " + " | ".join(head) + " | **%s** |" % r["error"] + " |" * 15)
            continue
        s = r.get("stats") or {}
        chk = r.get("check")
        if chk:
            chk_text = ("ok %.1e" if chk.get("pass") else "**FAIL %.1e**") % (chk.get("rel_err") or float("nan"))
        else:
            chk_text = "-"
        if s:
            cols = [
                "%s, %d" % ("tiled" if s.get("path") == 1 else "direct", s.get("devices", 0)),
                "%dx%d, %d" % (s.get("tile_m", 0), s.get("tile_n", 0), s.get("k_passes", 0)),
                "%d (%d)" % (s.get("tiles", 0), s.get("tiles_cpu", 0)),
                "%d" % s.get("panel_uploads", 0),
                f_num(div(s.get("bytes_h2d"), 1e9), "%.2f"),
                "%s / %s" % (f_num(r.get("h2d_gbs")), f_num(r.get("h2d_wall_gbs"))),
                "%s / %s" % (f_num(r.get("d2h_gbs")), f_num(r.get("d2h_wall_gbs"))),
                "%s / %s / %s" % (f_ms(s.get("h2d_busy_ms")), f_ms(s.get("kernel_busy_ms")),
                                  f_ms(s.get("d2h_busy_ms"))),
                f_ms(s.get("first_kernel_ms")),
                "%s / %s" % (f_ms(s.get("pack_ms")), f_ms(s.get("unpack_ms"))),
                f_ms(s.get("cpu_part_ms")) + (" (%d cols, %d rows)" % (s.get("n_cpu_cols", 0), s.get("m_cpu_rows", 0))
                                              if s.get("n_cpu_cols") or s.get("m_cpu_rows") else ""),
            ]
        else:
            cols = ["-"] * 11
        out.append("| " + " | ".join(head + [
            f_ms(r.get("median_ms")), "%s .. %s" % (f_ms(r.get("min_ms")), f_ms(r.get("max_ms"))),
            "%d%s" % (r.get("reps", 0), "" if r.get("reps") == r.get("reps_wanted") else
                      " of %s" % r.get("reps_wanted")),
            f_num(r.get("gflops"), "%.0f")] + cols + [chk_text]) + " |")
    return out


def render(rows, contexts, args):
    points = [r for r in rows if r.get("variant") not in ("summary", "case", "process")]
    summaries = [r for r in rows if r.get("variant") == "summary"]
    notes = [r for r in rows if r.get("variant") in ("case", "process") and "skipped" in r]

    out = ["## sgemm engine on host operands (bench/pipeline)", ""]
    out += context_lines(contexts)
    out += ["", "Times are wall-clock per call from host (malloc'd, pageable) memory: median, min and max over the "
            "repetitions after one warm-up call; GFLOP/s = 2mnk / median. Ratios are medians over medians of this run; "
            "their spread is the range the min and max times allow. Busy times and rates come from the engine's "
            "CUDA-event statistics of the median repetition (busy: summed over devices while the stage ran; wall: "
            "bytes over the whole call). check: randomized ||C r - (alpha A (B r) + beta C0 r)|| relative to the "
            "terms' norms, bound k eps.", ""]

    targets = []
    sh = {(s.get("n"), s.get("beta")): s for s in summaries if s.get("case") == "sgemm_host"}
    for n, limit in ((8192, 30.0), (16384, 200.0)):
        s = sh.get((n, 0))
        v = s.get("engine_ms") if s else None
        targets.append(MsTarget("sgemm_host n=%d, C = A B from host memory: engine <= %.0f ms" % (n, limit), v,
                                v is not None and v <= limit,
                                "%s ms (%s vs CPU, %s vs engine_direct)" % (
                                    f_ms(v), f_ratio(s.get("speedup_vs_cpu")) if s else "-",
                                    f_ratio(s.get("speedup_vs_direct")) if s else "-"),
                                s.get("engine_min_ms") if s else None, s.get("engine_max_ms") if s else None, limit))
    for s in sorted((s for s in summaries if s.get("case") == "rank_update"), key=lambda s: s.get("k", 0)):
        k = s.get("k")
        fl, g = s.get("floor_ms"), s.get("gpu_ms")
        v = s.get("gpu_vs_floor")
        shape = "%dx%dx%d" % (s.get("m", 0), s.get("n", 0), k)
        targets.append(Target("rank_update %s: GPU alone within 1.2x of the PCIe floor" % shape, v,
                              v is not None and v <= 1.2,
                              "%s (GPU %s ms, floor %s ms at %s GB/s per direction)" % (
                                  f_ratio(v), f_ms(g), f_ms(fl), f_num(s.get("pcie_gbs"), "%g")),
                              div(s.get("gpu_min_ms"), fl), div(s.get("gpu_max_ms"), fl), 1.2))
        v = s.get("hybrid_speedup")
        single = s.get("best_single", "?")
        lo = div(s.get(single + "_min_ms") if single in ("cpu", "gpu") else None, s.get("best_hybrid_max_ms"))
        hi = div(s.get(single + "_max_ms") if single in ("cpu", "gpu") else None, s.get("best_hybrid_min_ms"))
        targets.append(Target("rank_update %s: best hybrid >= 1.5x faster than the better of CPU and GPU"
                              % shape, v, v is not None and v >= 1.5,
                              "%s (share %s: %s ms; CPU %s ms, GPU %s ms)" % (
                                  f_ratio(v), f_num(s.get("best_share"), "%.2f"), f_ms(s.get("best_hybrid_ms")),
                                  f_ms(s.get("cpu_ms")), f_ms(g)), lo, hi, 1.5))
    mg = [s for s in summaries if s.get("case") == "multi_gpu"]
    if mg:
        s = mg[0]
        v = s.get("speedup")
        targets.append(Target("multi_gpu n=%d: %s >= 1.7x faster than one GPU" % (s.get("n", 0), s.get("devices")),
                              v, v is not None and v >= 1.7,
                              "%s (1 GPU %s ms, %s GPUs used %s ms)" % (
                                  f_ratio(v), f_ms(s.get("one_ms")), s.get("multi_devices_used", "?"),
                                  f_ms(s.get("multi_ms"))),
                              div(s.get("one_min_ms"), s.get("multi_max_ms")),
                              div(s.get("one_max_ms"), s.get("multi_min_ms")), 1.7))
    ooc = [r for r in points if r.get("case") == "out_of_core" and "median_ms" in r]
    for r in ooc:
        chk = r.get("check") or {}
        targets.append(Target("out_of_core n=%d (BLASOFFLOAD_DEVICE_MEMORY_LIMIT=%s): result checked" % (
            r.get("n", 0), (r.get("env") or {}).get("BLASOFFLOAD_DEVICE_MEMORY_LIMIT", "?")),
            chk.get("rel_err"), bool(chk.get("pass")),
            "%s ms, %s GFLOP/s; relative error %s (bound %s)" % (
                f_ms(r.get("median_ms")), f_num(r.get("gflops"), "%.0f"), f_num(chk.get("rel_err"), "%.1e"),
                f_num(chk.get("bound"), "%.1e"))))
    checked = [r for r in points if r.get("check")]
    failed = [r for r in checked if not r["check"].get("pass")]
    errors = [r for r in points if "error" in r]
    targets.append(Target("every engine result checked and correct (no engine error)",
                          len(checked) if checked else None, not failed and not errors,
                          "%d of %d checks passed; %d engine error(s)" % (len(checked) - len(failed), len(checked),
                                                                          len(errors))))

    out += ["### Targets", "", "| target | verdict | measured | spread |", "|---|---|---|---|"]
    for t in targets:
        out.append("| %s | %s | %s | %s |" % (t.text, "**%s**" % t.verdict(), t.detail, t.spread()))
    out.append("")

    for case in CASES:
        rows_c = [r for r in points if r.get("case") == case]
        sums = [s for s in summaries if s.get("case") == case]
        skips = [r for r in notes if r.get("case") == case]
        if not rows_c and not sums and not skips:
            continue
        out += ["### " + case, ""]
        if case == "sgemm_host" and sums:
            out += ["| n | beta | engine ms | engine_direct ms | CPU ms | engine vs CPU | engine vs direct | target |",
                    "|---|---|---|---|---|---|---|---|"]
            for s in sorted(sums, key=lambda s: (s.get("n", 0), s.get("beta", 0))):
                t = s.get("target_ms")
                out.append("| %d | %g | %s | %s | %s | %s | %s | %s |" % (
                    s.get("n", 0), s.get("beta", 0), f_ms(s.get("engine_ms")), f_ms(s.get("direct_ms")),
                    f_ms(s.get("cpu_ms")), f_ratio(s.get("speedup_vs_cpu")), f_ratio(s.get("speedup_vs_direct")),
                    "-" if t is None else "<= %g ms%s" % (t, "" if s.get("beta") == 0 else " (info)")))
            out += ["", ANCHORS, ""]
        if case == "rank_update" and sums:
            out += ["| shape | floor ms | CPU ms | GPU ms | GPU / floor | best share | best hybrid ms | "
                    "hybrid speedup vs better single |", "|---|---|---|---|---|---|---|---|"]
            for s in sorted(sums, key=lambda s: s.get("k", 0)):
                out.append("| %dx%dx%d | %s | %s | %s | %s | %s | %s | %s (vs %s) |" % (
                    s.get("m", 0), s.get("n", 0), s.get("k", 0), f_ms(s.get("floor_ms")), f_ms(s.get("cpu_ms")),
                    f_ms(s.get("gpu_ms")), f_ratio(s.get("gpu_vs_floor")), f_num(s.get("best_share"), "%.2f"),
                    f_ms(s.get("best_hybrid_ms")), f_ratio(s.get("hybrid_speedup")), s.get("best_single", "?")))
            out += ["", "Floor: (C + A + B in, C out), the larger direction at the PCIe rate; both directions run at "
                    "once.", ""]
        if case == "multi_gpu" and sums:
            out += ["| n | 1 GPU ms | multi ms | devices asked / used | speedup |", "|---|---|---|---|---|"]
            for s in sums:
                out.append("| %d | %s | %s | %s / %s | %s |" % (
                    s.get("n", 0), f_ms(s.get("one_ms")), f_ms(s.get("multi_ms")), s.get("devices", "?"),
                    s.get("multi_devices_used", "?"), f_ratio(s.get("speedup"))))
            out.append("")
        if case == "out_of_core":
            for r in rows_c:
                if "fill_s" in r:
                    out.append("Host operands: %.1f GiB, filled in %.1f s (warm-up on the leading %s block)." % (
                        r.get("host_gib", 0), r.get("fill_s", 0), r.get("warmup_n", "?")))
            out.append("")
        if rows_c:
            out += points_table(rows_c)
            out.append("")
        for r in skips:
            out.append("- %s: %s" % ("process" if r.get("variant") == "process" else "case", r.get("skipped")))
        if skips:
            out.append("")

    measured = [r for r in points if "median_ms" in r]
    if not measured:
        out += ["**No measurement.**", ""]
    else:
        met = all(t.ok for t in targets if t.value is not None)
        missing = [t for t in targets if t.value is None]
        out += ["**Verdict: %s**%s" % ("all targets met" if met and not missing else
                                       "targets missed" if not met else "met where measured",
                                       " (no data: %s)" % "; ".join(t.text for t in missing) if missing else ""), ""]
    if not measured:
        return out, 2
    return out, 0 if all(t.ok for t in targets) else 1
