"""Report of the mixed-sequence benchmark (bench/mix/bench.ini; issue 20, "never slower out of the box"): every point
(routine, precision, shape) of blasoffload_mix under the CPU alone and under libblasoffload.so out of the box
(bo-uncal: auto, built-in defaults) and calibrated (bo-cal), and issue 20's targets.

Columns: cpu = the CPU alone (calls: OpenBLAS's BLAS and LAPACK; drivers: reference LAPACK over OpenBLAS), seconds,
the median over rounds of each round's median call; a library stack's ratio = its time / the CPU's time in the same
round, the median over rounds and (range) the min-max over rounds; best = the better side as measured: the CPU
alone, or a library stack whose median is lower and that ran (some of) the point on the GPU (or where is unknown);
ran = where the library ran the point's calls, approximated from the summaries of round 1's processes
(BLASOFFLOAD_LOG=summary: each routine's cpu and gpu call counts; the other rounds assumed to decide alike), a
routine's gpu calls placed on its largest points first (the policy sends the large ones to the GPU), the untimed
factorizations of the solves on factors counted among their orders; drivers: gpu where the process put any BLAS
call on the GPU.
Targets (each library stack): (a) within 1.10x of the CPU alone at every point where the CPU alone is the best;
(b) within 1.10x of the best on >= 95% of the points and never above 1.5x; (c) the LAPACK routines (intercepted and
reference drivers) never slower than without the library: ratio <= 1.05 (the rounds' noise) at every order; (d) a
point the library ran on the CPU within 2% of the CPU alone where the CPU alone takes over 1 ms a call. Every check
of every stack passes.
Where the run has cpu-aa (the CPU alone again, run as a stack of its own: `--set "stack=cpu cpu-aa"`), a section
counts the same targets for it against the CPU alone: what an identical process misses in this protocol, the
machine's noise floor under the targets.
"""
import glob
import os
import re
import statistics

import report_beside as beside
import report_misses as misses
import report as common

STACKS = ["cpu", "bo-uncal", "bo-cal"]
BO = STACKS[1:]
AA = "cpu-aa"
LAPACK = {"getrf", "getrs", "gesv", "potrf", "potrs", "posv", "trtrs", "geqrf", "getri"}
ORDER = ["gemm", "gemv", "nrm2", "trsv", "trsm", "syrk", "getrf", "potrf", "getrs", "potrs", "trtrs", "gesv", "posv",
         "geqrf", "getri"]
NEAR_CPU = 1.10  # (a)
NEAR_BEST, SHARE, NEVER_ABOVE = 1.10, 0.95, 1.5  # (b)
LAPACK_NEVER = 1.05  # (c)
ROUTED, ROUTED_MIN_S = 1.02, 1e-3  # (d)
# Under 1 us a call, a per-call cost of tens of ns (the library's decision and forwarding) is alone over 10%: the
# misses there are counted apart (they are misses all the same).
TINY_S = 1e-6


def base(stack):
    """The drivers part's stacks (cpu-ref ...) and the logging ones (bo-uncal-log ...) are reported as the plain
    stack."""
    return re.sub(r"(-ref|-log)+$", "", stack)


def fmt_s(v):
    if v is None:
        return "-"
    if v < 1e-3:
        return "%.3g us" % (v * 1e6)
    return "%.3g ms" % (v * 1e3) if v < 1 else "%.3g s" % v


def read_summaries(raw):
    """{output name: {routine: {"cpu": n, "gpu": n}}} from the run folder's summary-<output>.log files."""
    out = {}
    if not raw:
        return out
    row = re.compile(r"^\s*([sd][a-z0-9]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s")
    for path in sorted(glob.glob(os.path.join(raw, "summary-*.log"))):
        name = os.path.basename(path)[len("summary-"):-len(".log")]
        table = out.setdefault(name, {})
        for line in open(path, errors="replace").read().splitlines():
            m = row.match(line)
            if m:
                r = table.setdefault(m.group(1), {"calls": 0, "cpu": 0, "gpu": 0})
                r["calls"] += int(m.group(2))
                r["cpu"] += int(m.group(3))
                r["gpu"] += int(m.group(4))
    return out


def where_points(points, summary):
    """{(routine, n, nrhs): "cpu" | "gpu" | "mixed"} for one calls process: each routine's gpu calls given to its
    largest points first (an approximation: the summary counts calls per routine, not per point; and its cpu counts
    also hold the BLAS calls a forwarded LAPACK call makes through the library, e.g. OpenBLAS's dtrtrs calling
    dtrsm_, hence the gpu counts, which cuSOLVER's runs do not inflate, are the ones placed). The untimed
    factorization before each solve on factors (getrs after getrf, potrs after potrf, getri after getrf) is one more
    call of the factorization at that order."""
    out = {}
    by_routine = {}
    for p in points:
        by_routine.setdefault(p["routine"], []).append((p["n"], p.get("nrhs", 0), p.get("calls", 0), True, p))
        setup = {"getrs": "getrf", "potrs": "potrf", "getri": "getrf"}.get(p["routine"][1:])
        if setup:
            by_routine.setdefault(p["routine"][0] + setup, []).append((p["n"], -1, 1, False, None))
    for routine, items in by_routine.items():
        counts = summary.get(routine)
        if not counts:
            continue
        left = counts["gpu"]
        for n, nrhs, calls, real, _ in sorted(items, key=lambda t: (t[0], t[1]), reverse=True):
            on_gpu = min(left, calls)
            left -= on_gpu
            if real:
                out[(routine, n, nrhs)] = "gpu" if on_gpu == calls else "cpu" if on_gpu == 0 else "mixed"
    return out


def aa_section(pts, ratios):
    """The targets' checks for cpu-aa against the CPU alone, where the run has it."""
    counts = {k: [0, 0] for k in ("a", "c", "d")}
    worst = []
    for (part, routine, n, nrhs), stacks in sorted(pts.items()):
        rs = ratios(stacks, AA)
        if not rs or not stacks.get("cpu"):
            continue
        med = statistics.median(rs)
        cpu = statistics.median([p["seconds"] for p in stacks["cpu"].values()])
        checks = [("a", True, NEAR_CPU), ("c", routine[1:] in LAPACK, LAPACK_NEVER), ("d", cpu > ROUTED_MIN_S, ROUTED)]
        for k, applies, limit in checks:
            if applies:
                counts[k][1] += 1
                counts[k][0] += med > limit
        worst.append((med, "%s %s n=%d%s %s" % (part, routine, n, " nrhs=%d" % nrhs if nrhs else "", common.fmt_range(rs))))
    if not worst:
        return []
    rounds = max(len(st.get(AA, {})) for st in pts.values())
    out = ["### The CPU alone against itself (cpu-aa: the same process again, as a stack of its own)", "",
           "What an identical process misses in this protocol (%d rounds), with the targets' limits:" % rounds,
           "- (a) above %.2fx: %d of %d points" % (NEAR_CPU, counts["a"][0], counts["a"][1]),
           "- (c) LAPACK points above %.2fx: %d of %d" % (LAPACK_NEVER, counts["c"][0], counts["c"][1]),
           "- (d) points over 1 ms a call above %.2fx: %d of %d" % (ROUTED, counts["d"][0], counts["d"][1]),
           "- the ten farthest: " + "; ".join(w for _, w in sorted(worst, reverse=True)[:10]), ""]
    return out


def render(rows, context_list, args):
    pts, totals, notes = {}, {}, []
    for obj in rows:
        if obj.get("total"):
            totals.setdefault((obj.get("part"), base(obj.get("stack", ""))), {})[obj.get("round", 0)] = obj
        elif "skipped" in obj:
            notes.append(obj)
        elif "seconds" in obj and base(obj.get("stack", "")) in STACKS + [AA]:
            key = (obj.get("part", "calls"), obj["routine"], obj["n"], obj.get("nrhs", 0))
            pts.setdefault(key, {}).setdefault(base(obj["stack"]), {})[obj.get("round", 0)] = obj
    if not pts:
        return ["report.py: no measurements in %s" % args.path], 2

    out = ["## Mixed sequence: every intercepted routine and reference LAPACK's drivers, the library against the CPU "
           "alone (issue 20)", ""]
    out += ["- " + x for x in common.openblas_context(context_list)]
    warnings = []
    contexts = {}
    for c in context_list:
        contexts.setdefault((c.get("part"), base(c.get("stack", ""))), c)
    for (part, s), c in sorted(contexts.items()):
        line = "- %s %s: sgemm_ from %s, dgetrf_ from %s, dgeqrf_ from %s" % (
            part, s, c.get("sgemm_from", "?"), c.get("dgetrf_from", "?"), c.get("dgeqrf_from", "?"))
        if s in BO:
            line += "; policy file %s" % (c.get("policy_file") or "(none)")
            if "libblasoffload" not in c.get("sgemm_from", ""):
                warnings.append("%s %s: sgemm_ did not come from libblasoffload.so" % (part, s))
            if part == "calls" and "libblasoffload" not in c.get("dgetrf_from", ""):
                warnings.append("%s %s: dgetrf_ did not come from libblasoffload.so (LAPACK not intercepted)" %
                                (part, s))
        out.append(line)
    for part in ("calls", "drivers"):
        cal, unc = contexts.get((part, "bo-cal"), {}), contexts.get((part, "bo-uncal"), {})
        if cal and (not cal.get("policy_file") or cal.get("policy_file") == unc.get("policy_file")):
            warnings.append("%s bo-cal had no policy file of its own (calibration failed or --no-calibrate): its "
                            "column is uncalibrated too" % part)
    out += ["- WARNING " + w for w in warnings]
    out.append("")

    # Where the library ran each point, per process (round), from the summaries.
    summaries = read_summaries(args.raw)
    where = {}  # (part, routine, n, nrhs, stack) -> set of answers over rounds
    by_process = {}
    for (part, routine, n, nrhs), stacks in pts.items():
        for s, per_round in stacks.items():
            for r, p in per_round.items():
                by_process.setdefault((part, s, r), []).append(p)
    named = {}  # (part, stack, round) -> summary, from the names <stack>-<part>-r<round>
    for name, summ in summaries.items():
        m = re.fullmatch(r"(.*)-(calls|drivers)-r(\d+)", name)
        if m:
            named[(m.group(2), base(m.group(1)), int(m.group(3)))] = summ
    for (part, s, r), plist in by_process.items():
        summ = named.get((part, s, r))
        if s not in BO or summ is None:
            continue
        if part == "drivers":
            w = "gpu" if any(v["gpu"] for v in summ.values()) else "cpu"
            ans = {(p["routine"], p["n"], p.get("nrhs", 0)): w for p in plist}
        else:
            ans = where_points(plist, summ)
        for (routine, n, nrhs), w in ans.items():
            where.setdefault((part, routine, n, nrhs, s), set()).add(w)

    def median_s(per_round):
        v = [p["seconds"] for p in per_round.values()]
        return statistics.median(v) if v else None

    def ratios(stacks, s, ref="cpu"):
        a, b = stacks.get(s, {}), stacks.get(ref, {})
        return [a[r]["seconds"] / b[r]["seconds"] for r in a if r in b and b[r]["seconds"] > 0]

    miss = {k: [] for k in ("a", "b_above", "c", "d")}
    missed = {}  # (part, routine, n, nrhs, stack) -> {"targets": the targets it missed, "best": the best stack}
    near_best = {s: [0, 0] for s in BO}  # within 1.10x of the best, points
    counted = {k: 0 for k in ("a", "c", "d")}
    tiny = {"a": 0, "b": 0}  # misses at points under TINY_S a call on the CPU alone
    check_fail = []
    for part in ("calls", "drivers"):
        keys = sorted((k for k in pts if k[0] == part),
                      key=lambda k: (ORDER.index(k[1][1:]) if k[1][1:] in ORDER else 99, k[1][0], k[2], k[3]))
        if not keys:
            continue
        trs = []
        for key in keys:
            _, routine, n, nrhs = key
            stacks = pts[key]
            for s, per_round in stacks.items():
                for r, p in per_round.items():
                    if p.get("check") != "ok":
                        check_fail.append("%s n=%d nrhs=%d %s r%s (info %s, ratio %s)" % (
                            routine, n, nrhs, s, r, p.get("info"), p.get("check_ratio")))
            meds = {s: median_s(stacks[s]) for s in STACKS if stacks.get(s)}
            cpu = meds.get("cpu")
            # The better side: a library stack only where it was faster than the CPU alone and put (some of) the
            # point on the GPU (or where it ran is unknown); a library stack that ran it on the CPU is the CPU side,
            # whatever the noise.
            best_s = "cpu" if cpu is not None else None
            for s in BO:
                ws = where.get((part, routine, n, nrhs, s), set())
                if s in meds and (best_s is None or meds[s] < meds[best_s]) and ws != {"cpu"}:
                    best_s = s
            best = meds.get(best_s)
            cells = [routine, n, nrhs or "-", fmt_s(cpu)]
            label = "%s n=%d%s" % (routine, n, " nrhs=%d" % nrhs if nrhs else "")
            for s in BO:
                rs = ratios(stacks, s)
                ws = where.get((part, routine, n, nrhs, s), set())
                w = "/".join(sorted(ws)) if ws else "?"
                cells += [common.fmt_range(rs), w]
                if not rs or cpu is None:
                    continue
                med = statistics.median(rs)
                if best_s == "cpu":  # (a)
                    counted["a"] += 1
                    if med > NEAR_CPU:
                        miss["a"].append("%s %s %.2f" % (label, s, med))
                        missed.setdefault((part, routine, n, nrhs, s), {"targets": set(), "best": best_s})["targets"].add("a")
                        tiny["a"] += cpu < TINY_S
                to_best = meds[s] / best if best else None
                if to_best is not None:  # (b)
                    near_best[s][1] += 1
                    near_best[s][0] += to_best <= NEAR_BEST
                    tiny["b"] += to_best > NEAR_BEST and cpu < TINY_S
                    if to_best > NEAR_BEST:
                        missed.setdefault((part, routine, n, nrhs, s), {"targets": set(), "best": best_s})["targets"].add("b")
                    if to_best > NEVER_ABOVE:
                        miss["b_above"].append("%s %s %.2fx the best (%s)" % (label, s, to_best, best_s))
                if routine[1:] in LAPACK:  # (c)
                    counted["c"] += 1
                    if med > LAPACK_NEVER:
                        miss["c"].append("%s %s %.2f" % (label, s, med))
                        missed.setdefault((part, routine, n, nrhs, s), {"targets": set(), "best": best_s})["targets"].add("c")
                if ws == {"cpu"} and cpu > ROUTED_MIN_S:  # (d)
                    counted["d"] += 1
                    if med > ROUTED:
                        miss["d"].append("%s %s %.3f" % (label, s, med))
                        missed.setdefault((part, routine, n, nrhs, s), {"targets": set(), "best": best_s})["targets"].add("d")
            cells.append(best_s or "-")
            trs.append(cells)
        out += ["### %s: seconds a call on the CPU alone, the library's ratios to it (< 1: faster)" % part, ""]
        out += common.table(["routine", "n", "nrhs", "cpu", "bo-uncal / cpu", "bo-uncal ran", "bo-cal / cpu",
                             "bo-cal ran", "best"], trs)
        out.append("")

    # The whole sequence.
    tot_rows = []
    for (part, s), per_round in sorted(totals.items()):
        cpu_r = totals.get((part, "cpu"), {})
        rs = [per_round[r]["calls_s"] / cpu_r[r]["calls_s"] for r in per_round if r in cpu_r and
              cpu_r[r]["calls_s"] > 0]
        tot_rows.append([part, s, ", ".join("%.3g" % per_round[r]["calls_s"] for r in sorted(per_round)),
                         ", ".join("%.3g" % per_round[r]["wall_s"] for r in sorted(per_round)),
                         common.fmt_range(rs) if s != "cpu" else "-"])
    if tot_rows:
        out += ["### The whole sequence (seconds in the calls, first calls included; wall: with inputs, restores and "
                "checks), per round", ""]
        out += common.table(["part", "stack", "calls s", "wall s", "calls / cpu"], tot_rows)
        out.append("")
    if notes:
        out += ["### Not measured", ""]
        out += ["- %s" % ", ".join("%s=%s" % kv for kv in sorted(x.items())) for x in notes[:40]]
        if len(notes) > 40:
            out.append("- ... and %d more" % (len(notes) - 40))
        out.append("")

    out += aa_section(pts, ratios)
    out += misses.section(pts, missed, where)
    out += beside.section(pts)
    out += ["### Targets (issue 20)", ""]
    ok_a = counted["a"] > 0 and not miss["a"]
    out.append("- (a) within %.2fx of the CPU alone at every point where the CPU alone is the best (%d stack-points): "
               "%s%s" % (NEAR_CPU, counted["a"], "PASS" if ok_a else "MISS",
                         " (%s)" % "; ".join(miss["a"]) if miss["a"] else ""))
    if miss["a"]:
        out.append("  - of those misses, %d at points under 1 us a call on the CPU alone" % tiny["a"])
    ok_b = not miss["b_above"] and all(t and k / t >= SHARE for k, t in near_best.values())
    out.append("- (b) within %.2fx of the best on >= %d%% of the points (%s), never above %.1fx: %s%s" % (
        NEAR_BEST, SHARE * 100, ", ".join("%s %d of %d" % (s, k, t) for s, (k, t) in near_best.items()), NEVER_ABOVE,
        "PASS" if ok_b else "MISS", " (%s)" % "; ".join(miss["b_above"]) if miss["b_above"] else ""))
    if tiny["b"]:
        out.append("  - of the stack-points above %.2fx the best, %d at points under 1 us a call on the CPU alone" % (
            NEAR_BEST, tiny["b"]))
    ok_c = counted["c"] > 0 and not miss["c"]
    out.append("- (c) LAPACK calls never slower than without the library: ratio <= %.2f at every order (%d "
               "stack-points): %s%s" % (LAPACK_NEVER, counted["c"], "PASS" if ok_c else "MISS",
                                        " (%s)" % "; ".join(miss["c"]) if miss["c"] else ""))
    ok_d = not miss["d"]
    out.append("- (d) a call the library ran on the CPU within %d%% of the CPU alone where that takes over 1 ms "
               "(%d stack-points; where: approximated from the summaries): %s%s" % (
                   round((ROUTED - 1) * 100), counted["d"], "PASS" if ok_d else "MISS",
                   " (%s)" % "; ".join(miss["d"]) if miss["d"] else ""))
    if not summaries:
        out.append("  - no summary logs (--raw): where the points ran is unknown, (d) counted nothing")
    out.append("- every check of every stack passes: %s%s" % (
        "PASS" if not check_fail else "MISS", " (%s)" % "; ".join(check_fail[:20]) if check_fail else ""))
    verdict = "PASS" if ok_a and ok_b and ok_c and ok_d and not check_fail and not warnings else "MISS"
    out += ["", "**Verdict: %s**%s" % (verdict, " (warnings above)" if warnings else ""), ""]
    return out, 0 if verdict == "PASS" else 1
