"""Report of the intercept benchmark (bench/lapack/bench.ini, `lapack:intercept`; issue 18): libblasoffload.so's own
LAPACK entry points over OpenBLAS's LAPACK against OpenBLAS alone and against cuSOLVER, and issue 18's targets.

Columns: openblas = OpenBLAS's own LAPACK alone; bo-auto = libblasoffload.so preloaded before it, auto mode, no policy
file (uncalibrated); bo-cal = the same with the calibration's policy file; bo-gpu = gpu mode; cuSOLVER bound = its
device-only time + one pinned transfer of the matrix each way (blasoffload_cusolver_ref, same run). Seconds are the
median of the timed calls after the warm-up ones (the library's stacks: two, so the GPU's start and cuSOLVER's load
are not in them; their first call is shown as "first"); with rounds (the sweep up to 4096) the median of the rounds'
medians, and the ratios to OpenBLAS taken round by round (the same round's processes), their range the spread.
Targets: ?getrf / ?potrf at n = 16384 within the seconds of issue 18 and within 1.3x of the cuSOLVER bound; ?gesv
(nrhs 1) within 1.3x of cuSOLVER's getrf + getrs + the transfers; auto (both) / openblas <= 1.05 at every order
(never slower than the CPU LAPACK alone); every check of the library's stacks passes. Repeated ?getrs / ?potrs on
the same factors: time per solve after the first against the first, the calls that ran on the GPU, and the module's
residency line (device copies reused, MiB not moved) per process.
"""
import glob
import os
import re
import statistics

import report as common

STACKS = ["openblas", "openblas-bo-auto", "openblas-bo-cal", "openblas-bo-gpu"]
SHORT = {"openblas": "openblas", "openblas-bo-auto": "bo-auto", "openblas-bo-cal": "bo-cal",
         "openblas-bo-gpu": "bo-gpu"}
BO = STACKS[1:]
AUTO = ["openblas-bo-auto", "openblas-bo-cal"]
FACTOR = ["sgetrf", "dgetrf", "spotrf", "dpotrf"]
# Issue 18: seconds at n = 16384 from host memory through the intercepted LAPACK.
SECONDS_TARGET = {"sgetrf": 0.25, "dgetrf": 0.30, "spotrf": 0.12, "dpotrf": 0.15}
TARGET_N = 16384
BOUND_FACTOR = 1.3
NEVER_SLOWER = 1.05
ELEMENT = {"s": 4, "d": 8}


def fmt_s(v):
    if v is None:
        return "-"
    return "%.3g" % v if v < 100 else "%.0f" % v


def fmt_r(v):
    return "-" if v is None else "%.2f" % v


def parse_bytes(text):
    m = re.fullmatch(r"([\d.]+)\s*(B|KB|MB|GB|TB)", text.strip())
    if not m:
        return None
    return float(m.group(1)) * 1000 ** ["B", "KB", "MB", "GB", "TB"].index(m.group(2))


RESIDENCY = re.compile(r"residency: (\d+) hits, (\d+) copies made, ([\d.]+) MiB uploaded \(([\d.]+) MiB of it "
                       r"re-uploaded written pages\), ([\d.]+) MiB not moved")


def read_summaries(raw):
    """{(output name): {"policy": line, "routines": {routine: {calls, cpu, gpu, fallback, bytes}}, "residency":
    {hits, copies, uploaded_mib, not_moved_mib} or None}} from the run folder's summary-<output>.log files
    (BLASOFFLOAD_LOG=summary). The routines' bytes are their operands' sizes, not what moved."""
    out = {}
    if not raw:
        return out
    row = re.compile(r"^\s*([sdcz][a-z0-9]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+ [KMGT]?B)\s")
    for path in sorted(glob.glob(os.path.join(raw, "summary-*.log"))):
        name = os.path.basename(path)[len("summary-"):-len(".log")]
        info = {"policy": "", "routines": {}, "gpu": "", "residency": None}
        for line in open(path, errors="replace").read().splitlines():
            s = line.strip()
            m = RESIDENCY.search(s)
            if m:  # the module's line at exit: what its device copies saved over the whole process
                info["residency"] = {"hits": int(m.group(1)), "copies": int(m.group(2)),
                                     "uploaded_mib": float(m.group(3)), "not_moved_mib": float(m.group(5))}
            if s.startswith("policy:") and not info["policy"]:
                # the file or built-in defaults, with its parenthesis; the derivation notes after it are long
                info["policy"] = re.match(r"policy: [^;(]*(\([^)]*\))?", s).group(0)
            elif s.startswith("GPU:") and not info["gpu"]:
                info["gpu"] = s
            m = row.match(line)
            if m:
                r = info["routines"].setdefault(m.group(1), {"calls": 0, "cpu": 0, "gpu": 0, "fallback": 0,
                                                             "bytes": 0.0})
                for k, g in (("calls", 2), ("cpu", 3), ("gpu", 4), ("fallback", 5)):
                    r[k] += int(m.group(g))
                r["bytes"] += parse_bytes(m.group(7)) or 0.0
        out[name] = info
    return out


def render(rows, context_list, args):
    pts, ref, notes = {}, {}, []
    for obj in rows:
        if "skipped" in obj:
            notes.append(obj)
            continue
        routine = str(obj.get("precision", "s")) + str(obj.get("driver"))
        if obj.get("stack") == "cusolver" and "device_s" in obj:
            ref[(routine, obj["n"])] = obj
        elif "seconds" in obj and obj.get("stack") in STACKS:
            pts.setdefault((routine, obj["n"], obj["stack"]), []).append(obj)
    if not pts and not ref:
        return ["report.py: no measurements in %s" % args.path], 2

    def value(routine, n, stack, key="seconds"):
        v = [p.get(key) for p in pts.get((routine, n, stack), []) if p.get(key) is not None]
        return statistics.median(v) if v else None

    def ratios(routine, n, stack, base="openblas"):
        """The ratio stack / base, round by round where both have rounds (else of the medians)."""
        a = {p.get("round", 0): p["seconds"] for p in pts.get((routine, n, stack), [])}
        b = {p.get("round", 0): p["seconds"] for p in pts.get((routine, n, base), [])}
        both = [a[r] / b[r] for r in a if r in b and b[r] > 0]
        if not both and a and b:
            both = [statistics.median(a.values()) / statistics.median(b.values())]
        return both

    def bound(routine, n):
        r = ref.get((routine, n))
        return r["device_s"] + r["h2d_s"] + r["d2h_s"] if r else None

    out = ["## LAPACK intercepted: libblasoffload.so over OpenBLAS's own LAPACK, against OpenBLAS alone and cuSOLVER",
           ""]
    contexts = {}
    for c in context_list:
        contexts.setdefault(c.get("stack"), c)
    out += ["- " + x for x in common.openblas_context([c for c in context_list if c.get("stack") != "cusolver"])]
    warnings = []
    cus = contexts.get("cusolver")
    if cus:
        out.append("- cuSOLVER reference: %s on %s%s" % (cus.get("cusolver") or "(not opened)", cus.get("gpu") or "?",
                                                       " -- " + cus["error"] if cus.get("error") else ""))
    summaries = read_summaries(args.raw)
    for s in STACKS:
        c = contexts.get(s)
        if not c:
            out.append("- %s: no run reported its context" % s)
            continue
        line = "- %s: sgetrf_ from %s, dgetrf_ from %s" % (s, c.get("sgetrf_from", "?"), c.get("dgetrf_from", "?"))
        if s in BO:
            pol = next((v["policy"] for k, v in summaries.items() if k.startswith(s + "-") and v["policy"]), "")
            line += "; policy file %s%s" % (c.get("policy_file") or "(none)", "; " + pol if pol else "")
            if "libblasoffload" not in c.get("sgetrf_from", "") + c.get("dgetrf_from", ""):
                warnings.append("%s: sgetrf_ did not come from libblasoffload.so (LAPACK not intercepted): its column "
                                "is OpenBLAS's LAPACK with the library preloaded, not the library's LAPACK" % s)
        elif "libopenblas" not in c.get("sgetrf_from", ""):
            warnings.append("%s: sgetrf_ from %s, not OpenBLAS's" % (s, c.get("sgetrf_from")))
        out.append(line)
    cal, unc = contexts.get("openblas-bo-cal", {}), contexts.get("openblas-bo-auto", {})
    if cal and (not cal.get("policy_file") or cal.get("policy_file") == unc.get("policy_file")):
        warnings.append("openblas-bo-cal had no policy file of its own (calibration failed or --no-calibrate): its "
                        "column is uncalibrated too")
    for k, v in sorted(summaries.items()):
        if k.startswith("openblas-bo-cal-") and "built-in defaults" in v["policy"]:
            warnings.append("openblas-bo-cal (%s) ran on the built-in defaults: %s" % (k, v["policy"]))
            break
    out += ["- WARNING " + w for w in warnings]
    out.append("")

    # cuSOLVER's reference.
    if ref:
        out += ["### cuSOLVER on the GPU (device-only, median; the matrix's transfers from pinned memory)", ""]
        trs = []
        for (routine, n), r in sorted(ref.items(), key=lambda kv: (kv[0][0][1:], kv[0][0][0], kv[0][1])):
            if routine[1:] in ("getrf", "potrf"):
                b = r["device_s"] + r["h2d_s"] + r["d2h_s"]
                trs.append([routine, n, fmt_s(r["device_s"]), "%s (%.1f GB/s)" % (fmt_s(r["h2d_s"]), r["h2d_gbs"]),
                            "%s (%.1f GB/s)" % (fmt_s(r["d2h_s"]), r["d2h_gbs"]), fmt_s(b), fmt_s(BOUND_FACTOR * b),
                            r.get("check", "?")])
            else:
                trs.append([routine, n, fmt_s(r["device_s"]), fmt_s(r["h2d_s"]) + " (B)", fmt_s(r["d2h_s"]) + " (B)",
                            fmt_s(r["device_s"] + r["h2d_s"] + r["d2h_s"]), "-",
                            "%s (%.2g)" % (r.get("check", "?"), r.get("check_ratio", -1))])
        out += common.table(["routine", "n", "device s", "H2D s", "D2H s", "bound s", "1.3 x bound", "check"], trs)
        out.append("")

    # The factorizations at every order.
    ns = sorted({k[1] for k in pts} | {k[1] for k in ref if k[0] in FACTOR})
    miss_never, miss_bound, miss_seconds, check_fail, other_fail = [], [], [], [], []
    spreads = []
    for routine in FACTOR:
        rows_t = []
        for n in ns:
            if not any((routine, n, s) in pts for s in STACKS) and (routine, n) not in ref:
                continue
            cells = [routine, n]
            for s in STACKS:
                v = value(routine, n, s)
                bad = [p for p in pts.get((routine, n, s), []) if p.get("check") != "ok"]
                cell = fmt_s(v)
                if bad:
                    cell += " FAIL"
                    text = "%s n=%d %s (info %s, ratio %s)" % (routine, n, s, bad[0].get("info"),
                                                               bad[0].get("check_ratio"))
                    (check_fail if s in BO else other_fail).append(text)
                if v is None:
                    why = next((x["skipped"] for x in notes if x.get("stack") == s and
                                x.get("n") in (n, None) and x.get("precision") in (routine[0], None)), None)
                    cell = "(%s)" % why if why else "-"
                cells.append(cell)
            b = bound(routine, n)
            cells.append(fmt_s(b))
            for s in AUTO:
                rs = ratios(routine, n, s)
                if rs:
                    med = statistics.median(rs)
                    cells.append(fmt_r(med) + (" (%.2f-%.2f)" % (min(rs), max(rs)) if len(rs) > 1 else ""))
                    if len(rs) > 1:
                        spreads.append(max(rs) - min(rs))
                    if med > NEVER_SLOWER:
                        miss_never.append("%s n=%d %s %.2f" % (routine, n, SHORT[s], med))
                else:
                    cells.append("-")
            g = value(routine, n, "openblas-bo-gpu")
            o = value(routine, n, "openblas")
            cells.append(fmt_r(common.ratio(g, o)))
            cells.append(fmt_r(common.ratio(g, b)))
            first = value(routine, n, "openblas-bo-auto", "first_s")
            cells.append(fmt_s(first) if (routine, n, "openblas-bo-auto") in pts else "-")
            rows_t.append(cells)
        if not rows_t:
            continue
        out += ["### %s (seconds; ratios < 1: faster than OpenBLAS alone)" % routine, ""]
        out += common.table(["routine", "n", "openblas", "bo-auto", "bo-cal", "bo-gpu", "cuSOLVER bound",
                             "bo-auto/openblas", "bo-cal/openblas", "bo-gpu/openblas", "bo-gpu/bound",
                             "bo-auto first call"], rows_t)
        out.append("")

    # The targets at n = 16384.
    target_rows = []
    for routine in FACTOR:
        b = bound(routine, TARGET_N)
        for s in BO:
            v = value(routine, TARGET_N, s)
            if v is None:
                miss_seconds.append("%s %s not measured" % (routine, SHORT[s]))
                continue
            ok_s = v <= SECONDS_TARGET[routine]
            ok_b = b is not None and v <= BOUND_FACTOR * b
            if not ok_s:
                miss_seconds.append("%s %s %.3g s" % (routine, SHORT[s], v))
            if not ok_b:
                miss_bound.append("%s %s %.3g s against %s" % (routine, SHORT[s], v,
                                                               "no cuSOLVER bound" if b is None else
                                                               "%.3g s" % (BOUND_FACTOR * b)))
            target_rows.append([routine, SHORT[s], fmt_s(v), "<= %.2f: %s" % (SECONDS_TARGET[routine],
                                                                               "PASS" if ok_s else "MISS"),
                                "%s: %s" % (fmt_s(None if b is None else BOUND_FACTOR * b), "PASS" if ok_b else "MISS"),
                                fmt_r(common.ratio(v, value(routine, TARGET_N, "openblas")))])
    if target_rows:
        out += ["### Issue 18's targets at n = %d (host memory, the library's stacks)" % TARGET_N, ""]
        out += common.table(["routine", "stack", "seconds", "target s", "1.3 x cuSOLVER bound", "/ openblas"],
                            target_rows)
        out.append("")

    # gesv end to end, and the repeated solves.
    solve_rows, gesv_miss, gesv_measured = [], [], []
    for p, n in sorted({(k[0][0], k[1]) for k in pts if k[0][1:] == "gesv"}):
        gesv_b = None
        if (p + "getrf", n) in ref and (p + "getrs", n) in ref:
            lu, rs = ref[(p + "getrf", n)], ref[(p + "getrs", n)]
            gesv_b = lu["device_s"] + lu["h2d_s"] + lu["d2h_s"] + rs["device_s"] + rs["h2d_s"] + rs["d2h_s"]
        for s in STACKS:
            v = value(p + "gesv", n, s)
            if v is None:
                continue
            verdict = "-"
            if s in BO and n == TARGET_N:
                gesv_measured.append(s)
                ok = gesv_b is not None and v <= BOUND_FACTOR * gesv_b
                verdict = "%s (1.3 x bound %s)" % ("PASS" if ok else "MISS", fmt_s(None if gesv_b is None else
                                                                                    BOUND_FACTOR * gesv_b))
                if not ok:
                    gesv_miss.append("%sgesv %s %.3g s" % (p, SHORT[s], v))
            bad = [q for q in pts[(p + "gesv", n, s)] if q.get("check") != "ok"]
            if bad:
                (check_fail if s in BO else other_fail).append("%sgesv n=%d %s" % (p, n, s))
            solve_rows.append([p + "gesv", n, SHORT[s], fmt_s(v) + (" FAIL" if bad else ""),
                               fmt_s(value(p + "gesv", n, s, "first_s")),
                               fmt_r(common.ratio(v, value(p + "getrf", n, s))), verdict])
    if solve_rows:
        out += ["### ?gesv, one right-hand side, end to end (target at n = %d)" % TARGET_N, ""]
        out += common.table(["routine", "n", "stack", "seconds", "first call", "gesv / getrf", "target"], solve_rows)
        out.append("")
    rep_rows, res_rows = [], []
    for routine in ("sgetrs", "dgetrs", "spotrs", "dpotrs"):
        for n in sorted({k[1] for k in pts if k[0] == routine}):
            r = ref.get((routine, n))
            rb = r["device_s"] + r["h2d_s"] + r["d2h_s"] if r else None
            for s in STACKS:
                q = pts.get((routine, n, s))
                if not q:
                    continue
                q = q[0]
                summ = summaries.get("%s-n%d-%s" % (s, n, routine[0]), {}).get("routines", {}).get(routine)
                on_gpu = "%d / %d" % (summ["gpu"], summ["calls"]) if summ else "-"
                if q.get("check") != "ok":
                    (check_fail if s in BO else other_fail).append("%s n=%d %s" % (routine, n, s))
                rep_rows.append([routine, n, SHORT[s], fmt_s(q["first_s"]), fmt_s(q["seconds"]),
                                 fmt_r(common.ratio(q["seconds"], q["first_s"])), q.get("reps"), on_gpu, fmt_s(rb),
                                 fmt_r(common.ratio(q["seconds"], rb)), q.get("check", "?")])
    for k, v in sorted(summaries.items()):
        res = v.get("residency")
        if res and re.search(r"-n\d+-[sd]$", k):
            m = re.search(r"-n(\d+)-([sd])$", k)
            mib = int(m.group(1)) ** 2 * ELEMENT[m.group(2)] / 1048576.0
            res_rows.append([k, res["hits"], res["copies"], "%.0f" % res["uploaded_mib"], "%.0f" % res["not_moved_mib"],
                             "%.1f" % (res["not_moved_mib"] / mib)])
    if rep_rows:
        out += ["### Repeated ?getrs / ?potrs (nrhs 1) on the same factors (factored once, untimed)", "",
                "first: the first solve after the factorization; repeated: median of the later ones; on the GPU: the "
                "routine's calls there / all (warm-up ones included; summary); cuSOLVER: its solve on device-resident "
                "factors + B both ways.", ""]
        out += common.table(["routine", "n", "stack", "first s", "repeated s", "repeated / first", "timed",
                             "on the GPU", "cuSOLVER s", "repeated / cuSOLVER", "check"], rep_rows)
        out.append("")
    if res_rows:
        out += ["Device copies reused over each whole process (the module's residency line; getrs and potrs on "
                "resident factors show as hits and MiB not moved, one matrix per hit):", ""]
        out += common.table(["run", "hits", "copies made", "MiB uploaded", "MiB not moved", "matrices not moved"],
                            res_rows)
        out.append("")

    gpu_rows = []
    for k, v in sorted(summaries.items()):
        for routine, r in sorted(v["routines"].items()):
            if r["calls"] and re.fullmatch(r"[sd](getrf|getrs|gesv|potrf|potrs|posv|trtrs)", routine):
                gpu_rows.append([k, routine, r["calls"], r["cpu"], r["gpu"], r["fallback"],
                                 "%.3g" % (r["bytes"] * 1e-9)])
    if gpu_rows:
        out += ["### Where the library ran its LAPACK calls (BLASOFFLOAD_LOG=summary, per process)", ""]
        out += common.table(["run", "routine", "calls", "cpu", "gpu", "fallback", "operands GB (all calls)"], gpu_rows)
        out.append("")

    if notes:
        out += ["### Not measured", ""]
        out += ["- %s" % ", ".join("%s=%s" % kv for kv in sorted(x.items())) for x in notes]
        out.append("")

    out += ["### Targets", ""]
    measured_big = any((r, TARGET_N, s) in pts for r in FACTOR for s in BO)
    ok_seconds = measured_big and not miss_seconds
    out.append("- ?getrf / ?potrf at n = %d within %s s (every library stack): %s%s" % (
        TARGET_N, " / ".join("%s %.2f" % kv for kv in SECONDS_TARGET.items()), "PASS" if ok_seconds else "MISS",
        " (%s)" % "; ".join(miss_seconds) if miss_seconds else ""))
    ok_bound = measured_big and not miss_bound
    out.append("- ... and within %.1fx of cuSOLVER's device time + one pinned transfer each way: %s%s" % (
        BOUND_FACTOR, "PASS" if ok_bound else "MISS", " (%s)" % "; ".join(miss_bound) if miss_bound else ""))
    ok_gesv = len(gesv_measured) == 2 * len(BO) and not gesv_miss  # both precisions, every library stack
    out.append("- ?gesv nrhs 1 at n = %d within %.1fx of cuSOLVER's getrf + getrs + transfers: %s%s" % (
        TARGET_N, BOUND_FACTOR, "PASS" if ok_gesv else "MISS", " (%s)" % "; ".join(gesv_miss) if gesv_miss else ""))
    reused = ["%s %d hits" % (r[0], r[1]) for r in res_rows if re.match(r"openblas-bo-(gpu|auto|cal)-n%d-" % TARGET_N,
                                                                     r[0])]
    out.append("- repeated ?getrs / ?potrs on resident factors (not a pass/fail target here; see their table): %s" % (
        "; ".join(reused) if reused else "no residency line in the summaries"))
    measured_never = any((r, n, s) in pts for r in FACTOR for n in ns for s in AUTO)
    ok_never = measured_never and not miss_never
    out.append("- never slower than OpenBLAS's LAPACK alone: bo-auto and bo-cal / openblas <= %.2f at every order "
               "(%s): %s%s" % (NEVER_SLOWER, ", ".join(str(n) for n in ns), "PASS" if ok_never else "MISS",
                               " (%s)" % ", ".join(miss_never) if miss_never else ""))
    if spreads:
        out.append("  - spread of those ratios across rounds (max - min, orders with rounds): median %.3f, largest "
                   "%.3f" % (statistics.median(spreads), max(spreads)))
    out.append("- every check of the library's stacks passes: %s%s" % (
        "PASS" if not check_fail else "MISS", " (%s)" % "; ".join(check_fail) if check_fail else ""))
    if other_fail:
        out.append("- checks that failed under OpenBLAS alone (not a target): %s" % "; ".join(other_fail))
    verdict = "PASS" if ok_seconds and ok_bound and ok_gesv and ok_never and not check_fail and not warnings else \
        "MISS"
    out += ["", "**Verdict: %s**%s" % (verdict, " (warnings above)" if warnings else ""), ""]
    return out, 0 if verdict == "PASS" else 1
