#!/usr/bin/env python3
"""Compiles every test file as one unit (syntax only), so that two files' file-local names can
never clash, whichever files the unity build happens to put together (tests/CMakeLists.txt).

The build compiles the tests eight files to a unit; which files share a unit shifts as files
are added. This check puts them all in one, with the command of the build's own units
(compile_commands.json of BUILD_DIR, default build/), and fails on any error, naming it.
  tools/check_test_units.py [BUILD_DIR]
"""
import json
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build").resolve()
commands = build / "compile_commands.json"
if not commands.exists():
    sys.exit(f"check_test_units: no {commands} (build first)")
units = [e for e in json.loads(commands.read_text())
         if re.search(r"pelab_tests\.dir/Unity/unity_\d+_cxx\.cxx$", e["file"])]
if not units:
    sys.exit(f"check_test_units: {commands} has no unity units of pelab_tests")

includes = []
for unit in sorted(units, key=lambda e: int(re.search(r"unity_(\d+)_", e["file"])[1])):
    includes += [line for line in pathlib.Path(unit["file"]).read_text().splitlines()
                 if line.startswith("#include")]
args = shlex.split(units[0]["command"])
del args[args.index("-o"):args.index("-o") + 2]
del args[args.index("-c"):args.index("-c") + 2]
with tempfile.NamedTemporaryFile("w", suffix=".cxx") as one:
    one.write("\n".join(includes) + "\n")
    one.flush()
    run = subprocess.run(args + ["-fsyntax-only", one.name], cwd=units[0]["directory"],
                         capture_output=True, text=True)
if run.returncode != 0:
    errors = [line for line in run.stderr.splitlines() if "error" in line]
    print("\n".join(errors[:40]), file=sys.stderr)
    sys.exit(f"check_test_units: the {len(includes)} test files do not compile as one unit: "
             "a file-local name is defined in two files (move it to a shared test header or "
             "rename it)")
print(f"test units: the {len(includes)} test files compile as one unit")
