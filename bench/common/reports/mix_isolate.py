"""Report of bench/mix's isolation benchmark (bench/mix/bench.ini [isolate]): each point's time under the CPU alone
and, per library stack, the median over rounds of its ratio to the CPU alone in the same round (min-max), so that a
CPU-routed call's extra time can be told apart by what each stack leaves out: iso-forward (forwarding only, no
policy), iso-nogpu (the policy without a GPU), bo-uncal (auto out of the box), iso-frozen (no learning or
exploration), iso-noresid (no write tracking or registration). No targets: exit status 0 when there are measurements.
"""
import report as common

STACKS = ["cpu", "iso-forward", "iso-nogpu", "bo-uncal", "iso-frozen", "iso-noresid"]


def render(rows, context_list, args):
    t = {}
    for obj in rows:
        if "seconds" in obj and obj.get("stack") in STACKS and "routine" in obj:
            key = (obj["routine"], obj["n"], obj.get("nrhs", 0))
            t.setdefault(key, {}).setdefault(obj["stack"], {})[obj.get("round", 0)] = obj["seconds"]
    if not t:
        return ["report.py: no measurements in %s" % args.path], 2
    out = ["## Where a CPU-routed call's extra time comes from: the mix's small and middle points per stack (issue 20)",
           ""]
    out += ["- " + x for x in common.openblas_context(context_list)]
    out += ["- a cell: the median over rounds of the stack's time / the CPU alone's in the same round (min-max)", ""]
    lib = STACKS[1:]
    trs = []
    for k in sorted(t, key=lambda k: (k[0][1:], k[0], k[1], k[2])):
        cpu = t[k].get("cpu", {})
        if not cpu:
            continue
        cells = []
        for s in lib:
            rs = [t[k][s][r] / cpu[r] for r in t[k].get(s, {}) if r in cpu and cpu[r] > 0]
            cells.append("%.2f (%.2f-%.2f)" % (common.median(rs), min(rs), max(rs)) if rs else "-")
        trs.append([k[0], str(k[1]), str(k[2]) if k[2] else "-", "%.3g us" % (common.median(cpu.values()) * 1e6)]
                   + cells)
    out += common.table(["routine", "n", "nrhs", "cpu"] + [s + " / cpu" for s in lib], trs)
    return out, 0
