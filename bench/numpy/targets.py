"""Times what issue 39's targets name, in NumPy as the user has it: float32 and float64 `a @ b` and
`np.linalg.solve(a, b)` at n = 8192 (--n), each called once cold and then --repeats times; prints one JSON line per
operation (first-call and median seconds, and a checksum that the runs with and without the library must share).

Run it twice, with and without the library preloaded (bench/numpy/run.sh does, with an A/A pair)."""
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
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((args.n, args.n)).astype(dtype)
        b = rng.standard_normal((args.n, args.n)).astype(dtype)
        a += np.eye(args.n, dtype=dtype) * args.n ** 0.5  # well conditioned, so float32 solves agree closely too
        rhs = rng.standard_normal((args.n, 1)).astype(dtype)
        for op, fn in (("matmul", lambda: a @ b), ("solve", lambda: np.linalg.solve(a, rhs))):
            first, out = timed(fn)
            times = [timed(fn)[0] for _ in range(args.repeats)]
            print(json.dumps({"label": args.label, "dtype": np.dtype(dtype).name, "op": op, "n": args.n,
                              "first_s": round(first, 5), "median_s": round(statistics.median(times), 5),
                              "times_s": [round(t, 5) for t in times],
                              "checksum": float(np.abs(out).sum(dtype=np.float64))}), flush=True)


if __name__ == "__main__":
    main()
