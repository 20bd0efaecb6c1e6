"""The runner's processes (bench/common/run.py): one run within a time limit, a process beside a benchmark (a load),
and the processes a run's programs leave behind, so that none outlives the runner, however it ends.

A library's detached background process (libblasoffload.so's calibration, started by a program and left running when
it exits) is reparented to the runner, which is made a child subreaper (Linux), so that the runner can end it with the
part that started it. SIGTERM and SIGHUP end the runner as Ctrl-C does, so that its clean-up runs.
"""
import os
import signal
import subprocess
import time

PR_SET_CHILD_SUBREAPER = 36


def run(cmd, env, out, err, limit):
    """Runs a process with a time limit (SIGTERM, then SIGKILL 5 s later); 124 when it was stopped. An interrupted
    runner takes the process with it."""
    p = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
    try:
        return p.wait(timeout=max(1, limit))
    except subprocess.TimeoutExpired:
        stop(p)
        return 124
    except BaseException:
        stop(p)
        raise


def stop(p):
    """SIGTERM, then SIGKILL 5 s later."""
    if p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


class Beside:
    """A process run beside a benchmark's parts: output to BASE.jsonl, stderr to BASE.err."""

    def __init__(self, cmd, env, base, warmup_s=0):
        self.out, self.err = open(base + ".jsonl", "w"), open(base + ".err", "w")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, env=env, stdout=self.out, stderr=self.err)
        time.sleep(warmup_s)  # until it runs at full speed

    def stop(self, log):
        """Stops it (if it still runs); the fields that record it."""
        alive = self.p.poll() is None
        stop(self.p)
        self.out.close()
        self.err.close()
        fields = {"beside": " ".join(self.p.args), "wall_s": round(time.monotonic() - self.t0, 3),
                  "rc": self.p.returncode, "ended": "stopped" if alive else "by itself"}
        log("beside process %s after %ds (exit %s)" % (fields["ended"], fields["wall_s"], fields["rc"]))
        return fields


def _on_signal(sig, _frame):
    raise SystemExit(128 + sig)


def own_children():
    """Orphans of the runner's processes become its children; SIGTERM and SIGHUP raise SystemExit."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def end_strays(log, keep=()):
    """Ends the runner's children that none of its Popen waits for (orphans reparented to it; keep: pids still in
    use) and returns [{"stray": command line, "pid", "ended": "by itself" | "stopped"}]."""
    out = []
    for pid in _children():
        if pid in keep:
            continue
        cmd = read_text("/proc/%d/cmdline" % pid, "").replace("\0", " ").strip()
        cmd = cmd or "[%s]" % read_text("/proc/%d/comm" % pid, "?")  # a zombie keeps only its name
        ended = "by itself" if _state(pid) == "Z" else "stopped"
        for sig in (signal.SIGTERM, signal.SIGKILL) if ended == "stopped" else ():
            try:
                os.kill(pid, sig)
            except OSError:
                break
            t = time.monotonic()
            while time.monotonic() - t < 5 and _state(pid) not in ("Z", None):
                time.sleep(0.05)
            if _state(pid) in ("Z", None):
                break
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass
        log("stray process %d (%s): %s" % (pid, ended, cmd[:200]))
        out.append({"stray": cmd[:300], "pid": pid, "ended": ended})
    return out


def output(cmd):
    """A command's standard output, "" when it cannot run (nvidia-smi on a machine without it)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def read_text(path, missing="?"):
    """A small file's text, stripped; missing when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return f.read().strip()
    except OSError:
        return missing


def _stat(pid):
    """(state, parent pid) of a process, (None, None) when it is gone."""
    f = read_text("/proc/%d/stat" % pid, "").rpartition(")")[2].split()
    return (f[0], int(f[1])) if len(f) > 1 else (None, None)


def _state(pid):
    return _stat(pid)[0]


def _children():
    if not os.path.isdir("/proc"):
        return []
    return [int(d) for d in os.listdir("/proc") if d.isdigit() and _stat(int(d))[1] == os.getpid()]
