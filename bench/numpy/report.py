"""Makes the markdown report of bench/numpy/run.sh's JSON lines: per operation, the median seconds without and with
the library (each side's two runs), the speed-up of the faster and the slower pairing, the A/A spread of each side,
and the first calls.
Usage: python3 bench/numpy/report.py RESULTS.jsonl > RESULTS.md"""
import collections
import json
import sys


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    by = collections.defaultdict(dict)
    for r in rows:
        by[(r["dtype"], r["op"])][r["label"]] = r
    print("| dtype | op | without (s) | with (s) | speed-up | A/A without | A/A with | first call without / with (s) |"
          " mode cpu (s) | checksums agree |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (dtype, op), runs in sorted(by.items()):
        wo = [runs[k]["median_s"] for k in ("without-1", "without-2") if k in runs]
        wi = [runs[k]["median_s"] for k in ("with-1", "with-2") if k in runs]
        if not wo or not wi:
            continue
        spread = lambda v: f"{max(v) / min(v):.2f}x" if len(v) > 1 else "-"
        first = "/".join(f"{runs[k]['first_s']:.2f}" for k in ("without-1", "with-1") if k in runs)
        cpu = f"{runs['cpu-mode']['median_s']:.3f}" if "cpu-mode" in runs else "-"
        agree = len({round(r["checksum"], 2 if dtype == "float64" else 0) for r in runs.values()}) == 1
        print(f"| {dtype} | {op} | {' '.join(f'{v:.3f}' for v in wo)} | {' '.join(f'{v:.3f}' for v in wi)} | "
              f"{min(wo) / max(wi):.1f}-{max(wo) / min(wi):.1f}x | {spread(wo)} | {spread(wi)} | {first} | {cpu} | "
              f"{'yes' if agree else 'no'} |")


if __name__ == "__main__":
    main()
