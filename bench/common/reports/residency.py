"""Report of the residency benchmark (bench/residency/bench.ini): per-call times of the residency scenarios and LAPACK
seconds per stack, their ratios to the CPU and to the same stack without residency, and the residency targets.

The raw folder (--raw): each run's <run>.err holds its BLASOFFLOAD_LOG=summary (where the calls went, and the
residency cache's line: hits, copies, uploads, tracking faults, back-offs).
Speedups are base time / this time (> 1: faster). Per-call times are the median over the last half of a scenario's
iterations (steady state). "no residency" is noresident for the auto stacks (resident, resident-thp) and
gpu-noresident for gpu. Targets (primary: the auto stack users get):
  power    resident per call >= 5x faster than cpu (stretch 10x)
  strsv    resident per call >= 10x faster than cpu and >= 3x faster than noresident
  rewrite  resident total (rewrites + calls) <= 1.05x noresident's total
  potrf    resident >= 4x faster than openblas (OpenBLAS's own LAPACK)
  getrf    resident seconds <= 1.05x noresident's
  every check of every run passes
The same comparisons for the gpu stack (against gpu-noresident) are listed as well but do not make the verdict.
Exit status 0 when every primary target is met, 1 otherwise, 2 on bad input.
"""
import os
import re

import report as common

SCEN_STACKS = ["cpu", "resident", "resident-thp", "noresident", "gpu", "gpu-noresident"]
LAPACK_STACKS = ["cpu", "resident", "noresident", "openblas"]
# Double precision scenarios are named with their letter (dpower ...); single precision ones without (older results).
SCENARIOS = ["power", "strsv", "rewrite", "dpower", "dstrsv", "drewrite"]
DRIVERS = ["potrf", "getrf"]
NO_RESIDENCY = {"resident": "noresident", "resident-thp": "noresident", "gpu": "gpu-noresident"}
OFFLOAD = {"resident", "resident-thp", "noresident", "gpu", "gpu-noresident"}
RESIDENCY_RE = re.compile(
    r"residency: (\d+) hits, (\d+) copies made, ([\d.]+) MiB uploaded \(([\d.]+) MiB of it re-uploaded written "
    r"pages\), ([\d.]+) MiB not moved, (\d+) tracking faults \(pages found written\), (\d+) dropped as rewritten, "
    r"(\d+) by unmap/remap/discard, (\d+) evicted, (\d+) back-offs")


def read(path):
    """Scenario and driver rows keyed (name, stack), each with the context line its program printed before it."""
    scen, lapack, notes, contexts = {}, {}, {}, {}
    ctx = {}
    with common.open_text(path) as f:
        for line in f:
            rows, ctxs = common.read_lines([line])
            if ctxs:
                ctx = ctxs[0]
                continue
            if not rows:
                continue
            obj = rows[0]
            if "scenario" in obj:
                scenario = ("d" if obj.get("precision") == "d" else "") + obj["scenario"]
                key, table = (scenario, obj.get("stack")), scen
            elif "driver" in obj:
                driver = ("d" if obj.get("precision") == "d" else "") + obj["driver"]
                key, table = (driver, obj.get("stack")), lapack
            else:
                continue
            if "skipped" in obj:
                notes[key] = obj["skipped"]
            else:
                table[key] = obj
                contexts[key] = ctx
    return scen, lapack, notes, contexts


def fmt_ms(v):
    if v is None:
        return "-"
    return "%.3g" % v if v < 1000 else "%.0f" % v


def fmt_x(v):
    return "-" if v is None else ("%.1fx" % v if v >= 10 else "%.2fx" % v)


def fmt_r(v):
    return "-" if v is None else "%.2f" % v


def ratio(a, b):
    return a / b if a is not None and b and b > 0 else None


def summaries(raw):
    """Per run name: the summary's routine table and GPU line (policy/report.py) and the residency numbers."""
    out = {}
    if not raw or not os.path.isdir(raw):
        return out
    for name in sorted(os.listdir(raw)):
        if not name.endswith(".err"):
            continue
        path = os.path.join(raw, name)
        table, gpu_line = common.parse_summary(path)
        try:
            text = open(path, errors="replace").read()
        except OSError:
            text = ""
        m = None
        for m in RESIDENCY_RE.finditer(text):
            pass  # the last summary's line
        res_off = re.findall(r"residency: off: ([^\n]*)", text)
        out[name[:-4]] = (table, gpu_line, m.groups() if m else None, res_off[-1] if res_off else None)
    return out


def render(rows, contexts, args):
    scen, lapack, notes, contexts = read(args.path)
    if not scen and not lapack:
        return ["report.py: no measurements in %s" % args.path], 2

    out = ["## Residency: repeated calls on one host matrix, and LAPACK, under several stacks", ""]
    # The context: what each stack really ran.
    any_ctx = next((c for c in contexts.values() if "thp_enabled" in c), next(iter(contexts.values()), {}))
    out.append("- OpenBLAS core: %s; %s; threads %s; THP: %s" % (
        any_ctx.get("openblas_corename", "?"), any_ctx.get("openblas_config", "?"),
        any_ctx.get("openblas_threads", "?"), any_ctx.get("thp_enabled", "?")))
    warnings = []
    seen = set()
    for key, c in sorted(contexts.items()):
        stack = key[1]
        fn = c.get("sgemv_from") or c.get("sgemm_from") or ""
        what = "sgemv_" if "sgemv_from" in c else "sgemm_"
        if (stack, what) not in seen:
            seen.add((stack, what))
            extra = ""
            if "sgetrf_from" in c:
                extra = ", sgetrf_ from %s" % c["sgetrf_from"]
            out.append("- %s: %s from %s%s" % (stack, what, fn, extra))
        wrong = ("libblasoffload" in fn) != (stack in OFFLOAD)
        if stack == "openblas" and "libopenblas" not in c.get("sgetrf_from", "libopenblas"):
            wrong = True
        if wrong:
            warnings.append("%s %s: %s from %s, not what the stack's name says" % (key[0], stack, what, fn))
    for w in warnings:
        out.append("- **WARNING** %s" % w)
    out.append("")

    def med(name, stack):
        p = scen.get((name, stack))
        return p.get("median_ms") if p else None

    def total(name, stack):
        p = scen.get((name, stack))
        return p.get("total_s") if p else None

    def cell_missing(key):
        return "(%s)" % notes[key] if key in notes else "-"

    check_fail = []
    sums = summaries(args.raw)
    if scen:
        out += ["### Scenarios: per-call times", "",
                "median: the steady state (last half of the iterations); first: the first call (start-up, the "
                "device copy's creation). Speedups per call (median); total: the timed loop's wall time.", "",
                "| scenario | n | stack | iters | median ms | first ms | min ms | max ms | total s | GB/s | "
                "speedup vs cpu | speedup vs no residency | check |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for name in SCENARIOS:
            stacks = [s for s in SCEN_STACKS if (name, s) in scen or (name, s) in notes]
            stacks += sorted({k[1] for k in scen if k[0] == name} - set(stacks))
            for s in stacks:
                p = scen.get((name, s))
                if p is None:
                    out.append("| %s | - | %s | %s |%s" % (name, s, cell_missing((name, s)), " - |" * 9))
                    continue
                base = NO_RESIDENCY.get(s)
                iters = "%d" % p["iterations"]
                if p["iterations"] < p.get("iterations_wanted", p["iterations"]):
                    iters += " of %d" % p["iterations_wanted"]
                check = p.get("check", "?")
                if check != "ok":
                    check_fail.append("%s %s (%s)" % (name, s, p.get("check_value")))
                    check = "**%s** %.3g" % (check, p.get("check_value", -1))
                thp = ""
                if p.get("thp"):
                    thp = " (THP %s MiB)" % ("?" if p.get("anon_huge_kb", -1) < 0 else
                                             "%.0f" % (p["anon_huge_kb"] / 1024.0))
                out.append("| %s | %d | %s%s | %s | %s | %s | %s | %s | %.3g | %.0f | %s | %s | %s |" % (
                    name, p["n"], s, thp, iters, fmt_ms(p["median_ms"]), fmt_ms(p["first_ms"]), fmt_ms(p["min_ms"]),
                    fmt_ms(p["max_ms"]), p["total_s"], p.get("gbs", 0), fmt_x(ratio(med(name, "cpu"), p["median_ms"])),
                    fmt_x(ratio(med(name, base), p["median_ms"])) if base else "-", check))
        out.append("")
        rw = [s for s in SCEN_STACKS if ("rewrite", s) in scen]
        if rw:
            out += ["### rewrite: the program rewrites its whole matrix before every call", "",
                    "Residency must not make this slower: total is the loop's wall time (rewrites, calls, the "
                    "tracking faults the rewrites take while pages are watched).", "",
                    "| stack | median call ms | median iteration ms | median rewrite ms | first iteration ms | "
                    "total s | total / cpu | total / no residency |", "|---|---|---|---|---|---|---|---|"]
            for s in rw:
                p = scen[("rewrite", s)]
                base = NO_RESIDENCY.get(s)
                out.append("| %s | %s | %s | %s | %s | %.3g | %s | %s |" % (
                    s, fmt_ms(p["median_ms"]), fmt_ms(p.get("iter_median_ms")), fmt_ms(p.get("rewrite_median_ms")),
                    fmt_ms(p.get("iter_first_ms")), p["total_s"], fmt_r(ratio(p["total_s"], total("rewrite", "cpu"))),
                    fmt_r(ratio(p["total_s"], total("rewrite", base))) if base else "-"))
            out.append("")

    def secs(d, s):
        p = lapack.get((d, s))
        return p.get("seconds") if p else None

    if lapack:
        drivers = [d for d in DRIVERS if any(k[0] == d for k in lapack)]
        drivers += sorted({k[0] for k in lapack} - set(drivers))
        stacks = [s for s in LAPACK_STACKS if any(k[1] == s for k in lapack) or any(k[1] == s for k in notes)]
        out += ["### LAPACK drivers (reference LAPACK unless openblas), seconds per factorization", "",
                "| driver | n | " + " | ".join(stacks) + " | resident speedup vs cpu | vs openblas | vs noresident |",
                "|---|---|" + "---|" * len(stacks) + "---|---|---|"]
        for d in drivers:
            n = next((p["n"] for k, p in lapack.items() if k[0] == d), "-")
            cells = []
            for s in stacks:
                p = lapack.get((d, s))
                if p is None:
                    cells.append(cell_missing((d, s)))
                    continue
                cell = "%.3g" % p["seconds"]
                if p.get("check") != "ok":
                    cell += " **FAIL**"
                    check_fail.append("%s %s (info %s, ratio %s)" % (d, s, p.get("info"), p.get("check_ratio")))
                cells.append(cell)
            r = secs(d, "resident")
            out.append("| %s | %s | %s | %s | %s | %s |" % (
                d, n, " | ".join(cells), fmt_x(ratio(secs(d, "cpu"), r)), fmt_x(ratio(secs(d, "openblas"), r)),
                fmt_x(ratio(secs(d, "noresident"), r))))
        out.append("")

    sum_rows = []
    for run, (table, gpu_line, res, off) in sorted(sums.items()):
        rows = [(r, v) for r, v in sorted(table.items()) if v.get("calls", 0)]
        if not rows and not res and not off:
            continue
        if res:
            rcells = [res[0], res[1], res[2], res[3], res[5], res[6], res[9]]
        elif off:
            rcells = ["off: %s" % off] + ["-"] * 6
        else:
            rcells = ["-"] * 7
        for i, (routine, v) in enumerate(rows or [("-", {})]):
            sum_rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                run if i == 0 else "", routine, v.get("calls", "-"), v.get("cpu", "-"), v.get("gpu", "-"),
                v.get("fallback", "-"), " | ".join(rcells if i == 0 else [""] * 7)))
    if sum_rows:
        out += ["### Where blasoffload sent the calls, and what the residency cache did (BLASOFFLOAD_LOG=summary)", "",
                "| run | routine | calls | cpu | gpu | fallback | residency: hits | copies | uploaded MiB | "
                "re-uploaded MiB | tracking faults | dropped rewritten | back-offs |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"] + sum_rows + [""]
        out += ["- %s" % g for g in sorted({g for (_, g, _, _) in sums.values() if g})] + [""]

    # Targets: (primary, what, measured text, target text, met or None when not measured).
    targets = []

    def speed_target(primary, what, num, den, need, stretch=None):
        v = ratio(num, den)
        if v is None:
            targets.append((primary, what, "no data", ">= %gx" % need, None))
            return
        t = ">= %gx" % need + (" (stretch %gx)" % stretch if stretch else "")
        met = v >= need
        m = fmt_x(v) + (" (stretch %s)" % ("met" if v >= stretch else "not met") if stretch else "")
        targets.append((primary, what, m, t, met))

    def time_target(primary, what, num, den, limit):
        v = ratio(num, den)
        targets.append((primary, what, "no data" if v is None else fmt_r(v), "<= %.2f" % limit,
                        None if v is None else v <= limit))

    for stack, base, primary in (("resident", "noresident", True), ("gpu", "gpu-noresident", False)):
        speed_target(primary, "power: %s per call vs cpu" % stack, med("power", "cpu"), med("power", stack), 5, 10)
        speed_target(primary, "strsv: %s per call vs cpu" % stack, med("strsv", "cpu"), med("strsv", stack), 10)
        speed_target(primary, "strsv: %s per call vs %s" % (stack, base), med("strsv", base), med("strsv", stack), 3)
        time_target(primary, "rewrite: %s total / %s total" % (stack, base), total("rewrite", stack),
                    total("rewrite", base), 1.05)
    if any(k[0].startswith("d") for k in scen):  # double precision: the same comparisons, for information
        speed_target(False, "dpower: resident per call vs cpu", med("dpower", "cpu"), med("dpower", "resident"), 5, 10)
        speed_target(False, "dstrsv: resident per call vs cpu", med("dstrsv", "cpu"), med("dstrsv", "resident"), 10)
        speed_target(False, "dstrsv: resident per call vs noresident", med("dstrsv", "noresident"),
                     med("dstrsv", "resident"), 3)
        time_target(False, "drewrite: resident total / noresident total", total("drewrite", "resident"),
                    total("drewrite", "noresident"), 1.05)
    speed_target(False, "power: resident-thp per call vs cpu", med("power", "cpu"), med("power", "resident-thp"), 5,
                 10)
    speed_target(True, "potrf: resident vs openblas", secs("potrf", "openblas"), secs("potrf", "resident"), 4)
    time_target(True, "getrf: resident seconds / noresident seconds", secs("getrf", "resident"),
                secs("getrf", "noresident"), 1.05)
    targets.append((True, "every check passes", "%d failed" % len(check_fail) if check_fail else "all ok", "all ok",
                    not check_fail))

    out += ["### Targets", "", "| | target | measured | wanted | met? |", "|---|---|---|---|---|"]
    for primary, what, measured, wanted, met in targets:
        out.append("| %s | %s | %s | %s | %s |" % ("primary" if primary else "gpu mode / info", what, measured,
                                                   wanted, "NO DATA" if met is None else ("yes" if met else "**NO**")))
    if check_fail:
        out += ["", "Failed checks: " + "; ".join(check_fail)]
    prim = [t for t in targets if t[0]]
    ok = all(t[4] for t in prim)
    missing = [t[1] for t in prim if t[4] is None]
    verdict = "PASS" if ok else "MISS"
    out += ["", "**Verdict: %s** (%d of %d primary targets met%s)" % (
        verdict, sum(1 for t in prim if t[4]), len(prim), "; no data: " + ", ".join(missing) if missing else ""), ""]
    return out, 0 if ok else 1
