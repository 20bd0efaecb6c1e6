#!/usr/bin/env python3
"""ctest bench.report_firstrun: the first-run report (bench/common/reports/firstrun.py and
bench/common/report_decisions.py) on made-up runs: the calls log's forms, the wall-time and first-call targets with
misses within and beyond the A/A spread, the predictions against measured CPU times, and the calibrations' outcomes
idle and under the load.

Usage: check_report_firstrun.py BENCH_COMMON_DIR
"""
import argparse
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import report  # noqa: E402
import report_decisions  # noqa: E402

firstrun = report.load("firstrun")
FAILURES = []


def expect(what, got, want):
    if got != want:
        FAILURES.append("%s: got %r, expected %r" % (what, got, want))


def program(stack, pas, spec, calls, wall, part="idle"):
    k = firstrun.key_of_spec(spec)
    name = "%s-p%d-%s" % (stack, pas, spec)
    return [{"routine": k[0], "precision": k[0][0], "n": k[1], "nrhs": k[3], "stack": stack, "part": part,
             "pass": pas, "calls": k[2], "call_s": calls, "first_s": calls[0], "sum_s": sum(calls), "wall_s": wall,
             "info": 0, "check": "ok", "check_ratio": 0.01},
            {"part": part, "stack": stack, "pass": pas, "prog": spec, "process": name, "section": "seq", "rc": 0,
             "wall_s": wall, "start_s": 0}]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def policy(created, rate):
    return json.dumps({"created": created, "cpu": {"rates": {"dgetrf": [[1e9, rate], [1e11, 2 * rate]],
                                                             "dgemm.square": [[1e9, 100.0]]}}, "gpu": None})


def targets(lines):
    out, inside = {}, False
    for line in lines:
        if line.startswith("### Targets"):
            inside = True
        elif inside and line.startswith("- ") and ": " in line:
            name, _, verdict = line[2:].rpartition(": ")
            out[name.split(" (")[0].split(" within")[0]] = verdict
    return out


def check_log_forms(tmp):
    path = os.path.join(tmp, "forms.log")
    write(path, "\n".join([
        "blasoffload: policy: /h/.config/blasoffload/policy.json (measured 2026-01-02T03:04:05Z) with the built-in "
        "GPU numbers; auto-calibration started in the background (pid 7), results for the next run in /h",
        "blasoffload: dgemm(NN m=8192 n=4096 k=1024) -> gpu [amortising init (1.0 of 900 ms); model: cpu 2.100 ms, "
        "hybrid 1.200 ms with CPU share 0.30], GPU failed: fell back, took 3.000 ms (0.500 ms of it one-time)",
        "blasoffload: dgesv(n=2048 nrhs=1) -> cpu [small], took 35.001 ms",
        "blasoffload summary (pid 7, mode auto)"]) + "\n")
    log = report_decisions.parse_calls_log(path)
    expect("log calls", len(log["calls"]), 2)
    c = log["calls"][0]
    expect("gemm n", c["n"], 8192)
    expect("gemm model", (c["model_cpu_ms"], c["model_gpu_ms"], c["where"], c["fell_back"]), (2.1, 1.2, "gpu", True))
    expect("gemm reason", c["reason"], "amortising init (1.0 of 900 ms)")
    expect("gesv no model", (log["calls"][1]["model_cpu_ms"], log["calls"][1]["reason"]), (None, "small"))
    expect("policy label", report_decisions.policy_label(log["policy"]), "file 2026-01-02 03:04:05; auto-cal started")
    expect("defaults label", report_decisions.policy_label(
        "built-in defaults (no policy file at /x; run blasoffload-calibrate); auto-calibration already running in "
        "another process"), "defaults; auto-cal running")


def check_idle(tmp):
    raw = os.path.join(tmp, "firstrun_idle-gpu-2026-01-02-abcdef0")
    rows = []
    # dgemm: cpu 1.0 / 1.05 s; bo-uncal p1 1.2 s (beyond the A/A spread), its first call 1.67x; bo-cal p1 1.13 s
    # (a miss within the spread: under 1.10x the slower pass); dgetrf within the limits everywhere.
    for s, p, w, first in (("cpu", 1, 1.0, 0.3), ("cpu", 2, 1.05, 0.31), ("bo-uncal", 1, 1.2, 0.5),
                           ("bo-uncal", 2, 1.15, 0.31), ("bo-cal", 1, 1.13, 0.3), ("bo-cal", 2, 1.0, 0.3)):
        rows += program(s, p, "dgemm-4096x3", [first, 0.3, 0.3], w)
    for s, p, w in (("cpu", 1, 13.0), ("cpu", 2, 13.5), ("bo-uncal", 1, 14.0), ("bo-uncal", 2, 14.5),
                    ("bo-cal", 1, 13.0), ("bo-cal", 2, 13.0)):
        rows += program(s, p, "dgetrf-16384x2", [6.0, 6.0], w)
    rows.append({"part": "idle", "stack": "calibrate-bo-cal", "process": "calibrate-bo-cal", "section": "calibrate",
                 "rc": 0, "wall_s": 150.0, "start_s": 60})
    rows.append({"stray": "blasoffload-calibrate --auto --out %s/home-bo-uncal/.config/blasoffload/policy.json" % raw,
                 "pid": 9, "ended": "stopped", "section": "seq"})
    write(os.path.join(raw, "calls-bo-uncal-p1-dgemm-4096x3.log"), "\n".join([
        "blasoffload: policy: built-in defaults (no policy file at /x; run blasoffload-calibrate); auto-calibration "
        "started in the background (pid 9, measuring once this program has ended), results for the next run in /x",
        "blasoffload: dgemm(NN m=4096 n=4096 k=4096) -> cpu [amortising init (1 of 900 ms); model: cpu 250.000 ms, "
        "gpu 50.000 ms], took 300.000 ms",
        "blasoffload: dgemm(NN m=4096 n=4096 k=4096) -> gpu [model: cpu 250.000 ms, gpu 40.000 ms], took 45.000 ms",
        "blasoffload: dgemm(NN m=4096 n=4096 k=4096) -> cpu [model: cpu 100.000 ms, gpu 400.000 ms], took 300.000 ms",
    ]) + "\n")
    write(os.path.join(raw, "calls-bo-uncal-p1-dgetrf-16384x2.log"), "\n".join([
        "blasoffload: dtrsm(LLNU m=16384 n=256 lda=16384 ldb=16384) -> cpu [model: cpu 10.000 ms, gpu 5.000 ms], "
        "took 12.000 ms",
        "blasoffload: dgetrf(m=16384 n=16384 lda=16384) -> cpu [no GPU], took 6000.000 ms",
        "blasoffload: dgetrf(m=16384 n=16384 lda=16384) -> cpu [no GPU], took 6000.000 ms"]) + "\n")
    write(os.path.join(raw, "calls-bo-cal-p2-dgemm-4096x3.log"), "blasoffload: policy: built-in defaults (/x is for "
          "another CPU BLAS)\n")
    write(os.path.join(raw, "home-bo-cal/.config/blasoffload/policy.json"), policy("2026-01-02T03:00:00Z", 50.0))
    write(os.path.join(raw, "home-bo-uncal/.config/blasoffload/policy.json.lock"),
          "blasoffload auto-calibration\ncpu x\nstarted 2026-01-02T02:59:00Z\npid 9\n")
    path = raw + ".jsonl"
    lines, rc = firstrun.render(rows, [], argparse.Namespace(raw=raw, path=path, policy=None))
    text = "\n".join(lines)
    got = targets(lines)
    expect("idle rc", rc, 1)
    expect("idle wall", got.get("every program of bo-uncal/bo-cal"), "MISS")
    expect("idle first", got.get("the first call of every program"), "MISS")
    expect("idle predictions", got.get("predicted CPU times"), "MISS")
    expect("idle checks", got.get("every check passes and every program ran"), "PASS")
    for want in ("bo-uncal pass 1 dgemm 4096 x3: wall 1.20x the CPU alone (beyond the A/A spread)",
                 "bo-cal pass 1 dgemm 4096 x3: wall 1.13x the CPU alone (within the A/A spread)",
                 "bo-uncal pass 1 dgemm 4096 x3: first call 1.67x the CPU alone (beyond the A/A spread)",
                 "bo-uncal pass 1 dgemm 4096 x3 call 3: predicted 100.0 ms, measured 300.0 ms (its own time) = 0.33x",
                 "| dgemm 4096 x3 | 0.83, 0.83g, **0.33** |", "(4 calls checked)", "| dgetrf 16384 x2 | (no GPU), "
                 "(no GPU) |", "| dtrsm | dgetrf | bo-uncal | 1 | 1 | 0.83 | 0 |", "defaults; auto-cal started",
                 "exit 0 after 150 s; wrote home-bo-cal/.config/blasoffload/policy.json (measured "
                 "2026-01-02T03:00:00Z)",
                 "still measuring at the end of the passes: stopped by the runner; wrote no policy file",
                 "WARNING bo-cal ran on the built-in defaults (dgemm 4096 x3)"):
        if want not in text:
            FAILURES.append("idle report lacks %r" % want)
    for unwanted in ("bo-uncal pass 2 dgemm 4096 x3: wall", "dgetrf 16384 x2: wall"):
        if unwanted in text:
            FAILURES.append("idle report has %r" % unwanted)
    return os.path.join(raw, "home-bo-cal/.config/blasoffload/policy.json")


def check_load(tmp, idle_policy, rc, written, auto_written):
    raw = os.path.join(tmp, "load-%s-%s-%s" % (rc, written, auto_written))
    rows = []
    for s, p, w in (("cpu", 1, 2.0), ("bo-uncal", 1, 2.1), ("cpu", 2, 2.0), ("bo-uncal", 2, 2.1)):
        rows += program(s, p, "sgemm-8192x3", [0.6, 0.6, 0.6], w, part="load")
    rows += [{"part": "load", "stack": "calibrate-load", "process": "calibrate-load", "section": "calibrate", "rc": rc,
              "wall_s": 90.0}, {"load": {"routine": "dgemm", "n": 4096, "calls": 900, "seconds": 300, "gflops": 400}},
             {"beside": "blasoffload_firstrun --load", "wall_s": 300, "rc": 0, "ended": "stopped"}]
    if written:
        write(os.path.join(raw, "home-calibrate-load/.config/blasoffload/policy.json"), policy("2026-01-02T04:00Z", 5))
    write(os.path.join(raw, "home-bo-uncal/.config/blasoffload/policy.json.lock"), "started 2026-01-02T04:00:00Z\n")
    if auto_written:
        write(os.path.join(raw, "home-bo-uncal/.config/blasoffload/policy.json"), policy("2026-01-02T04:01Z", 10))
    lines, status = firstrun.render(rows, [], argparse.Namespace(raw=raw, path=raw + ".jsonl", policy=idle_policy))
    return targets(lines), "\n".join(lines), status


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_log_forms(tmp)
        idle_policy = check_idle(tmp)
        got, text, status = check_load(tmp, idle_policy, 1, False, False)
        expect("load refused: calibrate", got.get("no policy file written by blasoffload-calibrate beside the load"),
               "PASS")
        expect("load refused: auto", got.get("no policy file written by the library's auto-calibration beside the "
                                              "load"), "PASS")
        expect("load refused: wall", got.get("every program of bo-uncal"), "PASS")
        expect("load refused: status", status, 0)
        if "900 calls in 300 s (400 GFLOP/s)" not in text:
            FAILURES.append("load report lacks the load's line")
        got, text, status = check_load(tmp, idle_policy, 0, True, True)
        expect("load written: calibrate", got.get("no policy file written by blasoffload-calibrate beside the load"),
               "MISS")
        expect("load written: auto", got.get("no policy file written by the library's auto-calibration beside the "
                                             "load"), "MISS")
        if "| dgetrf | 0.1 (0.1-0.1) | 10 / 100 |" not in text or "| dgetrf | 0.2 (0.2-0.2) | 20 / 100 |" not in text:
            FAILURES.append("load report lacks the rates against the idle calibration:\n" + text)
        got, text, status = check_load(tmp, idle_policy, 124, False, False)
        expect("load stopped", got.get("no policy file written by blasoffload-calibrate beside the load"),
               "UNDECIDED (stopped at the limit)")
    for f in FAILURES:
        print("FAIL:", f)
    print("bench.report_firstrun: %s" % ("FAIL" if FAILURES else "ok"))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
