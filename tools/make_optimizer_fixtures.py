#!/usr/bin/python3
"""Reference fixtures for pelab's optimizers, learning-rate schedules and gradient clipping.

Runs torch.optim.SGD / Adam / AdamW (single-tensor "for-loop" implementation, float32)
on two fixed parameters of shapes [3, 4] and [4], feeding a fixed sequence of
gradients, and records everything pelab needs to replay the run without Python:

    initial parameters, and per step: the gradients (null = no gradient, which PyTorch
    skips), the learning rate, the norm returned by clip_grad_norm_ (where used) and the
    parameters after the step.

    /usr/bin/python3 tools/make_optimizer_fixtures.py [--out tests/fixtures/optim/optimizers.json]

Learning rate.  The schedule is the one documented in include/pelab/train/schedule.h
(0-based step s; warm-up lr*(s+1)/W for s < W, then constant / linear / cosine decay
over [W, T) down to min_lr, min_lr from T on), written out below in Python.  PyTorch
drives it through LambdaLR.  pelab passes the learning rate to Optimizer::step as a
float, so the torch optimizers are built with lr=1.0 and the lambda returns the
schedule's value already rounded to float32: base_lr * lambda == that float exactly,
and both sides then form their derived constants (lr / bias_correction, 1 - lr*wd) in
double from the same number.  The fixture stores the unrounded double ("lr") so pelab's
LrSchedule is checked against the formula itself.

Floats are written as the shortest decimal that reads back (via double, as nlohmann
and json both parse) to the same float32; the script asserts this round trip.  Output
is deterministic (seeded generator, single thread, sorted keys).
"""
import argparse
import json
import math
import os

import numpy as np
import torch

GENERATOR = "tools/make_optimizer_fixtures.py"
SHAPES = [[3, 4], [4]]
NAMES = ["layer.weight", "layer.bias"]
STEPS = 6


# --------------------------------------------------------------------------- schedule
def lr_at(s, sched):
    """pelab's LrSchedule::lr_at, in double, same operation order as src/train/schedule.cpp."""
    base, warmup, total = sched["lr"], sched["warmup_steps"], sched["total_steps"]
    decay, min_lr = sched["decay"], sched["min_lr"]
    if s < warmup:
        return base * (s + 1) / warmup
    if decay == "constant":
        return base
    if s >= total:
        return min_lr
    progress = (s - warmup) / (total - warmup)
    if decay == "linear":
        return min_lr + (base - min_lr) * (1.0 - progress)
    return min_lr + (base - min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))


def constant(lr):
    return {"lr": lr, "warmup_steps": 0, "total_steps": STEPS, "decay": "constant",
            "min_lr": 0.0}


def warmup_cosine(lr, min_lr):
    return {"lr": lr, "warmup_steps": 2, "total_steps": STEPS, "decay": "cosine",
            "min_lr": min_lr}


def warmup_linear(lr, min_lr, total=STEPS):
    return {"lr": lr, "warmup_steps": 2, "total_steps": total, "decay": "linear",
            "min_lr": min_lr}


# --------------------------------------------------------------------------- cases
def case_list():
    """name -> (optimizer spec, schedule, decay mask, clip max_norm or None, grad plan).

    The grad plan is a list of STEPS entries, each a list of per-parameter scales (None:
    that parameter gets no gradient at that step)."""
    ones = [[1.0, 1.0]] * STEPS
    sgd = lambda **kw: dict({"kind": "sgd", "momentum": 0.0, "nesterov": False,
                             "weight_decay": 0.0}, **kw)
    adam = lambda kind, **kw: dict({"kind": kind, "beta1": 0.9, "beta2": 0.999,
                                    "eps": 1e-8, "weight_decay": 0.0}, **kw)
    return {
        "sgd_plain": (sgd(), constant(0.1), [True, True], None, ones),
        "sgd_momentum_wd": (sgd(momentum=0.9, weight_decay=0.01), warmup_cosine(0.1, 0.01),
                            [True, True], None, ones),
        "sgd_nesterov": (sgd(momentum=0.9, nesterov=True, weight_decay=0.01),
                         warmup_linear(0.1, 0.0), [True, True], None, ones),
        # The bias gets its first gradient at step 2: its momentum buffer starts there.
        "sgd_momentum_skip": (sgd(momentum=0.9), constant(0.05), [True, True], None,
                              [[1.0, None], [1.0, None], [1.0, 1.0], [None, 1.0],
                               [1.0, 1.0], [1.0, None]]),
        "adam": (adam("adam"), constant(0.01), [True, True], None, ones),
        "adam_wd": (adam("adam", weight_decay=0.01), warmup_cosine(0.02, 0.002),
                    [True, True], None, ones),
        "adamw": (adam("adamw", beta1=0.8, beta2=0.95, eps=1e-6, weight_decay=0.01),
                  warmup_cosine(0.05, 0.005), [True, True], None, ones),
        # Second parameter in a weight_decay=0 param group; wd large enough to show.
        "adamw_mask": (adam("adamw", weight_decay=0.1), warmup_linear(0.05, 0.0),
                       [True, False], None, ones),
        # Per-parameter step counts (bias correction) when a parameter is skipped;
        # total_steps 5 < 6 steps run, so the last step is past the end (lr = min_lr).
        "adamw_skip": (adam("adamw", weight_decay=0.01), warmup_linear(0.03, 0.003, total=5),
                       [True, True], None,
                       [[1.0, 1.0], [1.0, None], [None, None], [1.0, 1.0], [None, 1.0],
                        [1.0, 1.0]]),
        # Norms above and below max_norm=1: clipped on some steps only.
        "adam_clip": (adam("adam", weight_decay=0.01), warmup_cosine(0.01, 0.0), [True, True],
                      1.0, [[3.0, 3.0], [0.2, 0.2], [1.5, 0.5], [0.1, 0.3], [10.0, 10.0],
                            [0.5, 0.5]]),
    }


def make_optimizer(spec, params, mask):
    groups = [{"params": [p], "weight_decay": spec["weight_decay"] if m else 0.0}
              for p, m in zip(params, mask)]
    if spec["kind"] == "sgd":
        return torch.optim.SGD(groups, lr=1.0, momentum=spec["momentum"], dampening=0.0,
                               nesterov=spec["nesterov"], foreach=False)
    cls = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[spec["kind"]]
    return cls(groups, lr=1.0, betas=(spec["beta1"], spec["beta2"]), eps=spec["eps"],
               foreach=False)


# --------------------------------------------------------------------------- float output
def f32_values(t):
    """Shortest decimals that read back (through double) to exactly these float32 values."""
    out = []
    for v in t.detach().reshape(-1).tolist():
        short = float(str(np.float32(v)))
        assert np.float32(short) == np.float32(v) and float(np.float32(v)) == v, v
        out.append(short)
    return out


def f32_scalar(x):
    return f32_values(torch.tensor([x], dtype=torch.float32))[0]


def run_case(name, spec, sched, mask, clip, plan, seed):
    gen = torch.Generator().manual_seed(seed)
    params = [torch.randn(s, generator=gen).requires_grad_() for s in SHAPES]
    initial = [f32_values(p) for p in params]
    opt = make_optimizer(spec, params, mask)
    # lambda(s) is the lr of step s (LambdaLR starts at last_epoch 0), rounded to float32.
    sched_torch = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: float(np.float32(lr_at(s, sched))))
    steps = []
    for s, scales in enumerate(plan):
        record = {"lr": lr_at(s, sched), "grads": []}
        for p, scale in zip(params, scales):
            if scale is None:
                p.grad = None
                record["grads"].append(None)
            else:
                p.grad = torch.randn(p.shape, generator=gen) * scale
                record["grads"].append(f32_values(p.grad))
        for g in opt.param_groups:
            assert g["lr"] == float(np.float32(record["lr"])), (name, s)
        if clip is not None:
            norm = torch.nn.utils.clip_grad_norm_(params, clip)
            record["clip_norm"] = f32_scalar(norm.item())
        opt.step()
        sched_torch.step()
        record["params"] = [f32_values(p) for p in params]
        steps.append(record)
    return {"name": name, "optimizer": spec, "schedule": sched, "decay_mask": mask,
            "clip_max_norm": clip, "initial": initial, "steps": steps}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="tests/fixtures/optim/optimizers.json")
    args = ap.parse_args()
    torch.set_num_threads(1)  # fixed reduction order in clip_grad_norm_
    cases = [run_case(name, *spec, seed=1000 + k)
             for k, (name, spec) in enumerate(case_list().items())]
    doc = {"generator": GENERATOR, "torch_version": torch.__version__, "shapes": SHAPES,
           "names": NAMES, "cases": cases}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")
    print("%d cases, %d bytes -> %s" % (len(cases), os.path.getsize(args.out), args.out))


if __name__ == "__main__":
    main()
