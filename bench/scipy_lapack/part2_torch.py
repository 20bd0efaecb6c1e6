"""The best GPU route's reference for LAPACK part 2, in the same run: PyTorch's CUDA linear algebra (cuSOLVER's
geqrf, syevd, gesvd/gesvdj, getrf+getrs, potri) on the same shapes, timed device-only (operands already on the GPU,
synchronized) and with one transfer each way from and to pageable host memory. One JSON line per point."""

import argparse
import json
import time

import numpy as np
import torch


def timed(fn, reps=3):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", required=True)
    o = ap.parse_args()
    dev = torch.device("cuda")
    for p in o.points.split(","):
        f = p.split(":")
        routine, prec, n = f[0], f[1], int(f[2])
        m = int(f[3]) if len(f) > 3 and f[3] not in ("", "0") else n
        dt = torch.float64 if prec == "d" else torch.float32
        host = np.random.default_rng(1).uniform(-1, 1, (m, n)).astype(np.float64 if prec == "d" else np.float32)
        if routine in ("syevd", "syevr", "potri"):
            host = (host + host.T) / 2 + (n * np.eye(n) if routine == "potri" else 0)
        a = torch.from_numpy(np.asfortranarray(host)).to(dev)
        b = torch.ones((m, 1), dtype=dt, device=dev)
        ops = {
            "geqrf": lambda: torch.geqrf(a),
            "gels": lambda: torch.linalg.lstsq(a, b, driver="gels"),
            "syevd": lambda: torch.linalg.eigh(a),
            "syevr": lambda: torch.linalg.eigh(a),
            "gesdd": lambda: torch.linalg.svd(a, full_matrices=False),
            "gesvd": lambda: torch.linalg.svd(a, full_matrices=False),
            "getri": lambda: torch.linalg.inv(a),
            "potri": lambda: torch.cholesky_inverse(torch.linalg.cholesky(a)),
        }
        dev_s = timed(ops[routine])

        def with_copies():
            x = torch.from_numpy(host).to(dev)  # pageable host -> device
            out = ops[routine]() if x is not None else None
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for t in outs:
                if isinstance(t, torch.Tensor):
                    t.cpu()

        copy_s = timed(with_copies)
        print(json.dumps({"label": "torch-cuda", "routine": prec + routine, "n": n, "m": m, "device_s": dev_s,
                          "with_copies_s": copy_s, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
