#!/usr/bin/env python3
"""The one benchmark runner: reads a folder's description (bench/<folder>/bench.ini, format in bench/common/README.md),
runs what it sweeps, one process per point of its loop, within time limits, and writes the raw lines and the report.

Usage: run.py [options] FOLDER[:ITEMS][@SECONDS] ...
  FOLDER    kernels, lapack, level3, pipeline, policy, residency (a folder of bench/ with a bench.ini)
  ITEMS     comma list of the folder's benchmarks (default: those marked default = yes), or of values of a
            benchmark's `select` axis (pipeline:sgemm_host runs the engine benchmark's sgemm_host case only)
  SECONDS   this selection's time limit (default: the benchmark's budget_s); never past --deadline-s
Options:
  --out=DIR        results: DIR/<folder>/<name>-<gpu>-<date>-<commit>.{jsonl,md} and the raw folder of that name
                   (default bench/results)
  --carry=DIR      programs and libraries from a carry (bench/common/make-carry.sh) instead of the build tree
  --build=DIR      the build tree (default $BUILD_DIR, else build/)
  --deadline-s=S   everything stops S seconds after the start (default: none)
  --pack           pack each raw folder into <name>-<tag>.tar.gz (what a device call brings back)
  --set AXIS=V,V   replace an axis's values in every selected benchmark (e.g. --set n=256,512); --set BENCH.AXIS=V,V
                   in one benchmark only (--set regret.precision=d); --set BENCH.PART.AXIS=V,V in one of its runs only
                   (--set mix.calls.stack=cpu,cpu-aa,bo-uncal)
  --args=TEXT      more program arguments for every run (the {args} of the description)
  --args-for PROGRAM TEXT  more arguments for that program's runs only
  --no-calibrate   never calibrate (auto uses $BLASOFFLOAD_POLICY_FILE, else the built-in defaults)
  --dry-run        print the runs, run nothing
Environment: BO_BLAS_ROOT (a prepare-carry.sh --openblas folder; default: the carry's blas-libs.tar.xz unpacked into
/tmp, else /), BO_POLICY (a policy file: no calibration), BO_CALIBRATE_ARGS, OPENBLAS_CORETYPE / OPENBLAS_NUM_THREADS
(SkylakeX on an AVX-512 CPU and min(16, cores) where unset), BLASOFFLOAD_* (pass through to every run).
Exit status: 0 every report met its targets, 1 a miss or a failed run, 2 usage or set-up error.
"""
import configparser
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import time

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
REPO = os.path.dirname(BENCH)
sys.path.insert(0, HERE)
import processes  # noqa: E402  (bench/common/processes.py)
import report as common_report  # noqa: E402  (bench/common/report.py)
import machine  # noqa: E402  (bench/common/machine.py)

START = time.monotonic()


def elapsed():
    return time.monotonic() - START


def log(msg):
    print("run.py: [%ds] %s" % (elapsed(), msg), file=sys.stderr, flush=True)


def words(text):
    return [w for w in re.split(r"[\s,]+", text or "") if w]


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# ---- Description ----


def read_description(folder):
    """Benchmarks (sections without a dot), their runs ("BENCH.PART") and stacks ("stack NAME": bench/common/stacks.ini
    first, the folder's own override them)."""
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=(";",), comment_prefixes=("#", ";"))
    cp.optionxform = str
    path = os.path.join(BENCH, folder, "bench.ini")
    if not cp.read([os.path.join(HERE, "stacks.ini"), path]):
        raise SystemExit("run.py: no %s" % path)
    benches, stacks = {}, {}
    for sec in cp.sections():
        body = dict(cp[sec])
        if sec.startswith("stack "):
            stacks[sec[6:].strip()] = body
        elif "." in sec:
            b, part = sec.split(".", 1)
            benches.setdefault(b, {"runs": []})["runs"].append(dict(body, part=part))
        else:
            benches.setdefault(sec, {"runs": []}).update(body)
    return benches, stacks


def select(folder, items, benches):
    """(benchmark name, {axis: values restricted}) for a selection."""
    if not items:
        return [(b, {}) for b, d in benches.items() if d.get("default", "yes") == "yes"]
    chosen = []
    for it in items:
        if it in benches:
            chosen.append((it, {}))
            continue
        owner = [b for b, d in benches.items() if d.get("select") and
                 any(it in words(r.get(d["select"], "")) for r in d["runs"])]
        if not owner:
            raise SystemExit("run.py: %s has no benchmark or case '%s' (benchmarks: %s)" % (
                folder, it, ", ".join(benches)))
        b = owner[0]
        for c in chosen:
            if c[0] == b and c[1]:
                c[1][benches[b]["select"]].append(it)
                break
        else:
            chosen.append((b, {benches[b]["select"]: [it]}))
    return chosen


# ---- The machine (bench/common/machine.py) ----


Machine = machine.Machine


# ---- One benchmark ----


def fill(template, values):
    """{name} replaced from values; unknown names stay as they are."""
    return re.sub(r"\{(\w+)\}", lambda m: str(values.get(m.group(1), m.group(0))), template)


class Benchmark:
    def __init__(self, machine, folder, name, desc, stacks, restrict, opts):
        self.m, self.folder, self.name, self.d, self.stacks = machine, folder, name, desc, stacks
        self.restrict, self.opts = restrict, opts
        self.base = os.path.join(opts["out"], folder, "%s-%s" % (desc.get("prefix", name), machine.tag))
        self.raw = self.base
        self.took = {}  # estimate key -> (seconds, scale value)
        self.failed = {}
        self.status = 0
        self.combined = []

    def note(self, run, values, why=None, file="notes.jsonl", **more):
        """A raw line recording a process that did not run or failed (the run's note fields, then skipped); with
        file="processes.jsonl", one that ran (record = yes: its wall time and exit status, measured outside it)."""
        if self.opts["dry_run"]:
            print("(not run: %s)" % why)
            return
        fields = {}
        for item in words(run.get("note", "")):
            k, _, v = item.partition(":")
            v = fill(v, values)
            fields[k] = int(v) if re.fullmatch(r"-?\d+", v) else v
        if why is not None:
            more["skipped"] = why.replace('"', "'")
        fields.update(more)
        with open(os.path.join(self.raw, file), "a") as f:
            f.write(json.dumps(fields) + "\n")

    def axes(self, run):
        loop = words(run.get("loop", ""))
        out = []
        for ax in loop:
            vals = words(run.get(ax, ""))
            if ax in self.restrict:
                vals = [v for v in vals if v in self.restrict[ax]] if self.d.get("select") == ax else \
                    list(self.restrict[ax])
            # --set AXIS=..., then --set BENCHMARK.AXIS=..., then --set BENCHMARK.PART.AXIS=... (one run's only)
            for key in (ax, "%s.%s" % (self.name, ax), "%s.%s.%s" % (self.name, run["part"], ax)):
                if key in self.opts["set"]:
                    vals = list(self.opts["set"][key])
            out.append((ax, vals))
        return out

    def allowed(self, run, values):
        for rule in (r.strip() for r in run.get("only", "").split(";")):
            if not rule:
                continue
            m = re.fullmatch(r"(\S+)\s+if\s+(\w+)\s*=\s*(\S+)", rule)
            if not m:
                raise SystemExit("run.py: bad only rule '%s' (STACK if AXIS=V,V)" % rule)
            if values.get("stack") == m.group(1) and values.get(m.group(2)) not in words(m.group(3)):
                return False
        return True

    def stack(self, name):
        """A stack's keys, those of the stack it names in from first (env and unset added to, the rest replaced)."""
        if name not in self.stacks:
            raise SystemExit("run.py: no stack '%s' in bench/common/stacks.ini or the description" % name)
        s = dict(self.stacks[name])
        if s.get("from"):
            base = self.stack(s.pop("from"))
            for k in ("env", "unset"):
                s[k] = base.get(k, "") + " " + s.get(k, "")
            s = dict(base, **s)
        return s

    @staticmethod
    def stack_env(s, values):
        """The process environment of a stack: ours, less its unset names, plus its env (NAME=VALUE templates)."""
        env = dict(os.environ)
        for k in words(s.get("unset", "")):
            env.pop(k, None)
        for item in shlex.split(fill(s.get("env", ""), values)):
            k, _, v = item.partition("=")
            env[k] = v
        return env

    def run_all(self, limit):
        self.t0, self.limit = elapsed(), limit
        if not self.opts["dry_run"]:  # a dry run writes nothing
            if os.path.exists(self.raw):
                subprocess.run(["rm", "-rf", self.raw])
            os.makedirs(self.raw)
            open(os.path.join(self.raw, "notes.jsonl"), "w").close()
            with open(os.path.join(self.raw, "env.txt"), "w") as f:
                f.write(self.m.describe() + "benchmark: %s/%s limit %ds\n" % (self.folder, self.name, limit))
        log("=== %s/%s (%ds): %s" % (self.folder, self.name, limit, self.base))
        beside = self.start_beside()
        try:
            for run in self.d["runs"]:
                try:
                    self.run_part(run)
                finally:  # what the part's programs left running ends with the part
                    if not self.opts["dry_run"]:
                        for s in processes.end_strays(log, keep=[beside.p.pid] if beside else []):
                            self.note({}, {}, file="processes.jsonl", section=run["part"], **s)
            if self.d.get("rerun") and not self.opts["dry_run"]:
                self.rerun()
        finally:
            if beside:  # its lines (the load's) and how it ended in the result file
                self.note({}, {}, file="processes.jsonl", **beside.stop(log))
                self.combined.append("beside")
        return 0 if self.opts["dry_run"] else self.finish()

    def templates(self):
        """The values every template may name besides the axes."""
        return dict(raw=self.raw, lib=self.m.lib, module=self.m.module, blas_path=self.m.blas_path,
                    openblas_dir=self.m.openblas_dir, L=self.m.L, commit=self.m.commit, nvblas=self.m.nvblas,
                    nvblas_dir=os.path.dirname(self.m.nvblas))

    def start_beside(self):
        """beside = PROGRAM ARGS (beside_stack, default cpu): a process started before the benchmark's first part (and
        beside_warmup_s before it) and stopped after its last: a load on the machine; its output is beside.jsonl."""
        if not self.d.get("beside"):
            return None
        values = dict(self.templates(), output="beside")
        prog, *args = shlex.split(fill(self.d["beside"], values))
        cmd = [self.m.program(prog, self.folder)] + args
        if self.opts["dry_run"]:
            print("beside", " ".join(cmd))
            return None
        log("beside the benchmark: %s" % " ".join(cmd))
        return processes.Beside(cmd, self.stack_env(self.stack(self.d.get("beside_stack", "cpu")), values),
                                os.path.join(self.raw, "beside"), float(self.d.get("beside_warmup_s", 0)))

    def left(self):
        return int(self.limit - (elapsed() - self.t0))

    def run_part(self, run, fixed=None, extra_args="", scale_estimate=1.0):
        """Every point of the run's loop (fixed: axes narrowed to these values; a re-run's shapes in extra_args, its
        estimate scale_estimate x the first time, which it does not replace)."""
        axes = self.axes(run)
        if fixed:
            axes = [(a, fixed[a] if a in fixed else v) for a, v in axes]
        rotate = run.get("rotate")
        weights = dict(w.split(":") for w in words(run.get("weights", "")))
        combos = []
        for combo in itertools.product(*[v for _, v in axes]):
            values = dict(zip([a for a, _ in axes], combo))
            combos.append(values)
        if rotate:  # the rotated axis's order turns by one each round, so no mode always runs first
            vals = dict(axes)[rotate]
            for v in combos:
                r = int(v.get("round", 1))
                v[rotate] = vals[(vals.index(v[rotate]) + r - 1) % len(vals)]
        for i, values in enumerate(combos):
            if not self.allowed(run, values):
                continue
            more = [self.opts["args"], self.opts["args_for"].get(run["program"], ""), extra_args]
            values = dict(values, args=" ".join(filter(None, more)), **self.templates())
            if weights:
                rest = sum(int(weights.get(c[run["weight_axis"]], 0)) for c in combos[i:])
                part = self.left() * int(weights.get(values[run["weight_axis"]], 0)) // max(rest, 1)
            else:
                part = None
            if self.one(run, values, part, scale_estimate, record=not extra_args) == "stop":
                break

    def one(self, run, values, part, scale_estimate, record):
        """One process: skipped when its estimate (the same estimate_key's last time, scaled) does not fit."""
        stack = self.stack(values["stack"]) if "stack" in values else {}
        values = dict(values, mode=stack.get("label", values.get("stack", "")))
        for key, text in run.items():  # args_AXIS = VALUE:ARGUMENT ...: {AXIS_arg}, the argument of this value
            if key.startswith("args_"):
                pairs = dict(w.partition(":")[::2] for w in text.split())
                values[key[5:] + "_arg"] = pairs.get(str(values.get(key[5:])), "")
        name = fill(run.get("output", "{part}"), dict(values, part=run["part"]))
        # reserve_s: what the parts after this one keep of the budget (scaled to a selection's own time limit)
        left = self.left() - int(run.get("reserve_s", 0)) * self.limit // int(self.d.get("budget_s", self.limit))
        key = tuple(values.get(a) for a in words(run.get("estimate_key", "")))
        est = 0
        if key in self.took:
            t, prev = self.took[key]
            est = t * scale_estimate
            sc = run.get("estimate_scale")  # AXIS^P: the previous time scaled by the axis's growth
            if sc:
                ax, p = sc.split("^")
                est = t * (float(values[ax]) / float(prev)) ** float(p)
        fkey = tuple(values.get(a) for a in words(run.get("skip_after_failure", "")))
        if run.get("skip_after_failure") and fkey in self.failed:
            self.note(run, values, "not run: failed at %s" % self.failed[fkey])
            return None
        min_s = int(run.get("min_s", 10))
        limit = min(left, int(run.get("cap_s", left)))
        if part is not None:
            limit = part
        if left < min_s or limit < min_s or est > left:
            log("skip %s: %ds left%s" % (name, left, ", estimated %ds" % est if est else ""))
            self.note(run, values, "budget: %s%ds left" % ("estimated %ds, " % est if est else "", left))
            self.status = 1
            return None
        env = self.stack_env(stack, dict(values, output=name))
        for d in words(fill(stack.get("mkdir", ""), values)) if not self.opts["dry_run"] else []:
            os.makedirs(d, exist_ok=True)  # directories the stack's env names (a HOME)
        if stack.get("file") and not self.opts["dry_run"]:  # a configuration file its library reads (nvblas.conf)
            with open(fill(stack["file"], values), "w") as f:
                f.write(fill(stack.get("file_text", ""), values).replace("|", "\n") + "\n")
        for need in words(stack.get("needs", "")):
            need = fill(need, values)
            if not os.path.exists(need):
                log("skip %s: no %s" % (name, need))
                self.note(run, values, "no %s" % os.path.basename(need))
                return None
        values = dict(values, limit=limit, inner=limit - 15 if limit > 30 else limit // 2,
                      stack_args=stack.get("args", ""))
        prog = self.m.program(run["program"], self.folder)
        cmd = [prog] + shlex.split(fill(run.get("args", "{args}"), values))
        if self.opts["dry_run"]:
            print(name, " ".join(cmd))
            return None
        if not os.path.exists(prog):
            log("skip %s: no program %s" % (name, prog))
            self.note(run, values, "no program %s" % run["program"])
            self.status = 1
            return None
        hard = limit + int(run.get("grace_s", 0))
        hard = min(hard, left + 30)
        t0 = elapsed()
        with open(os.path.join(self.raw, name + ".jsonl"), "w") as out, \
                open(os.path.join(self.raw, name + ".err"), "w") as err:
            rc = processes.run(cmd, env, out, err, hard)
        wall = elapsed() - t0
        took = max(1, int(wall))
        if run.get("record") == "yes":  # the process's wall time, measured outside it (its start and exit too)
            self.note(run, values, file="processes.jsonl", process=name, section=run["part"],
                      stack=values.get("stack"), rc=rc, wall_s=round(wall, 4), start_s=round(t0 - self.t0, 2))
        # exit_ok = CODES: exit statuses that are an outcome, not a failure (any: every one)
        ok_exit = rc == 0 or bool({"any", str(rc)} & set(words(run.get("exit_ok", ""))))
        scale_axis = (run.get("estimate_scale") or "^").split("^")[0]
        if record:
            self.took[key] = (took, values.get(scale_axis))
        text = open(os.path.join(self.raw, name + ".jsonl")).read()
        points = len(re.findall(run.get("count", '"median'), text))
        if run.get("combine", "yes") == "yes":
            self.combined.append(name)
        errtail = " ".join(open(os.path.join(self.raw, name + ".err"), errors="replace").read().split("\n")[-4:])[-200:]
        if rc in (124, 137, -9, -15):
            log("%s stopped after %ds (limit %ds, %d points)" % (name, took, hard, points))
            self.note(run, values, "stopped after %ds (limit %ds)" % (took, hard))
            self.status = 1
        elif str(rc) in words(run.get("stop_on_exit", "")):
            log("%s: exit %d, nothing more of this part: %s" % (name, rc, errtail))
            self.status = max(self.status, rc)
            return "stop"
        elif points == 0 and not ok_exit:
            log("%s failed (exit %d): %s" % (name, rc, errtail))
            self.note(run, values, "failed (exit %d): %s" % (rc, errtail.replace("\\", "/")))
            self.failed[fkey] = "%s=%s" % (scale_axis, values.get(scale_axis))
            self.status = 1
        else:
            if not ok_exit:
                log("%s exited with %d (a check failed?)" % (name, rc))
                self.status = 1
            log("%s: %ds, %d points" % (name, took, points))
        check = stack.get("resolves")  # SYMBOL:NEEDLE the stack's own symbol must come from
        if check:
            sym, _, needle = check.partition(":")
            m = re.search(r'"(?:%s)_from": "([^"]*)"' % sym, text)
            if m and (needle.startswith("!") == (needle.lstrip("!") in m.group(1))):
                log("WARNING %s: %s_ from %s, not what the stack's name says" % (name, sym, m.group(1)))
        return None

    def rerun(self):
        """rerun = report: the report's repeat_list() names points whose verdict lies within the spread; they run
        once more, every stack, as one more round."""
        mod = common_report.load(self.d["report"])
        points = mod.repeat_list(self.jsonl_rows())
        if not points:
            return
        run = self.d["runs"][0]
        rounds = dict(self.axes(run))["round"]
        nxt = str(int(rounds[-1]) + 1)
        log("re-running %d point(s) within the spread of a threshold: %s" % (
            sum(len(v) for v in points.values()), "; ".join("%s %s" % (k, ",".join(v)) for k, v in points.items())))
        split = "precision" in words(run.get("loop"))  # routine names carry the precision letter
        for routine, shapes in points.items():
            fixed = {"round": [nxt], "routine": [routine[1:] if split else routine]}
            if split:
                fixed["precision"] = [routine[0]]
            self.run_part(run, fixed=fixed, extra_args="--shapes=" + ",".join(shapes), scale_estimate=0.25)

    def jsonl_rows(self):
        lines = []
        for name in self.combined:
            lines += open(os.path.join(self.raw, name + ".jsonl"), errors="replace").read().splitlines()
        lines += open(os.path.join(self.raw, "notes.jsonl")).read().splitlines()
        if os.path.exists(os.path.join(self.raw, "processes.jsonl")) and (
                self.d.get("beside") or any(r.get("record") == "yes" for r in self.d["runs"])):
            lines += open(os.path.join(self.raw, "processes.jsonl")).read().splitlines()
        return lines

    def finish(self):
        with open(self.base + ".jsonl", "w") as f:
            f.write("\n".join(self.jsonl_rows()) + "\n")
        header = {"gpu": self.m.gpu, "date": self.m.date, "commit": self.m.commit}
        rc = common_report.render(self.d["report"], self.base + ".jsonl", raw=self.raw, md=self.base + ".md",
                                  policy=os.environ.get("BLASOFFLOAD_POLICY_FILE"), header=header)
        log("wrote %s.jsonl and .md (report exit %d)" % (self.base, rc))
        if self.opts["pack"]:
            with tarfile.open(self.base + ".tar.gz", "w:gz") as t:
                t.add(self.raw, arcname=os.path.basename(self.raw))
            subprocess.run(["rm", "-rf", self.raw])
        return max(self.status, rc) if rc != 2 else 1


def parse_args(argv):
    opts = {"out": os.path.join(BENCH, "results"), "set": {}, "args": "", "args_for": {}, "pack": False,
            "dry_run": False, "calibrate": True, "deadline": None}
    sel = []
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        elif a.startswith("--out="):
            opts["out"] = os.path.abspath(a[6:])
        elif a.startswith("--carry="):
            opts["carry"] = a[8:]
        elif a.startswith("--build="):
            opts["build"] = a[8:]
        elif a.startswith("--deadline-s="):
            opts["deadline"] = int(a[13:])
        elif a == "--pack":
            opts["pack"] = True
        elif a == "--set":
            k, _, v = next(it).partition("=")
            opts["set"][k] = words(v)
        elif a.startswith("--args="):
            opts["args"] = a[7:]
        elif a == "--args-for":
            prog = next(it)
            opts["args_for"][prog] = next(it)
        elif a == "--no-calibrate":
            opts["calibrate"] = False
        elif a == "--dry-run":
            opts["dry_run"] = True
        elif a.startswith("-"):
            raise SystemExit("run.py: unknown option %s (--help)" % a)
        else:
            m = re.fullmatch(r"([\w-]+)(?::([\w,.-]+))?(?:@(\d+))?", a)
            if not m:
                raise SystemExit("run.py: bad selection '%s' (FOLDER[:ITEMS][@SECONDS])" % a)
            sel.append((m.group(1), words(m.group(2)), int(m.group(3)) if m.group(3) else None))
    if not sel:
        raise SystemExit(__doc__)
    return opts, sel


def main(argv):
    opts, selections = parse_args(argv)
    processes.own_children()
    try:
        return run_selections(opts, selections)
    finally:
        for s in processes.end_strays(log):
            log("ended at exit: %s" % s["stray"][:200])


def run_selections(opts, selections):
    machine = Machine(opts)
    plan = []
    for folder, items, seconds in selections:
        benches, stacks = read_description(folder)
        for name, restrict in select(folder, items, benches):
            plan.append((folder, name, benches[name], stacks, restrict, seconds))
    print(machine.describe(), file=sys.stderr, end="")
    if opts["calibrate"] and not opts["dry_run"] and any(p[2].get("calibrate") == "yes" for p in plan):
        machine.calibrate(os.path.join(opts["out"], "policy"))
    status = 0
    for folder, name, desc, stacks, restrict, seconds in plan:
        limit = seconds or int(desc.get("budget_s", 480))
        if opts["deadline"] is not None:
            limit = min(limit, int(opts["deadline"] - elapsed()) - 20)
        if limit < 30:
            log("%s/%s not run: %ds left" % (folder, name, limit))
            status = 1
            continue
        b = Benchmark(machine, folder, name, desc, stacks, restrict, opts)
        status = max(status, 1 if b.run_all(limit) else 0)
    log("done in %ds (exit %d)" % (elapsed(), status))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
