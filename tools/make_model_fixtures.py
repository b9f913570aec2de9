#!/usr/bin/python3
"""Reference fixtures for the pelab encoder, from an independent PyTorch model.

Each case is one small safetensors file holding a model config, its parameters, a
padded batch, the logits, the loss and d loss / d parameter, so the C++ model can be
checked without Python.  The model follows the model contract ("MODEL.md")
literally; every section cited as "MODEL.md §..." below is a heading of it.  The
established schemes (none ... binary) are those of docs/model.md; the newer schemes
and options (xl_relative, fire, kerple, sandwich, xpos, cope, alibi's
`bidirectional`, rotary's `fraction` and `scaling`) follow the contract's revision
that defines them, which docs/model.md does not have yet.

    /usr/bin/python3 tools/make_model_fixtures.py [--out tests/fixtures/model]
    /usr/bin/python3 tools/make_model_fixtures.py --only new --out DIR
    /usr/bin/python3 tools/make_model_fixtures.py --only fire,rotary_yarn_pre --list
    /usr/bin/python3 tools/make_model_fixtures.py --pelab build/pelab [--out ...]
    /usr/bin/python3 tools/make_model_fixtures.py --selftest

Without --only the script writes the established cases, the ones the C++ model is
checked against in tests/fixtures/model.  The cases of the newer schemes and options
come after them in the case list and are written only on request, because the C++
model does not implement those schemes yet and its fixture tests would reject them.
--only takes a comma-separated list of: `new` (every newer case), `established`,
a group of newer cases (xl_relative, fire, kerple, sandwich, xpos, cope,
alibi_deepmind, rotary_options), or a case name.  --list prints the selected case
names instead of writing them.  --selftest checks all cases, old and new.

--pelab BIN takes the list of schemes from pelab's own registry (`BIN schemes --json`):
the script refuses a registered scheme it has no reference for, or whose facts (input
side, causal only) it reads differently, and, without --only, writes the cases of every
scheme and option pelab registers, the newer ones included once pelab has them; with
--only, it writes the cases selected, and refuses one whose scheme or option pelab does
not register.

Everything is computed in float64 and stored as F32 (integers as I64).  Output is
deterministic: seeded generators, tensors and JSON keys sorted.
"""
import argparse
import copy
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import torch

GENERATOR = "tools/make_model_fixtures.py"
IGNORE = -1  # MODEL.md §Inputs of one batch: targets carry IGNORE (-1) where nothing is scored
SCHEMES = ["none", "sinusoidal", "learned", "relative", "rotary", "alibi", "t5",
           "index", "normalized", "binary"]
# The contract's newer schemes.  Kept apart from SCHEMES, which drives the established
# cases (and so the committed fixtures); their cases are built in new_cases().
NEW_SCHEMES = ["xl_relative", "fire", "kerple", "sandwich", "xpos", "cope"]
CAUSAL_ONLY = {"xpos", "cope"}  # MODEL.md §Positional schemes: an error without causal
INPUT_SIDE = {"sinusoidal", "learned", "index", "normalized", "binary"}  # §Forward 2
B, T = 3, 7
LENGTHS = [7, 4, 1]  # one full row, one padded row, one single-token row (n <= 1)
F64 = torch.float64


# --------------------------------------------------------------------------- config
def make_config(scheme, *, d_model=8, heads=2, layers=2, d_ff=None, norm="pre",
                causal=False, activation="gelu", embed_scale=None, combine="add",
                dim=None, scale=1.0, base=10000.0, max_len=50, max_distance=None,
                num_buckets=32, bidirectional=None, mlp_width=32, threshold=512.0,
                kernel="log", scale_base=512.0, max_position=16, fraction=None,
                scaling=None):
    """The resolved config, in pelab's schema; only keys that apply to `scheme`.
    The options that the established cases never set (alibi's `bidirectional`,
    rotary's `fraction` and `scaling`) are written only when given, so that those
    cases' YAML, and so their files, stay as they were."""
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
    if scheme in ("sinusoidal", "rotary", "xl_relative", "sandwich", "xpos"):
        pos["base"] = base  # MODEL.md §Keys of these schemes: base
    if scheme == "learned":
        pos["max_len"] = max_len
    if scheme in ("relative", "t5"):
        # MODEL.md §Positional schemes: default 16 for relative, 128 for t5
        pos["max_distance"] = max_distance if max_distance is not None else (
            16 if scheme == "relative" else 128)
    if scheme == "t5":
        pos["num_buckets"] = num_buckets
    # MODEL.md §Keys of these schemes, one scheme's keys only under that scheme
    if scheme == "alibi" and bidirectional is not None:
        pos["bidirectional"] = bidirectional
    if scheme == "fire":
        pos["mlp_width"] = mlp_width
        pos["threshold"] = threshold
    if scheme == "kerple":
        pos["kernel"] = kernel
    if scheme == "xpos":
        pos["scale_base"] = scale_base
    if scheme == "cope":
        pos["max_position"] = max_position
    if scheme == "rotary" and fraction is not None:
        pos["fraction"] = fraction
    if scheme == "rotary" and scaling is not None:
        pos["scaling"] = dict(scaling)  # {type, factor, original_length}
    if scheme in CAUSAL_ONLY:
        assert causal, scheme + " needs model.causal: true"
    return {"model": model, "positional": pos}


def to_yaml(cfg):
    def scalar(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return repr(v)  # shortest round-trip form, e.g. 2.8284271247461903
        return str(v)
    def mapping(d, indent):  # nested mappings (positional.scaling) as nested blocks
        out = []
        for k, v in d.items():
            if isinstance(v, dict):
                out.append("%s%s:" % (indent, k))
                out += mapping(v, indent + "  ")
            else:
                out.append("%s%s: %s" % (indent, k, scalar(v)))
        return out
    lines = []
    for section in ("model", "positional"):
        lines.append(section + ":")
        lines += mapping(cfg[section], "  ")
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
    if pc["type"] == "kerple":  # one (r1, r2) per head for the whole model
        shapes += [("kerple.r1", [H], "kerple_r1"), ("kerple.r2", [H], "kerple_r2")]
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
        if pc["type"] == "xl_relative":
            shapes += [(p + "attn.xl_u", [H, d_h], "table"),
                       (p + "attn.xl_v", [H, d_h], "table"),
                       (p + "attn.xl_r.weight", [d, d], "weight")]
        if pc["type"] == "fire":
            W = pc["mlp_width"]
            shapes += [(p + "attn.fire.fc1.weight", [W, 1], "fire_fc1"),
                       (p + "attn.fire.fc1.bias", [W], "fire_fc1"),
                       (p + "attn.fire.fc2.weight", [H, W], "weight"),
                       (p + "attn.fire.fc2.bias", [H], "bias"),
                       (p + "attn.fire.c", [1], "fire_c"),
                       (p + "attn.fire.l_mult", [1], "fire_l")]
        if pc["type"] == "cope":
            shapes.append((p + "attn.cope_emb", [pc["max_position"], d_h], "table"))
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
    std = {"embed": 0.3, "weight": 0.3, "bias": 0.1, "ln_w": 0.1, "table": 0.5,
           "fire_fc1": 1.0, "fire_c": 0.3, "fire_l": 0.5, "kerple_r1": 0.5,
           "kerple_r2": 0.5}
    params = {}
    for name, shape, kind in param_shapes(cfg):
        x = torch.randn(shape, generator=g, dtype=F64) * std[kind]
        x = x + 1.0 if kind == "ln_w" else x
        x = shape_new_param(kind, x)
        # Round to F32 first: the outputs are then the float64 result of exactly the
        # parameters stored in the file, not of values the reader never sees.
        params[name] = x.to(torch.float32).to(F64)
    return params


def shape_new_param(kind, x):
    """The newer schemes' parameters, from a N(0, std) draw x, moved to where every
    branch of their formulas is taken (not the sources' init: cope_emb = 0 would
    hide the CoPE term, c = 0.1, l_mult = 1 would hide |c|, |l|).
    - fire c and l_mult: either sign, |c| >= 0.05 and |l| >= 0.5, so that |.| matters
      and L = |l| L0 stays away from 0.
    - kerple r1, r2 [H]: by head, below the projection's lower bound 0.01 (stored
      negative or tiny, forward at 0.01), inside, or above 2 (power projects it to 2;
      log keeps it): r1 is inside, below, inside, ... and r2 below, inside, above, ...
      so that with H = 2 or 3 both parameters meet both the boundary and the interior."""
    if kind in ("fire_c", "fire_l"):
        floor = 0.05 if kind == "fire_c" else 0.5
        return torch.where(x < 0, -1.0, 1.0) * (floor + x.abs())
    if kind in ("kerple_r1", "kerple_r2"):
        h = torch.arange(x.shape[0])
        below = -(0.001 + 0.02 * x.abs())          # projected up to 0.01
        inside = 0.2 + x.abs()                      # in (0.01, 2) for any sane draw
        above = 2.1 + x.abs()                       # power: projected down to 2
        inside = inside.clamp(max=1.9)
        if kind == "kerple_r1":
            return torch.where(h % 2 == 1, below, inside)
        return torch.where(h % 3 == 0, below, torch.where(h % 3 == 1, inside, above))
    return x


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
    return rotate_pairs(x, ang)


def rotate_pairs(x, ang, mu=1.0):
    """Rotate the first n_rot = ang.shape[-1] interleaved pairs of x by the angles
    ang [B, 1 or H, T, n_rot], multiply them by mu (YaRN), and pass the features
    >= 2 n_rot through unchanged (MODEL.md §Rotary options, fraction)."""
    d_r = 2 * ang.shape[-1]
    cos, sin = ang.cos(), ang.sin()
    x0, x1 = x[..., 0:d_r:2], x[..., 1:d_r:2]
    rot = torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2)
    if mu != 1.0:
        rot = rot * mu
    return torch.cat([rot, x[..., d_r:]], dim=-1)


def rotary_pairs_count(fraction, d_h):
    """n_rot = floor(f d_h/2 + 1e-9) >= 1 (MODEL.md §Rotary options); the 1e-9 makes
    a product that should be an integer (but rounds just below it) count as one."""
    n_rot = math.floor(fraction * d_h / 2 + 1e-9)
    assert n_rot >= 1, "positional.fraction leaves no pair to rotate"
    return n_rot


def yarn_ramp(d_r, base, L):
    """YaRN's lo and hi (MODEL.md §Rotary options, yarn; jquesnelle/yarn
    find_correction_range with beta 32 and 1): kappa(beta) = d_r ln(L/(2 pi beta)) /
    (2 ln base), lo = max(floor(kappa(32)), 0), hi = min(ceil(kappa(1)), d_r - 1),
    hi = lo + 0.001 where they are equal (the ramp must not divide by 0)."""
    def kappa(beta):
        return d_r * math.log(L / (2 * math.pi * beta)) / (2 * math.log(base))
    lo = max(math.floor(kappa(32)), 0)
    hi = min(math.ceil(kappa(1)), d_r - 1)
    if hi == lo:
        hi = lo + 0.001
    return lo, hi


def yarn_theta(theta, s, lo, hi):
    """theta'_i = theta_i (1 - gamma_i) + (theta_i / s) gamma_i, gamma_i =
    clamp((i - lo)/(hi - lo), 0, 1): pairs below lo keep their frequency, pairs
    above hi are interpolated by s, a linear ramp between."""
    i = torch.arange(theta.shape[-1], dtype=F64)
    gamma = ((i - lo) / (hi - lo)).clamp(0.0, 1.0)
    return theta * (1 - gamma) + (theta / s) * gamma


def rotary_angles(pc, positions, key_mask, d_h):
    """Angles [B, 1, T, n_rot] of rotary with its options, and the factor mu of the
    rotated features (MODEL.md §Rotary options).  Without `fraction` and `scaling`
    this is plain rotary, with the same operations as rotate() (bit for bit)."""
    n_rot = rotary_pairs_count(pc.get("fraction", 1.0), d_h)
    d_r = 2 * n_rot  # the rotated width replaces d_h in theta
    base = pc["base"]
    sc = pc.get("scaling", {"type": "none"})
    kind, s = sc["type"], sc.get("factor", 1.0)
    i = torch.arange(n_rot, dtype=F64)
    m = positions.to(F64)[:, None, :, None]  # [B, 1, T, 1], the token's position
    theta = base ** (-2.0 * i / d_r)
    if kind == "none":
        return m * theta, 1.0
    if kind == "pi":  # (m/s) theta_i; at s = 1, m/1 = m exactly
        return (m / s) * theta, 1.0
    if kind == "ntk":  # b' = base s^(d_r/(d_r-2)); at s = 1, b' = base exactly
        assert n_rot >= 2, "ntk needs n_rot >= 2"
        b2 = base * s ** (d_r / (d_r - 2))
        return m * b2 ** (-2.0 * i / d_r), 1.0
    if kind == "dynamic_ntk":
        # per sequence: n = 1 + the largest position among its real tokens;
        # b' = base (s n/L - (s-1))^(d_r/(d_r-2)) where n > L, else base itself
        assert n_rot >= 2, "dynamic_ntk needs n_rot >= 2"
        L = sc["original_length"]
        n = (positions.masked_fill(key_mask == 0, -1).max(dim=1).values + 1).to(F64)
        grown = base * (s * n / L - (s - 1)) ** (d_r / (d_r - 2))
        b2 = torch.where(n > L, grown, torch.full_like(n, base))  # [B]
        theta_b = b2[:, None] ** (-2.0 * i / d_r)                 # [B, n_rot]
        return m * theta_b[:, None, None, :], 1.0
    if kind == "yarn":
        if s == 1:  # MODEL.md: at s = 1 yarn is plain rotary, bit for bit (the ramp
            return m * theta, 1.0  # would give theta(1-g) + theta g, not always theta)
        lo, hi = yarn_ramp(d_r, base, sc["original_length"])
        return m * yarn_theta(theta, s, lo, hi), 0.1 * math.log(s) + 1
    raise ValueError(kind)


def xpos_zeta(d_h):
    """zeta_k = (2k + 0.4 d_h) / (1.4 d_h), k < d_h/2 (MODEL.md, xpos)."""
    k = torch.arange(d_h // 2, dtype=F64)
    return (2 * k + 0.4 * d_h) / (1.4 * d_h)


def xpos_scores(q, k, positions, admissible, pc, rel_impl="einsum"):
    """xpos's content scores (MODEL.md, xpos): q', k' rotated as rotary (every pair),
    then sum_k zeta_k^((p_i - p_j)/B) (q'_2k k'_2k + q'_2k+1 k'_2k+1) / sqrt(d_h).
    "einsum" is that sum, literally; "factored:<c>" is torchscale's form, zeta^((p_i
    - c)/B) on q' and zeta^(-(p_j - c)/B) on k' with c an int, or "mid" for each
    sequence's middle real position rounded down.  The two agree for every c."""
    d_h = q.shape[-1]
    assert d_h % 2 == 0, "xpos needs an even d_h"
    qr, kr = rotate(q, positions, pc["base"]), rotate(k, positions, pc["base"])
    zeta = xpos_zeta(d_h)
    Bsc = pc["scale_base"]
    p = positions.to(F64)
    if rel_impl.startswith("factored:"):
        arg = rel_impl.split(":")[1]
        if arg == "mid":  # the middle of the real positions (last row admits all real)
            real = admissible[:, -1, :]
            big, small = p.masked_fill(~real, -1e9).max(1).values, \
                p.masked_fill(~real, 1e9).min(1).values
            c = torch.floor((big + small) / 2)[:, None]
        else:
            c = torch.full((p.shape[0], 1), float(arg), dtype=F64)
        fq = zeta ** ((p - c)[:, None, :, None] / Bsc)   # [B, 1, T, d_h/2]
        fk = zeta ** (-(p - c)[:, None, :, None] / Bsc)
        qs = qr * fq.repeat_interleave(2, dim=-1)
        ks = kr * fk.repeat_interleave(2, dim=-1)
        return qs @ ks.transpose(-1, -2) / math.sqrt(d_h)
    expo = (p[:, :, None] - p[:, None, :]) / Bsc          # [B, i, j] = (p_i - p_j)/B
    factor = zeta ** expo[..., None]                        # [B, T, T, d_h/2]
    pairs = (torch.einsum("bhik,bhjk,bijk->bhij", qr[..., 0::2], kr[..., 0::2], factor)
             + torch.einsum("bhik,bhjk,bijk->bhij", qr[..., 1::2], kr[..., 1::2], factor))
    return pairs / math.sqrt(d_h)


def fire_u(p_i, p_j, c, L):
    """u_ij = sign(d) psi(|d|) / (psi(max(p_i, L)) + 1e-6), d = p_i - p_j,
    psi(x) = ln(|c| x + 1) (MODEL.md, fire).  p_i [..., T, 1], p_j [..., 1, T] float."""
    def psi(x):
        return torch.log(c.abs() * x + 1)
    delta = p_i - p_j
    return torch.sign(delta) * psi(delta.abs()) / (psi(torch.maximum(p_i, L)) + 1e-6)


class ProjectPassThrough(torch.autograd.Function):
    """KERPLE's projection (MODEL.md, kerple): the forward clamps the stored value
    into [lo, hi]; the derivative w.r.t. the stored value is the one at the projected
    value, i.e. the incoming gradient unchanged.  (torch.clamp's own gradient is 0
    outside the range, which is not the contract.)"""
    @staticmethod
    def forward(ctx, x, lo, hi):
        return x.clamp(min=lo, max=hi)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


def kerple_projected(pc, params):
    """r1 <- max(r1, 0.01); r2 <- max(r2, 0.01), power: min(max(r2, 0.01), 2)."""
    r1 = ProjectPassThrough.apply(params["kerple.r1"], 0.01, None)
    r2 = ProjectPassThrough.apply(params["kerple.r2"], 0.01,
                                  2.0 if pc["kernel"] == "power" else None)
    return r1, r2


# ---------------------------------------------------------------------- the model
def layer_norm(x, w, b):
    # MODEL.md §Forward: biased variance over the last axis, eps 1e-5
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + 1e-5) * w + b


def linear(x, params, name):
    return x @ params[name + ".weight"].T + params[name + ".bias"]


def attention_z(x, params, pfx, cfg, positions, admissible, rel_impl="einsum",
                key_mask=None, kerple_r=None, probe=None):
    """Per-head attention output Z [B, T, d] before W_o (MODEL.md §Multi-head
    attention).  admissible[b,i,j] is false for masked keys and, if causal, j > i.
    key_mask (dynamic NTK's real tokens) defaults to the last query row of
    admissible, which admits every real key, causal or not.  kerple_r: the projected
    (r1, r2) of this forward.  rel_impl picks an alternative but equal computation
    for the selftest ("gather" for relative, "factored:<c>" for xpos).  probe, a
    dict, collects internals that the selftest checks the cases exercise."""
    m, pc = cfg["model"], cfg["positional"]
    Bn, Tn, d = x.shape
    H = m["heads"]
    d_h = d // H
    kind = pc["type"]
    if key_mask is None:
        key_mask = admissible[:, -1, :]

    def heads(t):  # [B, T, d] -> [B, H, T, d_h]; head h owns columns [h d_h, (h+1) d_h)
        return t.view(Bn, Tn, H, d_h).transpose(1, 2)
    q = heads(linear(x, params, pfx + "q"))
    k = heads(linear(x, params, pfx + "k"))
    v = heads(linear(x, params, pfx + "v"))
    if kind == "rotary":  # after the projections, bias included
        ang, mu = rotary_angles(pc, positions, key_mask, d_h)
        q, k = rotate_pairs(q, ang, mu), rotate_pairs(k, ang, mu)
    if kind == "xpos":
        S = xpos_scores(q, k, positions, admissible, pc, rel_impl)
    else:
        S = q @ k.transpose(-1, -2) / math.sqrt(d_h)
    rel = positions[:, None, :] - positions[:, :, None]  # [B, i, j] = p_j - p_i

    if kind == "relative":
        kd = pc["max_distance"]
        c = rel.clamp(-kd, kd) + kd  # Shaw: c = clip(p_j - p_i, -k, k) + k
        wK, wV = params[pfx + "rel_k"], params[pfx + "rel_v"]  # shared by the heads
        if rel_impl == "einsum":  # literal: materialise wK[c] as [B, T, T, d_h]
            S = S + torch.einsum("bhid,bijd->bhij", q, wK[c]) / math.sqrt(d_h)
        else:  # gather: q . wK for every bucket, then pick each (i, j)'s bucket
            cq = c[:, None].expand(Bn, H, Tn, Tn)
            S = S + torch.gather(q @ wK.T, -1, cq) / math.sqrt(d_h)
    elif kind == "alibi" and pc.get("bidirectional", "symmetric") == "deepmind":
        # R = m_h (-|p_j - p_i| + 1/2 [p_j < p_i]): an earlier key gets half a slope
        # less penalty than a later one at the same distance
        slopes = torch.tensor(alibi_slopes(H), dtype=F64)
        earlier = (rel < 0).to(F64)
        S = S + slopes[:, None, None] * (-rel.abs().to(F64) + 0.5 * earlier)[:, None]
    elif kind == "alibi":  # R = -m_h |p_j - p_i|, symmetric
        slopes = torch.tensor(alibi_slopes(H), dtype=F64)
        S = S - slopes[:, None, None] * rel.abs().to(F64)[:, None]
    elif kind == "t5":  # R = bias[bucket(p_j - p_i), h]; one table for all layers
        R = int(rel.abs().max())
        table = torch.tensor([t5_bucket(r, pc["num_buckets"], pc["max_distance"])
                              for r in range(-R, R + 1)])
        S = S + params["t5_bias.weight"][table[rel + R]].permute(0, 3, 1, 2)
    elif kind == "xl_relative":
        # R = (u_h . k_j + (q_i + v_h) . rho_h(p_j - p_i)) / sqrt(d_h), rho(delta) =
        # r(delta) W_R^T [d], r = all sines then all cosines over the model width d,
        # w_m = base^(-2m/d); delta of either sign, no clipping
        assert d % 2 == 0, "xl_relative needs an even d_model"
        omega = pc["base"] ** (-2.0 * torch.arange(d // 2, dtype=F64) / d)
        ang = rel.to(F64)[..., None] * omega                     # [B, T, T, d/2]
        r = torch.cat([ang.sin(), ang.cos()], dim=-1)             # [B, T, T, d]
        rho = (r @ params[pfx + "xl_r.weight"].T).view(Bn, Tn, Tn, H, d_h)
        u, vv = params[pfx + "xl_u"], params[pfx + "xl_v"]       # [H, d_h]
        content = torch.einsum("hd,bhjd->bhj", u, k)[:, :, None, :]   # u_h . k_j
        position = torch.einsum("bhid,bijhd->bhij", q + vv[None, :, None, :], rho)
        S = S + (content + position) / math.sqrt(d_h)
    elif kind == "fire":
        # R[h,i,j] = f(u_ij)_h, f = MLP 1 -> W -> H with ReLU; L = |l| L0
        c, ell = params[pfx + "fire.c"], params[pfx + "fire.l_mult"]
        L = ell.abs() * pc["threshold"]
        p = positions.to(F64)
        u = fire_u(p[:, :, None], p[:, None, :], c, L)           # [B, T, T]
        hidden = torch.relu(linear(u[..., None], params, pfx + "fire.fc1"))
        S = S + linear(hidden, params, pfx + "fire.fc2").permute(0, 3, 1, 2)
        if probe is not None:  # does some real query sit beyond L?  below it?
            real = key_mask.bool()
            probe.setdefault("fire_beyond_L", []).append(bool((p[real] > L).any()))
            probe.setdefault("fire_within_L", []).append(bool((p[real] <= L).any()))
    elif kind == "kerple":
        r1, r2 = kerple_r if kerple_r is not None else kerple_projected(pc, params)
        r1, r2 = r1[:, None, None], r2[:, None, None]             # [H, 1, 1]
        dist = rel.abs().to(F64)[:, None]                         # [B, 1, T, T]
        if pc["kernel"] == "log":  # R = -r1 ln(1 + r2 |p_j - p_i|)
            S = S - r1 * torch.log(1 + r2 * dist)
        else:  # power: R = -r1 |p_j - p_i|^r2, and 0 (derivative 0) at p_j = p_i;
            # the base is 1 there inside pow so that d/dr2 (= ln 0 * 0) is not NaN
            nonzero = dist > 0
            safe = torch.where(nonzero, dist, torch.ones_like(dist))
            S = S - r1 * torch.where(nonzero, safe ** r2, torch.zeros_like(safe))
    elif kind == "sandwich":
        # R = H/(8(h+1)) (sum_{k=1..d_h/2} cos((p_i - p_j) base^(-2k/d_h)) - d_h/2)
        assert d_h % 2 == 0, "sandwich needs an even d_h"
        kk = torch.arange(1, d_h // 2 + 1, dtype=F64)
        freq = pc["base"] ** (-2.0 * kk / d_h)
        cos_sum = torch.cos((-rel).to(F64)[..., None] * freq).sum(-1)  # [B, T, T]
        coef = torch.tensor([H / (8.0 * (h + 1)) for h in range(H)], dtype=F64)
        S = S + coef[:, None, None] * (cos_sum - d_h / 2)[:, None]
    elif kind == "cope":
        # S0 = the content scores above (scaled); gates sigma(S0) on admissible keys
        # only; nu_ij = min(sum_{t >= j} g_it, npos - 1) (a cumulative sum from the
        # right); R = q_i . e interpolated between e[floor nu] and e[ceil nu].
        # Positions are not read.
        npos = pc["max_position"]
        e = params[pfx + "cope_emb"]                              # [npos, d_h]
        adm = admissible[:, None]
        gates = torch.where(adm, torch.sigmoid(S), torch.zeros_like(S))
        total = gates.flip(-1).cumsum(-1).flip(-1)
        nu = total.clamp(max=npos - 1)  # no derivative where clamped, as the contract
        lo, hi = nu.detach().floor().long(), nu.detach().ceil().long()
        w = nu - lo.to(F64)             # derivatives flow through w, not floor/ceil
        qe = q @ e.T                                              # [B, H, T, npos]
        S = S + (1 - w) * torch.gather(qe, -1, lo) + w * torch.gather(qe, -1, hi)
        if probe is not None:  # the largest count over admissible keys
            probe.setdefault("cope_nu_max", []).append(float(total[adm.expand_as(total)].max()))

    if probe is not None:  # the scores S = content + R, before any mask
        probe.setdefault("S", []).append(S.detach())

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


def forward(params, cfg, tokens, positions, key_mask, rel_impl="einsum", probe=None):
    """logits [B, T, V_out] (MODEL.md §Forward; dropout is 0, nothing to do)."""
    m, pc = cfg["model"], cfg["positional"]
    assert int(positions.min()) >= 0, "negative position"
    if pc["type"] in CAUSAL_ONLY:
        assert m["causal"], pc["type"] + " needs model.causal: true"
    # KERPLE: the stored values are projected before every forward, once for the
    # whole model (the layers share them)
    kerple_r = kerple_projected(pc, params) if pc["type"] == "kerple" else None
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
        z = attention_z(x, params, pfx, cfg, positions, adm, rel_impl,
                        key_mask=key_mask, kerple_r=kerple_r, probe=probe)
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
    """name -> (config, input options), the established cases first, then the
    newer schemes' (see new_cases)."""
    cases = established_cases()
    for group in new_cases().values():
        cases.update(group)
    return cases


def established_cases():
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


def new_cases():
    """group -> {name -> (config, input options)} for the contract's newer schemes
    and options.  Every group has pre- and post-LN, causal and not (xpos and cope
    causal only), left and right padding, randomized and shifted positions; the bias
    schemes also run with 3 heads (ALiBi's non-power-of-two slopes, sandwich's and
    KERPLE's per-head terms).  Bases of 100 where 10000 would leave the term ~0 at
    T = 7 (sandwich's cosines, YaRN's ramp)."""
    rnd, shift, left = {"positions": ("random", 40)}, {"positions": ("shift", 5)}, \
        {"pad": "left"}
    three = {"d_model": 12, "heads": 3}  # d_h = 4
    g = {}
    c = lambda s, **kw: make_config(s, **kw)
    g["xl_relative"] = {
        "xl_relative_pre": (c("xl_relative"), {}),
        "xl_relative_post_causal": (c("xl_relative", norm="post", causal=True), {}),
        "xl_relative_leftpad_pre": (c("xl_relative"), left),
        "xl_relative_3heads_causal_leftpad_post": (
            c("xl_relative", norm="post", causal=True, **three), left),
        "xl_relative_randomized_pre": (c("xl_relative", base=100.0), rnd),
        "xl_relative_shifted_pre": (c("xl_relative"), shift),
    }
    g["fire"] = {
        "fire_pre": (c("fire"), {}),
        "fire_post_causal": (c("fire", norm="post", causal=True), {}),
        "fire_causal_leftpad_post": (c("fire", norm="post", causal=True, mlp_width=6), left),
        "fire_3heads_pre": (c("fire", mlp_width=5, **three), {}),
        "fire_randomized_pre": (c("fire"), rnd),
        "fire_shifted_pre": (c("fire"), shift),
        # L = |l| L0 with |l| in [0.5, ~2]: positions run beyond L and below it
        "fire_threshold_pre": (c("fire", threshold=4.0, mlp_width=8), {}),
        "fire_threshold_randomized_post_causal": (
            c("fire", norm="post", causal=True, threshold=25.0), rnd),
    }
    g["kerple"] = {}
    for kern in ("log", "power"):
        g["kerple"].update({
            "kerple_%s_pre" % kern: (c("kerple", kernel=kern), {}),
            "kerple_%s_post_causal" % kern: (c("kerple", kernel=kern, norm="post",
                                                causal=True), {}),
            "kerple_%s_3heads_pre" % kern: (c("kerple", kernel=kern, **three), {}),
            "kerple_%s_randomized_pre" % kern: (c("kerple", kernel=kern), rnd),
            "kerple_%s_leftpad_pre" % kern: (c("kerple", kernel=kern), left),
            "kerple_%s_shifted_pre" % kern: (c("kerple", kernel=kern), shift),
        })
    g["sandwich"] = {
        "sandwich_pre": (c("sandwich"), {}),
        "sandwich_post_causal": (c("sandwich", base=100.0, norm="post", causal=True), {}),
        "sandwich_3heads_pre": (c("sandwich", base=100.0, **three), {}),
        "sandwich_randomized_pre": (c("sandwich", base=100.0), rnd),
        "sandwich_leftpad_pre": (c("sandwich", base=100.0), left),
        "sandwich_shifted_pre": (c("sandwich", base=100.0), shift),
    }
    g["xpos"] = {  # scale_base 8, not 512, so that zeta^(delta/B) is far from 1
        "xpos_causal_pre": (c("xpos", causal=True, scale_base=8.0), {}),
        "xpos_post_causal": (c("xpos", norm="post", causal=True), {}),
        "xpos_causal_leftpad_post": (c("xpos", norm="post", causal=True, scale_base=8.0),
                                     left),
        "xpos_causal_randomized_pre": (c("xpos", causal=True, scale_base=8.0, base=100.0),
                                       rnd),
        "xpos_causal_shifted_pre": (c("xpos", causal=True, scale_base=8.0), shift),
    }
    g["cope"] = {
        "cope_causal_pre": (c("cope", causal=True), {}),
        "cope_post_causal": (c("cope", norm="post", causal=True), {}),
        "cope_causal_leftpad_post": (c("cope", norm="post", causal=True), left),
        "cope_causal_randomized_pre": (c("cope", causal=True), rnd),
        "cope_causal_shifted_pre": (c("cope", causal=True), shift),
        # npos - 1 = 2 and 1: counts of up to 7 gates reach the clamp
        "cope_clamp_causal_pre": (c("cope", causal=True, max_position=3), {}),
        "cope_clamp_post_causal": (c("cope", norm="post", causal=True, max_position=2),
                                   {}),
    }
    dm = {"bidirectional": "deepmind"}
    g["alibi_deepmind"] = {
        "alibi_deepmind_pre": (c("alibi", **dm), {}),
        "alibi_deepmind_post_causal": (c("alibi", norm="post", causal=True, **dm), {}),
        "alibi_deepmind_3heads_pre": (c("alibi", **dm, **three), {}),
        "alibi_deepmind_6heads_post_causal": (
            c("alibi", norm="post", causal=True, d_model=12, heads=6, **dm), {}),
        "alibi_deepmind_randomized_pre": (c("alibi", **dm), rnd),
        "alibi_deepmind_leftpad_pre": (c("alibi", **dm), left),
        "alibi_deepmind_shifted_pre": (c("alibi", **dm), shift),
        "alibi_symmetric_pre": (c("alibi", bidirectional="symmetric"), {}),
    }
    # d_h = 8 so that fractions leave 1, 2 or 3 of the 4 pairs rotating
    w = {"d_model": 16, "heads": 2}
    sc = lambda kind, s, L=None: dict(
        {"type": kind, "factor": s}, **({"original_length": L} if L else {}))
    g["rotary_options"] = {
        "rotary_fraction_pre": (c("rotary", fraction=0.5, **w), {}),
        "rotary_fraction_post_causal": (c("rotary", fraction=0.3, norm="post",
                                          causal=True, **w), {}),
        "rotary_fraction_randomized_pre": (c("rotary", fraction=0.75, **w), rnd),
        "rotary_pi_pre": (c("rotary", scaling=sc("pi", 4.0), **w), {}),
        "rotary_pi_fraction_randomized_pre": (
            c("rotary", fraction=0.5, scaling=sc("pi", 2.5, 16), **w), rnd),
        "rotary_ntk_pre": (c("rotary", scaling=sc("ntk", 3.0), **w), {}),
        "rotary_ntk_fraction_causal_leftpad_post": (
            c("rotary", fraction=0.5, norm="post", causal=True,
              scaling=sc("ntk", 2.0, 16), **w), left),
        # n = 7, 4, 1 against L = 5: one row beyond L, two within
        "rotary_dynamic_ntk_pre": (c("rotary", scaling=sc("dynamic_ntk", 2.0, 5), **w), {}),
        "rotary_dynamic_ntk_randomized_pre": (
            c("rotary", scaling=sc("dynamic_ntk", 3.0, 30), **w), rnd),
        # n = 12, 9, 6 against L = 8
        "rotary_dynamic_ntk_shifted_post_causal": (
            c("rotary", norm="post", causal=True, fraction=0.75,
              scaling=sc("dynamic_ntk", 2.0, 8), **w), shift),
        "rotary_dynamic_ntk_leftpad_pre": (
            c("rotary", scaling=sc("dynamic_ntk", 4.0, 6), **w), left),
        # d_r 8, base 100, L 1000: lo = 1, hi = 5, gamma = 0, 0, 1/4, 1/2
        "rotary_yarn_pre": (c("rotary", base=100.0, scaling=sc("yarn", 4.0, 1000), **w),
                            {}),
        "rotary_yarn_fraction_post_causal": (
            c("rotary", fraction=0.75, norm="post", causal=True,
              scaling=sc("yarn", 2.0, 64), **w), {}),
        "rotary_yarn_randomized_pre": (
            c("rotary", base=100.0, scaling=sc("yarn", 8.0, 512), **w), rnd),
        "rotary_yarn_shifted_causal_leftpad_post": (
            c("rotary", base=100.0, norm="post", causal=True,
              scaling=sc("yarn", 2.0, 1000), **w), dict(left, **shift)),
    }
    return g


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


# ---------------------------------------------------------------- loop oracle
def scores_by_loops(cfg, params, pfx, x, positions, key_mask, admissible):
    """S[b,h,i,j] of one attention layer (content + R, before masking), entry by
    entry in Python floats straight from MODEL.md's formulas, for the admissible
    (b, i, j); NaN elsewhere.  A second implementation of the newer schemes, with
    no broadcasting, head views or cumulative sums to get wrong, for the selftest.
    It shares only alibi_slopes and yarn_ramp, both pinned by hand values."""
    m, pc = cfg["model"], cfg["positional"]
    Bn, Tn, d = x.shape
    H = m["heads"]
    d_h = d // H
    kind = pc["type"]
    Q, K = linear(x, params, pfx + "q").tolist(), linear(x, params, pfx + "k").tolist()
    P, real, adm = positions.tolist(), key_mask.tolist(), admissible.tolist()
    par = {k: v.tolist() for k, v in params.items()}

    def dot(a, b):
        return sum(s * t for s, t in zip(a, b))

    def rotary_scalar(vec, pos, n_seq):  # rotary with its options, pair by pair
        f = pc.get("fraction", 1.0) if kind == "rotary" else 1.0
        n_rot = math.floor(f * d_h / 2 + 1e-9)
        d_r = 2 * n_rot
        sc = pc.get("scaling", {"type": "none"}) if kind == "rotary" else {"type": "none"}
        s, L, base = sc.get("factor", 1.0), sc.get("original_length"), pc["base"]
        mu = 0.1 * math.log(s) + 1 if sc["type"] == "yarn" and s != 1 else 1.0
        out = list(vec)
        for i in range(n_rot):
            th = base ** (-2 * i / d_r)
            if sc["type"] == "pi":
                a = pos / s * th
            elif sc["type"] == "ntk":
                a = pos * (base * s ** (d_r / (d_r - 2))) ** (-2 * i / d_r)
            elif sc["type"] == "dynamic_ntk":
                b2 = base * (s * n_seq / L - (s - 1)) ** (d_r / (d_r - 2)) if n_seq > L \
                    else base
                a = pos * b2 ** (-2 * i / d_r)
            elif sc["type"] == "yarn" and s != 1:
                lo, hi = yarn_ramp(d_r, base, L)
                gam = min(max((i - lo) / (hi - lo), 0.0), 1.0)
                a = pos * (th * (1 - gam) + th / s * gam)
            else:
                a = pos * th
            x0, x1 = vec[2 * i], vec[2 * i + 1]
            out[2 * i] = (x0 * math.cos(a) - x1 * math.sin(a)) * mu
            out[2 * i + 1] = (x0 * math.sin(a) + x1 * math.cos(a)) * mu
        return out

    S = torch.full((Bn, H, Tn, Tn), float("nan"), dtype=F64)
    for b in range(Bn):
        n_seq = 1 + max(P[b][t] for t in range(Tn) if real[b][t])
        for h in range(H):
            cols = slice(h * d_h, (h + 1) * d_h)
            qs = [Q[b][i][cols] for i in range(Tn)]
            ks = [K[b][j][cols] for j in range(Tn)]
            if kind in ("rotary", "xpos"):
                qs = [rotary_scalar(qs[i], P[b][i], n_seq) for i in range(Tn)]
                ks = [rotary_scalar(ks[j], P[b][j], n_seq) for j in range(Tn)]
            for i in range(Tn):
                for j in range(Tn):
                    if not adm[b][i][j]:
                        continue
                    q, k, pi, pj = qs[i], ks[j], P[b][i], P[b][j]
                    if kind == "xpos":
                        B_ = pc["scale_base"]
                        S[b, h, i, j] = sum(
                            ((2 * kk + 0.4 * d_h) / (1.4 * d_h)) ** ((pi - pj) / B_)
                            * (q[2 * kk] * k[2 * kk] + q[2 * kk + 1] * k[2 * kk + 1])
                            for kk in range(d_h // 2)) / math.sqrt(d_h)
                        continue
                    s = dot(q, k) / math.sqrt(d_h)
                    if kind == "alibi":
                        mh = alibi_slopes(H)[h]
                        if pc.get("bidirectional", "symmetric") == "deepmind":
                            s += mh * (-abs(pj - pi) + (0.5 if pj < pi else 0.0))
                        else:
                            s += -mh * abs(pj - pi)
                    elif kind == "xl_relative":
                        delta = pj - pi
                        om = [pc["base"] ** (-2 * mm / d) for mm in range(d // 2)]
                        r = [math.sin(delta * w) for w in om] + [math.cos(delta * w) for w in om]
                        WR = par[pfx + "xl_r.weight"]
                        rho = [dot(WR[n], r) for n in range(d)][cols]
                        u, v = par[pfx + "xl_u"][h], par[pfx + "xl_v"][h]
                        s += (dot(u, k) + dot([a + c for a, c in zip(q, v)], rho)) / math.sqrt(d_h)
                    elif kind == "fire":
                        c = par[pfx + "fire.c"][0]
                        L = abs(par[pfx + "fire.l_mult"][0]) * pc["threshold"]
                        psi = lambda z: math.log(abs(c) * z + 1)
                        delta = pi - pj
                        sgn = (delta > 0) - (delta < 0)
                        u = sgn * psi(abs(delta)) / (psi(max(pi, L)) + 1e-6)
                        w1, b1 = par[pfx + "fire.fc1.weight"], par[pfx + "fire.fc1.bias"]
                        hid = [max(0.0, w1[n][0] * u + b1[n]) for n in range(len(b1))]
                        s += dot(par[pfx + "fire.fc2.weight"][h], hid) + par[pfx + "fire.fc2.bias"][h]
                    elif kind == "kerple":
                        r1 = max(par["kerple.r1"][h], 0.01)
                        r2 = max(par["kerple.r2"][h], 0.01)
                        dist = abs(pj - pi)
                        if pc["kernel"] == "log":
                            s += -r1 * math.log(1 + r2 * dist)
                        else:
                            r2 = min(r2, 2.0)
                            s += -r1 * dist ** r2 if dist else 0.0
                    elif kind == "sandwich":
                        tot = sum(math.cos((pi - pj) * pc["base"] ** (-2 * kk / d_h))
                                  for kk in range(1, d_h // 2 + 1))
                        s += H / (8 * (h + 1)) * (tot - d_h / 2)
                    elif kind == "cope":
                        npos, e = pc["max_position"], par[pfx + "cope_emb"]
                        gate = lambda t: 1 / (1 + math.exp(-dot(q, ks[t]) / math.sqrt(d_h)))
                        nu = min(sum(gate(t) for t in range(j, Tn) if adm[b][i][t]),
                                 npos - 1)
                        fl, ce = math.floor(nu), math.ceil(nu)
                        w = nu - fl
                        s += (1 - w) * dot(q, e[fl]) + w * dot(q, e[ce])
                    S[b, h, i, j] = s
    return S


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
        for name in ("t5_small_pre", "sinusoidal_concat_pre", "rotary_yarn_pre"):
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

    # ------------------------------------------------ the contract's newer schemes
    new = {n: v for grp in new_cases().values() for n, v in grp.items()}

    def with_pc(cfg, **changes):  # a copy of cfg with positional keys changed
        c2 = copy.deepcopy(cfg)
        c2["positional"].update(changes)
        return c2

    def bias_only(cfg, params, positions, key_mask):
        """S of layer 0 with W_q, W_k, b_q, b_k = 0: then S = R exactly."""
        p0 = dict(params)
        for w in ("q", "k"):
            for part in ("weight", "bias"):
                p0["layers.0.attn.%s.%s" % (w, part)] = torch.zeros_like(
                    params["layers.0.attn.%s.%s" % (w, part)])
        probe = {}
        forward(p0, cfg, torch.zeros_like(positions), positions, key_mask, probe=probe)
        return probe["S"][0]

    # 12. hand-computed values
    one = torch.ones(1, 4, dtype=torch.int64)
    pos4 = torch.arange(4)[None]
    cfg, _ = new["sandwich_post_causal"]  # H 2, d_h 4, base 100
    params, _ = build_case("sandwich_post_causal", *new["sandwich_post_causal"])
    R = bias_only(with_pc(cfg), params, pos4, one)
    check(bool((R.diagonal(dim1=-2, dim2=-1) == 0).all()), "sandwich: R = 0 at delta = 0")
    # H/(8(h+1)) (cos(0.1) + cos(0.01) - 2), cos(0.1) = 0.99500416527802577,
    # cos(0.01) = 0.99995000041666526
    check(abs(float(R[0, 0, 0, 1]) - (-0.0012614585763272424)) < 1e-16
          and abs(float(R[0, 1, 2, 1]) - (-0.0006307292881636212)) < 1e-16
          and float(R[0, 0, 0, 1]) == float(R[0, 0, 1, 0]),
          "sandwich: R at |delta| = 1, both heads, hand values")
    cfg, opts = new["alibi_deepmind_pre"]  # slopes 1/16, 1/256
    params, _ = build_case("alibi_deepmind_pre", cfg, opts)
    R = bias_only(cfg, params, pos4, one)
    check(float(R[0, 0, 3, 1]) == -0.09375 and float(R[0, 0, 1, 3]) == -0.125
          and float(R[0, 1, 3, 1]) == (-2 + 0.5) / 256 and float(R[0, 0, 2, 2]) == 0.0,
          "alibi deepmind: m(-|d| + 1/2 [p_j < p_i]), hand values")
    cfg, opts = new["kerple_power_pre"]
    params, _ = build_case("kerple_power_pre", cfg, opts)
    hand = dict(params)
    hand["kerple.r1"] = torch.tensor([0.5, -3.0], dtype=F64)   # head 1: r1 -> 0.01
    hand["kerple.r2"] = torch.tensor([0.5, 5.0], dtype=F64)    # head 1: r2 -> 2
    R = bias_only(cfg, hand, pos4, one)
    check(abs(float(R[0, 0, 0, 3]) + 0.5 * math.sqrt(3)) < 1e-15
          and abs(float(R[0, 1, 3, 0]) + 0.01 * 9) < 1e-15 and float(R[0, 1, 2, 2]) == 0.0,
          "kerple power: -r1 |d|^r2 with projection, hand values")
    R = bias_only(with_pc(cfg, kernel="log"), hand, pos4, one)
    check(abs(float(R[0, 0, 0, 3]) + 0.5 * math.log(1 + 0.5 * 3)) < 1e-15
          and abs(float(R[0, 1, 3, 0]) + 0.01 * math.log(1 + 5.0 * 3)) < 1e-15,
          "kerple log: -r1 ln(1 + r2 |d|), r2 = 5 kept, hand values")
    c1, L512 = torch.tensor([1.0], dtype=F64), torch.tensor([512.0], dtype=F64)
    u = fire_u(torch.tensor([[3.0]], dtype=F64), torch.tensor([[1.0, 3.0, 5.0]], dtype=F64),
               -c1, L512)
    check(abs(float(u[0, 0]) - math.log(3) / (math.log(513) + 1e-6)) < 1e-16
          and float(u[0, 1]) == 0.0 and float(u[0, 2]) == -float(u[0, 0]),
          "fire: u = sign(d) psi(|d|)/(psi(max(p_i, L)) + 1e-6), |c|, hand values")
    u = fire_u(torch.tensor([[9.0]], dtype=F64), torch.tensor([[1.0]], dtype=F64),
               0.5 * c1, torch.tensor([4.0], dtype=F64))
    check(abs(float(u[0, 0]) - math.log(5) / (math.log(5.5) + 1e-6)) < 1e-16,
          "fire: p_i beyond L uses psi(p_i), hand value")
    check(yarn_ramp(8, 100.0, 1000) == (1, 5) and yarn_ramp(8, 10000.0, 16) == (0, 1)
          and yarn_ramp(8, 10.0, 16384) == (7, 7.001) and yarn_ramp(6, 10000.0, 64) == (0, 1),
          "yarn lo/hi, hand values (incl. hi = lo + 0.001)")
    th = torch.ones(4, dtype=F64)
    check(torch.equal(yarn_theta(th, 4.0, 1, 5), torch.tensor([1, 1, 1 - 0.75 * 0.25,
                                                               1 - 0.75 * 0.5], dtype=F64)),
          "yarn gamma = clamp((i - lo)/(hi - lo), 0, 1), hand values")
    check([rotary_pairs_count(f, 8) for f in (0.25, 0.3, 0.5, 0.75, 1.0)] == [1, 1, 2, 3, 4]
          and rotary_pairs_count(0.7, 10) == 3, "rotary n_rot = floor(f d_h/2 + 1e-9)")
    check(torch.equal(xpos_zeta(4), torch.tensor([1.6 / 5.6, 3.6 / 5.6], dtype=F64)),
          "xpos zeta_k = (2k + 0.4 d_h)/(1.4 d_h), d_h = 4")
    pc = {"type": "rotary", "base": 10000.0,
          "scaling": {"type": "dynamic_ntk", "factor": 2.0, "original_length": 5}}
    ang, _ = rotary_angles(pc, torch.tensor([[1, 6, 0], [1, 3, 9]]),
                           torch.tensor([[1, 1, 0], [1, 1, 0]]), 8)
    b2 = 10000.0 * (2 * 7 / 5 - 1) ** (8 / 6)  # row 0: n = 7 > 5; row 1: n = 4
    check(abs(float(ang[0, 0, 0, 1]) - b2 ** -0.25) < 1e-17
          and float(ang[1, 0, 0, 1]) == 10000.0 ** -0.25,
          "dynamic ntk: n = 1 + largest real position, b' hand values")

    # 13. every newer scheme's scores against the element-by-element loop oracle
    for name, (cfg, opts) in new.items():
        if not (name.endswith("3heads_pre") or name in (
                "xl_relative_3heads_causal_leftpad_post", "fire_threshold_pre",
                "fire_threshold_randomized_post_causal", "kerple_log_pre",
                "kerple_power_shifted_pre", "xpos_causal_randomized_pre",
                "xpos_causal_leftpad_post", "cope_clamp_causal_pre", "cope_causal_pre",
                "alibi_deepmind_6heads_post_causal", "alibi_symmetric_pre",
                "rotary_fraction_post_causal", "rotary_pi_fraction_randomized_pre",
                "rotary_ntk_pre", "rotary_dynamic_ntk_pre",
                "rotary_dynamic_ntk_shifted_post_causal", "rotary_yarn_pre",
                "rotary_yarn_fraction_post_causal")):
            continue
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        d = cfg["model"]["d_model"]
        adm = km.bool()[:, None, :].expand(-1, T, -1)
        if cfg["model"]["causal"]:
            adm = adm & torch.ones(T, T, dtype=torch.bool).tril()
        x = torch.randn(B, T, d, generator=g, dtype=F64)
        probe = {}
        attention_z(x, params, "layers.1.attn.", cfg, ps, adm, key_mask=km, probe=probe)
        want = scores_by_loops(cfg, params, "layers.1.attn.", x, ps, km, adm)
        got, a4 = probe["S"][0], adm[:, None].expand_as(want)
        check(bool(torch.isnan(want[~a4]).all()) and close(got[a4], want[a4], 1e-12),
              "scores == loop oracle (%.1e): %s" % (float((got[a4] - want[a4]).abs().max()),
                                                    name))

    # 14. shift invariance (MODEL.md §Invariances) and its failure where it does not hold
    worst = 0.0
    for name, (cfg, opts) in list(new.items()) + [("sinusoidal_pre", cases["sinusoidal_pre"])]:
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        pc, shift = cfg["positional"], 13
        a, b = forward(params, cfg, tk, ps, km), forward(params, cfg, tk, ps + shift, km)
        expect = pc["type"] not in INPUT_SIDE
        if pc["type"] == "fire":  # only while every position stays <= L
            Ls = [abs(float(params["layers.%d.attn.fire.l_mult" % l])) * pc["threshold"]
                  for l in range(cfg["model"]["layers"])]
            expect = int(ps.max()) + shift <= min(Ls)
        if pc.get("scaling", {}).get("type") == "dynamic_ntk":  # only while n <= L
            n = ps.masked_fill(km == 0, -1).max(1).values + 1 + shift
            expect = bool((n <= pc["scaling"]["original_length"]).all())
        if expect:
            worst = max(worst, float((a - b).abs().max()))
            check(close(a, b, 1e-11), "shift invariance: " + name)
        else:
            check(not close(a, b, 1e-6), "shift changes it (control): " + name)
    print("     (largest logit change under a shift where invariant: %.1e)" % worst)
    cfg, opts = new["rotary_dynamic_ntk_pre"]
    params, (tk, ps, km, _) = build_case("rotary_dynamic_ntk_pre", cfg, opts)
    wide = with_pc(cfg, scaling={"type": "dynamic_ntk", "factor": 2.0, "original_length": 64})
    plain = with_pc(cfg)
    del plain["positional"]["scaling"]
    a = forward(params, wide, tk, ps, km)
    check(close(a, forward(params, wide, tk, ps + 13, km), 1e-11)
          and torch.equal(a, forward(params, plain, tk, ps, km)),
          "dynamic ntk with every n <= L: shift invariant, and plain rotary bit for bit")
    for name in ("fire_pre", "fire_randomized_pre"):  # positions 0..40 << L ~ 512
        cfg, opts = new[name]
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        check(close(forward(params, cfg, tk, ps, km), forward(params, cfg, tk, ps + 13, km),
                    1e-11), "fire with every position <= L: shift invariant: " + name)

    # 14b. not causal: permuting tokens, positions and mask together permutes the
    #      outputs (no scheme may read the column index instead of `positions`)
    for name, (cfg, opts) in new.items():
        if cfg["model"]["causal"]:
            continue
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        a = forward(params, cfg, tk, ps, km)[:, perm]
        b = forward(params, cfg, tk[:, perm], ps[:, perm], km[:, perm])
        check(close(a, b, 1e-12), "permutation equivariance (padded): " + name)

    # 15. reversal: tokens reversed, p -> P - p, no causal mask: outputs reversed
    def reversed_logits(name, cfg, opts):
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        a = forward(params, cfg, tk, ps, km)
        P = int(ps.max())
        b = forward(params, cfg, tk.flip(1), P - ps.flip(1), km.flip(1)).flip(1)
        return a, b
    for name, (cfg, opts) in list(new.items()) + [
            (n, cases[n]) for n in ("alibi_pre", "alibi_3heads_pre")]:
        kind = cfg["positional"]["type"]
        if cfg["model"]["causal"] or kind not in ("alibi", "kerple", "sandwich",
                                                    "xl_relative", "fire"):
            continue
        a, b = reversed_logits(name, cfg, opts)
        if kind in ("kerple", "sandwich") or (
                kind == "alibi" and cfg["positional"].get("bidirectional") != "deepmind"):
            check(close(a, b, 1e-11), "reversal symmetry: " + name)
        else:
            check(not close(a, b, 1e-6), "no reversal symmetry (control): " + name)

    # 16. rotary options that must be plain rotary bit for bit
    cfg, opts = new["rotary_fraction_pre"]
    plain = with_pc(cfg)
    del plain["positional"]["fraction"]
    params, inputs = build_case("rotary_fraction_pre", cfg, opts)
    ref = compute(params, plain, inputs)
    half = compute(params, cfg, inputs)

    def same(x, y):
        return torch.equal(x[0], y[0]) and torch.equal(x[1], y[1]) and all(
            torch.equal(x[2][k], y[2][k]) for k in x[2])
    check(same(compute(params, with_pc(plain, fraction=1.0), inputs), ref),
          "rotary fraction 1 == rotary (logits, loss, grads bit for bit)")
    for kind in ("pi", "ntk", "yarn"):
        sc = {"type": kind, "factor": 1.0, "original_length": 16}
        check(same(compute(params, with_pc(plain, scaling=sc), inputs), ref)
              and same(compute(params, with_pc(cfg, scaling=sc), inputs), half),
              "rotary %s at factor 1 == rotary, fraction 1 and 0.5 (bit for bit)" % kind)
    check(close(yarn_theta(10000.0 ** (-torch.arange(4, dtype=F64) / 4), 1.0, 1, 3),
                10000.0 ** (-torch.arange(4, dtype=F64) / 4), 1e-16),
          "yarn's ramp formula itself at s = 1 gives theta (to rounding)")
    tk, ps, km, _ = inputs
    q = torch.randn(B, 2, T, 8, generator=g, dtype=F64)
    ang, mu = rotary_angles(cfg["positional"], ps, km, 8)
    check(torch.equal(rotate_pairs(q, ang, mu)[..., 4:], q[..., 4:]) and ang.shape[-1] == 2,
          "rotary fraction 0.5: features >= 2 n_rot pass through")

    # 17. cope ignores positions
    for name in ("cope_causal_pre", "cope_clamp_post_causal"):
        cfg, opts = new[name]
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        other = torch.randint(0, 1000, ps.shape, generator=g)
        check(torch.equal(forward(params, cfg, tk, ps, km), forward(params, cfg, tk, other, km)),
              "cope: outputs do not change with positions: " + name)

    # 18. xpos: logits do not depend on the common offset c of the factored form,
    #     and with B -> infinity (zeta^0 = 1) it is rotary
    for name in ("xpos_causal_pre", "xpos_causal_randomized_pre", "xpos_causal_leftpad_post"):
        cfg, opts = new[name]
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        a = forward(params, cfg, tk, ps, km)
        diffs = [float((a - forward(params, cfg, tk, ps, km, rel_impl="factored:" + c))
                       .abs().max()) for c in ("mid", "0", str(math.ceil(T / 2)), "60")]
        check(max(diffs) < 1e-11, "xpos: same logits for c = mid, 0, ceil(T/2), 60 "
              "(%.1e): %s" % (max(diffs), name))
    cfg, opts = new["xpos_causal_pre"]
    params, (tk, ps, km, _) = build_case("xpos_causal_pre", cfg, opts)
    rot = copy.deepcopy(cfg)
    rot["positional"] = {"type": "rotary", "base": cfg["positional"]["base"]}
    check(close(forward(params, with_pc(cfg, scale_base=1e300), tk, ps, km),
                forward(params, rot, tk, ps, km), 1e-12), "xpos with B = 1e300 == rotary")

    # 19. the cases exercise what they are named for: each newer scheme (and ALiBi
    #     deepmind, the rotary options) pre- and post-LN, causal, not causal unless it
    #     cannot be, left padding, randomized and shifted positions
    def variant(name):
        cfg, opts = new[name]
        pc = cfg["positional"]
        return (pc["type"] if pc["type"] in NEW_SCHEMES else
                "alibi_deepmind" if pc.get("bidirectional") == "deepmind" else
                "rotary_options" if pc["type"] == "rotary" else None)
    for group in NEW_SCHEMES + ["alibi_deepmind", "rotary_options"]:
        mine = [new[n] for n in new if variant(n) == group]
        norms = {c["model"]["norm"] for c, _ in mine}
        causal = {c["model"]["causal"] for c, _ in mine}
        opts = [o for _, o in mine]
        check(norms == {"pre", "post"} and True in causal
              and (group in CAUSAL_ONLY or False in causal)
              and any(o.get("pad") == "left" for o in opts)
              and {"random", "shift"} <= {o.get("positions", ("index",))[0] for o in opts},
              "cases cover pre/post-LN, causal, left padding, randomized and shifted "
              "positions: " + group)
    for name in ("fire_threshold_pre", "fire_threshold_randomized_post_causal"):
        probe = {}
        cfg, opts = new[name]
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        forward(params, cfg, tk, ps, km, probe=probe)
        check(all(probe["fire_beyond_L"]) and all(probe["fire_within_L"]),
              "fire: real positions both beyond and within L, every layer: " + name)
    for name, (cfg, opts) in new.items():
        if cfg["positional"]["type"] != "cope":
            continue
        probe = {}
        params, (tk, ps, km, _) = build_case(name, cfg, opts)
        forward(params, cfg, tk, ps, km, probe=probe)
        clamped = max(probe["cope_nu_max"]) > cfg["positional"]["max_position"] - 1
        check(clamped == ("clamp" in name), "cope: counts reach npos - 1 iff a clamp "
              "case (max %.2f): %s" % (max(probe["cope_nu_max"]), name))
    for name, (cfg, opts) in new.items():
        sc = cfg["positional"].get("scaling", {})
        if sc.get("type") != "dynamic_ntk":
            continue
        _, (tk, ps, km, _) = build_case(name, cfg, opts)
        n = ps.masked_fill(km == 0, -1).max(1).values + 1
        over = (n > sc["original_length"]).tolist()
        check(any(over) and (not all(over) or "leftpad" in name),
              "dynamic ntk: n %s against L %d: %s" % (n.tolist(), sc["original_length"], name))
    for name in ("kerple_log_3heads_pre", "kerple_power_3heads_pre"):
        params, _ = build_case(name, *new[name])
        r1, r2 = params["kerple.r1"], params["kerple.r2"]
        check(bool((r1[1] < 0.01) & (r1[0] > 0.01) & (r2[0] < 0.01) & (r2[1] > 0.01)
                   & (r2[1] < 2) & (r2[2] > 2)),
              "kerple: stored values below, inside and above the bounds: " + name)

    for name, (cfg, opts) in new.items():  # padded rows too: every output finite,
        tensors, _ = case_tensors(name, cfg, opts)  # every new parameter reached
        silent = [k for k in tensors if k.startswith("grad.") and any(
            part in k for part in (".xl_", ".fire.", "kerple.", ".cope_emb"))
            and float(tensors[k].abs().max()) == 0]
        check(all(bool(torch.isfinite(t.to(F64)).all()) for t in tensors.values())
              and not silent, "finite outputs, non-zero new gradients: " + name)

    # 20. KERPLE's gradient w.r.t. a stored value beyond a bound is the one at the
    #     projected value (not torch.clamp's 0)
    for name in ("kerple_log_3heads_pre", "kerple_power_3heads_pre"):
        cfg, opts = new[name]
        params, inputs = build_case(name, cfg, opts)
        hi = 2.0 if cfg["positional"]["kernel"] == "power" else None
        proj = dict(params, **{k: params[k].clamp(min=0.01, max=hi)
                               for k in ("kerple.r1", "kerple.r2")})
        x, y = compute(params, cfg, inputs), compute(proj, cfg, inputs)
        moved = (params["kerple.r2"] != proj["kerple.r2"])
        check(same(x, y) and bool((x[2]["kerple.r2"][moved] != 0).all())
              and bool((x[2]["kerple.r1"][0:2] != 0).all()),
              "kerple: stored and projected values give the same outputs and "
              "gradients, non-zero at the bounds: " + name)

    # 21. gradcheck of the newer parameters (and of q, k through the scheme)
    def gradcheck_of(name, keys, change=None):
        cfg, opts = cases[name]
        params, (tk, ps, km, tg) = build_case(name, cfg, opts)
        if change:
            params.update(change(params))

        def f(*leaves):
            return loss_fn(forward(dict(params, **dict(zip(keys, leaves))), cfg, tk, ps, km), tg)
        leaves = [params[k].clone().requires_grad_(True) for k in keys]
        check(torch.autograd.gradcheck(f, leaves, eps=1e-6, atol=1e-7, rtol=1e-5),
              "gradcheck %s: %s" % (name, ", ".join(keys)))
    qk = ["layers.0.attn.q.weight", "layers.0.attn.k.bias"]
    def names_with(name, part):
        return [k for k in sorted(build_case(name, *cases[name])[0]) if part in k]
    gradcheck_of("xl_relative_pre", names_with("xl_relative_pre", ".xl_") + qk)
    for name in ("fire_threshold_pre", "fire_3heads_pre"):
        gradcheck_of(name, names_with(name, ".fire."))
    for name in ("kerple_log_3heads_pre", "kerple_power_3heads_pre"):
        # interior values: there the contract's derivative is the true one
        gradcheck_of(name, ["kerple.r1", "kerple.r2"] + qk, lambda p: {
            k: p[k].clamp(min=0.05, max=1.9) for k in ("kerple.r1", "kerple.r2")})
    for name in ("cope_clamp_causal_pre", "cope_causal_pre"):
        gradcheck_of(name, ["layers.0.attn.cope_emb", "layers.1.attn.cope_emb"] + qk)
    gradcheck_of("xpos_causal_pre", qk + ["layers.0.attn.q.bias", "layers.0.attn.k.weight"])
    gradcheck_of("sandwich_3heads_pre", qk)
    gradcheck_of("alibi_deepmind_3heads_pre", qk)
    for name in ("rotary_yarn_pre", "rotary_dynamic_ntk_pre", "rotary_fraction_post_causal"):
        gradcheck_of(name, qk)

    print("%d failure(s)" % len(failures))
    return not failures


def select_cases(only):
    """The cases --only names (see the module docstring); None: the established."""
    established, groups = established_cases(), new_cases()
    everything = case_list()
    if only is None:
        return established
    chosen = set()
    for token in only.split(","):
        token = token.strip()
        if token == "new":
            chosen |= {n for grp in groups.values() for n in grp}
        elif token == "established":
            chosen |= set(established)
        elif token in groups:
            chosen |= set(groups[token])
        elif token in everything:
            chosen.add(token)
        else:
            sys.exit("--only: no case or group named %r (groups: new, established, %s)"
                     % (token, ", ".join(groups)))
    return {n: v for n, v in everything.items() if n in chosen}  # case-list order


# The newer groups that are options of a scheme pelab already has, by the key that brings them.
OPTION_GROUPS = {"alibi_deepmind": ("alibi", "bidirectional"), "rotary_options": ("rotary", "scaling")}


def registered_cases(pelab):
    """The cases of every scheme and option pelab's registry holds (`pelab schemes --json`),
    after checking that each has a reference here that reads its facts alike."""
    table = json.loads(subprocess.run([pelab, "schemes", "--json"], check=True,
                                      capture_output=True, text=True).stdout)
    for s in table:
        name = s["name"]
        if name not in SCHEMES + NEW_SCHEMES:
            sys.exit("pelab registers '%s', which has no float64 reference here: write it "
                     "from docs/model.md (CONTRIBUTING.md, Add a positional scheme)" % name)
        if (s["acts"] == "input") != (name in INPUT_SIDE):
            sys.exit("'%s': pelab says it acts on %s; INPUT_SIDE says otherwise" % (name, s["acts"]))
        if s["causal_only"] != (name in CAUSAL_ONLY):
            sys.exit("'%s': pelab and CAUSAL_ONLY disagree on causal only" % name)
    keys = {s["name"]: s["keys"] for s in table}
    cases = established_cases()
    for group, members in new_cases().items():
        scheme, key = OPTION_GROUPS.get(group, (group, None))
        # A nested mapping's keys are registered as "scaling.type", "scaling.factor", ...
        if scheme in keys and (key is None or any(k == key or k.startswith(key + ".")
                                                  for k in keys[scheme])):
            cases.update(members)
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="tests/fixtures/model")
    ap.add_argument("--only", help="comma-separated cases or groups, e.g. new or "
                    "fire,rotary_options (default: the established cases)")
    ap.add_argument("--list", action="store_true", help="print the case names only")
    ap.add_argument("--pelab", help="a pelab binary: write the cases of the schemes it registers")
    ap.add_argument("--selftest", action="store_true")
    args = ap.parse_args()
    if args.selftest:
        sys.exit(0 if selftest() else 1)
    cases = select_cases(args.only)
    if args.pelab:  # the registry's facts are checked with --only too
        registered = registered_cases(args.pelab)
        missing = [n for n in cases if n not in registered]
        if args.only is None:
            cases = registered
        elif missing:
            sys.exit("--only: %s: pelab does not register the scheme or option of %s"
                     % (args.pelab, ", ".join(missing)))
    if args.list:
        print("\n".join(cases))
        return
    torch.set_num_threads(1)  # fixed reduction order, for byte-identical output
    os.makedirs(args.out, exist_ok=True)
    for name, (cfg, opts) in cases.items():
        tensors, meta = case_tensors(name, cfg, opts)
        path = os.path.join(args.out, name + ".safetensors")
        with open(path, "wb") as f:
            f.write(safetensors_bytes(tensors, meta))
        print("%-30s loss %.6f  %d bytes" % (name, float(tensors["output.loss"]),
                                             os.path.getsize(path)))


if __name__ == "__main__":
    main()
