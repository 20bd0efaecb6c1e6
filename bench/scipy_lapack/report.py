"""Renders run.sh's raw lines (one or more .jsonl files of one GPU machine) as the LAPACK part-2 table: per routine and
size the CPU's time (each round), the library's (each round), the speed-up, the A/A spread of each side, the GPU
route's reference (PyTorch's cuSOLVER, device only and with one transfer each way) and the targets of the issue.
Usage: report.py RAW.jsonl [RAW2.jsonl ...] > REPORT.md   (a later file's stack at a point replaces an earlier one's)"""

import json
import sys

# Issue targets: (routine, n, m) -> least speed-up over the CPU LAPACK alone.
TARGETS = {("dgeqrf", 8192, 8192): 25, ("sgeqrf", 8192, 8192): 25, ("dgels", 1024, 65536): 15,
           ("sgels", 1024, 65536): 15, ("dsyevd", 8192, 8192): 25, ("dsyevd", 4096, 4096): 15,
           ("dsyevr", 4096, 4096): 15, ("ssyevd", 4096, 4096): 15, ("ssyevd", 8192, 8192): 15,
           ("dgesdd", 4096, 4096): 20, ("sgesdd", 4096, 4096): 20}


def main():
    points = {}
    for path in sys.argv[1:]:
        per_file = {}
        for line in open(path):
            r = json.loads(line)
            if "routine" not in r or r.get("skipped"):
                continue
            key = (r["routine"], r["n"], r["m"])
            per_file.setdefault(key, {})[r["label"]] = r
        for key, labels in per_file.items():
            points.setdefault(key, {}).update(labels)  # a later run's stack replaces the earlier run's, per stack
    print("| call | m x n | CPU LAPACK alone (s), rounds | library, auto (s), rounds | speed-up | A/A CPU | A/A lib "
          "| GPU route: device / with copies (s) | lib / route with copies | target | checks |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(points, key=lambda k: (k[0][1:], k[0][0], k[2] * k[1])):
        p = points[key]
        cpu = [p[l]["seconds"] for l in ("cpu-1", "cpu-2") if l in p]
        lib = [p[l]["seconds"] for l in ("auto-1", "auto-2") if l in p]
        t = p.get("torch-cuda", {})
        fmt = lambda xs: " / ".join("%.4g" % x for x in xs) or "-"  # noqa: E731
        spread = lambda xs: "%.2f" % (max(xs) / min(xs)) if len(xs) > 1 else "-"  # noqa: E731
        speed = min(cpu) / min(lib) if cpu and lib else None
        route = "%.4g / %.4g" % (t["device_s"], t["with_copies_s"]) if t else "-"
        vs = "%.2f" % (min(lib) / t["with_copies_s"]) if t and lib else "-"
        target = TARGETS.get(key)
        met = "-" if target is None or speed is None else ("%dx: %s" % (target, "met" if speed >= target else "MISSED"))
        checks = sorted({r.get("check") for r in p.values() if r.get("check")})
        print("| `%s` | %d x %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            key[0], key[2], key[1], fmt(cpu), fmt(lib), "%.1fx" % speed if speed else "-", spread(cpu), spread(lib),
            route, vs, met, ",".join(checks)))


if __name__ == "__main__":
    main()
