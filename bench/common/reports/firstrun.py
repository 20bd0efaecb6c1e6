"""Report of the first-run benchmark (bench/firstrun/bench.ini): a sequence of short programs (blasoffload_firstrun,
one routine each) under the CPU alone and under libblasoffload.so from an empty configuration directory (bo-uncal),
then calibrated (bo-cal); in the load part beside a CPU load. One report per part (firstrun_idle, firstrun_load).

Per pass and program: the process's wall time as the runner measured it (start and exit included), the first call's
time, and the library's ratios to the CPU alone of the same part and pass; the CPU alone's pass 2 / pass 1 (A/A);
where the library ran the program's calls and which policy it had (its calls log); per call at n >= 1024 the model's
predicted CPU time against the measured one (the call's own time where it ran on the CPU, else the CPU alone's time
of the same program, pass and call); the calibrations' outcome (blasoffload-calibrate's run and the library's own
auto-calibration: exit status, whether a file was written, its LAPACK rates against the idle calibration's).
Targets (each library stack and pass): idle: every program's wall time within 1.10x of the CPU alone, its first call
within 1.5x, every predicted CPU time at n >= 1024 within 2x of the measured one; load: every program within 1.10x of
the CPU alone under the same load, no policy file written from measurements beside the load; both: every check
passes and every program ran. A miss lies within the A/A spread when it meets the limit against the slower of the CPU
alone's two passes.
"""
import glob
import json
import os
import re
import tarfile

import report as common
import report_decisions as decisions

WALL, FIRST, PRED = 1.10, 1.5, 2.0
PRED_MIN_N = 1024
LIB = ["bo-uncal", "bo-cal"]
SOLVES = ("gesv", "potrs", "getrs")
SPEC_RE = re.compile(r"^([sd][a-z]+)-(\d+)x(\d+)(?:-(\d+))?$")


def key_of_spec(spec):
    """(routine, n, calls, nrhs) of a program's spec (dpotrs-8192x3-64), None when it is not one."""
    m = SPEC_RE.match(spec or "")
    return (m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4) or 1)) if m else None


def key_of_row(row):
    return (row["routine"], row["n"], row.get("calls", len(row.get("call_s", []))), row.get("nrhs", 1))


def label(key):
    routine, n, calls, nrhs = key
    return "%s %d x%d%s" % (routine, n, calls, " nrhs %d" % nrhs if routine[1:] in SOLVES else "")


def fmt_s(v):
    return "-" if v is None else "%.3g" % v if v < 100 else "%.0f" % v


def fmt_r(v, limit=None):
    if v is None:
        return "-"
    return ("**%.2f**" if limit and v > limit else "%.2f") % v


def ratio(a, b):
    return a / b if a is not None and b else None


class Run:
    """The part's measurements: programs by (stack, pass, key), the runner's process lines, notes, the calls logs."""

    def __init__(self, rows, raw):
        self.raw = raw
        self.res, self.proc, self.notes, self.cal, self.strays, self.beside = {}, {}, [], {}, [], []
        self.order, self.load = [], None
        for r in rows:
            if "stray" in r:
                self.strays.append(r)
            elif "beside" in r:
                self.beside.append(r)
            elif "load" in r:
                self.load = r["load"]
            elif "process" in r and str(r.get("stack")).startswith("calibrate-"):
                self.cal[r["stack"]] = r
            elif "process" in r:
                k = key_of_spec(r.get("prog"))
                if k:
                    self.proc[(r.get("stack"), r.get("pass"), k)] = r
                    self.add_order(k)
            elif "skipped" in r:
                self.notes.append(r)
                self.add_order(key_of_spec(r.get("prog")) if "prog" in r else None)
            elif "call_s" in r:
                k = key_of_row(r)
                self.res[(r.get("stack"), r.get("pass"), k)] = r
                self.add_order(k)
        self.part = next((r.get("part") for r in rows if r.get("part") in ("idle", "load")), "?")
        self.stacks = [s for s in ["cpu"] + LIB if any(k[0] == s for k in list(self.res) + list(self.proc))]
        self.passes = sorted({k[1] for k in list(self.res) + list(self.proc) if isinstance(k[1], int)})
        self.logs = {}

    def add_order(self, k):
        if k and k not in self.order:
            self.order.append(k)

    def wall(self, s, p, k):
        """The runner's wall time of the process, else the program's own."""
        if (s, p, k) in self.proc:
            return self.proc[(s, p, k)].get("wall_s")
        return self.res.get((s, p, k), {}).get("wall_s")

    def outside(self, s, p, k):
        """The process's start and exit: the runner's wall time less the program's own (its main)."""
        own = self.res.get((s, p, k), {}).get("wall_s")
        runner = self.proc.get((s, p, k), {}).get("wall_s")
        return runner - own if own is not None and runner is not None else None

    def first(self, s, p, k):
        return self.res.get((s, p, k), {}).get("first_s")

    def calls(self, s, p, k):
        return self.res.get((s, p, k), {}).get("call_s") or []

    def log(self, s, p, k):
        """The program's calls log, split into its own calls (the program's routine, in order) and nested ones."""
        if (s, p, k) not in self.logs:
            name = self.proc.get((s, p, k), {}).get("process") or "%s-p%s-%s-%dx%d" % (s, p, k[0], k[1], k[2])
            log = decisions.parse_calls_log(os.path.join(self.raw or "", "calls-%s.log" % name))
            own = [c for c in log["calls"] if c["routine"] == k[0]]
            log["own"], log["nested"] = own, [c for c in log["calls"] if c["routine"] != k[0]]
            self.logs[(s, p, k)] = log
        return self.logs[(s, p, k)]


def aa_ok(run, p, k, value, limit, what):
    """Whether value meets the limit against the slower of the CPU alone's two passes."""
    cpu = [getattr(run, what)("cpu", q, k) for q in run.passes]
    cpu = [c for c in cpu if c]
    return bool(cpu) and value <= limit * max(cpu)


def cpu_table(run):
    head = ["program"]
    for p in run.passes:
        head += ["wall s p%d" % p, "first s p%d" % p, "calls s p%d" % p]
    head += ["A/A wall", "A/A first"]
    rows = []
    for k in run.order:
        cells = [label(k)]
        for p in run.passes:
            cells += [fmt_s(run.wall("cpu", p, k)), fmt_s(run.first("cpu", p, k)),
                      fmt_s(sum(run.calls("cpu", p, k)) or None)]
        if len(run.passes) >= 2:
            a, b = run.passes[0], run.passes[1]
            cells += [fmt_r(ratio(run.wall("cpu", b, k), run.wall("cpu", a, k))),
                      fmt_r(ratio(run.first("cpu", b, k), run.first("cpu", a, k)))]
        else:
            cells += ["-", "-"]
        rows.append(cells)
    out = common.table(head, rows)
    own = [(r.get(f) or 0, f, label(k)) for (s, p, k), r in run.res.items() if s == "cpu"
           for f in ("gen_s", "restore_s", "check_s")]
    start = [(run.outside("cpu", p, k), label(k)) for (s, p, k) in run.res if s == "cpu"]
    start = [x for x in start if x[0] is not None]
    if own:
        most = {f: max(x for x in own if x[1] == f) for f in ("gen_s", "restore_s", "check_s")}
        out += ["", "The programs' work outside their calls, at most (the CPU alone): inputs %.2f s (%s), inputs made "
                "again between calls %.2f s (%s), the check %.2f s (%s)%s." % (
                    most["gen_s"][0], most["gen_s"][2], most["restore_s"][0], most["restore_s"][2],
                    most["check_s"][0], most["check_s"][2], "; a process's start and exit %.2f s (%s)" % max(start)
                    if start else "")]
    return out


def where_cell(log):
    own = log["own"]
    if not own:
        return "-"
    g = sum(c["where"] == "gpu" for c in own)
    out = "gpu %d, cpu %d" % (g, len(own) - g) if 0 < g < len(own) else ("gpu" if g else "cpu")
    if any(c["fell_back"] for c in own):
        out += " (fell back)"
    return out


def library_table(run, s, p, misses, first_target):
    """One stack and pass: each program against the CPU alone of the same pass; misses appended to misses."""
    rows, tot = [], [0.0, 0.0]
    for k in run.order:
        wall, cwall = run.wall(s, p, k), run.wall("cpu", p, k)
        first, cfirst = run.first(s, p, k), run.first("cpu", p, k)
        rw, rf = ratio(wall, cwall), ratio(first, cfirst)
        rc = ratio(sum(run.calls(s, p, k)) or None, sum(run.calls("cpu", p, k)) or None)
        res = run.res.get((s, p, k), {})
        log = run.log(s, p, k)
        if wall is not None and cwall:
            tot[0] += wall
            tot[1] += cwall
        for t, r, v, limit, what in (("wall", rw, wall, WALL, "wall"), ("first call", rf, first, FIRST, "first")):
            if r is not None and r > limit and (what == "wall" or first_target):
                misses.append("%s pass %d %s: %s %.2fx the CPU alone (%s the A/A spread)" % (
                    s, p, label(k), t, r, "within" if aa_ok(run, p, k, v, limit, what) else "beyond"))
        check = res.get("check", "-")
        if check not in ("ok", "-"):
            check = "**%s** (%s)" % (check, res.get("check_ratio"))
        policy = decisions.policy_label(log["policy"]) if log["calls"] or log["policy"] else "-"
        rows.append([label(k), fmt_s(wall), fmt_r(rw, WALL), fmt_s(run.outside(s, p, k)), fmt_s(first),
                     fmt_r(rf, FIRST if first_target else None), fmt_r(rc), where_cell(log), policy, check])
    head = ["program", "wall s", "/ cpu", "start+exit s", "first call s", "/ cpu", "calls / cpu", "ran", "policy",
            "check"]
    out = common.table(head, rows)
    if tot[1]:
        out.append("")
        out.append("Whole sequence: %.1f s against the CPU alone's %.1f s (%.2fx), wall times of the programs that "
                   "both ran." % (tot[0], tot[1], tot[0] / tot[1]))
    return out


def predictions(run, target):
    """Per call at n >= PRED_MIN_N with a model: predicted CPU ms / measured ms. Returns (lines, checked, misses)."""
    rows, nested, misses, checked, unchecked = [], {}, [], 0, {}
    cols = [(s, p) for s in LIB if s in run.stacks for p in run.passes]
    for k in run.order:
        cells = [label(k)]
        for s, p in cols:
            log = run.log(s, p, k)
            cpu_alone = run.calls("cpu", p, k)
            parts = []
            for i, c in enumerate(log["own"]):
                if k[1] < PRED_MIN_N:
                    continue
                if c["model_cpu_ms"] is None:
                    unchecked[c["reason"]] = unchecked.get(c["reason"], 0) + 1
                    parts.append("(%s)" % c["reason"])
                    continue
                meas = c["took_ms"] if c["where"] == "cpu" else (cpu_alone[i] * 1e3 if i < len(cpu_alone) else None)
                r = ratio(c["model_cpu_ms"], meas)
                if r is None:
                    parts.append("?")
                    continue
                checked += 1
                bad = r > PRED or r < 1 / PRED
                parts.append(("**%.2f**" if bad else "%.2f") % r + ("g" if c["where"] == "gpu" else ""))
                if bad:
                    misses.append("%s pass %d %s call %d: predicted %.1f ms, measured %.1f ms (%s) = %.2fx" % (
                        s, p, label(k), i + 1, c["model_cpu_ms"], meas,
                        "its own time" if c["where"] == "cpu" else "the CPU alone's", r))
            cells.append(", ".join(parts) or "-")
            for c in log["nested"]:
                if c["n"] >= PRED_MIN_N:
                    e = nested.setdefault((c["routine"], k[0], s, p), [0, [], 0])
                    e[0] += 1
                    if c["model_cpu_ms"] is not None and c["where"] == "cpu":
                        r = ratio(c["model_cpu_ms"], c["took_ms"])
                        e[1].append(r)
                        checked += 1
                        if r > PRED or r < 1 / PRED:
                            misses.append("%s pass %d %s within %s: predicted %.1f ms, took %.1f ms = %.2fx" % (
                                s, p, c["routine"], label(k), c["model_cpu_ms"], c["took_ms"], r))
                    elif c["model_cpu_ms"] is None:
                        e[2] += 1
        rows.append(cells)
    out = ["### Predicted against measured CPU times, calls at n >= %d%s" % (
        PRED_MIN_N, "" if target else " (under the load: shown, not a target)"), "",
        "Each call's model CPU time / its measured CPU time: its own time where it ran on the CPU, else (g) the CPU "
        "alone's time of the same program, pass and call; a reason in parentheses where the decision had no model.", ""]
    out += common.table(["program"] + ["%s p%d" % c for c in cols], rows)
    if nested:
        out += ["", "Calls the library intercepted inside the programs' routines (the CPU LAPACK calling the BLAS):",
                ""]
        out += common.table(["routine", "within", "stack", "pass", "calls", "predicted / took (on the CPU)",
                             "no model"],
                            [[r, w, s, p, e[0], common.fmt_range(e[1]), e[2]] for (r, w, s, p), e in sorted(
                                nested.items())])
    if unchecked:
        out += ["", "Calls at n >= %d without a model: %s." % (PRED_MIN_N, ", ".join(
            "%s %d" % kv for kv in sorted(unchecked.items())))]
    out.append("")
    return out, checked, misses


# ---- Calibrations ----


def home_file(raw, home, name="policy.json"):
    return os.path.join(raw or "", home, ".config", "blasoffload", name)


def tail(path, n=1):
    try:
        lines = [x for x in open(path, errors="replace").read().splitlines() if x.strip()]
    except OSError:
        return ""
    return " / ".join(lines[-n:])


def idle_calibration(args, raw):
    """The idle part's calibration (the load report's reference): --policy, else the idle part's run folder or
    packed run folder beside this result file (newest first)."""
    if getattr(args, "policy", None):
        return decisions.read_policy(args.policy), args.policy
    own = home_file(raw, "home-bo-cal")
    if raw and os.path.exists(own):
        return decisions.read_policy(own), own
    where = os.path.dirname(os.path.abspath(args.path))
    member = "home-bo-cal/.config/blasoffload/policy.json"
    for cand in sorted(glob.glob(os.path.join(where, "firstrun_idle-*")), key=os.path.getmtime, reverse=True):
        if os.path.isdir(cand) and os.path.exists(os.path.join(cand, member)):
            return decisions.read_policy(os.path.join(cand, member)), os.path.join(cand, member)
        if cand.endswith(".tar.gz"):
            try:
                with tarfile.open(cand) as t:
                    name = os.path.basename(cand)[:-len(".tar.gz")] + "/" + member
                    return json.load(t.extractfile(name)), "%s:%s" % (os.path.basename(cand), name)
            except (OSError, KeyError, ValueError, tarfile.TarError, AttributeError):
                continue
    return None, None


def fmt_rates(rs):
    """Ratios of rates, two digits (a disturbed calibration's are 0.01 as often as 0.9): median (min-max)."""
    return "%.2g (%.2g-%.2g)" % (common.median(rs), min(rs), max(rs)) if len(rs) > 1 else "%.2g" % rs[0]


def rates_lines(new, ref, ref_name):
    rows = decisions.rate_ratios(new, ref, lapack=True)
    if not rows:
        return ["- no LAPACK class in common with %s" % ref_name]
    out = ["- its LAPACK rates / %s's, per class (median (min-max) over the sizes both measured; the largest "
           "size's rates):" % ref_name, ""]
    out += common.table(["class", "ratio", "largest size: this / reference"],
                        [[c, fmt_rates(rs), "%.3g / %.3g" % big] for c, rs, big in rows])
    blas = [r for _, rs, _ in decisions.rate_ratios(new, ref, lapack=False) for r in rs]
    if blas:
        out += ["", "- its BLAS rates / %s's: %s over %d points" % (ref_name, fmt_rates(blas), len(blas))]
    return out + [""]


def auto_calibration(run, home):
    """What the library's own auto-calibration in that home did: started, how it ended, whether it wrote a file."""
    raw = run.raw
    lock = home_file(raw, home, "policy.json.lock")
    if not raw or not os.path.exists(lock):
        return None, ["- the library's auto-calibration (%s): never started (no lock file)" % home]
    text = open(lock, errors="replace").read()
    started, pid = re.search(r"started (\S+)", text), re.search(r"pid (\d+)", text)
    stray = [x for x in run.strays if (pid and x.get("pid") == int(pid.group(1))) or
             ("--auto" in x.get("stray", "") and home in x.get("stray", ""))]
    ended = "still measuring at the end of the passes: stopped by the runner" if any(
        x["ended"] == "stopped" for x in stray) else "ended by itself" if stray else "ended before the part ended"
    pol = decisions.read_policy(home_file(raw, home))
    lines = ["- the library's auto-calibration (%s): started %s (by the first program), %s; %s; its log: %s" % (
        home, started.group(1) if started else "?", ended,
        "wrote %s (measured %s)" % (os.path.relpath(home_file(raw, home), raw), pol.get("created")) if pol else
        "wrote no policy file", tail(home_file(raw, home, "policy.json.auto.log")) or "-")]
    return pol, lines


def calibrations(run, args, targets):
    out = ["### Calibrations", ""]
    written_under_load = []
    for stack, cal in sorted(run.cal.items()):
        home = "home-bo-cal" if stack == "calibrate-bo-cal" else "home-" + stack  # bench/firstrun/bench.ini's
        pol = decisions.read_policy(home_file(run.raw, home)) if run.raw else None
        rc = cal.get("rc")
        how = "stopped at the runner's limit" if rc in (124, 137, -9, -15) else "exit %s" % rc
        out.append("- blasoffload-calibrate (%s, %s): %s after %.0f s; %s; its log's last line: %s" % (
            stack, "beside the load" if run.part == "load" else "idle", how, cal.get("wall_s", 0),
            "wrote %s (measured %s)" % (os.path.relpath(home_file(run.raw, home), run.raw), pol.get("created"))
            if pol else "wrote no policy file" if run.raw else "(no run folder: whether it wrote is unknown)",
            tail(os.path.join(run.raw or "", stack + ".err")) or "-"))
        if run.part == "load":
            targets.append(("no policy file written by blasoffload-calibrate beside the load",
                            "UNDECIDED (stopped at the limit)" if "stopped" in how and not pol else
                            "MISS" if pol else "PASS" if run.raw else "NO DATA"))
            if pol:
                written_under_load.append(("blasoffload-calibrate beside the load", pol))
    if run.part == "load" and not run.cal:
        targets.append(("no policy file written by blasoffload-calibrate beside the load", "NO DATA (not run)"))
    auto, lines = auto_calibration(run, "home-bo-uncal") if "bo-uncal" in run.stacks else (None, [])
    out += lines
    if run.part == "load" and "bo-uncal" in run.stacks:
        targets.append(("no policy file written by the library's auto-calibration beside the load",
                        "MISS" if auto else "PASS" if run.raw else "NO DATA"))
        if auto:
            written_under_load.append(("the auto-calibration beside the load", auto))
    out.append("")
    if run.part == "idle":
        ref = decisions.read_policy(home_file(run.raw, "home-bo-cal")) if run.raw else None
        if auto and ref:
            out += ["The auto-calibration's file (measured beside the sequence) against blasoffload-calibrate's:", ""]
            out += rates_lines(auto, ref, "the idle calibration")
    else:
        ref, ref_name = idle_calibration(args, run.raw)
        for what, pol in written_under_load:
            out += ["The file %s wrote, against the idle calibration (%s):" % (
                what, ref_name or "not found: pass --policy"), ""]
            out += rates_lines(pol, ref, "the idle calibration") if ref else [""]
    return out


# ---- The report ----


def render(rows, context_list, args):
    run = Run(rows, args.raw)
    if not run.res:
        return ["report.py: no measurements in %s" % args.path], 2
    idle = run.part != "load"
    out = ["## First run: short programs back to back from an empty configuration, the library against the CPU "
           "alone (%s)" % ("idle machine" if idle else "beside a CPU load"), ""]
    out += ["- " + x for x in common.openblas_context(context_list)]
    warnings = []
    for c in context_list:
        if c.get("stack") in LIB and "libblasoffload" not in c.get("sgemm_from", "") + c.get("dgetrf_from", ""):
            warnings.append("%s: sgemm_/dgetrf_ did not come from libblasoffload.so" % c.get("stack"))
        if c.get("stack") == "cpu" and "libblasoffload" in c.get("sgemm_from", ""):
            warnings.append("cpu: sgemm_ came from libblasoffload.so")
    if run.load:
        out.append("- the load beside: %s n = %s, %s calls in %.0f s (%.0f GFLOP/s)" % (
            run.load.get("routine"), run.load.get("n"), run.load.get("calls"), run.load.get("seconds", 0),
            run.load.get("gflops", 0)))
    elif not idle:
        warnings.append("no line from the load beside (did it run?)")
    if not args.raw:
        warnings.append("no run folder (--raw): no calls logs, the calibrations' files unknown")
    uncal = sorted({label(k) for (s, p, k) in run.res if s == "bo-cal" and
                    run.log(s, p, k)["policy"].startswith("built-in defaults")})
    if uncal:  # the calibration failed or wrote a file for another CPU BLAS
        warnings.append("bo-cal ran on the built-in defaults (%s): its tables are uncalibrated" % ", ".join(uncal))
    out += ["- WARNING " + w for w in sorted(set(warnings))]
    out.append("")
    out += ["### The CPU alone (A/A: pass 2 / pass 1)", ""] + cpu_table(run) + [""]
    misses, first_misses = [], []
    for s in LIB:
        if s not in run.stacks:
            continue
        for p in run.passes:
            what = "the first run from an empty configuration" if s == "bo-uncal" and p == run.passes[0] else \
                "the second run" if s == "bo-uncal" else "after blasoffload-calibrate"
            out += ["### %s pass %d (%s): ratios to the CPU alone's pass %d (< 1: faster)" % (s, p, what, p), ""]
            out += library_table(run, s, p, misses, idle) + [""]
    pred_lines, checked, pred_misses = predictions(run, idle)
    out += pred_lines
    targets = []
    out += calibrations(run, args, targets)

    wall_misses = [m for m in misses if ": wall " in m]
    first_misses = [m for m in misses if ": first call " in m]
    fails = ["%s pass %s %s: %s (ratio %s)" % (s, p, label(k), r.get("check"), r.get("check_ratio"))
             for (s, p, k), r in sorted(run.res.items(), key=str) if r.get("check") != "ok"]
    missing = []
    for s in run.stacks:
        for p in run.passes:
            missing += ["%s pass %d %s" % (s, p, label(k)) for k in run.order if (s, p, k) not in run.res]
    bo = [s for s in LIB if s in run.stacks]
    targets.insert(0, ("every program of %s within %.2fx of the CPU alone%s, wall time" % (
        "/".join(bo), WALL, "" if idle else " under the same load"), "PASS" if bo and not wall_misses else
        "MISS" if wall_misses else "NO DATA"))
    if idle:
        targets.insert(1, ("the first call of every program within %.1fx of the CPU alone's" % FIRST,
                           "PASS" if bo and not first_misses else "MISS" if first_misses else "NO DATA"))
        targets.insert(2, ("predicted CPU times within %.0fx of the measured ones at n >= %d (%d calls checked)" % (
            PRED, PRED_MIN_N, checked), "MISS" if pred_misses else "PASS" if checked else "NO DATA"))
    targets.append(("every check passes and every program ran", "MISS" if fails or missing else "PASS"))

    if run.notes or missing:
        out += ["### Not measured", ""]
        out += ["- %s" % ", ".join("%s=%s" % kv for kv in sorted(n.items())) for n in run.notes[:40]]
        out += ["- no result: %s" % m for m in missing[:40]]
        out.append("")
    out += ["### Targets", ""]
    for name, verdict in targets:
        out.append("- %s: %s" % (name, verdict))
        if name.startswith("every program") and wall_misses:
            out += ["  - " + m for m in wall_misses]
        if name.startswith("the first call") and first_misses:
            out += ["  - " + m for m in first_misses]
        if name.startswith("predicted") and pred_misses:
            out += ["  - " + m for m in pred_misses[:30]]
            if len(pred_misses) > 30:
                out.append("  - ... and %d more" % (len(pred_misses) - 30))
        if name.startswith("every check") and (fails or missing):
            out += ["  - " + m for m in (fails + ["no result: " + x for x in missing])[:30]]
    if not idle:
        out.append("- (first calls and predictions under the load are shown above, not targets)")
    ok = all(v == "PASS" for _, v in targets) and not warnings
    out += ["", "**Verdict: %s**%s" % ("PASS" if ok else "MISS", " (warnings above)" if warnings else ""), ""]
    return out, 0 if ok else 1
