"""Report of the ScaLAPACK benchmark (bench/scalapack/bench.ini, `scalapack:drivers`): per routine, n and rank count,
each stack's seconds per round (one process each: the A/A repeat) and their spread, GFLOP/s, the residuals, the
speedup of the library's stack over the CPU alone (median over median), and, from each rank's summary log where the
run folder is given (--raw), its GPU calls. Target (issue 42): pdgesv and pdpotrf n = 32768 over 4 ranks >= 5x the same
ranks without the library.
"""
import glob
import os
import statistics

import report as common

TARGETS = {"pdgesv": 5.0, "pdpotrf": 5.0}
TARGET_N, TARGET_RANKS = 32768, 4
CPU, LIB = "mpi-cpu", "mpi-auto"


def gpu_calls(raw, stack, ranks, n, rnd, routine):
    """Each rank's GPU calls in the process that ran this point, from summary-<output>.log.rank<r>; None without."""
    if not raw or not os.path.isdir(raw):
        return None
    part = {"pdgemm": "-gemm", "pdgels": "-gels"}.get(routine, "")
    files = sorted(glob.glob(os.path.join(raw, "summary-%s-np%d%s-n%d-r%d.log.rank*" % (stack, ranks, part, n, rnd))))
    return [sum(v.get("gpu", 0) for v in common.parse_summary(f, lapack=True)[0].values()) for f in files] or None


def render(rows, contexts, args):
    points = [r for r in rows if r.get("bench") == "scalapack"]
    skipped = [r for r in rows if "skipped" in r]
    if not points:
        return ["report.py: no scalapack points in %s" % args.path], 2
    out = ["## ScaLAPACK drivers over MPI ranks, with and without the library (bench/scalapack)", ""]
    out += ["- " + c for c in common.openblas_context(contexts)]
    seen = set()
    for c in contexts:
        key = (c.get("stack"), c.get("ranks"))
        if key not in seen:
            seen.add(key)
            out.append("- stack %s, %s ranks (grid %s, NB %s): %s OpenBLAS threads a rank; dgemm_ from %s" % (
                c.get("stack"), c.get("ranks"), c.get("grid"), c.get("nb"), c.get("threads_per_rank"),
                c.get("dgemm_from")))
    out += ["", "Wall clock of one call (every rank between barriers) after a warm-up call at n = 2048; residual: "
            "||A x - b|| / (||A|| ||x|| n eps) (pdgemm: ||C x - A (B x)|| / (||A|| ||B|| ||x|| n eps)), ok below 16. "
            "speedup = median CPU seconds / median library seconds.", ""]
    groups = {}
    for r in points:
        groups.setdefault((r.get("routine"), r.get("n"), r.get("ranks")), {}).setdefault(r.get("stack"), []).append(r)
    body, verdicts, ok = [], [], True
    for (routine, n, ranks), stacks in sorted(groups.items()):
        med = {}
        for stack, g in sorted(stacks.items()):
            secs = [r["seconds"] for r in g if r.get("seconds")]
            med[stack] = statistics.median(secs) if secs else None
            gpus = [gpu_calls(args.raw, stack, ranks, n, r.get("round", 1), routine) for r in g]
            body.append([routine, n, ranks, g[0].get("grid"), stack, ", ".join("%.2f" % s for s in secs),
                         "%.1f %%" % (100.0 * (max(secs) / min(secs) - 1)) if len(secs) > 1 else "-",
                         common.fmt(statistics.median([r.get("gflops", 0) for r in g]), "%.0f"),
                         ", ".join(common.fmt(r.get("residual"), "%.2g") for r in g),
                         "; ".join(" ".join(str(x) for x in c) if c else "-" for c in gpus)])
            ok = ok and all(r.get("ok") for r in g)
        sp = common.ratio(med.get(CPU), med.get(LIB))
        body.append([routine, n, ranks, "", "**speedup**", "", "", "", "", "**%s**" % common.fmt_x(sp)])
        target = TARGETS.get(routine)
        if target and n == TARGET_N and ranks == TARGET_RANKS:
            met = sp is not None and sp >= target
            ok = ok and met
            verdicts.append("- %s n=%d over %d ranks: %s the CPU alone, target >= %gx: %s" % (
                routine, n, ranks, common.fmt_x(sp), target, "MET" if met else "MISSED"))
    out += common.table(["routine", "n", "ranks", "grid", "stack", "seconds per round", "A/A spread", "GFLOP/s",
                         "residuals", "GPU calls per rank"], body)
    out += [""] + ["- not run: %s" % ", ".join("%s=%s" % kv for kv in sorted(r.items())) for r in skipped]
    # A run of routines without a target (pdgels) is judged by its residuals alone.
    targeted = any(r.get("routine") in TARGETS for r in points)
    missing = "- pdgesv, pdpotrf n=%d over %d ranks: NO DATA" % (TARGET_N, TARGET_RANKS)
    untargeted = "- none for %s (issue 42's are pdgesv and pdpotrf)" % ", ".join(sorted({r.get("routine") for r in points}))
    out += ["### Targets", ""] + (verdicts or [missing if targeted else untargeted])
    ok = ok and (bool(verdicts) or not targeted)
    bad = [r for r in points if not r.get("ok")]
    if bad:
        out.append("- residuals not ok: %s" % "; ".join("%s n=%s %s r%s (%s)" % (
            r.get("routine"), r.get("n"), r.get("stack"), r.get("round"), r.get("residual")) for r in bad))
    out += ["", "**Verdict: %s**" % ("PASS" if ok else "MISS"), ""]
    return out, 0 if ok else 1


def plot_points(rows):
    return [("%s n%s np%s %s r%s" % (r.get("routine"), r.get("n"), r.get("ranks"), r.get("stack"), r.get("round")),
             {"seconds": r.get("seconds") or 0}) for r in rows if r.get("bench") == "scalapack"]
