#!/usr/bin/python3
"""Reference fixtures for the pelab encoder, from an independent PyTorch model.

Each case is one small safetensors file holding a model config, its parameters, a
padded batch, the logits, the loss and d loss / d parameter, so the C++ model can be
checked without Python.  The model follows docs/model.md ("the contract")
literally; every section cited as "MODEL.md §..." below is a heading of that file.

    /usr/bin/python3 tools/make_model_fixtures.py [--out tests/fixtures/model]
    /usr/bin/python3 tools/make_model_fixtures.py --selftest

Everything is computed in float64 and stored as F32 (integers as I64).  Output is
deterministic: seeded generators, tensors and JSON keys sorted.
"""
import argparse
import json
import math
import os
import struct
import sys
import tempfile
import zlib

import torch

GENERATOR = "tools/make_model_fixtures.py"
IGNORE = -1  # MODEL.md §Inputs of one batch: targets carry IGNORE (-1) where nothing is scored
SCHEMES = ["none", "sinusoidal", "learned", "relative", "rotary", "alibi", "t5",
           "index", "normalized", "binary"]
INPUT_SIDE = {"sinusoidal", "learned", "index", "normalized", "binary"}  # §Forward 2
B, T = 3, 7
LENGTHS = [7, 4, 1]  # one full row, one padded row, one single-token row (n <= 1)
F64 = torch.float64


# --------------------------------------------------------------------------- config
def make_config(scheme, *, d_model=8, heads=2, layers=2, d_ff=None, norm="pre",
                causal=False, activation="gelu", embed_scale=None, combine="add",
                dim=None, scale=1.0, base=10000.0, max_len=50, max_distance=None,
                num_buckets=32):
    """The resolved config, in pelab's schema; only keys that apply to `scheme`."""
    model = {"vocab_in": 7, "vocab_out": 5, "d_model": d_model, "heads": heads,
             "layers": layers, "d_ff": d_ff if d_ff is not None else 4 * d_model,
             "dropout": 0.0, "norm": norm, "causal": causal, "activation": activation,
             # MODEL.md §Forward 1: default sqrt(d_model), also when concatenating;
             # written explicitly so the fixture does not rely on the default.
             "embed_scale": embed_scale if embed_scale is not None else math.sqrt(d_model)}
    pos = {"type": scheme}
    if scheme in INPUT_SIDE:
        pos["combine"] = combine
        if combine == "concat":
            pos["dim"] = dim
        pos["scale"] = scale
    if scheme in ("sinusoidal", "rotary"):
        pos["base"] = base
    if scheme == "learned":
        pos["max_len"] = max_len
    if scheme in ("relative", "t5"):
        # MODEL.md §Positional schemes: default 16 for relative, 128 for t5
        pos["max_distance"] = max_distance if max_distance is not None else (
            16 if scheme == "relative" else 128)
    if scheme == "t5":
        pos["num_buckets"] = num_buckets
    return {"model": model, "positional": pos}


def to_yaml(cfg):
    def scalar(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return repr(v)  # shortest round-trip form, e.g. 2.8284271247461903
        return str(v)
    lines = []
    for section in ("model", "positional"):
        lines.append(section + ":")
        lines += ["  %s: %s" % (k, scalar(v)) for k, v in cfg[section].items()]
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------- parameters
def param_shapes(cfg):
    """MODEL.md §Parameter names and shapes, in that table's order."""
    m, pc = cfg["model"], cfg["positional"]
    d, H, F = m["d_model"], m["heads"], m["d_ff"]
    d_h = d // H
    concat = pc.get("combine") == "concat"
    shapes = [("embed.weight", [m["vocab_in"], d - pc["dim"] if concat else d], "embed")]
    if pc["type"] == "learned":
        shapes.append(("pos.weight", [pc["max_len"], pc["dim"] if concat else d], "table"))
    if pc["type"] == "t5":
        shapes.append(("t5_bias.weight", [pc["num_buckets"], H], "table"))
    for l in range(m["layers"]):
        p = "layers.%d." % l
        shapes += [(p + "ln1.weight", [d], "ln_w"), (p + "ln1.bias", [d], "bias")]
        for w in "qkvo":
            shapes += [(p + "attn.%s.weight" % w, [d, d], "weight"),
                       (p + "attn.%s.bias" % w, [d], "bias")]
        if pc["type"] == "relative":
            k = pc["max_distance"]
            shapes += [(p + "attn.rel_k", [2 * k + 1, d_h], "table"),
                       (p + "attn.rel_v", [2 * k + 1, d_h], "table")]
        shapes += [(p + "ln2.weight", [d], "ln_w"), (p + "ln2.bias", [d], "bias"),
                   (p + "ffn.fc1.weight", [F, d], "weight"), (p + "ffn.fc1.bias", [F], "bias"),
                   (p + "ffn.fc2.weight", [d, F], "weight"), (p + "ffn.fc2.bias", [d], "bias")]
    if m["norm"] == "pre":
        shapes += [("ln_f.weight", [d], "ln_w"), ("ln_f.bias", [d], "bias")]
    shapes += [("head.weight", [m["vocab_out"], d], "weight"),
               ("head.bias", [m["vocab_out"]], "bias")]
    return shapes


def init_params(cfg, g):
    """Deliberately large random values (not a training init): every bias, LN
    affine and positional table is far from 0/1, so no wrong term can hide."""
    std = {"embed": 0.3, "weight": 0.3, "bias": 0.1, "ln_w": 0.1, "table": 0.5}
    params = {}
    for name, shape, kind in param_shapes(cfg):
        x = torch.randn(shape, generator=g, dtype=F64) * std[kind]
        x = x + 1.0 if kind == "ln_w" else x
        # Round to F32 first: the outputs are then the float64 result of exactly the
        # parameters stored in the file, not of values the reader never sees.
        params[name] = x.to(torch.float32).to(F64)
    return params


# ------------------------------------------------------------ positional helpers
def t5_bucket(rel, num_buckets, max_distance):
    """Bidirectional T5 bucket of rel = p_j - p_i (MODEL.md §Positional schemes,
    t5; pinned as T5's reference `_relative_position_bucket`): half the buckets per
    sign, exact below num_buckets/4, logarithmic up to max_distance.  Computed per
    integer in double precision with math.log (NOT torch float32), because the
    int() truncation makes boundary distances sensitive to rounding."""
    nb = num_buckets // 2
    ret = nb if rel > 0 else 0
    n = abs(rel)
    max_exact = nb // 2
    if n < max_exact:
        return ret + n
    return ret + min(nb - 1, max_exact + int(math.log(n / max_exact)
                                             / math.log(max_distance / max_exact)
                                             * (nb - max_exact)))


def alibi_slopes(H):
    """m_h = 2^(-8(h+1)/H) for a power of two H; otherwise the ALiBi paper's rule
    (MODEL.md §Positional schemes, alibi): the slopes for the closest power of two c
    below H, then the slopes for 2c at even indices [0::2], the first H - c."""
    if H & (H - 1) == 0:
        return [2.0 ** (-8.0 * (h + 1) / H) for h in range(H)]
    c = 2 ** int(math.floor(math.log2(H)))
    return alibi_slopes(c) + alibi_slopes(2 * c)[0::2][:H - c]


def input_encoding(pc, positions, key_mask, d_pe, params):
    """P(positions) [B, T, d_pe] of the input-side schemes (MODEL.md §Positional
    schemes).  Reads `positions` only; never assumes 0..T-1."""
    p = positions.to(F64)
    kind = pc["type"]
    if kind == "sinusoidal":
        # P[p,2i] = sin(p w_i), P[p,2i+1] = cos(p w_i), w_i = base^(-2i/d_pe)
        assert d_pe % 2 == 0, "sinusoidal needs an even d_pe"
        i = torch.arange(d_pe // 2, dtype=F64)
        ang = p[..., None] * pc["base"] ** (-2.0 * i / d_pe)
        return torch.stack([ang.sin(), ang.cos()], dim=-1).flatten(-2)  # interleave
    if kind == "learned":
        assert int(positions.max()) < pc["max_len"], "position >= max_len"
        return params["pos.weight"][positions]
    if kind == "index":  # P[p,:] = p
        return p[..., None].expand(*p.shape, d_pe)
    if kind == "normalized":
        # P[p,:] = p/(n-1), n = that sequence's count of real tokens, 0 when n <= 1
        n = key_mask.sum(dim=1, keepdim=True).to(F64)
        val = torch.where(n > 1, p / (n - 1).clamp(min=1), torch.zeros_like(p))
        return val[..., None].expand(*p.shape, d_pe)
    if kind == "binary":  # P[p,j] = 2 bit_j(p) - 1, bit 0 least significant
        bits = (positions[..., None] >> torch.arange(d_pe)) & 1
        return 2.0 * bits.to(F64) - 1.0
    raise ValueError(kind)


def rotate(x, positions, base):
    """Rotary (MODEL.md §Positional schemes, rotary) on x [B, H, T, d_h]: INTERLEAVED
    pairs (2i, 2i+1) of each head, theta_i = base^(-2i/d_h), angle m*theta_i with m
    the token's position (not its index)."""
    d_h = x.shape[-1]
    assert d_h % 2 == 0, "rotary needs an even d_h"
    theta = base ** (-2.0 * torch.arange(d_h // 2, dtype=F64) / d_h)
    ang = positions.to(F64)[:, None, :, None] * theta  # [B, 1, T, d_h/2]
    cos, sin = ang.cos(), ang.sin()
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2)


# ---------------------------------------------------------------------- the model
def layer_norm(x, w, b):
    # MODEL.md §Forward: biased variance over the last axis, eps 1e-5
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + 1e-5) * w + b


def linear(x, params, name):
    return x @ params[name + ".weight"].T + params[name + ".bias"]


def attention_z(x, params, pfx, cfg, positions, admissible, rel_impl="einsum"):
    """Per-head attention output Z [B, T, d] before W_o (MODEL.md §Multi-head
    attention).  admissible[b,i,j] is false for masked keys and, if causal, j > i."""
    m, pc = cfg["model"], cfg["positional"]
    Bn, Tn, d = x.shape
    H = m["heads"]
    d_h = d // H

    def heads(t):  # [B, T, d] -> [B, H, T, d_h]; head h owns columns [h d_h, (h+1) d_h)
        return t.view(Bn, Tn, H, d_h).transpose(1, 2)
    q = heads(linear(x, params, pfx + "q"))
    k = heads(linear(x, params, pfx + "k"))
    v = heads(linear(x, params, pfx + "v"))
    if pc["type"] == "rotary":  # after the projections, bias included
        q, k = rotate(q, positions, pc["base"]), rotate(k, positions, pc["base"])
    S = q @ k.transpose(-1, -2) / math.sqrt(d_h)
    rel = positions[:, None, :] - positions[:, :, None]  # [B, i, j] = p_j - p_i

    if pc["type"] == "relative":
        kd = pc["max_distance"]
        c = rel.clamp(-kd, kd) + kd  # Shaw: c = clip(p_j - p_i, -k, k) + k
        wK, wV = params[pfx + "rel_k"], params[pfx + "rel_v"]  # shared by the heads
        if rel_impl == "einsum":  # literal: materialise wK[c] as [B, T, T, d_h]
            S = S + torch.einsum("bhid,bijd->bhij", q, wK[c]) / math.sqrt(d_h)
        else:  # gather: q . wK for every bucket, then pick each (i, j)'s bucket
            cq = c[:, None].expand(Bn, H, Tn, Tn)
            S = S + torch.gather(q @ wK.T, -1, cq) / math.sqrt(d_h)
    elif pc["type"] == "alibi":  # R = -m_h |p_j - p_i|, symmetric
        slopes = torch.tensor(alibi_slopes(H), dtype=F64)
        S = S - slopes[:, None, None] * rel.abs().to(F64)[:, None]
    elif pc["type"] == "t5":  # R = bias[bucket(p_j - p_i), h]; one table for all layers
        R = int(rel.abs().max())
        table = torch.tensor([t5_bucket(r, pc["num_buckets"], pc["max_distance"])
                              for r in range(-R, R + 1)])
        S = S + params["t5_bias.weight"][table[rel + R]].permute(0, 3, 1, 2)

    # Masked scores are -inf before the softmax.  A row with no admissible key would
    # be softmax(all -inf) = NaN; MODEL.md gives it alpha = 0 (so z = 0).  We softmax
    # such rows over zeros instead and multiply by 0, which keeps both the forward
    # and the backward finite (no NaN * 0).
    adm = admissible[:, None]  # [B, 1, T, T]
    any_key = adm.any(-1, keepdim=True)
    S = S.masked_fill(~adm, float("-inf"))
    S = torch.where(any_key, S, torch.zeros_like(S))
    alpha = torch.softmax(S, dim=-1) * any_key

    z = alpha @ v
    if pc["type"] == "relative":  # z_i += sum_j alpha_ij wV[c_ij]
        if rel_impl == "einsum":
            z = z + torch.einsum("bhij,bijd->bhid", alpha, wV[c])
        else:  # sum alpha per bucket, then one matmul with the table
            per_bucket = torch.zeros(Bn, H, Tn, wV.shape[0], dtype=F64)
            z = z + per_bucket.scatter_add(-1, cq, alpha) @ wV
    return z.transpose(1, 2).reshape(Bn, Tn, d)  # heads concatenated in order


def forward(params, cfg, tokens, positions, key_mask, rel_impl="einsum"):
    """logits [B, T, V_out] (MODEL.md §Forward; dropout is 0, nothing to do)."""
    m, pc = cfg["model"], cfg["positional"]
    assert int(positions.min()) >= 0, "negative position"
    X = params["embed.weight"][tokens] * m["embed_scale"]
    if pc["type"] in INPUT_SIDE:
        concat = pc["combine"] == "concat"
        P = pc["scale"] * input_encoding(pc, positions, key_mask,
                                         pc["dim"] if concat else m["d_model"], params)
        X = torch.cat([X, P], dim=-1) if concat else X + P
    Tn = tokens.shape[1]
    adm = key_mask.bool()[:, None, :].expand(-1, Tn, -1)  # key j is real
    if m["causal"]:  # compares row indices, not positions
        adm = adm & torch.ones(Tn, Tn, dtype=torch.bool).tril()
    act = torch.relu if m["activation"] == "relu" else (
        lambda x: x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0))))  # exact GELU

    def mha(x, l):
        pfx = "layers.%d.attn." % l
        z = attention_z(x, params, pfx, cfg, positions, adm, rel_impl)
        return linear(z, params, pfx + "o")

    def ffn(x, l):
        pfx = "layers.%d.ffn." % l
        return linear(act(linear(x, params, pfx + "fc1")), params, pfx + "fc2")

    for l in range(m["layers"]):
        ln = lambda x, i: layer_norm(x, params["layers.%d.ln%d.weight" % (l, i)],
                                     params["layers.%d.ln%d.bias" % (l, i)])
        if m["norm"] == "pre":
            X = X + mha(ln(X, 1), l)
            X = X + ffn(ln(X, 2), l)
        else:
            X = ln(X + mha(X, l), 1)
            X = ln(X + ffn(X, l), 2)
    if m["norm"] == "pre":
        X = layer_norm(X, params["ln_f.weight"], params["ln_f.bias"])
    return linear(X, params, "head")


def loss_fn(logits, targets):
    """Mean cross-entropy over the positions whose target is not IGNORE."""
    scored = targets != IGNORE
    assert bool(scored.any()), "a batch with no scored position is an error"
    logp = torch.log_softmax(logits[scored], dim=-1)
    return -logp.gather(-1, targets[scored][:, None]).mean()


# ------------------------------------------------------------------------- cases
def case_list():
    """name -> (config, input options).  Inputs: padding side, position mode."""
    cases = {}
    for s in SCHEMES:
        cases[s + "_pre"] = (make_config(s), {})
        cases[s + "_post_causal"] = (make_config(s, norm="post", causal=True), {})
    cases["sinusoidal_concat_pre"] = (make_config("sinusoidal", combine="concat", dim=4), {})
    cases["sinusoidal_scale_pre"] = (make_config("sinusoidal", scale=0.5, embed_scale=1.0), {})
    cases["alibi_3heads_pre"] = (make_config("alibi", d_model=12, heads=3), {})
    cases["relative_k2_pre"] = (make_config("relative", max_distance=2), {})
    # distances up to ~20 > max_distance 6: log buckets and clipping are both exercised
    cases["t5_small_pre"] = (make_config("t5", num_buckets=8, max_distance=6),
                             {"positions": ("random", 21)})
    cases["rotary_randomized_pre"] = (make_config("rotary"), {"positions": ("random", 40)})
    cases["learned_randomized_pre"] = (make_config("learned"), {"positions": ("random", 40)})
    cases["relu_pre"] = (make_config("sinusoidal", activation="relu", d_ff=20), {})
    cases["rotary_causal_leftpad_post"] = (
        make_config("rotary", norm="post", causal=True), {"pad": "left"})
    cases["relative_causal_pre"] = (make_config("relative", causal=True), {})
    cases["shifted_positions_alibi_pre"] = (make_config("alibi"), {"positions": ("shift", 5)})
    # Added: with combine=add, index/normalized add a multiple of (1,...,1), which every
    # LayerNorm removes exactly, so in pre-LN they cannot change the logits (see
    # selftest).  Concatenated, their columns do reach attention.
    cases["index_concat_pre"] = (make_config("index", combine="concat", dim=4), {})
    cases["normalized_concat_pre"] = (make_config("normalized", combine="concat", dim=4), {})
    return cases


def make_inputs(cfg, opts, g, lengths=LENGTHS, Tn=T):
    """tokens, positions, key_mask, targets [B, T] int64.  Padded tokens get id 0,
    IGNORE targets, and positions like any other token (MODEL.md §Forward)."""
    m = cfg["model"]
    Bn = len(lengths)
    key_mask = torch.zeros(Bn, Tn, dtype=torch.int64)
    for b, n in enumerate(lengths):
        if opts.get("pad", "right") == "left":
            key_mask[b, Tn - n:] = 1
        else:
            key_mask[b, :n] = 1
    tokens = torch.randint(0, m["vocab_in"], (Bn, Tn), generator=g) * key_mask
    mode, arg = opts.get("positions", ("index", 0))
    positions = torch.arange(Tn).repeat(Bn, 1)  # default p[b,t] = t, padding included
    if mode == "shift":
        positions = positions + arg
    elif mode == "random":
        # Ruoss et al.: a sorted sample of n distinct ints from [0, M) for the real
        # tokens (right padding); padded tokens continue after the last real one.
        for b, n in enumerate(lengths):
            sample = torch.randperm(arg, generator=g)[:n].sort().values
            positions[b, :n] = sample
            positions[b, n:] = sample[-1] + 1 + torch.arange(Tn - n)
    targets = torch.randint(0, m["vocab_out"], (Bn, Tn), generator=g)
    drop = torch.rand(Bn, Tn, generator=g) < 0.2  # a few real positions unscored too
    drop[0, 0], drop[0, 2] = False, True  # row 0 is full length: one scored and
    #                                       one unscored real position, always
    targets[drop | (key_mask == 0)] = IGNORE
    return tokens, positions, key_mask, targets


def build_case(name, cfg, opts):
    g = torch.Generator().manual_seed(zlib.crc32(name.encode()))  # per-case seed
    params = init_params(cfg, g)
    return params, make_inputs(cfg, opts, g)


def compute(params, cfg, inputs, rel_impl="einsum"):
    tokens, positions, key_mask, targets = inputs
    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    logits = forward(leaves, cfg, tokens, positions, key_mask, rel_impl)
    loss = loss_fn(logits, targets)
    names = sorted(leaves)
    grads = torch.autograd.grad(loss, [leaves[k] for k in names])
    return logits.detach(), loss.detach(), dict(zip(names, grads))


def case_tensors(name, cfg, opts):
    params, inputs = build_case(name, cfg, opts)
    logits, loss, grads = compute(params, cfg, inputs)
    out = dict(params)
    for key, t in zip(("tokens", "positions", "key_mask", "targets"), inputs):
        out["input." + key] = t
    out["output.logits"], out["output.loss"] = logits, loss
    out.update({"grad." + k: v for k, v in grads.items()})
    pc = cfg["positional"]
    if pc["type"] == "t5":  # the bucket function itself, for r = -R..R
        R = pc["max_distance"] + 10
        out["aux.t5_bucket"] = torch.tensor(
            [t5_bucket(r, pc["num_buckets"], pc["max_distance"]) for r in range(-R, R + 1)])
    meta = {"case": name, "config": to_yaml(cfg), "generator": GENERATOR}
    return out, meta


# ------------------------------------------------------------------- safetensors
def safetensors_bytes(tensors, metadata):
    """u64 LE header length N, N bytes of JSON (space-padded to a multiple of 8),
    then the tensors packed contiguously, sorted by name, little-endian row-major."""
    header, chunks, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach()
        if t.is_floating_point():
            dtype, vals = "F32", t.to(torch.float32).flatten().tolist()
            data = struct.pack("<%df" % len(vals), *vals)
        else:
            dtype, vals = "I64", t.to(torch.int64).flatten().tolist()
            data = struct.pack("<%dq" % len(vals), *vals)
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    meta, out = header.pop("__metadata__"), {}
    for name, h in header.items():
        a, b = h["data_offsets"]
        fmt = {"F32": "f", "I64": "q"}[h["dtype"]]
        vals = struct.unpack("<%d%s" % ((b - a) // struct.calcsize(fmt), fmt),
                             blob[8 + n + a:8 + n + b])
        out[name] = torch.tensor(vals, dtype=F64 if fmt == "f" else torch.int64
                                 ).reshape(h["shape"])
    return out, meta


# ---------------------------------------------------------------------- selftest
def selftest():
    torch.set_num_threads(1)
    cases = case_list()
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    def close(a, b, tol=1e-10):
        return bool(torch.isfinite(a).all()) and float((a - b).abs().max()) <= tol

    def logits_of(name, inputs=None, rel_impl="einsum"):
        cfg, opts = cases[name]
        params, base_inputs = build_case(name, cfg, opts)
        tk, ps, km, _ = inputs or base_inputs
        return forward(params, cfg, tk, ps, km, rel_impl)

    # 1. pinned constants
    check(alibi_slopes(3) == [2.0 ** -4, 2.0 ** -8, 2.0 ** -2], "alibi slopes, H=3")
    check(alibi_slopes(2) == [2.0 ** -4, 2.0 ** -8], "alibi slopes, H=2")
    check([t5_bucket(r, 32, 128) for r in (-1, 1, -7, -8, 8, -127, -128, -500, 500)]
          == [1, 17, 7, 8, 24, 15, 15, 15, 31], "t5 buckets, defaults")
    check([t5_bucket(r, 8, 6) for r in range(-7, 8)]
          == [3, 3, 3, 3, 2, 2, 1, 0, 5, 6, 6, 7, 7, 7, 7], "t5 buckets, 8/6")

    # 2. relative schemes: shifting every position changes nothing; absolute ones do
    for s in SCHEMES:
        for name in (s + "_pre", s + "_post_causal"):
            cfg, opts = cases[name]
            params, (tk, ps, km, _) = build_case(name, cfg, opts)
            a = forward(params, cfg, tk, ps, km)
            b = forward(params, cfg, tk, ps + 13, km)
            if s in ("none", "rotary", "relative", "alibi", "t5"):
                check(close(a, b, 1e-9), "shift invariance: " + name)
            elif s not in ("index", "normalized") or name.endswith("post_causal"):
                check(not close(a, b, 1e-6), "shift changes absolute scheme: " + name)

    # 3. none is permutation-equivariant on an unpadded batch; and every scheme is,
    #    non-causal, when tokens, positions and mask are permuted together (no
    #    scheme may read the column index instead of `positions`)
    g = torch.Generator().manual_seed(1)
    perm = torch.randperm(T, generator=g)
    for s in SCHEMES:
        cfg, opts = cases[s + "_pre"]
        params, _ = build_case(s + "_pre", cfg, opts)
        full = make_inputs(cfg, opts, g, lengths=[T] * B)
        padded = make_inputs(cfg, opts, g)
        for tag, (tk, ps, km, _) in (("unpadded", full), ("padded", padded)):
            if s != "none" and tag == "unpadded":
                continue
            pp = ps if s == "none" else ps[:, perm]  # none: positions unchanged
            a = forward(params, cfg, tk, ps, km)[:, perm]
            b = forward(params, cfg, tk[:, perm], pp, km[:, perm])
            check(close(a, b), "permutation equivariance (%s): %s_pre" % (tag, s))

    # 4. extra padded columns leave the real tokens' logits unchanged
    for name, (cfg, opts) in cases.items():
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        extra = 3
        tk2 = torch.cat([tk, torch.randint(0, 7, (B, extra), generator=g)], 1)
        ps2 = torch.cat([ps, ps[:, -1:] + 1 + torch.arange(extra)], 1)
        km2 = torch.cat([km, torch.zeros(B, extra, dtype=km.dtype)], 1)
        a = forward(params, cfg, tk, ps, km)
        b = forward(params, cfg, tk2, ps2, km2)[:, :T]
        real = km.bool()
        check(close(a[real], b[real]), "extra padding columns: " + name)

    # 5. causal: logits at i do not depend on tokens after i
    for name, (cfg, opts) in cases.items():
        if not cfg["model"]["causal"]:
            continue
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        i = 3
        tk2 = tk.clone()
        tk2[:, i + 1:] = (tk2[:, i + 1:] + 1) % cfg["model"]["vocab_in"]
        a, b = forward(params, cfg, tk, ps, km), forward(params, cfg, tk2, ps, km)
        check(close(a[:, :i + 1], b[:, :i + 1]) and not close(a, b, 1e-6),
              "causality: " + name)

    # 6. relative: explicit [T, T, d_h] einsum == gather/scatter implementation
    for name, (cfg, opts) in cases.items():
        if cfg["positional"]["type"] != "relative":
            continue
        params, inputs = build_case(name, cfg, opts)
        la, _, ga = compute(params, cfg, inputs, "einsum")
        lb, _, gb = compute(params, cfg, inputs, "gather")
        check(close(la, lb) and all(close(ga[k], gb[k]) for k in ga),
              "relative einsum == gather (logits, grads): " + name)

    # 7. rows with no admissible key: z = 0 exactly, everything finite
    name = "rotary_causal_leftpad_post"
    cfg, opts = cases[name]
    params, inputs = build_case(name, cfg, opts)
    tk, ps, km, _ = inputs
    adm = km.bool()[:, None, :].expand(-1, T, -1) & torch.ones(T, T, dtype=torch.bool).tril()
    x = torch.randn(B, T, 8, generator=g, dtype=F64)
    z = attention_z(x, params, "layers.0.attn.", cfg, ps, adm)
    empty = ~adm.any(-1)
    logits, loss, grads = compute(params, cfg, inputs)
    check(bool(empty.any()) and bool((z[empty] == 0).all()) and bool(torch.isfinite(z).all())
          and bool(torch.isfinite(logits).all())
          and all(bool(torch.isfinite(v).all()) for v in grads.values()),
          "no admissible key: alpha = 0, z = 0, finite: " + name)

    # 8. LayerNorm removes index/normalized's constant vector: pre-LN == none_pre
    for s in ("index", "normalized"):
        cfg, opts = cases[s + "_pre"]
        params, (tk, ps, km, _) = build_case(s + "_pre", cfg, opts)
        cfg0 = make_config("none")
        check(close(forward(params, cfg, tk, ps, km), forward(params, cfg0, tk, ps, km)),
              "%s_pre equals the same model with no positions (LN identity)" % s)

    # 9. autograd against finite differences (torch.autograd.gradcheck)
    for name in ("rotary_causal_leftpad_post", "t5_small_pre", "relative_k2_pre",
                 "learned_randomized_pre", "normalized_concat_pre"):
        cfg, opts = cases[name]
        params, (tk, ps, km, tg) = build_case(name, cfg, opts)
        names = sorted(params)

        def f(*leaves):
            return loss_fn(forward(dict(zip(names, leaves)), cfg, tk, ps, km), tg)
        leaves = [params[k].clone().requires_grad_(True) for k in names]
        check(torch.autograd.gradcheck(f, leaves, eps=1e-6, atol=1e-7, rtol=1e-5),
              "gradcheck: " + name)

    # 10. independent oracles: torch.nn.TransformerEncoderLayer (MHA, LN, FFN, masks,
    #     pre/post) and rotary as a complex product (x_2i + i x_2i+1) e^{i m theta_i}
    for name in ("none_pre", "none_post_causal", "relu_pre"):
        cfg, opts = cases[name]
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        m, X = cfg["model"], params["embed.weight"][tk] * cfg["model"]["embed_scale"]
        if cfg["positional"]["type"] == "sinusoidal":
            X = X + input_encoding(cfg["positional"], ps, km, m["d_model"], params)
        for l in range(m["layers"]):
            L = torch.nn.TransformerEncoderLayer(
                m["d_model"], m["heads"], m["d_ff"], 0.0, m["activation"], batch_first=True,
                norm_first=m["norm"] == "pre", dtype=F64).eval()
            P = lambda n: params["layers.%d.%s" % (l, n)]
            with torch.no_grad():
                for mod, pre in ((L.self_attn.out_proj, "attn.o"), (L.linear1, "ffn.fc1"),
                                 (L.linear2, "ffn.fc2"), (L.norm1, "ln1"), (L.norm2, "ln2")):
                    mod.weight.copy_(P(pre + ".weight"))
                    mod.bias.copy_(P(pre + ".bias"))
                L.self_attn.in_proj_weight.copy_(torch.cat([P("attn.%s.weight" % w) for w in "qkv"]))
                L.self_attn.in_proj_bias.copy_(torch.cat([P("attn.%s.bias" % w) for w in "qkv"]))
                cm = torch.ones(T, T, dtype=torch.bool).triu(1) if m["causal"] else None
                X = L(X, src_mask=cm, src_key_padding_mask=~km.bool())
        if m["norm"] == "pre":
            X = layer_norm(X, params["ln_f.weight"], params["ln_f.bias"])
        check(close(linear(X, params, "head"), logits_of(name).detach(), 1e-12),
              "torch.nn.TransformerEncoderLayer oracle: " + name)
    x = torch.randn(B, 2, T, 8, generator=g, dtype=F64)
    ps = torch.randint(0, 40, (B, T), generator=g)
    theta = 100.0 ** (-2.0 * torch.arange(4, dtype=F64) / 8)
    zc = torch.view_as_complex(x.view(B, 2, T, 4, 2).contiguous()) * torch.polar(
        torch.ones(1, dtype=F64), ps[:, None, :, None].to(F64) * theta)
    check(close(rotate(x, ps, 100.0), torch.view_as_real(zc).flatten(-2)),
          "rotary == complex rotation of interleaved pairs")

    # 11. file round trip and determinism
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("t5_small_pre", "sinusoidal_concat_pre"):
            tensors, meta = case_tensors(name, *cases[name])
            blob = safetensors_bytes(tensors, meta)
            check(blob == safetensors_bytes(*case_tensors(name, *cases[name])),
                  "deterministic bytes: " + name)
            path = os.path.join(tmp, name + ".safetensors")
            with open(path, "wb") as f:
                f.write(blob)
            back, meta2 = read_safetensors(path)
            check(meta2 == meta and sorted(back) == sorted(tensors) and all(
                torch.equal(back[k], tensors[k].to(torch.float32).to(F64)
                            if tensors[k].is_floating_point() else tensors[k])
                for k in tensors), "safetensors round trip: " + name)
            (hlen,) = struct.unpack("<Q", blob[:8])
            check(hlen % 8 == 0, "header padded to 8: " + name)

    print("%d failure(s)" % len(failures))
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="tests/fixtures/model")
    ap.add_argument("--selftest", action="store_true")
    args = ap.parse_args()
    if args.selftest:
        sys.exit(0 if selftest() else 1)
    torch.set_num_threads(1)  # fixed reduction order, for byte-identical output
    os.makedirs(args.out, exist_ok=True)
    for name, (cfg, opts) in case_list().items():
        tensors, meta = case_tensors(name, cfg, opts)
        path = os.path.join(args.out, name + ".safetensors")
        with open(path, "wb") as f:
            f.write(safetensors_bytes(tensors, meta))
        print("%-30s loss %.6f  %d bytes" % (name, float(tensors["output.loss"]),
                                             os.path.getsize(path)))


if __name__ == "__main__":
    main()
