#!/usr/bin/env python3
"""ctest tuning.plot: runs tools/plot-tuned-params.py on the sample table, and on a copy stripped of every
optional field and of some tiles, and checks that each expected PNG exists and is a non-empty PNG.

Usage: check_plot.py PLOT_SCRIPT SAMPLE_TABLE. Exits 77 (ctest: skipped) when matplotlib is not importable.
"""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def check(script, table_path, outdir):
    with open(table_path) as f:
        table = json.load(f)
    proc = subprocess.run([sys.executable, script, table_path, outdir], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("FAIL: {} {} exited with {}:\n{}{}".format(script, table_path, proc.returncode, proc.stdout,
                                                           proc.stderr))
    expected = [k + ".png" for k in table["kernels"]] + ["bandwidth.png"]
    for name in expected:
        path = os.path.join(outdir, name)
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            sys.exit("FAIL: {} is missing or empty".format(path))
        with open(path, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                sys.exit("FAIL: {} is not a PNG".format(path))
    extra = sorted(set(os.listdir(outdir)) - set(expected))
    if extra:
        sys.exit("FAIL: unexpected files in {}: {}".format(outdir, extra))
    print("ok: {} -> {}".format(table_path, ", ".join(sorted(expected))))


def stripped(table):
    """The same table without optional fields, bandwidth data or cuBLAS, and with tiles missing."""
    table = json.loads(json.dumps(table))
    table["cublas"] = ""
    table["bandwidth"] = {"read": [], "write": []}
    for kernel in table["kernels"].values():
        for t in kernel["tiles"]:
            for key in ("cublas_rate", "model_rate", "candidates"):
                t.pop(key, None)
            if t["config"] == "cublas":
                t["config"], t["rate"] = t["own_config"], t["own_rate"]
        kernel["tiles"] = kernel["tiles"][1::2] or kernel["tiles"]
    # A kernel with no tiles at all still gets its (empty) picture.
    table["kernels"]["empty_kernel"] = {"unit": "GB/s", "axes": ["n"], "grid": {"n": [1, 2]}, "tiles": []}
    return table


def main():
    script, sample = sys.argv[1:3]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("SKIP: matplotlib is not importable by {}; tools/install-deps.sh installs python3-matplotlib"
              .format(sys.executable))
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory(prefix="bo-plot-test.") as tmp:
        check(script, sample, os.path.join(tmp, "sample"))
        with open(sample) as f:
            variant = stripped(json.load(f))
        variant_path = os.path.join(tmp, "stripped.json")
        with open(variant_path, "w") as f:
            json.dump(variant, f)
        check(script, variant_path, os.path.join(tmp, "stripped"))


if __name__ == "__main__":
    main()
