"""Report of the decision-overhead benchmark (bench/policy/bench.ini, benchmark overhead): per tiny case, ns per call
with no preload, BLASOFFLOAD_MODE=cpu and auto; forwarding cost (cpu - none) and decision cost (auto - cpu), target
<= 50 ns. The raw folder's probe-auto-summary.log shows where a separate auto run sent those calls.
"""
import json
import os
import statistics

import report as common

DECISION_NS = 50.0


def render(rows, contexts, args):
    cases = {}
    for row in rows:
        if row.get("kind") != "tiny":
            continue
        cases.setdefault((row["routine"], row["shape"]), {}).setdefault(row["mode"], []).append(
            float(row["median_ns"]))
    if not cases:
        return ["report.py: no tiny-call lines in %s" % args.path], 2
    out = ["## Offload policy: per-call cost of the decision (tiny calls, hot data)", ""]
    for c in common.openblas_context(contexts, (("sgemm_ resolved to", "sgemm_from"), ("warm-up s", "warmup_s"),
                                                       ("timed s", "min_s"))):
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
    summary = os.path.join(args.raw, "probe-auto-summary.log") if args.raw else None
    if summary and os.path.exists(summary):
        table, gpu_line = common.parse_summary(summary)
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
    return out, 0 if ok else 1
