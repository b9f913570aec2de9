#!/usr/bin/env python3
"""Checks pelab's layering: no file includes a header of a higher layer.

The layers, lowest first, are the folders under src/ and include/pelab/ (CONTRIBUTING.md).
A file's layer is its folder; an include's layer is the folder of the header it names
("pelab/nn/encoder.h" -> nn; "claims/claim.h" -> claims). Prints every upward include as
FILE:LINE: LAYER includes HEADER (LAYER) and exits 1 if there is any.
"""
import os
import re
import sys

LAYERS = ["core", "tensor", "autograd", "backend", "ops", "io", "data", "nn", "positional",
          "train", "config", "experiment", "analysis", "bench", "claims", "cli"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"(?:pelab/)?([a-z_]+)/[^"]+"')


def layer_of(path):
    parts = path.split(os.sep)
    for root in (["src"], ["include", "pelab"]):
        if parts[:len(root)] == root and len(parts) > len(root) + 1:
            return parts[len(root)]
    return None


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    os.chdir(top)
    bad = 0
    for root in ("src", os.path.join("include", "pelab")):
        for folder, _, files in os.walk(root):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(folder, name)
                own = layer_of(path)
                if own not in RANK:
                    print(f"{path}: folder '{own}' is not a known layer (tools/check_layers.py)")
                    bad += 1
                    continue
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in RANK and RANK[m.group(1)] > RANK[own]:
                            header = line.split('"')[1]
                            print(f"{path}:{number}: {own} includes {header} ({m.group(1)})")
                            bad += 1
    print(f"layers: {bad} upward include(s)" if bad else "layers: no upward include")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
