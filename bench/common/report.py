#!/usr/bin/env python3
"""The benchmarks' one report module: reads a run's JSON lines, renders the markdown report of its kind
(bench/common/reports/<kind>.py: tables, ratios, spreads, targets) under a header naming the GPU, date and commit,
and writes it; optional plots when matplotlib is present.

Usage: report.py [KIND] RAW.jsonl [--raw DIR] [--md OUT.md] [--policy FILE] [--repeat-list FILE] [--plot OUT.png]
  KIND   regret, overhead, lapack, lapack_intercept, lapack_complex, pipeline, residency, host_gemm, multi_gpu, level3,
         kernels, mix, mix_isolate, firstrun; default: from the file name (<kind>-<tag>.jsonl; kernels reads its file whole:
         Google Benchmark's JSON document)
  RAW    plain or gzip'ed (RAW.jsonl.gz, as bench/results keeps them)
  --raw  the run's raw folder (the BLASOFFLOAD_LOG=summary logs and stderr files some reports read)
Exit status: 0 every target met, 1 a target missed, 2 no measurement (or bad input).
"""
import argparse
import gzip
import importlib.util
import json
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("regret", "overhead", "lapack", "lapack_intercept", "lapack_complex", "pipeline", "residency", "host_gemm",
         "multi_gpu", "level3", "kernels", "mix", "mix_isolate", "firstrun", "scalapack")
# result files named after their benchmark, not their report
PREFIX_KIND = {"dgemm_host": "host_gemm", "complex_host": "host_gemm", "level3_host_gemm": "level3",
               "isolate": "mix_isolate", "firstrun_idle": "firstrun", "firstrun_load": "firstrun",
               "lapack_multi_gpu": "multi_gpu", "lapack_multi_gpu_qr": "multi_gpu",
               "multi_gpu_level3": "multi_gpu"}
# <kind>-<gpu>-<yyyy-mm-dd>-<commit>[-more].jsonl: the result files' names (bench/common/run.py writes them).
NAME_RE = re.compile(r"^(?P<kind>[a-z0-9_]+?)-(?P<gpu>.+)-(?P<date>\d{4}-\d\d-\d\d)-(?P<commit>[0-9a-f]{7,})")


# ---- Reading ----


def open_text(path):
    """A result file for reading as text: gzip'ed (a name ending .gz, as bench/results keeps the raw data) or plain."""
    if path.endswith(".gz"):
        return gzip.open(path, "rt", errors="replace")
    return open(path, errors="replace")


def read_lines(source):
    """(rows, contexts) of a JSON-lines file (plain or .gz) or a list of lines: objects with a "context" key are
    contexts; other lines (a program's progress, a broken line) are passed over."""
    if isinstance(source, str):
        with open_text(source) as f:
            source = f.read().splitlines()
    rows, contexts = [], []
    for line in source:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if "context" in obj:
            contexts.append(obj["context"])
        elif "end" not in obj:
            rows.append(obj)
    return rows, contexts


def parse_summary(path, lapack=False):
    """Per routine {calls, cpu, gpu, fallback, errors} from a BLASOFFLOAD_LOG=summary log (or a stderr file holding
    one), plus its GPU line: the BLAS routines' rows, and with lapack=True every routine's (a LAPACK call on the GPU
    counts there, not in its BLAS rows)."""
    table, gpu_line, header = {}, "", None
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return table, gpu_line
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("GPU:"):
            gpu_line = s
        tok = s.split()
        if tok and tok[0] == "routine":
            header = tok
            continue
        pattern = r"[sdcz][a-z0-9]{2,7}" if lapack else r"[sdcz](gemm|gemv|trsv|nrm2|trsm|syrk)"
        if header and tok and re.fullmatch(pattern, tok[0]) and len(tok) >= 6 and tok[1].isdigit():
            prev = table.setdefault(tok[0], {})
            for name, val in zip(header[1:6], tok[1:6]):
                if val.isdigit():
                    prev[name] = prev.get(name, 0) + int(val)
    return table, gpu_line


# ---- Numbers and tables ----


def ratio(a, b):
    return a / b if a is not None and b else None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def spread(values):
    """max - min, None with fewer than two values."""
    values = [v for v in values if v is not None]
    return max(values) - min(values) if len(values) >= 2 else None


def fmt(v, spec="%.2f"):
    return "-" if v is None else spec % v


def fmt_range(rs):
    """A list of ratios as "median (min-max)", the median alone for one, "-" for none."""
    if not rs:
        return "-"
    return "%.2f" % statistics.median(rs) + (" (%.2f-%.2f)" % (min(rs), max(rs)) if len(rs) > 1 else "")


def fmt_x(v):
    return "-" if v is None else "%.2fx" % v


def table(head, rows):
    """A markdown table: head is a list of column names, rows lists of cells."""
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def openblas_context(contexts, extra=()):
    """The CPU BLAS the runs had: OpenBLAS's core, configuration and threads, where the symbols resolved."""
    def values(key):
        return sorted({str(c.get(key)) for c in contexts if c.get(key) not in (None, "")})

    out = []
    for label, key in (("host", "host"), ("OpenBLAS core", "openblas_corename"), ("OpenBLAS", "openblas_config"),
                       ("OpenBLAS threads", "openblas_threads")) + tuple(extra):
        v = values(key)
        if v:
            out.append("%s: %s" % (label, ", ".join(v)))
    return out


def header_line(path, header=None):
    """The GPU, date and commit of a result: given by the runner, else from the contexts' or the file's name."""
    h = dict(header or {})
    m = NAME_RE.match(os.path.basename(path))
    if m:
        h.setdefault("gpu", m.group("gpu"))
        h.setdefault("date", m.group("date"))
        h.setdefault("commit", m.group("commit"))
    return "GPU: %s; date: %s; commit: %s" % (h.get("gpu", "?"), h.get("date", "?"), h.get("commit", "?"))


# ---- The kinds ----


def load(kind):
    if kind not in KINDS:
        raise SystemExit("report.py: unknown kind '%s' (%s)" % (kind, ", ".join(KINDS)))
    spec = importlib.util.spec_from_file_location("bo_report_" + kind, os.path.join(HERE, "reports", kind + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def render(kind, path, raw=None, md=None, policy=None, header=None, repeat_list=None, plot=None, quiet=False):
    """Renders one result file; returns the report's exit status."""
    try:
        rows, contexts = read_lines(path)
    except OSError as e:
        print("report.py: %s" % e, file=sys.stderr)
        return 2
    opts = argparse.Namespace(raw=raw, policy=policy, repeat_list=repeat_list, path=path)
    lines, rc = load(kind).render(rows, contexts, opts)
    if rc == 2 and lines and not lines[0].startswith("#"):  # no measurement: the reason, no report
        print("\n".join(lines), file=sys.stderr)
        return rc
    if lines[0].startswith("#"):  # the header: the first item of the report's context list
        joined = len(lines) > 2 and lines[1] == "" and lines[2].startswith("- ")
        lines = lines[:1] + ["", "- " + header_line(path, header)] + lines[2 if joined else 1:]
    text = "\n".join(lines)
    if not quiet:
        print(text)
    if md:
        with open(md, "w") as f:
            f.write(text)
    if plot:
        plot_file(load(kind), rows, plot)
    return rc


def plot_file(mod, rows, out):
    """A bar chart of the kind's headline numbers (mod.plot_points: (label, {series: value})), if matplotlib is
    present; nothing otherwise."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: no matplotlib: no plot", file=sys.stderr)
        return
    points = getattr(mod, "plot_points", lambda r: [])(rows)
    if not points:
        return
    series = sorted({s for _, v in points for s in v})
    fig, ax = plt.subplots(figsize=(max(6, len(points) * 0.6), 4))
    width = 0.8 / max(1, len(series))
    for i, s in enumerate(series):
        ax.bar([j + i * width for j in range(len(points))], [v.get(s, 0) for _, v in points], width, label=s)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(points))])
    ax.set_xticklabels([p for p, _ in points], rotation=60, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("args", nargs="+", help="[KIND] RAW.jsonl")
    ap.add_argument("--raw")
    ap.add_argument("--summaries", dest="raw", help=argparse.SUPPRESS)  # the old reports' name for --raw
    ap.add_argument("--md")
    ap.add_argument("--policy")
    ap.add_argument("--repeat-list")
    ap.add_argument("--plot")
    a = ap.parse_args(argv)
    if len(a.args) == 2:
        kind, path = a.args
    else:
        path = a.args[0]
        m = NAME_RE.match(os.path.basename(path))
        kind = PREFIX_KIND.get(m.group("kind"), m.group("kind")) if m else ""
    return render(kind, path, raw=a.raw, md=a.md, policy=a.policy, repeat_list=a.repeat_list, plot=a.plot)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
