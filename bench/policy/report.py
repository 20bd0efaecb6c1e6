#!/usr/bin/env python3
"""Reports for the offload-policy benchmarks (bench/policy/run.sh and overhead.sh).

  report.py regret RAW.jsonl [--summaries DIR] [--md OUT.md] [--repeat-list OUT.txt]
      Per point (routine, shape): auto / min(cpu, gpu) from the per-mode medians over the rounds, the run-to-run
      spread of that ratio, the side auto appears to take, and the targets (auto within 1.10x of the better side on
      >= 95% of points, never worse than 1.5x). --repeat-list writes "routine shape" for the points whose verdict is
      within the run-to-run spread (run.sh re-runs those once more). --summaries: the BLASOFFLOAD_LOG=summary logs.
  report.py overhead RAW.jsonl [--md OUT.md] [--policy FILE] [--summary FILE]
      Per tiny case: ns per call with no preload, BLASOFFLOAD_MODE=cpu and auto; forwarding cost (cpu - none) and
      decision cost (auto - cpu), target <= 50 ns.
Exit status: 0 when every target is met, 1 when one is missed, 2 on bad input.
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import sys

ROUTINE_ORDER = ["sgemm_nn", "sgemm_lu", "sgemv_n", "sgemv_t", "strsv_ln", "strsv_lt", "snrm2"]
MODES = ("cpu", "gpu", "auto")
TARGET_RATIO, TARGET_SHARE, WORST_RATIO = 1.10, 0.95, 1.5
DECISION_NS = 50.0
# Without a second round the spread is unknown; a point this close to a threshold is treated as undecided.
DEFAULT_SPREAD = 0.05


def read_lines(path):
    rows, contexts = [], []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if "context" in obj:
                contexts.append(obj["context"])
            else:
                rows.append(obj)
    return rows, contexts


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
    def values(key):
        return sorted({str(c.get(key)) for c in contexts if c.get(key) not in (None, "")})

    out = []
    for label, key in (("host", "host"), ("OpenBLAS core", "openblas_corename"), ("OpenBLAS", "openblas_config"),
                       ("OpenBLAS threads", "openblas_threads"), ("sgemm_ resolved to", "sgemm_from"),
                       ("warm-up s", "warmup_s"), ("timed s", "min_s")):
        v = values(key)
        if v:
            out.append("%s: %s" % (label, ", ".join(v)))
    return out


def parse_summary(path):
    """Per routine {calls, cpu, gpu, fallback, errors} from a BLASOFFLOAD_LOG=summary log, plus its GPU line."""
    table, gpu_line, header = {}, "", None
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return table, gpu_line
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("GPU:"):
            gpu_line = s
        tok = s.split()
        if tok and tok[0] == "routine":
            header = tok
            continue
        if header and tok and tok[0] in ("sgemm", "sgemv", "strsv", "snrm2") and len(tok) >= 6:
            row = {}
            for name, val in zip(header[1:6], tok[1:6]):
                try:
                    row[name] = int(val)
                except ValueError:
                    pass
            prev = table.setdefault(tok[0], {})
            for k2, v2 in row.items():
                prev[k2] = prev.get(k2, 0) + v2
    return table, gpu_line


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


def regret(args):
    rows, contexts = read_lines(args.raw)
    points, not_run = {}, []
    for row in rows:
        if "skipped" in row:
            not_run.append("%s %s round %s (%s)" % (row.get("routine"), row.get("mode"), row.get("round"),
                                                    row["skipped"]))
            continue
        if row.get("kind") == "tiny" or "routine" not in row or "shape" not in row:
            continue
        points.setdefault((row["routine"], row["shape"]), Point(row["routine"], row["shape"])).add(row)
    if not points:
        print("report.py: no regret points in %s" % args.raw, file=sys.stderr)
        return 2
    rounds = sorted({k for p in points.values() for k in p.by_round})
    # The regular number of rounds is what most points have; the re-run ones have one more.
    base_rounds = statistics.mode(sorted(len(p.by_round) for p in points.values()))

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
            "calls); 'cpu proc' is the separate BLASOFFLOAD_MODE=cpu process, for reference. 'took' is inferred from the times (cpu~/gpu~: auto's time is closest to that side; either: the "
            "two sides are within 10%). A ! marks a point whose verdict lies within its spread.", ""]

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
    if args.summaries:
        for path in sorted(glob.glob(os.path.join(args.summaries, "summary-*-r*.log"))):
            m = re.match(r"summary-(.+)-(auto|gpu)-r(\d+)\.log$", os.path.basename(path))
            if m:
                table, gpu_line = parse_summary(path)
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
    text = "\n".join(out)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    if args.repeat_list is not None:
        with open(args.repeat_list, "w") as f:
            for p in near:
                if len(p.by_round) <= base_rounds:
                    f.write("%s %s\n" % (p.routine, p.shape))
    return 0 if verdict == "PASS" else 1


def overhead(args):
    rows, contexts = read_lines(args.raw)
    cases = {}
    for row in rows:
        if row.get("kind") != "tiny":
            continue
        cases.setdefault((row["routine"], row["shape"]), {}).setdefault(row["mode"], []).append(
            float(row["median_ns"]))
    if not cases:
        print("report.py: no tiny-call lines in %s" % args.raw, file=sys.stderr)
        return 2
    out = ["## Offload policy: per-call cost of the decision (tiny calls, hot data)", ""]
    for c in context_lines(contexts):
        out.append("- " + c)
    if args.policy:
        try:
            pol = json.load(open(args.policy))
            gpu = pol.get("gpu") or {}
            out.append("- policy file: %s (GPU section: %s)" % (args.policy,
                                                                gpu.get("name", "none") if gpu else "none"))
        except (OSError, ValueError) as e:
            out.append("- policy file: %s (unreadable: %s)" % (args.policy, e))
    else:
        out.append("- policy file: none given (auto used the built-in defaults)")
    if args.summary:
        table, gpu_line = parse_summary(args.summary)
        sent = sum(t.get("gpu", 0) for t in table.values())
        out.append("- decisions of a separate auto run with BLASOFFLOAD_LOG=summary: %s call(s) went to the GPU%s" % (
            sent, "; " + gpu_line if gpu_line else ""))
    out += ["",
            "ns per call: median over rounds of each process's median; spread = max - min over rounds. forwarding = "
            "cpu - none; decision = auto - cpu (target <= %.0f ns)." % DECISION_NS, "",
            "| call | none | cpu | auto | forwarding | decision | spread none/cpu/auto |",
            "|---|---|---|---|---|---|---|"]
    worst = None
    for (routine, shape), modes in sorted(cases.items()):
        med = {m: statistics.median(v) for m, v in modes.items()}
        spr = {m: max(v) - min(v) for m, v in modes.items()}

        def f(m):
            return "%.1f" % med[m] if m in med else "-"

        fwd = med["cpu"] - med["none"] if "cpu" in med and "none" in med else None
        dec = med["auto"] - med["cpu"] if "auto" in med and "cpu" in med else None
        if dec is not None and (worst is None or dec > worst[1]):
            worst = ("%s %s" % (routine, shape), dec)
        out.append("| %s %s | %s | %s | %s | %s | %s | %s |" % (
            routine, shape, f("none"), f("cpu"), f("auto"), "-" if fwd is None else "%+.1f" % fwd,
            "-" if dec is None else "%+.1f" % dec,
            " / ".join("%.1f" % spr[m] if m in spr else "-" for m in ("none", "cpu", "auto"))))
    ok = worst is not None and worst[1] <= DECISION_NS
    out += ["", "**Verdict: %s** (decision cost at most %.0f ns per call when the answer is cpu; worst %s)" % (
        "PASS" if ok else ("NO DATA" if worst is None else "MISS"), DECISION_NS,
        "-" if worst is None else "%+.1f ns at %s" % (worst[1], worst[0])), ""]
    text = "\n".join(out)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("regret")
    r.add_argument("raw")
    r.add_argument("--summaries")
    r.add_argument("--md")
    r.add_argument("--repeat-list")
    o = sub.add_parser("overhead")
    o.add_argument("raw")
    o.add_argument("--md")
    o.add_argument("--policy")
    o.add_argument("--summary")
    args = ap.parse_args()
    return regret(args) if args.what == "regret" else overhead(args)


if __name__ == "__main__":
    sys.exit(main())
