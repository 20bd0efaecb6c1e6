"""Report of the trsm/syrk benchmark (bench/level3/bench.ini, blasoffload_bench_level3): the context, the targets with
PASS/MISS and the measured numbers (the speed-up targets are single precision's; "the table never picks the slower"
holds for every shape), a summary per shape (our tuned choice, our best own configuration, cuBLAS; both precisions), a
table per shape with every candidate, and the host gemm point (benchmark host_gemm: the library's gemm against the CPU
BLAS's) when measured.

Ratios are cuBLAS time / our time: above 1 means ours is faster. A target whose threshold lies inside the ratio's
min-max spread (from the fastest and slowest runs of the two sides) is flagged "within noise".
Status: 0 every target passed and every check too, 1 otherwise, 2 no measurement at all.
"""

# (routine, side, shape, threshold on cuBLAS time / tuned time)
SPEEDUP_TARGETS = [
    ("strsm", "L", "16384x16", 5.0),
    ("strsm", "L", "16384x128", 5.0),
    ("strsm", "L", "16384x1", 4.0),
    ("strsm", "L", "128x16384", 0.97),
    ("strsm", "L", "4096x4096", 0.97),
    ("strsm", "L", "8192x8192", 0.97),
    ("ssyrk", "-", "n=8192 k=8192", 0.9),
]
NEVER_SLOWER = 1.03  # tuned time <= this x min(best own, cuBLAS) at every shape


def split(rows):
    """The device candidates, the skipped shapes (and the runner's notes: a process stopped or failed) and the host
    gemm lines of a run."""
    cand, skips, host = [], [], []
    for r in rows:
        if "skipped" in r:
            skips.append(r)
        elif "candidate" in r and r.get("routine", "").endswith("_host"):
            host.append(r)
        elif "candidate" in r:
            cand.append(r)
    return cand, skips, host


def key(r):
    return (r["routine"], r.get("side", "-"), r["shape"])


def label(k):
    routine, side, shape = k
    if routine and routine[1:] == "trsm":
        return "%s %s (side %s)" % (routine, shape, side)
    return "%s %s" % (routine, shape)


def f_us(v):
    if v is None:
        return "-"
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v


def f_ratio(v):
    return "-" if v is None else "%.2fx" % v


def f_num(v, fmt="%.1f"):
    return "-" if v is None else fmt % v


def good(r):
    """A candidate that ran, was timed and agreed with the reference."""
    return r.get("time_us") is not None and not r.get("error") and r.get("check") in ("ok", "reference")


class Shape:
    def __init__(self, k, rows):
        self.key = k
        self.rows = rows
        tuned = [r for r in rows if r["candidate"] == "tuned"]
        self.tuned = tuned[0] if tuned else None
        own = [r for r in rows if r["candidate"] == "own" and good(r)]
        self.best_own = min(own, key=lambda r: r["time_us"]) if own else None
        vend = [r for r in rows if r["candidate"] == "cublas" and good(r)]
        self.cublas = min(vend, key=lambda r: r["time_us"]) if vend else None

    def best_other(self):
        c = [r for r in (self.best_own, self.cublas) if r is not None]
        return min(c, key=lambda r: r["time_us"]) if c else None


def ratio(num, den):
    """num/den on the medians, and the spread from the extreme runs: (value, lo, hi)."""
    if num is None or den is None or not good(num) or not good(den):
        return None, None, None
    v = num["time_us"] / den["time_us"]
    lo = num.get("min_us") / den.get("max_us") if num.get("min_us") and den.get("max_us") else None
    hi = num.get("max_us") / den.get("min_us") if num.get("max_us") and den.get("min_us") else None
    return v, lo, hi


class Target:
    def __init__(self, text, value, lo, hi, threshold, higher_is_better, detail):
        self.text, self.value, self.lo, self.hi = text, value, lo, hi
        self.threshold, self.higher, self.detail = threshold, higher_is_better, detail

    def passed(self):
        if self.value is None:
            return None
        return self.value >= self.threshold if self.higher else self.value <= self.threshold

    def verdict(self):
        p = self.passed()
        v = "NO DATA" if p is None else "PASS" if p else "MISS"
        if p is not None and self.lo is not None and self.hi is not None and self.lo <= self.threshold <= self.hi:
            v += " (within noise)"
        return v

    def spread(self):
        if self.lo is None or self.hi is None:
            return "-"
        return "%s .. %s" % (f_ratio(self.lo), f_ratio(self.hi))


def targets(shapes):
    out = []
    by_key = {s.key: s for s in shapes}
    for routine, side, shape, thr in SPEEDUP_TARGETS:
        s = by_key.get((routine, side, shape))
        what = "%s: tuned choice >= %.2fx cuBLAS" % (label((routine, side, shape)), thr)
        if s is None:
            out.append(Target(what, None, None, None, thr, True, "not measured"))
            continue
        v, lo, hi = ratio(s.cublas, s.tuned)
        detail = "tuned %s %s us, cuBLAS %s us" % (
            s.tuned["entry"] if s.tuned else "-", f_us(s.tuned and s.tuned.get("time_us")),
            f_us(s.cublas and s.cublas.get("time_us")))
        out.append(Target(what, v, lo, hi, thr, True, detail))
    for s in shapes:
        other = s.best_other()
        v, lo, hi = ratio(s.tuned, other)
        what = "%s: the table never picks the slower (tuned <= %.2fx min(best own, cuBLAS))" % (
            label(s.key), NEVER_SLOWER)
        detail = "tuned %s %s us; fastest other %s %s us" % (
            s.tuned["entry"] if s.tuned else "-", f_us(s.tuned and s.tuned.get("time_us")),
            other["entry"] if other else "-", f_us(other and other.get("time_us")))
        out.append(Target(what, v, lo, hi, NEVER_SLOWER, False, detail))
    return out


def host_section(host):
    """The host gemm point: per precision and n, each candidate's wall time, and the CPU BLAS time / library time."""
    md = ["## Host gemm: the library against the CPU BLAS", "",
          "C = A B (NN, alpha 1, beta 0) on malloc'd host operands, wall time per call (median after one untimed "
          "call); the library's gemm runs wherever its settings route it (BLASOFFLOAD_MODE). Ratio: CPU time / "
          "library time.", "",
          "| routine | shape | candidate | entry | median us | min us | max us | TFLOP/s | CPU / this | check |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    bad = []
    groups = {}
    for r in host:
        groups.setdefault((r["routine"], r["shape"]), []).append(r)
    for (routine, shape), rs in groups.items():
        cpu = [r for r in rs if r["candidate"] == "cpu" and good(r)]
        for r in rs:
            chk = r.get("check", "-")
            if r.get("check_rel_diff") is not None:
                chk += " (%.1e)" % r["check_rel_diff"]
            if r.get("error") or r.get("check") not in ("ok", "reference"):
                bad.append("%s %s %s: %s" % (routine, shape, r["candidate"], r.get("error") or r.get("check")))
                if r.get("error"):
                    chk += "; ERROR: " + r["error"]
            md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                routine, shape, r["candidate"], r["entry"], f_us(r.get("time_us")), f_us(r.get("min_us")),
                f_us(r.get("max_us")), f_num(r.get("tflops"), "%.2f"),
                f_ratio(ratio(cpu[0], r)[0]) if cpu else "-", chk))
    md.append("")
    return md, bad


def render(rows, contexts, args):
    rows, skips, host = split(rows)
    if not rows and not host:
        return ["report.py: no measurement in %s" % args.path], 2
    md = []
    order = []
    groups = {}
    for r in rows:
        k = key(r)
        if k not in groups:
            groups[k] = []
            order.append(k)
        groups[k].append(r)
    shapes = [Shape(k, groups[k]) for k in order]

    md += ["# trsm / syrk on device-resident data: ours against cuBLAS", ""]
    device = [c for c in contexts if "gpu" in c]
    if device:
        c = device[0]
        md.append("- GPU: %s (%s SMs, %s MiB L2), CUDA runtime %s, driver %s" % (
            c.get("gpu"), c.get("sms"), c.get("l2_mib"), c.get("cuda_runtime"), c.get("cuda_driver")))
        md.append("- module: %s (%s)" % (c.get("module"), c.get("module_path")))
        md.append("- tuned table: %s" % c.get("tuned_params"))
        md.append("- vendor: %s" % c.get("vendor"))
        md.append("- date %s, commit %s; %s timed runs per candidate after %s warm-up runs; A rotated over copies "
                  "spanning %s MiB, %s MiB read between runs to empty the L2; %s" % (
                      c.get("date"), c.get("commit"), c.get("reps"), c.get("warmup"), c.get("rotate_mib"),
                      c.get("flush_mib"),
                      "each call queued behind a spin kernel (GPU time only)" if c.get("queue_ahead")
                      else "each call starts on an idle GPU (host launch overhead included)"))
        md.append("- BLASOFFLOAD_STRSM_INV_MAX_COND: %s" % c.get("strsm_inv_max_cond"))
    for c in (c for c in contexts if c.get("host_gemm")):
        md.append("- host gemm: library %s (BLASOFFLOAD_MODE %s, BLASOFFLOAD_CPU_BLAS %s), CPU BLAS %s; %s timed calls "
                  "after one untimed; date %s, commit %s" % (c.get("library"), c.get("blasoffload_mode"),
                                                             c.get("blasoffload_cpu_blas"), c.get("cpu_blas"),
                                                             c.get("reps"), c.get("date"), c.get("commit")))
    md.append("- trsm: left, lower, no transpose, non-unit, alpha 1 (right side: X L^T = B); flops m n t. syrk: "
              "lower, no transpose, alpha -1, beta 1; flops n^2 k. s: single, d: double precision. Ratios: cuBLAS "
              "time / our time.")
    md.append("")

    tl = targets(shapes) if shapes else []  # a host-gemm-only run has no device targets
    md += ["## Targets", ""]
    md.append("| target | verdict | measured | spread | detail |")
    md.append("|---|---|---|---|---|")
    for t in tl:
        md.append("| %s | %s | %s | %s | %s |" % (t.text, t.verdict(), f_ratio(t.value), t.spread(), t.detail))
    md.append("")

    md += ["## Summary", ""]
    md.append("| shape | tuned choice | tuned us | TFLOP/s | best own | best own us | cuBLAS us | cuBLAS / tuned "
              "| cuBLAS / best own |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    for s in shapes:
        t, b, v = s.tuned, s.best_own, s.cublas
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label(s.key), t["entry"] if t else "-", f_us(t and t.get("time_us")),
            f_num(t and t.get("tflops"), "%.2f"), b["entry"] if b else "-", f_us(b and b.get("time_us")),
            f_us(v and v.get("time_us")), f_ratio(ratio(v, t)[0]), f_ratio(ratio(v, b)[0])))
    md.append("")

    bad = []
    for s in shapes:
        md += ["## %s" % label(s.key), ""]
        md.append("| candidate | entry | median us | min us | max us | TFLOP/s | cuBLAS / this | enqueue us "
                  "| workspace MiB | check |")
        md.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(s.rows, key=lambda r: (["tuned", "own", "cublas"].index(r["candidate"]),
                                               r.get("time_us") or 1e30)):
            chk = r.get("check", "-")
            if r.get("check_rel_diff") is not None:
                chk += " (%.1e)" % r["check_rel_diff"]
            if r.get("error"):
                chk += "; ERROR: " + r["error"]
                bad.append("%s %s: %s" % (label(s.key), r["entry"], r["error"]))
            md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["candidate"], r["entry"], f_us(r.get("time_us")), f_us(r.get("min_us")), f_us(r.get("max_us")),
                f_num(r.get("tflops"), "%.2f"), f_ratio(ratio(s.cublas, r)[0]), f_num(r.get("enqueue_us")),
                f_num((r.get("workspace_bytes") or 0) / 1048576.0), chk))
        md.append("")
    if skips:
        md += ["## Skipped", ""]
        for s in skips:
            # A shape the program skipped names its routine; a runner's note (a process stopped or failed) may not.
            what = label((s.get("routine"), s.get("side", "-"), s.get("shape"))) if s.get("routine") else \
                "process %s" % ", ".join("%s=%s" % kv for kv in sorted(s.items()) if kv[0] != "skipped")
            md.append("- %s: %s" % (what, s.get("skipped")))
        md.append("")
    if host:
        host_md, host_bad = host_section(host)
        md += host_md
        bad += host_bad
    if bad:
        md += ["## Failures", ""]
        md.extend("- " + b for b in bad)
        md.append("")
    ok = all(t.passed() for t in tl) and not bad and not skips
    return md + [""], 0 if ok else 1
