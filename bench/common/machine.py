"""Where the benchmarks run (bench/common/run.py's Machine): the libraries (a carry's or the build tree's), the CPU BLAS
and its settings (OpenBLAS's core type and threads), the GPU and commit that name the results, the programs, the
calibration."""
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import time

import processes

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
REPO = os.path.dirname(BENCH)
_output, _read = processes.output, processes.read_text


def log(msg):
    print("run.py: %s" % msg, file=sys.stderr, flush=True)


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


class Machine:
    def __init__(self, opts):
        self.carry = os.path.abspath(opts["carry"]) if opts.get("carry") else None
        self.build = os.path.abspath(opts.get("build") or os.environ.get("BUILD_DIR") or os.path.join(REPO, "build"))
        self.lib_dir = os.path.join(self.carry, "lib") if self.carry else self.build
        self.lib = os.path.join(self.lib_dir, "libblasoffload.so")
        self.module = os.path.join(self.lib_dir, "libblasoffload_cuda.so")
        root = os.environ.get("BO_BLAS_ROOT")
        if not root and self.carry and os.path.exists(os.path.join(self.carry, "blas-libs.tar.xz")):
            root = "/tmp/blasoffload-blas"
            if not os.path.isdir(os.path.join(root, "usr")):
                log("unpacking %s/blas-libs.tar.xz into %s" % (self.carry, root))
                with tarfile.open(os.path.join(self.carry, "blas-libs.tar.xz")) as t:
                    t.extractall(root)
        self.blas_root = root or "/"
        L = os.path.join(self.blas_root, "usr/lib/x86_64-linux-gnu")
        self.L = L
        self.openblas_dir = os.path.join(L, "openblas-pthread")
        # Reference LAPACK's folder first: it holds only liblapack.so.3, so libblas.so.3 is OpenBLAS's.
        path = "%s/lapack:%s:%s" % (L, self.openblas_dir, L)
        if os.environ.get("LD_LIBRARY_PATH"):
            path += ":" + os.environ["LD_LIBRARY_PATH"]
        self.blas_path = path
        self.nvblas = os.environ.get("BO_NVBLAS_LIB", "/usr/local/cuda/lib64/libnvblas.so")
        # OpenBLAS 0.3.21 runs its generic kernels on the lent AVX-512 Xeon unless told its type; SkylakeX on a CPU
        # without AVX-512 would stop at the first illegal instruction, so it is only set where it can run.
        cpuinfo = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
        if "OPENBLAS_CORETYPE" not in os.environ and re.search(r"\bavx512f\b", cpuinfo):
            os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
        if "OPENBLAS_NUM_THREADS" not in os.environ:
            os.environ["OPENBLAS_NUM_THREADS"] = str(min(16, os.cpu_count() or 1))
        m = re.search(r"model name\s*:\s*(.*)", cpuinfo)
        self.cpu = "%d cores, %s" % (os.cpu_count() or 0, m.group(1).strip() if m else "?")
        self.gpu = self._gpu()
        self.commit = self._commit()
        self.date = time.strftime("%Y-%m-%d", time.gmtime())
        self.tag = "%s-%s-%s" % (slug(self.gpu.split(",")[0]) or "nogpu", self.date, slug(self.commit))

    @staticmethod
    def _gpu():
        out = _output(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"])
        lines = [x.strip() for x in out.splitlines() if x.strip()]
        return lines[0] + ("" if len(lines) == 1 else " (x%d)" % len(lines)) if lines else "nogpu"

    def _commit(self):
        if self.carry and os.path.exists(os.path.join(self.carry, "COMMIT")):
            return " ".join(open(os.path.join(self.carry, "COMMIT")).read().split())
        try:
            c = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                               check=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", REPO, "diff", "--quiet", "HEAD", "--"]).returncode != 0
            return c + ("-uncommitted" if dirty else "")
        except (OSError, subprocess.CalledProcessError):
            return "unknown"

    def program(self, name, folder=""):
        """The carry's bin/NAME, else the build tree's bench/FOLDER/NAME, bench/*/NAME or NAME."""
        cands = [os.path.join(self.carry, "bin", name)] if self.carry else []
        cands.append(os.path.join(self.build, "bench", folder, name))
        cands += [os.path.join(self.build, "bench", d, name) for d in sorted(os.listdir(BENCH))
                  if os.path.isdir(os.path.join(BENCH, d))]
        cands.append(os.path.join(self.build, name))
        return next((c for c in cands if os.path.exists(c)), cands[0])

    def describe(self):
        lines = ["cpu: " + self.cpu,
                 "OPENBLAS_CORETYPE=%s OPENBLAS_NUM_THREADS=%s" % (os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
                                                                   os.environ.get("OPENBLAS_NUM_THREADS")),
                 "libblasoffload: " + self.lib, "BLAS root: %s (OpenBLAS: %s)" % (self.blas_root, self.openblas_dir),
                 "gpu: " + self.gpu, "commit: " + self.commit,
                 "memory: " + " ".join(x.split(":")[0] + " " + x.split(":")[1].strip() for x in
                                       open("/proc/meminfo").read().splitlines()[:3]),
                 "kernel: %s; THP: %s" % (os.uname().release, _read("/sys/kernel/mm/transparent_hugepage/enabled"))]
        # The PCIe link each GPU trained to and its clocks bound every rate of a report.
        lines += ["nvidia-smi: " + x for x in _output(["nvidia-smi", "--query-gpu=index,name,pcie.link.gen.current,"
                                                       "pcie.link.width.current,clocks.max.sm,clocks.sm,power.limit,"
                                                       "temperature.gpu", "--format=csv"]).splitlines()]
        lines += ["topo: " + x for x in _output(["nvidia-smi", "topo", "-m"]).splitlines()[:20]]
        lines += ["%s=%s" % kv for kv in sorted(os.environ.items()) if kv[0].startswith(("BLASOFFLOAD_", "CUDA_VIS"))]
        return "\n".join(lines) + "\n"

    def calibrate(self, outdir):
        """blasoffload-calibrate with the benchmarks' CPU BLAS settings; exports BLASOFFLOAD_POLICY_FILE."""
        if os.environ.get("BO_POLICY"):
            os.environ["BLASOFFLOAD_POLICY_FILE"] = os.path.abspath(os.environ["BO_POLICY"])
            log("policy file given: %s" % os.environ["BO_POLICY"])
            return
        tool = self.program("blasoffload-calibrate")
        if not os.path.exists(tool):
            log("warning: no blasoffload-calibrate: auto runs on the built-in defaults")
            return
        os.makedirs(outdir, exist_ok=True)
        policy = os.path.join(outdir, "policy-%s.json" % self.tag)
        cmd = [tool, "--out=" + policy] + shlex.split(os.environ.get("BO_CALIBRATE_ARGS", ""))
        if os.path.exists(self.module):
            cmd.append("--module=" + self.module)
        log("calibrating: %s" % " ".join(cmd))
        with open(os.path.join(outdir, "calibrate-%s.log" % self.tag), "w") as f:
            # A full calibration took 118-123 s on the lent H100 machines, 157 s since the solves are measured with
            # 64 right-hand sides and at n = 8192 (7f22406).
            rc = processes.run(cmd, dict(os.environ, LD_LIBRARY_PATH=self.blas_path), f, f, 240)
        if rc == 0 and os.path.exists(policy) and os.path.getsize(policy) > 0:
            os.environ["BLASOFFLOAD_POLICY_FILE"] = policy
            if not (json.load(open(policy)).get("gpu")):
                log("warning: the policy file has no GPU numbers: auto uses built-in ones")
        else:
            log("warning: calibration failed (exit %s): auto runs on the built-in defaults" % rc)
