"""Report of the kernel benchmark suite (bench/kernels/bench.ini, blasoffload_bench_kernels, Google Benchmark): per
routine and precision a table against cuBLAS (tuned and own configurations, rates, times, ratios, minimum and geometric
mean), then the project's targets (single precision; the double rows are reported beside cuBLAS, without targets),
each PASS / MISS / NO DATA with its worst measured value.

The raw file is read whole: Google Benchmark's JSON document (the program's stdout; --benchmark_out writes the same),
possibly several (one per process), a document cut short by a stopped process (its complete cases are read), and the
runner's one-line notes after them.
Status: 0 no target missed (NO DATA is not a miss: a filtered run), 1 a target missed, 2 no case measured.
"""
import json
import math
import re

import report as common

GRID = {16, 256, 1024, 4096, 16384, 65536}  # the tuner's sgemv grid: "every grid shape" means m and n both in it
DEFAULT_READ_GBS = 3092.0                  # H100 streaming read bandwidth (../shared/anchors/README.md)
ROUTINE_ORDER = [p + r for p in "sd" for r in ("nrm2", "gemv_n", "gemv_t", "trsv_n", "trsv_t", "gemm")]
# Suffixes Google Benchmark appends to names (UseManualTime, Iterations, ...): not part of the shape.
NAME_NOISE = re.compile(r"^(manual_time|real_time|process_time|iterations:\d+|repeats:\d+|threads:\d+|"
                        r"min_time:.*|min_warmup_time:.*)$")


class Row:
    def __init__(self, bench):
        parts = [p for p in bench["run_name" if "run_name" in bench else "name"].split("/")
                 if not NAME_NOISE.match(p)]
        self.prefix = parts[0]
        # "sgemm_nn" and "dgemm_tn" group as sgemm / dgemm; the rest are routine (and transpose) already.
        self.routine = self.prefix[:5] if self.prefix[1:].startswith("gemm") else self.prefix
        self.kind = self.routine[1:]  # without the precision letter
        self.dims = {}
        for p in parts[1:]:
            k, _, v = p.partition(":")
            self.dims[k] = int(v) if v.lstrip("-").isdigit() else v
        self.error = bench.get("error_message") if bench.get("error_occurred") else None
        self.c = bench
        label = bench.get("label", "")
        found = dict(re.findall(r"(\w+)=(\S+)", label))
        self.tuned_cfg = found.get("tuned", "")
        self.own_cfg = found.get("own", "")

    def get(self, key):
        v = self.c.get(key)
        return float(v) if isinstance(v, (int, float)) else None

    @property
    def shape(self):
        d = self.dims
        if self.kind == "nrm2" or self.kind.startswith("trsv"):
            return "n=%d" % d.get("n", 0)
        if self.kind.startswith("gemv"):
            return "%dx%d" % (d.get("m", 0), d.get("n", 0))
        return "%s %dx%dx%d" % (self.prefix[len("sgemm_"):].upper(), d.get("m", 0), d.get("n", 0), d.get("k", 0))

    def is_grid(self):
        return self.routine.startswith("sgemv") and self.dims.get("m") in GRID and self.dims.get("n") in GRID


def parse_document(text):
    """One Google Benchmark JSON document; one cut short (a process stopped mid-run) is closed after its last complete
    case. None when nothing of it parses."""
    try:
        return json.loads(text), False
    except ValueError:
        pass
    cut = text.rfind("\n    }")  # the end of a case: the benchmarks array's entries are indented by four
    tries = [text[:cut] + "\n    }\n  ]\n}"] if cut > text.find('"benchmarks"') > 0 else []
    tries.append(text[:text.find('"benchmarks"')].rstrip().rstrip(",") + "\n}" if '"benchmarks"' in text else text)
    for t in tries:
        try:
            return json.loads(t), True
        except ValueError:
            continue
    return None, True


def read(path):
    """(context, benchmark entries, notes, documents cut short) of a raw file: documents start with a "{" line of
    their own; a one-line object is one of the runner's notes."""
    docs, notes, cur = [], [], None
    with common.open_text(path) as f:
        for line in f.read().splitlines():
            if line.startswith("{") and line.strip() != "{":
                try:
                    notes.append(json.loads(line))
                    continue
                except ValueError:
                    pass
            if line.strip() == "{" and line.startswith("{"):
                cur = []
                docs.append(cur)
            if cur is not None:
                cur.append(line)
    context, benches, cut = {}, [], 0
    for lines in docs:
        data, was_cut = parse_document("\n".join(lines))
        cut += was_cut
        if data is None:
            continue
        context = context or data.get("context", {})
        benches += data.get("benchmarks", [])
    return context, benches, notes, cut


def choose(benches):
    """One row per case: the median aggregate when --benchmark_repetitions made several, else the single run."""
    chosen = {}
    for b in benches:
        key = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                chosen[key] = b
        elif key not in chosen or chosen[key].get("run_type") != "aggregate":
            chosen[key] = b
    return [Row(b) for b in chosen.values()]


def unit(routine):
    return "GFLOP/s" if routine[1:] == "gemm" else "GB/s"


def fmt_rate(v):
    return "-" if v is None else ("%.0f" % v if v >= 100 else "%.1f" % v if v >= 1 else "%.2g" % v)


def fmt_us(v):
    return "-" if v is None else ("%.0f" % v if v >= 100 else "%.1f" % v)


def fmt_ratio(v):
    return "-" if v is None else "%.2fx" % v


def geomean(vals):
    vals = [v for v in vals if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


class Check:
    """One target: PASS when every measured (shape, value) meets it; the worst value is what is printed."""

    def __init__(self, text, threshold, points, fmt=fmt_ratio, missing=None):
        self.text, self.threshold, self.points, self.fmt = text, threshold, points, fmt
        self.missing = missing or []  # shapes the target needs that have no measurement (skipped, failed, filtered)

    def result(self):
        if not self.points:
            return "NO DATA", "no measurement" + (" (%s)" % ", ".join(self.missing) if self.missing else "")
        shape, worst = min(self.points, key=lambda p: p[1])
        ok = worst >= self.threshold and not self.missing
        where = (" at " + shape) if shape else ""
        extra = ("; missing: " + ", ".join(self.missing)) if self.missing else ""
        return ("PASS" if ok else "MISS"), "%s%s (need >= %s)%s" % (self.fmt(worst), where, self.fmt(self.threshold),
                                                                    extra)


def targets(rows, read_gbs):
    by = {}
    for r in rows:
        by.setdefault(r.routine, []).append(r)

    def points(routine, pred, key):
        ok, missing = [], []
        for r in by.get(routine, []):
            if not pred(r):
                continue
            v = r.get(key)
            if r.error or v is None:
                missing.append(r.shape)
            else:
                ok.append((r.shape, v))
        return ok, missing

    def pct(v):
        return "%.0f GB/s" % v

    checks = []
    p, m = points("snrm2", lambda r: 100000 <= r.dims.get("n", 0) <= 10000000, "tuned_vs_cublas")
    checks.append(Check("snrm2: tuned >= 2x cuBLAS for n in [1e5, 1e7] (result on host)", 2.0, p, missing=m))
    p, m = points("snrm2", lambda r: r.dims.get("n") == 100000000, "tuned_rate")
    checks.append(Check("snrm2: n=1e8 at >= 90%% of read bandwidth (%.0f GB/s)" % read_gbs, 0.9 * read_gbs, p,
                        fmt=pct, missing=m))
    for rt, letter in (("sgemv_n", "N"), ("sgemv_t", "T")):
        p, m = points(rt, Row.is_grid, "tuned_vs_cublas")
        checks.append(Check("sgemv %s: tuned >= 0.97x cuBLAS on every grid shape" % letter, 0.97, p, missing=m))
        g = geomean([v for _, v in p])
        checks.append(Check("sgemv %s: geometric mean of tuned/cuBLAS over the grid >= 1.15x" % letter, 1.15,
                            [("", g)] if g else [], missing=m))
        p2, m2 = points(rt, lambda r: r.dims.get("m") == 16384 and r.dims.get("n") == 16384, "tuned_rate")
        checks.append(Check("sgemv %s: 16384^2 at >= 93%% of read bandwidth" % letter, 0.93 * read_gbs, p2, fmt=pct,
                            missing=m2))
    for rt, letter in (("strsv_n", "N"), ("strsv_t", "T")):
        for n, need in ((16384, 4.0), (4096, 3.0)):
            p, m = points(rt, lambda r, n=n: r.dims.get("n") == n, "tuned_vs_cublas")
            if p or m:
                checks.append(Check("strsv lower %s: tuned >= %gx cuBLAS at n=%d" % (letter, need, n), need, p,
                                    missing=m))

    def own_target(r):
        d = r.dims
        square = r.prefix == "sgemm_nn" and d.get("m") == d.get("n") == d.get("k") and d.get("m", 0) >= 2048
        lu = r.prefix == "sgemm_nn" and d.get("m") == d.get("n") == 16384 and d.get("k") in (64, 256)
        return square or lu

    p, m = points("sgemm", own_target, "own_vs_cublas")
    checks.append(Check("sgemm: own >= 0.95x cuBLAS at square n >= 2048 and the LU updates (16384^2 x 64, x 256)",
                        0.95, p, missing=m))
    p, m = points("sgemm", lambda r: True, "tuned_vs_cublas")
    checks.append(Check("sgemm: tuned >= 0.97x cuBLAS on every shape", 0.97, p, missing=m))
    return checks


def sort_key(r):
    d = r.dims
    return (r.prefix, d.get("m", 0), d.get("n", 0), d.get("k", 0))


def render(rows, contexts, args):
    context, benches, notes, cut = read(args.path)
    rows = choose(benches)
    if not rows:
        return ["report.py: no benchmark results in %s" % args.path], 2
    out = []
    read_gbs = float(context.get("read_gbs", DEFAULT_READ_GBS))
    head = [("GPU", context.get("gpu", "?")), ("module", context.get("module", "?")),
            ("tuned params", context.get("tuned_params", "?")), ("cuBLAS", context.get("cublas", "?")),
            ("date", context.get("date_utc", context.get("date", "?"))), ("commit", context.get("commit", "?")),
            ("read bandwidth for targets", "%.0f GB/s%s" % (read_gbs, "" if "read_gbs" in context else " (default)"))]
    out += ["## Kernel benchmarks against cuBLAS", ""]
    out += ["- %s: %s" % (k, v) for k, v in head]
    if cut:
        out.append("- the run was stopped: %d document(s) cut short, their complete cases read" % cut)
    out.append("")
    out += ["Rates: GB/s (bytes that must move) for nrm2/gemv/trsv, GFLOP/s for gemm (s: single, d: double "
            "precision); times in us; medians over the iterations of one run; ratios are "
            "time(cuBLAS)/time(ours), > 1 means ours is faster.", ""]

    by = {}
    for r in rows:
        by.setdefault(r.routine, []).append(r)
    for routine in ROUTINE_ORDER + sorted(set(by) - set(ROUTINE_ORDER)):
        rs = sorted(by.get(routine, []), key=sort_key)
        if not rs:
            continue
        u = unit(routine)
        cols = ["shape", "tuned config", "own config", "tuned " + u, "own " + u, "cuBLAS " + u, "tuned us",
                "cuBLAS us", "tuned/cuBLAS", "own/cuBLAS"]
        table = []
        for r in rs:
            if r.error:
                table.append([r.shape] + [""] * (len(cols) - 1) + ["skipped: " + r.error])
                continue
            table.append([r.shape, r.tuned_cfg, r.own_cfg, fmt_rate(r.get("tuned_rate")), fmt_rate(r.get("own_rate")),
                          fmt_rate(r.get("cublas_rate")), fmt_us(r.get("tuned_us")), fmt_us(r.get("cublas_us")),
                          fmt_ratio(r.get("tuned_vs_cublas")),
                          fmt_ratio(r.get("own_vs_cublas")), ""])
        good = [r for r in rs if not r.error]
        summary = []
        for key, name in (("tuned_vs_cublas", "tuned/cuBLAS"), ("own_vs_cublas", "own/cuBLAS")):
            vals = [(r.get(key), r.shape) for r in good if r.get(key)]
            if vals:
                lo = min(vals)
                summary.append("%s min %s (%s), geomean %s" % (name, fmt_ratio(lo[0]), lo[1],
                                                               fmt_ratio(geomean([v for v, _ in vals]))))
        title = routine + (" (result returned to the host, wall clock)" if routine[1:] == "nrm2" else "")
        out += ["### %s" % title, ""]
        out.append("| " + " | ".join(cols + ["note"]) + " |")
        out.append("|" + "|".join(["---"] * 3 + ["---:"] * (len(cols) - 3) + ["---"]) + "|")
        out += ["| " + " | ".join(c if c else " " for c in row) + " |" for row in table]
        out.append("")
        out += ["- " + s for s in summary]
        out.append("")

    checks = targets(rows, read_gbs)
    out += ["### Targets", ""]
    out.append("| status | target | measured (worst case) |")
    out.append("|---|---|---|")
    results = [c.result() for c in checks]
    for c, (status, measured) in zip(checks, results):
        out.append("| %s | %s | %s |" % ("**%s**" % status if status != "PASS" else status, c.text, measured))
    passed = sum(1 for status, _ in results if status == "PASS")
    out.append("")
    out.append("%d of %d targets met." % (passed, len(checks)))
    for n in notes:  # the runner's notes: a process that was stopped or failed
        out.append("- not run to the end: %s" % ", ".join("%s=%s" % kv for kv in sorted(n.items())))
    out.append("")
    return out, 1 if any(status == "MISS" for status, _ in results) else 0
