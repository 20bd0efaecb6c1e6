"""Times what issue 39's targets name, in NumPy as the user has it: float32 and float64 `a @ b` and
`np.linalg.solve(a, b)` at n = 8192 (--n). Each operation is called once in a first pass (the program's first calls:
with the library, those that come while the GPU starts run on the CPU), then --repeats times each; prints one JSON
line per operation: the first call's seconds, the repeats' median, and a checksum that the runs with and without the
library must share.

Run it with and without the library preloaded (bench/numpy/run.sh does, twice each for the A/A spread)."""
import argparse
import json
import statistics
import time

import numpy as np


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    ops = []
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((args.n, args.n)).astype(dtype)
        b = rng.standard_normal((args.n, args.n)).astype(dtype)
        a += np.eye(args.n, dtype=dtype) * args.n ** 0.5  # well conditioned, so float32 solves agree closely too
        rhs = rng.standard_normal((args.n, 1)).astype(dtype)
        ops.append((dtype, "matmul", lambda a=a, b=b: a @ b))
        ops.append((dtype, "solve", lambda a=a, rhs=rhs: np.linalg.solve(a, rhs)))
    first = [timed(fn) for _, _, fn in ops]
    for (dtype, op, fn), (first_s, out) in zip(ops, first):
        times = [timed(fn)[0] for _ in range(args.repeats)]
        print(json.dumps({"label": args.label, "dtype": np.dtype(dtype).name, "op": op, "n": args.n,
                          "first_s": round(first_s, 5), "median_s": round(statistics.median(times), 5),
                          "times_s": [round(t, 5) for t in times],
                          "checksum": float(np.abs(out).sum(dtype=np.float64))}), flush=True)


if __name__ == "__main__":
    main()
