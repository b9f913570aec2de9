#!/usr/bin/env python3
"""How pelab's sweep and comparison commands scale with the number of runs.

Generates a sweep of N runs (5,000 by default) and times, with their peak memory:

  * `pelab sweep CONFIG --launcher slurm --dry-run` of the N-run plan (nothing trained yet);
  * `pelab sweep --status DIR` once every run directory is filled in;
  * `pelab compare DIR --no-plots` over the N finished runs.

The finished run directories are realistic: one real run per positional scheme is trained
(`pelab train`, a few steps), and every run of the sweep gets a copy of its scheme's files
(config.yaml with its own seed and learning rate, summary.json, eval.csv, per_position.csv,
metrics.jsonl, train.log, environment.json, status.json, a hard link to the checkpoint) with
its accuracies drawn at random around the real ones, so that the comparison has groups,
seeds and selections to compute. A dry run over the filled directory then submits nothing:
that checks each generated config.yaml is byte for byte the one the plan writes.

Usage: tools/scale_check.py [--pelab build/pelab] [--runs 5000] [--work DIR] [--keep]
Exits 1 if a figure is over its budget (compare 10 s and 300 MB, status 5 s, dry run 5 s).
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

SCHEMES = ["none", "sinusoidal", "learned", "rotary", "alibi", "t5", "relative", "index",
           "kerple", "sandwich"]
LRS = ["0.003", "0.001", "0.0003", "0.0001", "3e-05"]
BUDGETS = {"dry-run": (5.0, None), "status": (5.0, None), "compare": (10.0, 300.0)}

CONFIG = """name: scale
seed: 0
threads: 1
model:
  d_model: 16
  heads: 2
  layers: 1
positional:
  type: rotary
task:
  name: shift
  shift: 1
  min_length: 1
  max_length: 8
training:
  steps: 4
  batch_size: 4
  warmup: 1
  lr: 0.001
evaluation:
  lengths: [4, 8, 12, 16, 24, 32]
  examples: 8
sweep:
  positional.type: [{schemes}]
  training.lr: [{lrs}]
  seed: [{seeds}]
  select: training.lr
"""


def timed(args, cwd):
    """Runs pelab under /usr/bin/time; returns (wall s, CPU s, peak MB, stdout)."""
    start = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M"] + args, cwd=cwd,
                       capture_output=True, text=True)
    seconds = time.monotonic() - start
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    user, system, peak_kb = p.stderr.strip().splitlines()[-1].split()
    return seconds, float(user) + float(system), int(peak_kb) / 1024.0, p.stdout


def train_templates(pelab, work):
    """One real finished run per scheme, at the sweep's first seed and learning rate."""
    templates = {}
    for scheme in SCHEMES:
        out = os.path.join(work, "templates", scheme)
        subprocess.run([pelab, "train", "scale.yaml", f"positional.type={scheme}",
                        f"training.lr={LRS[0]}", "seed=0", "sweep={}", "--out", out,
                        "--no-progress"], cwd=work, check=True, capture_output=True)
        templates[scheme] = out
    return templates


def jitter(rng, x):
    return min(1.0, max(0.0, x + rng.uniform(-0.2, 0.2)))


def fill_run(rng, template, run_dir, values):
    """A copy of the template run with the run's seed and lr, and accuracies drawn near its."""
    os.makedirs(run_dir, exist_ok=True)
    seed, lr = values["seed"], values["training.lr"]
    for name in ["eval.csv", "per_position.csv", "metrics.jsonl", "train.log",
                 "environment.json", "stdout.log", "status.json"]:
        src = os.path.join(template, name)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(run_dir, name))
    os.link(os.path.join(template, "checkpoint.safetensors"),
            os.path.join(run_dir, "checkpoint.safetensors"))
    with open(os.path.join(template, "config.yaml")) as f:
        config = f.read()
    config = re.sub(r"(?m)^seed: .*$", f"seed: {seed}", config, count=1)
    config = re.sub(r"(?m)^  lr: .*$", f"  lr: {lr}", config, count=1)
    with open(os.path.join(run_dir, "config.yaml"), "w") as f:
        f.write(config)
    with open(os.path.join(template, "summary.json")) as f:
        summary = json.load(f)
    summary["seed"] = int(seed)
    for e in summary["eval"]:
        e["sequence_accuracy"] = jitter(rng, 0.5 if e["in_training"] else 0.1)
        e["token_accuracy"] = jitter(rng, 0.7 if e["in_training"] else 0.3)
    summary["validation"]["sequence_accuracy"] = jitter(rng, 0.5)
    summary["validation"]["token_accuracy"] = jitter(rng, 0.7)
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pelab", default="build/pelab")
    ap.add_argument("--runs", type=int, default=5000)
    ap.add_argument("--work", help="where to generate (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the generated directories")
    a = ap.parse_args()
    pelab = os.path.abspath(a.pelab)
    per_lr = len(SCHEMES) * len(LRS)
    seeds = max(1, a.runs // per_lr)
    work = a.work or tempfile.mkdtemp(prefix="pelab-scale-")
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "scale.yaml"), "w") as f:
        f.write(CONFIG.format(schemes=", ".join(SCHEMES), lrs=", ".join(LRS),
                              seeds=", ".join(str(s) for s in range(seeds))))
    figures = {}
    sweep_dir = os.path.join(work, "sweep")
    try:
        figures["dry-run"] = timed([pelab, "sweep", "scale.yaml", "--launcher", "slurm",
                                    "--dry-run", "--out", sweep_dir], work)[:3]
        templates = train_templates(pelab, work)
        with open(os.path.join(sweep_dir, "sweep.json")) as f:
            manifest = json.load(f)
        rng = random.Random(0)
        for run in manifest["runs"]:
            values = run["values"]
            fill_run(rng, templates[values["positional.type"]],
                     os.path.join(sweep_dir, run["name"]), values)
        runs = len(manifest["runs"])
        seconds, cpu, peak, out = timed([pelab, "sweep", "--status", sweep_dir], work)
        figures["status"] = (seconds, cpu, peak)
        if f"{runs} runs: {runs} done" not in out:
            sys.exit(f"the status does not count every run as done:\n{out[:500]}")
        seconds, cpu, peak, out = timed([pelab, "compare", sweep_dir, "--no-plots"], work)
        figures["compare"] = (seconds, cpu, peak)
        # Every generated config.yaml is the plan's: a second dry run finds nothing to do.
        check = subprocess.run([pelab, "sweep", "scale.yaml", "--launcher", "slurm",
                                "--dry-run", "--out", sweep_dir], cwd=work, capture_output=True,
                               text=True)
        if check.returncode != 0 or "nothing to submit" not in check.stderr:
            sys.exit(f"the generated runs are not the plan's:\n{check.stderr[-1000:]}")
    finally:
        if not a.keep and not a.work:
            shutil.rmtree(work, ignore_errors=True)
    over = False
    print(f"{runs} runs ({len(SCHEMES)} schemes x {len(LRS)} lr x {seeds} seeds)")
    # The wall time is what the budget holds; on a machine shared with other work it is
    # several times the CPU time, which is printed beside it (with the load) to tell the two
    # apart.
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for name, (seconds, cpu, peak) in figures.items():
        limit_s, limit_mb = BUDGETS[name]
        bad = seconds > limit_s or (limit_mb is not None and peak > limit_mb)
        over = over or bad
        budget = f"{limit_s:g} s" + (f", {limit_mb:g} MB" if limit_mb else "")
        print(f"  {name:<8} {seconds:6.2f} s wall {cpu:6.2f} s CPU {peak:7.1f} MB peak"
              f"  (budget {budget}){'  OVER' if bad else ''}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
