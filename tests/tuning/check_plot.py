#!/usr/bin/env python3
"""ctest tuning.plot: runs tools/plot-tuned-params.py on the sample table, on a copy stripped of every optional field
and of some tiles, and on one with complex keys added, and checks that each expected PNG exists and is a non-empty PNG.

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


def with_complex_keys(table):
    """The sample plus complex keys as the tuner writes them: the norm's tiles our entries on the real kernels, the
    others cuBLAS in both columns (its only candidate)."""
    table = json.loads(json.dumps(table))
    kernels = table["kernels"]
    norm = json.loads(json.dumps(kernels["snrm2"]))
    for i, t in enumerate(norm["tiles"]):
        t["config"] = t["own_config"] = "dznrm2_on_dnrm2_{}256_4_v2".format("1p_" if i % 2 else "")
        t.pop("candidates", None)
    kernels["dznrm2"] = norm
    for key, src in (("cgemv_t", "sgemv_t"), ("zgemm", "sgemm")):
        k = json.loads(json.dumps(kernels[src]))
        for t in k["tiles"]:
            t["config"] = t["own_config"] = "cublas"
            t["own_rate"] = t["cublas_rate"] = t["rate"]
            t["candidates"] = {"cublas": t["rate"]}
        kernels[key] = k
    herk = json.loads(json.dumps(kernels["cgemv_t"]))
    herk["unit"] = "GFLOP/s"
    herk["axes"] = ["n", "k"]
    herk["grid"] = {"n": herk["grid"]["m"], "k": herk["grid"]["n"]}
    for t in herk["tiles"]:
        t.pop("model_rate", None)
    kernels["zherk"] = herk
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
        with open(sample) as f:
            variant = with_complex_keys(json.load(f))
        variant_path = os.path.join(tmp, "complex.json")
        with open(variant_path, "w") as f:
            json.dump(variant, f)
        check(script, variant_path, os.path.join(tmp, "complex"))


if __name__ == "__main__":
    main()
