"""What ran beside the timed calls of bench/mix's points, a section of the mix and mix_isolate reports (from the
fields "threads", "preempted" and "outside_ms" the program writes with bench/thread_cpu.h): per stack, the CPU time
of the library's threads (bo-*), CUDA's (cuda*) and the machine outside the process during the points' timed samples;
then every library point slower than 1.5x the CPU alone in the same round, with what ran beside it and beside the
CPU alone's. A CPU BLAS whose threads fill the cores loses a scheduler slice on a small threaded call whenever anything
else runs, so a slow point with no other CPU time beside it is the CPU BLAS's own mode, and one with some is not.
"""

SLOW = 1.5


def _groups(p):
    """(ours, cuda, others) milliseconds of a point's threads besides the main thread and the same-name ones."""
    ours = cuda = other = 0.0
    for name, ms in (p.get("threads") or {}).items():
        if name in ("main", "same-name"):
            continue
        if name.startswith("bo-"):
            ours += ms
        elif name.startswith("cuda"):
            cuda += ms
        else:
            other += ms
    return ours, cuda, other


def _time(seconds):
    return "%.3g us" % (seconds * 1e6) if seconds < 1e-3 else "%.3g ms" % (seconds * 1e3)


def _describe(p):
    t = p.get("threads") or {}
    named = ", ".join("%s %.1f" % (k, v) for k, v in sorted(t.items(), key=lambda kv: -kv[1])
                      if k not in ("main", "same-name"))
    return "same-name %.1f ms, %s; preempted %d; outside %s ms" % (
        t.get("same-name", 0.0), named or "no other thread", p.get("preempted", 0), p.get("outside_ms", "?"))


def section(pts, cpu_stack="cpu"):
    """pts: {point key: {stack: {round: row}}}. Lines of markdown, none when no row has the fields."""
    if not any("threads" in row for stacks in pts.values() for rounds in stacks.values() for row in rounds.values()):
        return []
    per_stack = {}
    slow = []
    for key, stacks in sorted(pts.items(), key=lambda kv: str(kv[0])):
        cpu = stacks.get(cpu_stack, {})
        for s, rounds in stacks.items():
            acc = per_stack.setdefault(s, [0.0, 0.0, 0.0, 0.0, 0, 0])
            for r, p in rounds.items():
                if "threads" not in p:
                    continue
                ours, cuda, other = _groups(p)
                acc[0] += ours
                acc[1] += cuda
                acc[2] += other
                acc[3] += max(0.0, p.get("outside_ms", 0) or 0)
                acc[4] += 1
                acc[5] += (p.get("preempted") or 0) > 0
                c = cpu.get(r)
                if s != cpu_stack and c and c.get("seconds", 0) > 0 and p["seconds"] / c["seconds"] > SLOW:
                    slow.append("- %s, %s round %s: %.2fx (%s against %s a call); beside it: %s; beside the CPU "
                                "alone's: %s" % (" ".join(str(k) for k in key), s, r, p["seconds"] / c["seconds"],
                                                 _time(p["seconds"]), _time(c["seconds"]), _describe(p),
                                                 _describe(c)))
    out = ["### What ran beside the timed calls", "",
           "CPU milliseconds during the points' timed samples, summed over every point and round: the library's "
           "threads (bo-*), CUDA's (cuda*), other named threads, the machine outside the process (clock ticks, 10 ms "
           "resolution), and the points where the main or the CPU BLAS's threads were preempted.", ""]
    rows = [[s, "%.1f" % a[0], "%.1f" % a[1], "%.1f" % a[2], "%.0f" % a[3], "%d of %d" % (a[5], a[4])]
            for s, a in sorted(per_stack.items())]
    out += ["| stack | bo-* ms | cuda* ms | other ms | outside ms | points preempted |",
            "|---|---|---|---|---|---|"] + ["| " + " | ".join(r) + " |" for r in rows]
    out += ["", "Library points slower than %.1fx the CPU alone in the same round (%d):" % (SLOW, len(slow)), ""]
    out += slow[:60] + (["- ... and %d more" % (len(slow) - 60)] if len(slow) > 60 else [])
    out.append("")
    return out
