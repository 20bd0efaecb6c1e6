"""Report of the complex LAPACK benchmark (bench/lapack/bench.ini, `lapack:complex`): libblasoffload.so's own
zgetrf / zpotrf / zgesv (and their c twins) over OpenBLAS's own LAPACK, auto mode with its default settings, against
OpenBLAS alone and cuSOLVER, with each stack's A/A spread, and the complex issue's targets.

Columns: openblas = OpenBLAS's own LAPACK alone; bo-auto = libblasoffload.so preloaded before it, BLASOFFLOAD_MODE=auto,
no policy file (built-in defaults); cuSOLVER = its device-only time (blasoffload_cusolver_ref, same run) and its bound
(device time + one pinned transfer of the matrix each way; gesv: getrf + getrs and their transfers). Each stack ran
once per round (one process each): seconds per round; A/A = max / min - 1 of a stack's rounds (the noise of a process
against another of the same stack); speedup = openblas / bo-auto, round by round (the same round's processes), the
median and the range over rounds. Targets (H100, host memory): zgetrf and zpotrf at n = 16384 >= 15x OpenBLAS, zgesv
(nrhs 1) at 8192 >= 10x; every check of the library's stack passes. The c twins are reported beside them, no target.
"""
import statistics

import report as common

STACKS = ["openblas", "openblas-bo-auto"]
SHORT = {"openblas": "openblas", "openblas-bo-auto": "bo-auto"}
ROUTINES = ["zgetrf", "zpotrf", "zgesv", "cgetrf", "cpotrf", "cgesv"]
# The complex issue's targets: (routine, n) -> speedup over OpenBLAS alone.
TARGETS = {("zgetrf", 16384): 15.0, ("zpotrf", 16384): 15.0, ("zgesv", 8192): 10.0}


def fmt_s(v):
    if v is None:
        return "-"
    return "%.3g" % v if v < 100 else "%.0f" % v


def aa(values):
    """A stack's A/A spread: max / min - 1 of its rounds' seconds, None with fewer than two."""
    v = [x for x in values if x]
    return max(v) / min(v) - 1 if len(v) > 1 else None


def fmt_pct(v):
    return "-" if v is None else "%.1f %%" % (100 * v)


def render(rows, contexts, args):
    pts, ref, notes = {}, {}, []
    for obj in rows:
        if "skipped" in obj:
            notes.append(obj)
            continue
        routine = str(obj.get("precision", "?")) + str(obj.get("driver"))
        if obj.get("stack") == "cusolver" and "device_s" in obj:
            ref[(routine, obj["n"])] = obj
        elif "seconds" in obj and obj.get("stack") in STACKS:
            # one line per (routine, n, stack, round): the round's timed median
            pts.setdefault((routine, obj["n"], obj["stack"]), {})[obj.get("round", 0)] = obj
    if not pts and not ref:
        return ["report.py: no measurements in %s" % args.path], 2
    intercept = common.load("lapack_intercept")  # its summary reader (BLASOFFLOAD_LOG=summary files)
    summaries = intercept.read_summaries(args.raw)

    def secs(routine, n, stack):
        return {r: p["seconds"] for r, p in sorted(pts.get((routine, n, stack), {}).items())}

    def speedups(routine, n):
        """openblas / bo-auto, round by round where both ran in a round, else of the medians."""
        a, b = secs(routine, n, "openblas"), secs(routine, n, "openblas-bo-auto")
        both = [a[r] / b[r] for r in a if r in b and b[r] > 0]
        if not both and a and b:
            both = [statistics.median(a.values()) / statistics.median(b.values())]
        return both

    def cusolver(routine, n):
        """(device-only s, bound s): gesv as getrf + getrs (device, and the matrix's and B's transfers)."""
        parts = [routine[0] + "getrf", routine[0] + "getrs"] if routine[1:] == "gesv" else [routine]
        if any((p, n) not in ref for p in parts):
            return None, None
        dev = sum(ref[(p, n)]["device_s"] for p in parts)
        return dev, dev + sum(ref[(p, n)]["h2d_s"] + ref[(p, n)]["d2h_s"] for p in parts)

    out = ["## Complex LAPACK: libblasoffload.so (auto, default settings) over OpenBLAS's LAPACK, against OpenBLAS "
           "alone and cuSOLVER", ""]
    out += ["- " + x for x in common.openblas_context([c for c in contexts if c.get("stack") != "cusolver"])]
    first = {}
    for c in contexts:
        first.setdefault(c.get("stack"), c)
    warnings = []
    cus = first.get("cusolver")
    if cus:
        out.append("- cuSOLVER reference: %s on %s%s" % (cus.get("cusolver") or "(not opened)", cus.get("gpu") or "?",
                                                       " -- " + cus["error"] if cus.get("error") else ""))
    for s in STACKS:
        c = first.get(s)
        if not c:
            out.append("- %s: no run reported its context" % s)
            continue
        z, cc = c.get("zgetrf_from", "?"), c.get("cgetrf_from", "?")
        line = "- %s: zgetrf_ from %s, cgetrf_ from %s" % (s, z, cc)
        if s == "openblas-bo-auto":
            pol = next((v["policy"] for k, v in sorted(summaries.items()) if k.startswith(s + "-") and v["policy"]), "")
            line += "; policy file %s%s" % (c.get("policy_file") or "(none)", "; " + pol if pol else "")
            if "libblasoffload" not in z + cc:
                warnings.append("%s: zgetrf_ did not come from libblasoffload.so (LAPACK not intercepted): its column "
                                "is OpenBLAS's LAPACK with the library preloaded" % s)
        elif "libopenblas" not in z:
            warnings.append("%s: zgetrf_ from %s, not OpenBLAS's" % (s, z))
        out.append(line)
    out += ["- WARNING " + w for w in warnings]
    out.append("")

    # Per routine and order: both stacks' rounds, their A/A, the speedup, cuSOLVER.
    ns = sorted({k[1] for k in pts} | {k[1] for k in ref})
    body, check_fail, other_fail, aa_all = [], [], [], {s: [] for s in STACKS}
    for routine in ROUTINES + sorted({k[0] for k in pts} - set(ROUTINES)):
        for n in ns:
            if not any((routine, n, s) in pts for s in STACKS):
                continue
            cells = [routine, n]
            for s in STACKS:
                v = secs(routine, n, s)
                bad = [p for p in pts.get((routine, n, s), {}).values() if p.get("check") != "ok"]
                for p in bad:
                    text = "%s n=%d %s round %s (info %s, ratio %s)" % (routine, n, s, p.get("round"), p.get("info"),
                                                                       p.get("check_ratio"))
                    (check_fail if s != "openblas" else other_fail).append(text)
                why = next((x["skipped"] for x in notes if x.get("stack") == s and x.get("n") in (n, None) and
                            x.get("precision") in (routine[0], None)), None)
                cell = ", ".join(fmt_s(x) for x in v.values()) or "-"
                if why and len(v) < 2:
                    cell += " (%s)" % why
                cells += [cell + (" FAIL" if bad else ""), fmt_pct(aa(v.values()))]
                if aa(v.values()) is not None:
                    aa_all[s].append(aa(v.values()))
            sp = speedups(routine, n)
            cells.append("-" if not sp else "%.1fx" % statistics.median(sp) +
                         (" (%.1f-%.1f)" % (min(sp), max(sp)) if len(sp) > 1 else ""))
            dev, bound = cusolver(routine, n)
            auto = secs(routine, n, "openblas-bo-auto")
            med = statistics.median(auto.values()) if auto else None
            firsts = [p.get("first_s") for p in pts.get((routine, n, "openblas-bo-auto"), {}).values()]
            cells += [fmt_s(dev), fmt_s(bound), common.fmt(common.ratio(med, dev)),
                      common.fmt(common.ratio(med, bound)), ", ".join(fmt_s(x) for x in firsts if x is not None) or "-"]
            body.append(cells)
    if body:
        out += ["### Seconds per round, A/A spread, speedup over OpenBLAS, against cuSOLVER", ""]
        out += common.table(["routine", "n", "openblas s", "openblas A/A", "bo-auto s", "bo-auto A/A",
                             "speedup openblas / bo-auto", "cuSOLVER device s", "cuSOLVER bound s", "bo-auto / device",
                             "bo-auto / bound", "bo-auto first call s"], body)
        out.append("")

    if ref:
        out += ["### cuSOLVER on the GPU (device-only median; the matrix's transfers from pinned memory)", ""]
        trs = [[r, n, fmt_s(o["device_s"]), fmt_s(o["h2d_s"]), fmt_s(o["d2h_s"]), fmt_s(o["bound_s"]),
                "%s (%.2g)" % (o.get("check", "?"), o.get("check_ratio", -1)) if r[1:] == "getrs" else o.get("check")]
               for (r, n), o in sorted(ref.items(), key=lambda kv: (kv[0][0][1:], "zc".find(kv[0][0][0]), kv[0][1]))]
        out += common.table(["routine", "n", "device s", "H2D s", "D2H s", "bound s", "check"], trs)
        out.append("")

    gpu_rows = []
    for k, v in sorted(summaries.items()):
        for routine, r in sorted(v["routines"].items()):
            if r["calls"] and routine[:1] in "cz" and routine[1:] in ("getrf", "getrs", "gesv", "potrf", "potrs"):
                gpu_rows.append([k, routine, r["calls"], r["cpu"], r["gpu"], r["fallback"]])
    if gpu_rows:
        out += ["### Where the library ran its LAPACK calls (BLASOFFLOAD_LOG=summary, per process, warm-up calls "
                "included)", ""]
        out += common.table(["run", "routine", "calls", "cpu", "gpu", "fallback"], gpu_rows)
        out.append("")
    if notes:
        out += ["### Not measured", ""]
        out += ["- %s" % ", ".join("%s=%s" % kv for kv in sorted(x.items())) for x in notes]
        out.append("")

    out += ["### Targets (the complex issue: H100, host memory, auto with default settings, against OpenBLAS with its "
            "own LAPACK)", ""]
    ok = True
    for (routine, n), target in TARGETS.items():
        sp = speedups(routine, n)
        a, b = secs(routine, n, "openblas"), secs(routine, n, "openblas-bo-auto")
        if not sp:
            ok = False
            out.append("- %s n=%d >= %gx OpenBLAS: NO DATA" % (routine, n, target))
            continue
        med = statistics.median(sp)
        # the range every pair of processes allows: the A/A spreads of both stacks
        lo, hi = min(a.values()) / max(b.values()), max(a.values()) / min(b.values())
        met = med >= target
        ok = ok and met
        out.append("- %s n=%d: %.1fx OpenBLAS (%s; range over processes %.1fx .. %.1fx%s), target >= %gx: %s" % (
            routine, n, med, "rounds " + ", ".join("%.1fx" % x for x in sp) if len(sp) > 1 else "one round",
            lo, hi, ", crosses the target" if lo < target <= hi else "", target, "PASS" if met else "MISS"))
    for (routine, n) in TARGETS:
        twin = "c" + routine[1:]
        sp = speedups(twin, n)
        if sp:
            out.append("  - %s n=%d (no target): %.1fx OpenBLAS" % (twin, n, statistics.median(sp)))
    for s in STACKS:
        if aa_all[s]:
            out.append("- A/A spread of %s across its rounds: median %s, largest %s" % (
                SHORT[s], fmt_pct(statistics.median(aa_all[s])), fmt_pct(max(aa_all[s]))))
    out.append("- every check of bo-auto passes: %s%s" % ("PASS" if not check_fail else "MISS",
                                                          " (%s)" % "; ".join(check_fail) if check_fail else ""))
    if other_fail:
        out.append("- checks that failed under OpenBLAS alone (not a target): %s" % "; ".join(other_fail))
    verdict = "PASS" if ok and not check_fail and not warnings else "MISS"
    out += ["", "**Verdict: %s**%s" % (verdict, " (warnings above)" if warnings else ""), ""]
    return out, 0 if verdict == "PASS" else 1


def plot_points(rows):
    by = {}
    for r in rows:
        if r.get("stack") in STACKS and "seconds" in r:
            by.setdefault("%s%s %s" % (r.get("precision"), r.get("driver"), r.get("n")), {})[
                "%s r%s" % (SHORT[r["stack"]], r.get("round", 0))] = r["seconds"]
    return sorted(by.items())
