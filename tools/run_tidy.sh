#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: bugprone-*, performance-*) on the C++ files under src/ and
# studies/src/ that changed since a base commit, with the compile commands of a build
# directory; any warning fails. The base is .ci/tidy-base unless given: the last commit whose
# whole tree was checked.
# Move it forward (to the commit before your change) once the files you changed are clean.
#   tools/run_tidy.sh [BASE] [FILE ...]      (FILE ...: check exactly these)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${PELAB_BUILD_DIR:-build}
[ -f "$BUILD_DIR/compile_commands.json" ] || { echo "run_tidy: no $BUILD_DIR/compile_commands.json (build first)"; exit 2; }
command -v clang-tidy >/dev/null || {
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-tidy >/dev/null
}
base=${1:-$(cat .ci/tidy-base)}
shift || true
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git diff --name-only --diff-filter=AMR "$base" -- 'src/*.cpp' 'studies/src/*.cpp' | sort)
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "tidy: no C++ file under src/ or studies/src/ changed since ${base:0:12}"
  exit 0
fi
echo "tidy: ${#files[@]} file(s) changed since ${base:0:12}"
# The build's compile commands without its precompiled headers: they are GCC's, and clang
# cannot read them.
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - "$BUILD_DIR/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, re, sys
entries = json.load(open(sys.argv[1]))
# A file built in a unity unit (CMake's unity build: CMakeLists.txt) has no entry of its own,
# only its unit has: each file the unit includes gets the unit's command.
for e in list(entries):
    if re.search(r"/Unity/unity_\d+_cxx\.cxx$", e["file"]):
        for source in re.findall(r'^#include "(.+\.cpp)"$', open(e["file"]).read(), re.M):
            entries.append(dict(e, file=source, command=e["command"].replace(e["file"], source)))
for e in entries:
    e["command"] = re.sub(r" -include \S*cmake_pch\.hxx| -Winvalid-pch", "", e["command"])
json.dump(entries, open(sys.argv[2], "w"))
PY
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 2 clang-tidy -p "$db" --quiet 2>/dev/null
echo "tidy: clean"
