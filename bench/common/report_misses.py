"""The mix report's per-miss section (bench/common/reports/mix.py): every library stack-point that missed a target,
set beside what the CPU alone run again (cpu-aa, where the run has it) did at the same point, so that each miss is
either the protocol's noise, a known cost, or the library's own.

Each miss gets one class, the first that holds:
- under 1 us: the CPU alone takes under 1 us a call there; the library's forwarding and checks (tens of ns) alone are
  over 10% of it;
- steal mode: in one of the stack's rounds or more, the point's median call took 2.5 ms or more where the CPU alone
  takes under 0.3 ms, with the host taking the machine's CPUs (steal) meanwhile: a call of a threaded CPU BLAS then
  waits a host time slice for its stolen thread; the ratio without those rounds is given;
- behind the other stack: missed only (b), at a point where the other library stack was the best, and faster than the
  CPU alone (median ratio under 1);
- within A/A: the median ratio is no higher than the highest round ratio of cpu-aa at that point (an identical process
  reached it in this run);
- beyond A/A: the rest, each to be explained from its measurements.
"""
import statistics

import report as common

TINY_S = 1e-6
MS_MODE_S, MS_MODE_CPU_S = 2.5e-3, 3e-4
AA = "cpu-aa"


def section(pts, missed, where):
    """pts: (part, routine, n, nrhs) -> stack -> round -> point line; missed: (part, routine, n, nrhs, stack) ->
    {"targets": the set of targets missed, "best": the point's best stack}; where: (part, routine, n, nrhs, stack) ->
    set of where it ran."""
    if not missed:
        return []
    classes = {"under 1 us": [], "steal mode": [], "behind the other stack": [], "within A/A": [], "beyond A/A": []}
    have_aa = any(AA in st for st in pts.values())
    for (part, routine, n, nrhs, s), miss in sorted(missed.items()):
        targets = miss["targets"]
        stacks = pts[(part, routine, n, nrhs)]
        cpu, mine, aa = stacks.get("cpu", {}), stacks.get(s, {}), stacks.get(AA, {})
        rounds = sorted(r for r in mine if r in cpu and cpu[r]["seconds"] > 0)
        rs = [mine[r]["seconds"] / cpu[r]["seconds"] for r in rounds]
        aa_rs = [aa[r]["seconds"] / cpu[r]["seconds"] for r in sorted(aa) if r in cpu and cpu[r]["seconds"] > 0]
        cpu_s = statistics.median(cpu[r]["seconds"] for r in cpu) if cpu else None
        ms_rounds = [r for r in rounds if cpu_s is not None and cpu_s < MS_MODE_CPU_S and
                     mine[r]["seconds"] >= MS_MODE_S and (mine[r].get("steal_ms") or 0) > 0]
        ran = "/".join(sorted(where.get((part, routine, n, nrhs, s), set()))) or "?"
        line = "%s %s n=%d%s %s [%s] %s; ran %s; cpu-aa %s" % (
            part, routine, n, " nrhs=%d" % nrhs if nrhs else "", s, ",".join(sorted(targets)), common.fmt_range(rs), ran,
            common.fmt_range(aa_rs))
        if cpu_s is not None and cpu_s < TINY_S:
            cls = "under 1 us"
        elif ms_rounds:
            rest = [mine[r]["seconds"] / cpu[r]["seconds"] for r in rounds if r not in ms_rounds]
            line += "; rounds %s at %s a call, steal %s ms; the other rounds %s" % (
                ",".join(str(r) for r in ms_rounds),
                ", ".join("%.2g ms" % (mine[r]["seconds"] * 1e3) for r in ms_rounds),
                ", ".join(str(mine[r].get("steal_ms")) for r in ms_rounds), common.fmt_range(rest))
            cls = "steal mode"
        elif targets == {"b"} and miss.get("best") not in ("cpu", s) and rs and statistics.median(rs) < 1:
            cls = "behind the other stack"
        elif aa_rs and rs and statistics.median(rs) <= max(aa_rs):
            cls = "within A/A"
        else:
            cls = "beyond A/A"
        classes[cls].append(line)
    out = ["### Each miss beside the CPU alone run again (cpu-aa) at its point", "",
           "A library stack-point that missed a target (a, b above 1.10x the best, c, d), its ratio to the CPU alone "
           "(median over rounds, min-max), where it ran and cpu-aa's ratio at the point; classes in "
           "bench/common/report_misses.py." + ("" if have_aa else " This run has no cpu-aa: nothing is within "
                                                    "A/A."), ""]
    for cls, lines in classes.items():
        out.append("- %s: %d stack-points" % (cls, len(lines)))
        out += ["  - " + x for x in lines]
    out.append("")
    return out
