#!/usr/bin/env python3
"""Checks pelab's layering: no file depends on a layer above its own.

The layers, lowest first, are the folders of the framework (src/ and include/pelab/), then
those of the studies built on it (studies/src/ and studies/include/pelab/); CONTRIBUTING.md
draws them. A file's layer is the folder it lives in. A file depends on a layer when

- it includes a header of that layer: the include is resolved to the file it names (beside
  the file, then under include/, studies/include/, src/, studies/src/), so "claims/claim.h"
  and "pelab/nn/encoder.h" each count where they really live; or
- it declares a function that a file of that layer defines: a declaration stands for an
  include the include check cannot see ("the linker will find it"), so it counts as one.

Prints every upward dependency as FILE:LINE: LAYER includes HEADER (LAYER) or FILE:LINE:
LAYER declares NAME, defined in FILE (LAYER), and exits 1 if there is any.

    tools/check_layers.py [ROOT]

Standard library only, so CI can run it anywhere.
"""
import os
import re
import sys

FRAMEWORK = ["core", "tensor", "autograd", "backend", "ops", "io", "data", "nn", "positional",
             "train", "config", "run", "sweep", "report", "suite", "cli"]
STUDIES = ["analysis", "bench", "claims", "cli"]
# (tree, folder) → rank; the studies' layers all sit above the framework's.
RANK = {("framework", name): i for i, name in enumerate(FRAMEWORK)}
RANK.update({("studies", name): len(FRAMEWORK) + i for i, name in enumerate(STUDIES)})
TREES = [("framework", "src"), ("framework", os.path.join("include", "pelab")),
         ("studies", os.path.join("studies", "src")),
         ("studies", os.path.join("studies", "include", "pelab"))]
INCLUDE_ROOTS = ["include", os.path.join("studies", "include"), "src",
                 os.path.join("studies", "src")]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# The start of a function's signature at namespace scope: a column-0 line with a return type
# and a name, "std::string join(" or "SchemeInfo pelab::rotary_scheme(". A member defined out
# of its class ("Tensor ParameterStore::add(") is no namespace-scope function: class names are
# CamelCase, namespaces lower case.
SIGNATURE = re.compile(r"^(?!return\b|using\b|typedef\b|friend\b|static_assert\b|#)"
                       r"[A-Za-z_][\w:<>,\s\*&]*?[\s\*&]((?:[a-z_]\w*::)*)([A-Za-z_]\w*)\(")
def label(key):
    tree, name = key
    return name if tree == "framework" else f"studies/{name}"


def layer_of(path):
    """(tree, folder) of a file under one of the layered trees, else None."""
    parts = path.split(os.sep)
    for tree, root in TREES:
        root_parts = root.split(os.sep)
        if parts[:len(root_parts)] == root_parts and len(parts) > len(root_parts) + 1:
            return (tree, parts[len(root_parts)])
    return None


def resolve_include(including_file, name):
    """The repository path of the file an include names, or None (a system or test header)."""
    candidates = [os.path.join(os.path.dirname(including_file), name)]
    candidates += [os.path.join(root, name) for root in INCLUDE_ROOTS]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return os.path.normpath(candidate)
    return None


def layered_files():
    for _, root in TREES:
        for folder, _, files in os.walk(root):
            for name in sorted(files):
                if name.endswith((".h", ".cpp")):
                    yield os.path.join(folder, name)


def parameter_types(text):
    """The parameters' types of a signature's "(...)", names and defaults left out, so that a
    declaration and its definition compare equal: "(const Tensor& a, int b = 0)" → "constTensor&,int"."""
    depth, part, parts = 0, "", []
    for ch in text:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += ch
    parts.append(part)
    types = []
    for p in parts:
        p = re.sub(r"/\*.*?\*/", "", p.split("=")[0]).strip()
        named = re.match(r"^(.*[\w>\*&])\s*\b([a-z_]\w*)$", p)
        # "const Tensor& a" names its parameter; "int64_t" and "const int" do not.
        if named and re.sub(r"\b(const|volatile|unsigned|signed)\b", "", named.group(1)).strip():
            p = named.group(1)
        types.append(re.sub(r"\s+", "", p))
    return ",".join(t for t in types if t and t != "void")


def signatures(path):
    """(line, name, parameter types, ends with ';') of every namespace-scope signature."""
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    found = []
    for i, line in enumerate(lines):
        m = SIGNATURE.match(line)
        if not m or (m.group(1) and m.group(1)[0].isupper()):
            continue
        text, j = line[m.end() - 1:], i
        while text.count("(") > text.count(")") and j + 1 < len(lines):
            j += 1
            text += lines[j]
        close, depth = None, 0
        for k, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                close = k
                break
        if close is None:
            continue
        rest = text[close + 1:].strip()
        declared = rest.startswith(";") or re.match(r"^(const\s*)?(noexcept\s*)?;", rest)
        found.append((i + 1, m.group(2), parameter_types(text[1:close]), bool(declared)))
    return found


def definitions(files):
    """(name, parameter types) → the (layer, file) of each function defined so."""
    defined = {}
    for path in files:
        for _, name, types, declared in signatures(path):
            if not declared:
                defined.setdefault((name, types), set()).add((layer_of(path), path))
    return defined


def upward(own, other):
    return other is not None and other in RANK and RANK[other] > RANK[own]


def check_file(path, defined):
    """The file's upward dependencies, as printable lines."""
    own = layer_of(path)
    if own not in RANK:
        return [f"{path}: folder '{own[1]}' is not a known layer (tools/check_layers.py)"]
    problems = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            header = resolve_include(path, m.group(1))
            if header and upward(own, layer_of(header)):
                problems.append(f"{path}:{number}: {label(own)} includes {m.group(1)} "
                                f"({label(layer_of(header))})")
    for number, name, types, declared in signatures(path):
        if not declared:
            continue
        for layer, where in sorted(defined.get((name, types), ())):
            if upward(own, layer):
                problems.append(f"{path}:{number}: {label(own)} declares {name}, "
                                f"defined in {where} ({label(layer)})")
    return problems


def main():
    os.chdir(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = list(layered_files())
    defined = definitions(files)
    problems = [p for path in files for p in check_file(path, defined)]
    for p in problems:
        print(p)
    print(f"layers: {len(problems)} upward dependenc{'y' if len(problems) == 1 else 'ies'}"
          if problems else "layers: no upward dependency")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
