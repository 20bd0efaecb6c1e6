"""What the library said about its decisions, for the reports: its calls log (BLASOFFLOAD_LOG=calls: one line per
intercepted call with where it ran, why, the model's predictions and the time it took; the policy line at the start),
and policy files (blasoffload-calibrate's rates) compared class by class.

A call line (src/dispatch/route.h, the reason from policy::describe in src/policy/policy.cpp):
  blasoffload: dgesv(n=2048 nrhs=1) -> cpu [model: cpu 34.123 ms, gpu 10.456 ms], took 35.001 ms
  blasoffload: dgemm(NN m=8192 n=8192 k=8192) -> gpu [amortising init (...); model: cpu 2.1 ms, hybrid 1.2 ms with CPU
  share 0.30], GPU failed: fell back, took 3.000 ms (0.5 ms of it one-time)
Some reasons carry no model numbers: small, no GPU, mode ..., min-size ..., device operands.
"""
import json
import re

CALL_RE = re.compile(r"^blasoffload: ([sdcz][a-z0-9]+)\((.*?)\) -> (cpu|gpu) \[(.*)\](.*?), took ([0-9.]+) ms")
MODEL_RE = re.compile(r"model: cpu ([0-9.]+) ms, (?:gpu|hybrid) ([0-9.]+) ms")
DIM_RE = re.compile(r"\b([mnk]|nrhs)=(\d+)")
LAPACK_RE = re.compile(r"^[sd](getrf|getrs|gesv|potrf|potrs|posv|trtrs)(\.|$)")


def parse_calls_log(path):
    """{"policy": the policy line or "", "calls": [call]} of a calls log; a call: routine, args, n (the largest of its
    m, n, k), where, reason (the bracket's text before any model), model_cpu_ms / model_gpu_ms (None without a model),
    took_ms, fell_back. A missing file gives no calls."""
    out = {"policy": "", "calls": []}
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return out
    for line in lines:
        if line.startswith("blasoffload: policy: ") and not out["policy"]:
            out["policy"] = line[len("blasoffload: policy: "):]
            continue
        m = CALL_RE.match(line)
        if not m:
            continue
        routine, args, where, why, after, took = m.groups()
        dims = {k: int(v) for k, v in DIM_RE.findall(args)}
        model = MODEL_RE.search(why)
        out["calls"].append({
            "routine": routine, "args": args, "n": max([dims.get(k, 0) for k in "mnk"] or [0]), "where": where,
            "reason": why.split("model:")[0].strip(" ;") or "model", "model_cpu_ms": float(model.group(1)) if model
            else None, "model_gpu_ms": float(model.group(2)) if model else None, "took_ms": float(took),
            "fell_back": "fell back" in after})
    return out


def policy_label(line):
    """A short label of a policy line: the file it used (its measuring time) or the built-in defaults, and what it
    said of an auto-calibration."""
    if not line:
        return "?"
    m = re.match(r"(\S+) \(measured ([^)]*)\)", line)
    label = "file %s" % m.group(2).replace("T", " ").rstrip("Z") if m else \
        "defaults" if line.startswith("built-in defaults") else line.split(";")[0][:40]
    for phrase, short in (("auto-calibration started", "auto-cal started"),
                          ("auto-calibration already running", "auto-cal running"),
                          ("auto-calibration not started", "auto-cal not started"),
                          ("auto-calibration could not start", "auto-cal failed to start"),
                          ("written meanwhile", "file written meanwhile")):
        if phrase in line:
            label += "; " + short
    return label


def read_policy(path):
    """A policy file's JSON, None when it is missing or unreadable."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def rate_ratios(new, ref, lapack=True):
    """[(class, [new rate / ref rate at each size both measured], largest size's rates (new, ref))] for the LAPACK
    classes (lapack) or the others, in the reference's order."""
    a = (new or {}).get("cpu", {}).get("rates", {})
    b = (ref or {}).get("cpu", {}).get("rates", {})
    out = []
    for cls, pts in b.items():
        if bool(LAPACK_RE.match(cls)) != lapack or cls not in a:
            continue
        mine = {round(s, -3): r for s, r in a[cls]}
        rs = [(s, mine[round(s, -3)], r) for s, r in pts if round(s, -3) in mine and r > 0]
        if rs:
            out.append((cls, [x / r for _, x, r in rs], (rs[-1][1], rs[-1][2])))
    return out
