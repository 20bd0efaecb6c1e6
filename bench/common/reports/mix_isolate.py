"""Report of bench/mix's per-stack comparisons at the mix's small and middle points (bench/mix/bench.ini [isolate],
[small], [startup] and [startdrv]): each point's time under the CPU alone and, per library stack, the median over
rounds of its ratio to the CPU alone in the same round, with the quartiles where there are six rounds or more, else
the range. [isolate] tells a CPU-routed call's extra time apart by what each stack leaves out: iso-forward
(forwarding only, no policy), iso-nogpu (the policy without a GPU), bo-uncal (auto out of the box; bo-cal: with a
policy file), iso-frozen (no learning or exploration), iso-noresid (no write tracking or registration), iso-nolend
(OpenBLAS keeps every thread while the GPU starts; bo-cal-nolend likewise, calibrated, in [startdrv], whose first
calls get a table of their own). [small] repeats the CPU alone, the CPU alone again (cpu-aa: an A/A comparison, the
spread between identical processes), iso-forward and bo-uncal (and bo-base, another commit's library, where the carry
has one) over many short processes, so that a 10% effect stands out of the machine's fast and slow periods. No targets: exit status 0 when there are measurements; the last lines count the points within 1.10x.
"""
import math
import statistics

import report_beside as beside
import report as common

ORDER = ["cpu", "cpu-aa", "iso-forward", "iso-nogpu", "bo-uncal", "bo-cal", "bo-base", "iso-frozen", "iso-noresid",
         "iso-nolend", "bo-cal-nolend", "iso-nopin", "bo-pause"]


def cell(rs):
    if not rs:
        return "-"
    if len(rs) >= 6:
        q = statistics.quantiles(rs, n=4)
        return "%.2f [%.2f-%.2f]" % (common.median(rs), q[0], q[2])
    return "%.2f (%.2f-%.2f)" % (common.median(rs), min(rs), max(rs))


def stack_of(obj):
    """cpu-ref, bo-cal-ref ...: the drivers part's stacks ([startdrv]) are reported as the calls part's."""
    s = obj.get("stack", "")
    return s[:-4] if s.endswith("-ref") else s


def ratio_table(t, lib, cell_of=cell):
    """Rows of (point, CPU time, per-stack cell) and per stack [points within 1.10, points]."""
    trs, within = [], {s: [0, 0] for s in lib}
    for k in sorted(t, key=lambda k: (k[0][1:], k[0], k[1], k[2])):
        cpu = t[k].get("cpu", {})
        if not cpu:
            continue
        cells = []
        for s in lib:
            rs = [t[k][s][r] / cpu[r] for r in t[k].get(s, {}) if r in cpu and cpu[r] > 0]
            cells.append(cell_of(rs))
            if rs:
                within[s][0] += common.median(rs) <= 1.10
                within[s][1] += 1
        trs.append([k[0], str(k[1]), str(k[2]) if k[2] else "-", "%.3g us" % (common.median(cpu.values()) * 1e6)]
                   + cells)
    return trs, within


def process_speeds(t, stacks):
    """Rows per round: each stack's process, the geometric mean over its points under 100 us (the CPU alone's median)
    of its time / the CPU alone's median time over the rounds. The machine's fast and slow periods show as rounds where
    every stack, the CPU alone included, sits low or high together."""
    cpu = {k: common.median(t[k]["cpu"].values()) for k in t if t[k].get("cpu")}
    small = [k for k, v in cpu.items() if v < 100e-6]
    rounds = sorted({r for k in small for s in stacks for r in t[k].get(s, {})})
    trs = []
    for r in rounds:
        cells = []
        for s in stacks:
            logs = [math.log(t[k][s][r] / cpu[k]) for k in small if r in t[k].get(s, {}) and t[k][s][r] > 0]
            cells.append("%.2f" % math.exp(sum(logs) / len(logs)) if logs else "-")
        trs.append([str(r)] + cells)
    return trs, len(small)


def render(rows, context_list, args):
    t, first, full = {}, {}, {}
    for obj in rows:
        if "seconds" in obj and stack_of(obj) in ORDER and "routine" in obj:
            key, s, r = (obj["routine"], obj["n"], obj.get("nrhs", 0)), stack_of(obj), obj.get("round", 0)
            t.setdefault(key, {}).setdefault(s, {})[r] = obj["seconds"]
            full.setdefault(key, {}).setdefault(s, {})[r] = obj
            # The drivers part ([startdrv]): the GPU's start-up lands in a point's first call, not in the median.
            if obj.get("part") == "drivers" and obj.get("first_s"):
                first.setdefault(key, {}).setdefault(s, {})[r] = obj["first_s"]
    if not t:
        return ["report.py: no measurements in %s" % args.path], 2
    present = {s for k in t for s in t[k]}
    lib = [s for s in ORDER[1:] if s in present]
    rounds = max(len(t[k].get("cpu", {})) for k in t)
    out = ["## The mix's small and middle points per stack, against the CPU alone (issue 20)", ""]
    out += ["- " + x for x in common.openblas_context(context_list)]
    out += ["- a cell: the median over rounds (%d) of the stack's time / the CPU alone's in the same round, %s" %
            (rounds, "[quartiles]" if rounds >= 6 else "(min-max)"), ""]
    head = ["routine", "n", "nrhs", "cpu"] + [s + " / cpu" for s in lib]
    trs, within = ratio_table(t, lib)
    out += common.table(head, trs)
    out += [""] + ["- %s: %d of %d points with a median ratio within 1.10" % (s, w, n) for s, (w, n) in within.items()]
    if first:
        trs, within = ratio_table(first, lib)
        out += ["", "### First calls (the drivers part: where the GPU's start-up lands)", ""] + common.table(head, trs)
        out += [""] + ["- %s: %d of %d first calls with a median ratio within 1.10" % (s, w, n)
                       for s, (w, n) in within.items()]
    speeds, points = process_speeds(t, ["cpu"] + lib)
    if len(speeds) >= 3:
        out += ["", "### Each process's speed", "",
                "The geometric mean over the %d points under 100 us of a process's time / the CPU alone's median over "
                "the rounds (a round's processes run one after another, in turning order): rounds where every stack "
                "sits low or high together are the machine's, not a stack's." % points, ""]
        out += common.table(["round", "cpu"] + lib, speeds)
    out += [""] + beside.section(full)
    return out, 0
