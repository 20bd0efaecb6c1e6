"""Times LAPACK part 2's routines as a SciPy program calls them (scipy.linalg.lapack over the wheel's own OpenBLAS
LAPACK, SkylakeX kernels), one JSON line per routine and size, for run.sh to compare with and without the library.

Each call gets a fresh Fortran-ordered copy of its input (made outside the timing) and is timed alone; one untimed
call first (it pays a GPU start-up or cuSOLVER's first launches), then `reps` timed ones (median), each result checked
on a few sampled columns against LAPACK's residual bounds (ratio in units of n eps, pass below 30).
"""

import argparse
import json
import sys
import time

import numpy as np
import scipy.linalg.lapack as la


def rnd(shape, dt, seed=1):
    return np.asfortranarray(np.random.default_rng(seed).uniform(-1, 1, shape).astype(dt))


def sym(n, dt):
    a = rnd((n, n), np.float64)
    return np.asfortranarray((a + a.T).astype(dt))


def ratio(resid, scale, n, dt):
    eps = np.finfo(dt).eps
    return float(resid / (max(scale, 1e-300) * n * eps))


def cols(n, k=8):
    return np.linspace(0, n - 1, min(k, n)).astype(int)


# Each case: name -> (setup(n, dt) -> args, call(args) -> result, check(args, result, n, dt) -> ratio)
def geqrf_case(m, n, dt):
    a = rnd((m, n), dt)
    f = la.get_lapack_funcs("geqrf", dtype=dt)

    def call(x):
        return f(x, overwrite_a=1)

    def check(res):
        qr, tau, _, info = res
        assert info == 0
        j = cols(n)
        r = np.triu(qr[: min(m, n), :])
        # Q orthogonal: each column of R has the norm of A's column.
        return ratio(np.abs(np.linalg.norm(r[:, j], axis=0) - np.linalg.norm(a[:, j], axis=0)).max(),
                     np.linalg.norm(a[:, j], axis=0).max(), m, dt)

    return a, call, check


def gels_case(m, n, dt):
    a = rnd((m, n), dt)
    b = rnd((m, 1), dt, 2)
    f = la.get_lapack_funcs("gels", dtype=dt)
    lw = int(la.get_lapack_funcs("gels_lwork", dtype=dt)(m, n, 1)[0])

    def run(x):
        return f(x, b.copy(order="F"), lwork=lw, overwrite_a=1, overwrite_b=1)

    def check(res):
        _, x, info = res
        assert info == 0
        xs = x[:n].astype(np.float64)
        r = b[:, 0] - a.astype(np.float64) @ xs[:, 0]
        return ratio(np.abs(a.T.astype(np.float64) @ r).max(), np.abs(a).sum(0).max() * np.abs(b).max(), m, dt)

    return a, run, check


def syevd_case(n, dt, driver):
    a = sym(n, dt)
    if driver == "syevd":
        f = la.get_lapack_funcs("syevd", dtype=dt)
        call = lambda x: f(x, compute_v=1, lower=0, overwrite_a=1)  # noqa: E731
    else:
        f = la.get_lapack_funcs("syevr", dtype=dt)
        call = lambda x: f(x, compute_v=1, range="A", lower=0, overwrite_a=1)  # noqa: E731

    def check(res):
        w, v = res[0], res[1]
        assert res[-1] == 0
        j = cols(n)
        ad = a.astype(np.float64)
        r = ad @ v[:, j] - v[:, j] * w[j]
        return ratio(np.abs(r).max(), np.abs(w).max(), n, dt)

    return a, call, check


def svd_case(m, n, dt, driver):
    a = rnd((m, n), dt)
    f = la.get_lapack_funcs(driver, dtype=dt)
    lw = int(la.get_lapack_funcs(driver + "_lwork", dtype=dt)(m, n, compute_uv=1, full_matrices=0)[0])
    call = lambda x: f(x, compute_uv=1, full_matrices=0, lwork=lw, overwrite_a=1)  # noqa: E731

    def check(res):
        u, s, vt, info = res
        assert info == 0
        j = cols(min(m, n))
        r = a.astype(np.float64) @ vt[j, :].T - u[:, j] * s[j]
        return ratio(np.abs(r).max(), s.max(), max(m, n), dt)

    return a, call, check


def getri_case(n, dt):
    a = rnd((n, n), dt)
    lu, piv, _ = la.get_lapack_funcs("getrf", dtype=dt)(a.copy(order="F"))
    f = la.get_lapack_funcs("getri", dtype=dt)
    call = lambda x: f(x, piv, overwrite_lu=1)  # noqa: E731

    def check(res):
        inv, info = res
        assert info == 0
        j = cols(n)
        r = a.astype(np.float64) @ inv[:, j].astype(np.float64)
        r[j, np.arange(len(j))] -= 1
        return ratio(np.abs(r).max(), np.abs(a).sum(0).max() * np.abs(inv).sum(0).max(), n, dt)

    return lu, call, check


def potri_case(n, dt):
    a = rnd((n, n), dt)
    s = np.asfortranarray((a @ a.T / n + np.eye(n)).astype(dt))
    c, _ = la.get_lapack_funcs("potrf", dtype=dt)(s.copy(order="F"), lower=0)
    f = la.get_lapack_funcs("potri", dtype=dt)
    call = lambda x: f(x, lower=0, overwrite_c=1)  # noqa: E731

    def check(res):
        inv, info = res
        assert info == 0
        full = np.triu(inv) + np.triu(inv, 1).T
        j = cols(n)
        r = s.astype(np.float64) @ full[:, j].astype(np.float64)
        r[j, np.arange(len(j))] -= 1
        return ratio(np.abs(r).max(), np.abs(s).sum(0).max() * np.abs(full).sum(0).max(), n, dt)

    return c, call, check


CASES = {
    "geqrf": lambda n, dt, m=None: geqrf_case(m or n, n, dt),
    "gels": lambda n, dt, m=None: gels_case(m or n, n, dt),
    "syevd": lambda n, dt, m=None: syevd_case(n, dt, "syevd"),
    "syevr": lambda n, dt, m=None: syevd_case(n, dt, "syevr"),
    "gesdd": lambda n, dt, m=None: svd_case(m or n, n, dt, "gesdd"),
    "gesvd": lambda n, dt, m=None: svd_case(m or n, n, dt, "gesvd"),
    "getri": lambda n, dt, m=None: getri_case(n, dt),
    "potri": lambda n, dt, m=None: potri_case(n, dt),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("--points", required=True, help="routine:prec:n[:m][:reps],... e.g. geqrf:d:8192:1:1")
    ap.add_argument("--budget-s", type=float, default=1e9)
    o = ap.parse_args()
    t_start = time.monotonic()
    for p in o.points.split(","):
        f = p.split(":")
        routine, prec, n = f[0], f[1], int(f[2])
        m = int(f[3]) if len(f) > 3 and f[3] not in ("", "0") else None
        reps = int(f[4]) if len(f) > 4 else 3
        dt = np.float64 if prec == "d" else np.float32
        rec = {"label": o.label, "routine": prec + routine, "n": n, "m": m or n}
        if time.monotonic() - t_start > o.budget_s:
            rec["skipped"] = "budget"
            print(json.dumps(rec), flush=True)
            continue
        x0, call, check = CASES[routine](n, dt, m)
        times = []
        first = None
        worst = 0.0
        for r in range(reps + 1):  # reps 0: the first call is the measurement (the CPU at its largest sizes)
            x = x0.copy(order="F")
            t0 = time.perf_counter()
            res = call(x)
            dt_s = time.perf_counter() - t0
            worst = max(worst, check(res))
            if r == 0:
                first = dt_s
            if r > 0 or reps == 0:
                times.append(dt_s)
        rec.update(first_s=first, seconds=float(np.median(times)), min_s=min(times), max_s=max(times), reps=reps,
                   check_ratio=worst, check="ok" if worst < 30 else "FAIL")
        print(json.dumps(rec), flush=True)
        sys.stderr.write("%s %s n=%d: %.4f s (first %.4f) check %.2f\n" % (o.label, rec["routine"], n,
                                                                           rec["seconds"], first, worst))


if __name__ == "__main__":
    main()
