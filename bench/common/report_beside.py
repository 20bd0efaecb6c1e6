"""What ran beside the timed calls of bench/mix's points, a section of the mix and mix_isolate reports (from the
fields "threads", "preempted", "outside_ms" and "steal_ms" the program writes with bench/thread_cpu.h): per stack,
the CPU time of the library's threads (bo-*), CUDA's (cuda*) and the machine outside the process during the points'
timed samples; then every round of a point slower than 1.5x its stack's median over the rounds, with what ran beside
it. A CPU BLAS whose threads fill the cores loses a scheduler slice on a small threaded call whenever anything else
runs, or whenever the host takes one of a virtual machine's CPUs (steal), so a slow round is explained by what ran
beside it.
"""

import statistics

SLOW = 1.5
STOLEN_MS = 20


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
    top = p.get("outside_top")
    who = " (%s)" % ", ".join("%s %.0f" % kv for kv in top.items()) if top else ""
    parts = ", ".join("%s %d" % (k, p[k + "_ms"]) for k in ("irq", "softirq", "steal") if p.get(k + "_ms"))
    return "same-name %.1f ms, %s; preempted %d; outside %s ms%s%s" % (
        t.get("same-name", 0.0), named or "no other thread", p.get("preempted", 0), p.get("outside_ms", "?"), who,
        " [%s]" % parts if parts else "")


def section(pts):
    """pts: {point key: {stack: {round: row}}}. Lines of markdown, none when no row has the fields."""
    if not any("threads" in row for stacks in pts.values() for rounds in stacks.values() for row in rounds.values()):
        return []
    per_stack = {}
    slow = []
    for key, stacks in sorted(pts.items(), key=lambda kv: str(kv[0])):
        for s, rounds in stacks.items():
            acc = per_stack.setdefault(s, [0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0])
            times = [p["seconds"] for p in rounds.values() if p.get("seconds")]
            med = statistics.median(times) if len(times) >= 3 else None
            for r, p in sorted(rounds.items()):
                if "threads" not in p:
                    continue
                ours, cuda, other = _groups(p)
                stolen = p.get("steal_ms", 0) or 0
                acc[0] += ours
                acc[1] += cuda
                acc[2] += other
                acc[3] += max(0.0, p.get("outside_ms", 0) or 0)
                acc[4] += stolen
                acc[5] += 1
                acc[6] += (p.get("preempted") or 0) > 0
                if med and p["seconds"] > SLOW * med:
                    acc[7] += 1
                    acc[8] += stolen >= STOLEN_MS
                    slow.append("- %s, %s round %s: %.2fx its median over the rounds (%s against %s a call); beside "
                                "it: %s" % (" ".join(str(k) for k in key), s, r, p["seconds"] / med,
                                            _time(p["seconds"]), _time(med), _describe(p)))
    out = ["### What ran beside the timed calls", "",
           "CPU milliseconds during the points' timed samples, summed over every point and round: the library's "
           "threads (bo-*), CUDA's (cuda*), other named threads, the machine outside the process and, of that, "
           "steal (the host took the virtual machine's CPUs; /proc/stat, clock ticks of 10 ms); the points where the "
           "main or the CPU BLAS's threads were preempted; and the rounds slower than %.1fx their stack's median "
           "at that point (three rounds or more), with how many of them had %d ms or more stolen." % (SLOW, STOLEN_MS),
           ""]
    has_steal = any("steal_ms" in row for stacks in pts.values() for rounds in stacks.values()
                    for row in rounds.values())  # runs before the field was written: "-", not 0
    rows = [[s, "%.1f" % a[0], "%.1f" % a[1], "%.1f" % a[2], "%.0f" % a[3], "%.0f" % a[4] if has_steal else "-",
             "%d of %d" % (a[6], a[5]), "%d (%d)" % (a[7], a[8]) if has_steal else "%d (-)" % a[7]]
            for s, a in sorted(per_stack.items())]
    out += ["| stack | bo-* ms | cuda* ms | other ms | outside ms | steal ms | points preempted | slow rounds (stolen) |",
            "|---|---|---|---|---|---|---|---|"] + ["| " + " | ".join(r) + " |" for r in rows]
    out += ["", "Rounds slower than %.1fx their stack's median at the point (%d):" % (SLOW, len(slow)), ""]
    out += slow[:60] + (["- ... and %d more" % (len(slow) - 60)] if len(slow) > 60 else [])
    out.append("")
    return out
