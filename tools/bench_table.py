#!/usr/bin/python3
"""Markdown tables of `pelab bench --json` results, one per CPU kind.

    tools/bench_table.py results.json [more.json ...]

Each file is one benchmark run; the files are grouped by the CPU they ran on (model name and
vector ISA, as pelab records them), and each group becomes a heading with the FMA peak and
GEMM backend, then one table of every row: config, scheme, threads, median ms per step,
tokens/s (padded and real), GFLOP/s, % of peak, peak RSS and, when the run was made with
--vs-torch, PyTorch's median and the ratio; below it, the thread scaling of runs made with
several --threads (median of the paired rounds, their range, the OpenMP wait policy).
docs/performance.md keeps these tables.
"""
import json
import sys
from collections import OrderedDict


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"bench_table: {path}: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        sys.exit(f"bench_table: {path}: not a `pelab bench --json` file (no 'rows' list)")
    return data


def table(runs):
    with_torch = any("torch" in row for run in runs for row in run["rows"])
    head = ["config", "scheme", "th", "ms/step", "tok/s", "real t/s", "GFLOP/s", "% peak", "RSS MB"]
    if with_torch:
        head += ["torch ms", "ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run in runs:
        for r in run["rows"]:
            cells = [r["config"], r["scheme"], str(r["threads"]), f'{r["ms_median"]:.2f}',
                     f'{r["tokens_per_s"]:.0f}', f'{r.get("real_tokens_per_s", 0):.0f}',
                     f'{r["gflops"]:.1f}', f'{r["pct_of_peak"]:.1f}', f'{r["peak_rss_mb"]:.0f}']
            if with_torch:
                t = r.get("torch")
                cells += [f'{t["ms_median"]:.2f}', f'{r["ratio_tokens_per_s"]:.2f}×'] if t else ["-", "-"]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


POLICIES = {"passive": "OMP_WAIT_POLICY=PASSIVE", "active": "OMP_WAIT_POLICY=ACTIVE",
            "default": "the OpenMP runtime's own wait policy, as pelab train"}


def scaling_lines(runs):
    lines = []
    for run in runs:
        for s in run.get("scaling", []):
            ratios = s["speedup_per_round"]
            spread = (f"median of {len(ratios)} paired rounds, {min(ratios):.2f}–{max(ratios):.2f}"
                      if len(ratios) > 1 else "one round")
            lines.append(f'- {s["config"]} {s["scheme"]}: {s["threads"]} threads = '
                         f'{s["speedup_median"]:.2f}× 1 thread ({spread}; '
                         f'{POLICIES.get(s.get("omp_wait"), s.get("omp_wait"))})')
    return lines


def main(paths):
    if not paths:
        sys.exit("usage: tools/bench_table.py FILE.json [FILE.json ...]")
    groups = OrderedDict()
    for path in paths:
        data = load(path)
        key = (data.get("cpu", "unknown CPU"), data.get("isa", "unknown ISA"))
        groups.setdefault(key, []).append(data)
    for (cpu, isa), runs in groups.items():
        peaks = sorted({f'{run["peak_gflops_per_thread"]:.1f}' for run in runs})
        gemms = sorted({run.get("gemm", "auto") for run in runs})
        print(f"#### {cpu}, {isa}\n")
        print(f"FMA peak {' / '.join(peaks)} GFLOP/s per thread; GEMM backend {', '.join(gemms)}.\n")
        print(table(runs))
        print()
        scaling = scaling_lines(runs)
        if scaling:
            print("\n".join(scaling))
            print()


if __name__ == "__main__":
    main(sys.argv[1:])
