"""Report of the offload policy's regret grid (bench/policy/bench.ini, benchmark regret): per point (routine, shape)
auto / min(cpu, gpu) from the per-mode medians over the rounds, the run-to-run spread of that ratio, the side auto
appears to take, and the targets (auto within 1.10x of the better side on >= 95% of points, never worse than 1.5x).
repeat_list() names the points whose verdict is within the run-to-run spread (the runner re-runs those once more);
the raw folder's BLASOFFLOAD_LOG=summary logs show where the calls went.
"""
import glob
import math
import os
import re
import statistics

import report as common

ROUTINE_ORDER = [p + r for p in "sd" for r in ("gemm_nn", "gemm_lu", "gemv_n", "gemv_t", "trsv_ln", "trsv_lt", "nrm2")]
MODES = ("cpu", "gpu", "auto")
TARGET_RATIO, TARGET_SHARE, WORST_RATIO = 1.10, 0.95, 1.5
# Without a second round the spread is unknown; a point this close to a threshold is treated as undecided.
DEFAULT_SPREAD = 0.05


def fmt_us(v):
    if v is None:
        return "-"
    if v >= 1e5:
        return "%.0f ms" % (v / 1e3)
    if v >= 1e3:
        return "%.1f ms" % (v / 1e3)
    return "%.3g us" % v if v < 10 else "%.0f us" % v


def fmt_ratio(v):
    return "-" if v is None else "%.2fx" % v


def shape_key(row):
    return (row.get("m", 0), row.get("n", 0), row.get("k", 0), row.get("shape", ""))


def context_lines(contexts):
    return common.openblas_context(contexts, (("sgemm_ resolved to", "sgemm_from"), ("warm-up s", "warmup_s"),
                                              ("timed s", "min_s")))


class Point:
    def __init__(self, routine, shape):
        self.routine, self.shape = routine, shape
        self.dims = (0, 0, 0, shape)
        self.by_round = {}  # round -> mode -> median_us
        self.errors = []

    def add(self, row):
        self.dims = shape_key(row)
        if "error" in row:
            self.errors.append("%s: %s" % (row.get("mode"), row["error"]))
            return
        rnd = self.by_round.setdefault(row.get("round", 0), {})
        rnd[row.get("mode")] = float(row["median_us"])
        # The auto process also times the CPU BLAS's own symbols right after: that is the CPU side compared with
        # auto (same process, same threads); the separate cpu process's number is kept as "cpu_process".
        if row.get("mode") == "auto" and "direct_median_us" in row:
            rnd["cpu_direct"] = float(row["direct_median_us"])

    def _cpu(self, rnd):
        return rnd.get("cpu_direct", rnd.get("cpu"))

    def mode_median(self, mode):
        if mode == "cpu":
            vals = [self._cpu(r) for r in self.by_round.values() if self._cpu(r) is not None]
            return statistics.median(vals) if vals else None
        if mode == "cpu_process":
            mode = "cpu"
        vals = [r[mode] for r in self.by_round.values() if mode in r]
        return statistics.median(vals) if vals else None

    def complete_rounds(self):
        return sorted(k for k, r in self.by_round.items() if "auto" in r and "gpu" in r and self._cpu(r) is not None)

    def ratio(self):
        a, c, g = (self.mode_median(m) for m in ("auto", "cpu", "gpu"))
        if None in (a, c, g):
            return None
        return a / min(c, g)

    def round_ratios(self):
        return [self.by_round[k]["auto"] / min(self._cpu(self.by_round[k]), self.by_round[k]["gpu"])
                for k in self.complete_rounds()]

    def spread(self):
        rr = self.round_ratios()
        return max(rr) - min(rr) if len(rr) >= 2 else None

    def near_threshold(self):
        r = self.ratio()
        if r is None:
            return False
        s = self.spread()
        s = DEFAULT_SPREAD if s is None else max(s, 0.01)
        return abs(r - TARGET_RATIO) <= s or abs(r - WORST_RATIO) <= s

    def side(self):
        a, c, g = (self.mode_median(m) for m in ("auto", "cpu", "gpu"))
        if None in (a, c, g):
            return "?"
        if min(c, g) / max(c, g) > 0.9:
            return "either"
        dc, dg = abs(math.log(a / c)), abs(math.log(a / g))
        if min(dc, dg) > math.log(1.25):
            return "neither (%s?)" % ("cpu" if dc < dg else "gpu")
        return "cpu~" if dc < dg else "gpu~"


def points_of(rows):
    """The regret points of the raw rows, and the processes that did not run."""
    points, not_run = {}, []
    for row in rows:
        if "skipped" in row:
            not_run.append("%s %s round %s (%s)" % (row.get("routine"), row.get("mode"), row.get("round"),
                                                    row["skipped"]))
            continue
        if row.get("kind") == "tiny" or "routine" not in row or "shape" not in row:
            continue
        points.setdefault((row["routine"], row["shape"]), Point(row["routine"], row["shape"])).add(row)
    return points, not_run


def repeat_list(lines):
    """{routine: [shape]} of the points whose verdict lies within the run-to-run spread and that have not been
    re-run yet (the runner runs them once more)."""
    points, _ = points_of(common.read_lines(lines)[0])
    if not points:
        return {}
    base_rounds = statistics.mode(sorted(len(p.by_round) for p in points.values()))
    out = {}
    for p in sorted(points.values(), key=lambda p: p.dims):
        if p.near_threshold() and len(p.by_round) <= base_rounds:
            out.setdefault(p.routine, []).append(p.shape)
    return out


def render(rows, contexts, args):
    points, not_run = points_of(rows)
    if not points:
        return ["report.py: no regret points in %s" % args.path], 2
    rounds = sorted({k for p in points.values() for k in p.by_round})

    def order(p):
        r = ROUTINE_ORDER.index(p.routine) if p.routine in ROUTINE_ORDER else len(ROUTINE_ORDER)
        return (r, p.routine, p.dims)

    ordered = sorted(points.values(), key=order)
    out = ["## Offload policy: regret grid (auto against the better of cpu and gpu)", ""]
    for c in context_lines(contexts):
        out.append("- " + c)
    out.append("- rounds: %s (a point with more rounds was re-run because its verdict was within the spread)"
               % ", ".join(str(r) for r in rounds))
    out += ["",
            "Times are per call, wall clock, host operands rotated past the caches; each mode's value is the median "
            "over rounds of the per-run medians. ratio = auto / min(cpu, gpu); spread = max - min of the per-round "
            "ratios. cpu is the CPU BLAS called through its own symbols inside the auto process, right after auto was "
            "timed (same process and threads: a multi-threaded CPU BLAS varies more than 2x between processes on short "
            "calls); 'cpu proc' is the separate BLASOFFLOAD_MODE=cpu process, for reference. 'took' is inferred "
            "from the times (cpu~/gpu~: auto's time is closest to that side; either: the two sides are within 10%). "
            "A ! marks a point whose verdict lies within its spread.", ""]

    measured, near, misses = [], [], []
    for routine in [r for r in ROUTINE_ORDER if any(p.routine == r for p in ordered)] + sorted(
            {p.routine for p in ordered} - set(ROUTINE_ORDER)):
        out += ["### " + routine, "",
                "| shape | cpu | cpu proc | gpu | auto | ratio | spread | rounds | took | |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for p in [q for q in ordered if q.routine == routine]:
            r, s = p.ratio(), p.spread()
            mark = ""
            if r is not None:
                measured.append((p, r))
                if r > TARGET_RATIO:
                    misses.append((p, r))
                if p.near_threshold():
                    near.append(p)
                    mark = "!"
            if p.errors:
                mark += " " + "; ".join(p.errors)
            if r is None:
                mark += " incomplete (%s)" % ", ".join(m for m in MODES if p.mode_median(m) is None)
            out.append("| %s | %s | %s | %s | %s | %s | %s | %d | %s | %s |" % (
                p.shape, fmt_us(p.mode_median("cpu")), fmt_us(p.mode_median("cpu_process")),
                fmt_us(p.mode_median("gpu")), fmt_us(p.mode_median("auto")),
                fmt_ratio(r), "-" if s is None else "%.2f" % s, len(p.complete_rounds()), p.side(), mark.strip()))
        out.append("")

    summaries = {}
    if args.raw:
        for path in sorted(glob.glob(os.path.join(args.raw, "summary-*-r*.log"))):
            m = re.match(r"summary-(.+)-(auto|gpu)-r(\d+)\.log$", os.path.basename(path))
            if m:
                table, gpu_line = common.parse_summary(path)
                summaries.setdefault(m.group(1), []).append((m.group(2), int(m.group(3)), table, gpu_line))
    if summaries:
        out += ["### Where the auto and gpu runs sent their calls (BLASOFFLOAD_LOG=summary over the whole process: "
                "warm-up and every shape)", "",
                "| benchmark | mode | round | routine | calls | cpu | gpu | fallback | GPU |",
                "|---|---|---|---|---|---|---|---|---|"]
        for bench in sorted(summaries, key=lambda b: ROUTINE_ORDER.index(b) if b in ROUTINE_ORDER else 99):
            for mode, rnd, table, gpu_line in sorted(summaries[bench], key=lambda t: t[:2]):
                used = {k: v for k, v in table.items() if v.get("calls", 0) > 0}
                if not used:
                    out.append("| %s | %s | %d | (no calls counted) | | | | | %s |" % (
                        bench, mode, rnd, gpu_line[4:].strip()))
                for routine, t in sorted(used.items()):
                    out.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
                        bench, mode, rnd, routine, t.get("calls", "-"), t.get("cpu", "-"), t.get("gpu", "-"),
                        t.get("fallback", "-"), gpu_line[4:].strip()))
        out.append("")

    n = len(measured)
    ok = sum(1 for _, r in measured if r <= TARGET_RATIO)
    worst = max(measured, key=lambda t: t[1]) if measured else None
    share_ok = n > 0 and ok / n >= TARGET_SHARE
    worst_ok = worst is not None and worst[1] <= WORST_RATIO
    incomplete = [p for p in ordered if p.ratio() is None]
    out += ["### Targets", ""]
    out.append("- auto within %.2fx of the better side on >= %.0f%% of points: %s (%d of %d, %.1f%%)" % (
        TARGET_RATIO, 100 * TARGET_SHARE, "PASS" if share_ok else "MISS", ok, n, 100.0 * ok / n if n else 0))
    if worst:
        out.append("- auto never worse than %.1fx: %s (worst %.2fx at %s %s)" % (
            WORST_RATIO, "PASS" if worst_ok else "MISS", worst[1], worst[0].routine, worst[0].shape))
    if misses:
        out.append("- over %.2fx: %s" % (TARGET_RATIO, ", ".join(
            "%s %s %.2fx" % (p.routine, p.shape, r) for p, r in sorted(misses, key=lambda t: -t[1]))))
    if near:
        out.append("- within the run-to-run spread of a threshold: %s" % ", ".join(
            "%s %s (%.2fx, spread %s, %d rounds)" % (p.routine, p.shape, p.ratio(),
                                                    "?" if p.spread() is None else "%.2f" % p.spread(),
                                                    len(p.complete_rounds())) for p in near))
    if incomplete:
        out.append("- incomplete points (a mode missing: budget, time-out or failure): %s" % ", ".join(
            "%s %s" % (p.routine, p.shape) for p in incomplete))
    if not_run:
        out.append("- processes not run or cut short: %s" % "; ".join(not_run))
    verdict = "PASS" if share_ok and worst_ok else "MISS"
    partial = incomplete or not_run
    out += ["", "**Verdict: %s**%s" % (verdict, " (on the %d complete points of a partial run)" % n if partial else ""),
            ""]
    if args.repeat_list is not None:
        with open(args.repeat_list, "w") as f:
            for routine, shapes in repeat_list(args.path).items():
                f.write("".join("%s %s\n" % (routine, shape) for shape in shapes))
    return out, 0 if verdict == "PASS" else 1
