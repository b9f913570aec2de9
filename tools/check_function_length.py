#!/usr/bin/python3
"""Lists the functions in src/ over 120 lines; exits 1 if any is not on the allow-list.

A function's length runs from the first line of its declaration (after the previous
statement, brace or comment) to its closing brace, so a signature over several lines counts.
Lambdas and local classes count as part of the function that holds them.

The reader is a brace counter, not a C++ parser: it drops comments, string and character
literals (raw strings too) and preprocessor lines, then takes every top-level block whose
header holds a '(' and is not a namespace, class, struct, union, enum or an initializer
('= {...}') as a function body.

Usage: tools/check_function_length.py [--limit N] [--allow FILE] [--all] [paths...]
  paths    files or directories to check (default: the repository's src/ and studies/src/)
  --allow  the allow-list (default: tools/function_length_allow.txt next to this script);
           one path or path:function per line, '#' starts a comment
  --all    list every function over the limit, allowed ones too, longest first
Standard library only, so CI can run it anywhere.
"""

import argparse
import os
import re
import sys

LIMIT = 120
SOURCE_SUFFIXES = (".cpp", ".cc", ".h", ".hpp")
EXTERN_BLOCK = re.compile(r'^extern\s*""$')  # extern "C" { (the literal is blanked)
# A constructor's init list up to a member's brace initializer: "Foo(int x) : a_(x), b_".
INIT_LIST_MEMBER = re.compile(r"\)\s*(noexcept\s*)?:(?!:)[^;{}]*[\w>]$")
SCOPE_HEADER = re.compile(
    r"^(template\s*<.*>\s*)?(inline\s+)?(namespace|class|struct|union|enum)\b|^extern\s*$", re.S
)


def strip_code(text):
    """The text with comments, literals and preprocessor lines blanked; newlines kept."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        line_start = False
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif c == '"' and i > 0 and text[i - 1] == "R" and not _ident_char_before(text, i - 1):
            close = text.find("(", i)
            delim = ")" + text[i + 1 : close] + '"'
            end = text.find(delim, close)
            end = n if end < 0 else end + len(delim)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"' or (c == "'" and not _digit_separator(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_char_before(text, i):
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def _digit_separator(text, i):
    # 1'000'000: a quote between two digits (hex digits after the first).
    return i > 0 and text[i - 1].isalnum() and i + 1 < len(text) and text[i + 1].isalnum() and (
        re.search(r"(?<![\w.])[0-9][\w']*$", text[max(0, i - 40) : i]) is not None
    )


def function_name(header):
    """The name before the parameter list: 'run_sweep', 'SweepResult::tally', ..."""
    depth = 0
    for k, ch in enumerate(header):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            if re.search(r"\boperator\s*$", header[:k]):  # operator()(...)
                return "operator()"
            m = re.search(r"((?:[\w~]+\s*::\s*)*(?:operator\s*\S+|[\w~]+))\s*$", header[:k])
            if m:
                return re.sub(r"\s+", "", m.group(1))
            return "(lambda)" if header[:k].rstrip().endswith("]") else "?"
    return "?"


def functions(path):
    """(first line, last line, name) of every function body in the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code = strip_code(f.read())
    found = []
    stack = []  # per open brace: 'scope', 'function' or 'other'
    header_start = 0  # where the text before the next '{' begins
    line = 1
    body_start = None  # (line of the header's first token, name) of the open function
    depth_in_function = 0
    init_depth = 0  # inside a member's brace initializer in a constructor's init list
    for i, ch in enumerate(code):
        if ch == "\n":
            line += 1
            continue
        if init_depth:  # Foo() : a_{x}, b_{y} {: skip the braces, the header goes on
            init_depth += {"{": 1, "}": -1}.get(ch, 0)
            continue
        if body_start is not None:  # inside a function: only count braces
            if ch == "{":
                depth_in_function += 1
            elif ch == "}":
                depth_in_function -= 1
                if depth_in_function == 0:
                    found.append((body_start[0], line, body_start[1]))
                    body_start = None
                    header_start = i + 1
            continue
        if ch in ";}":
            if ch == "}" and stack:
                stack.pop()
            header_start = i + 1
        elif ch == "{":
            header = code[header_start:i].strip()
            first = header_start + (len(code[header_start:i]) - len(code[header_start:i].lstrip()))
            if SCOPE_HEADER.search(header) or EXTERN_BLOCK.search(header):
                stack.append("scope")
            elif INIT_LIST_MEMBER.search(header):
                init_depth = 1
                continue
            elif "(" in header and not re.search(r"(=|,|\(|return|\[)\s*$", header):
                body_start = (code.count("\n", 0, first) + 1, function_name(header))
                depth_in_function = 1
            else:
                stack.append("other")
            header_start = i + 1
        elif ch == ":" and i + 1 < len(code) and code[i + 1] != ":" and code[i - 1] != ":":
            # 'public:' / 'private:' labels end a header too.
            if re.search(r"\b(public|private|protected)\s*$", code[header_start:i]):
                header_start = i + 1
    return found


def source_files(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(root, name)


def read_allow_list(path):
    allowed = set()
    if not os.path.exists(path):
        return allowed
    with open(path, encoding="utf-8") as f:
        for raw in f:
            entry = raw.split("#", 1)[0].strip()
            if entry:
                allowed.add(entry)
    return allowed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)  # paths are reported and allowed relative to it
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*",
                        default=[os.path.join(repo, "src"), os.path.join(repo, "studies", "src")])
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("--allow", default=os.path.join(here, "function_length_allow.txt"))
    parser.add_argument("--all", action="store_true")
    args = parser.parse_args()
    allowed = read_allow_list(args.allow)

    over = []
    for path in source_files(args.paths):
        rel = os.path.relpath(os.path.abspath(path), repo).replace(os.sep, "/")
        for first, last, name in functions(path):
            length = last - first + 1
            if length > args.limit:
                is_allowed = rel in allowed or f"{rel}:{name}" in allowed
                over.append((length, rel, first, name, is_allowed))
    failing = [o for o in over if not o[4]]
    shown = sorted(over, reverse=True) if args.all else sorted(failing, key=lambda o: o[1:3])
    for length, rel, first, name, is_allowed in shown:
        print(f"{rel}:{first}: {name}: {length} lines{' (allowed)' if is_allowed else ''}")
    if failing:
        print(f"{len(failing)} function(s) over {args.limit} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
