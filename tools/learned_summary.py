#!/usr/bin/python3
"""One sentence for docs/tasks.md from a sweep's compare.json: which schemes learned the task in
distribution, by compare's own rule (the run met its training.stop_when criterion), and each
scheme's extrapolation only where every run learned. Extrapolation means something only there.

    tools/learned_summary.py runs/tasks/copy/compare.json
    tools/learned_summary.py --count runs/tasks/copy/compare.json   # schemes that learned it
    tools/learned_summary.py --best runs/tasks/copy/compare.json    # best in distribution
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def learned_schemes(comparison):
    """How many schemes learned the task: every one of their runs met the criterion."""
    return sum(1 for g in comparison["groups"] if g["learned_runs"] == len(g["runs"]))


def best_in_distribution(comparison):
    """The label of the group with the best in-distribution mean (the first of equals, in the
    sweep's order): the scheme most likely to learn a task no scheme learned."""
    best = None
    for group in comparison["groups"]:
        if best is None or group["in_distribution"]["mean"] > best["in_distribution"]["mean"]:
            best = group
    return best["label"]


def main(path):
    comparison = load(path)
    learned, partly, not_learned = [], [], []
    best = None
    for group in comparison["groups"]:
        runs = len(group["runs"])
        score = group["in_distribution"]["mean"]
        if best is None or score > best[1]:
            best = (group["label"], score)
        if group["learned_runs"] == runs:
            learned.append(f"`{group['label']}`")
        elif group["learned_runs"] > 0:
            partly.append(f"`{group['label']}` ({group['learned_runs']} of {runs})")
        else:
            not_learned.append(f"`{group['label']}` {score:.2f}")
    if not learned and not partly:
        print(f"**Not learned at these settings:** no run met the criterion; the best in "
              f"distribution, `{best[0]}`, reaches {best[1]:.2f}, so the extrapolation columns "
              f"say nothing about position here.")
        return
    parts = []
    if learned:
        parts.append(f"every run learned the task in distribution for {', '.join(learned)}")
    if partly:
        parts.append(f"some runs for {', '.join(partly)}")
    if not_learned:
        parts.append(f"no run for {', '.join(not_learned)} (in-distribution mean), whose "
                     f"extrapolation columns therefore say nothing")
    text = "; ".join(parts)
    print(text[0].upper() + text[1:] + ".")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--count":
        print(learned_schemes(load(sys.argv[2])))
    elif len(sys.argv) == 3 and sys.argv[1] == "--best":
        print(best_in_distribution(load(sys.argv[2])))
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit("usage: tools/learned_summary.py [--count | --best] COMPARE_JSON")
