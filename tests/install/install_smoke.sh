#!/usr/bin/env bash
# `cmake --install BUILD_DIR --prefix P` into a temporary prefix: P holds bin/pelab, the shipped
# configs (share/pelab/configs) and the docs (share/doc/pelab), and the installed pelab, run
# from a directory of its own, resolves a config that names shipped groups from P's configs
# (print-config says which file) and trains it.
#
#   tests/install/install_smoke.sh BUILD_DIR
#
# Exit 0 when everything holds; otherwise the first failure is printed and the exit code is 1.
set -euo pipefail
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 BUILD_DIR"
  exit 2
fi
build=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
fail() {
  echo "FAIL: $*"
  exit 1
}

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || fail "cmake --install: $(tail -3 "$work/install.log")"
[ -x "$prefix/bin/pelab" ] || fail "no $prefix/bin/pelab"
[ -f "$prefix/share/pelab/configs/positional/rotary.yaml" ] || fail "no shipped configs"
[ -f "$prefix/share/pelab/configs/default.yaml" ] || fail "no configs/default.yaml"
[ -f "$prefix/share/doc/pelab/README.md" ] || fail "no README.md in share/doc/pelab"
[ -f "$prefix/share/doc/pelab/errors.md" ] || fail "no docs in share/doc/pelab"

mkdir "$work/elsewhere"
cd "$work/elsewhere"
cat >away.yaml <<'YAML'
name: away
model:
  d_model: 16
  heads: 2
  layers: 1
positional: rotary
task:
  name: shift
  max_length: 8
training:
  steps: 2
  batch_size: 4
  warmup: 1
evaluation:
  lengths: [4]
  examples: 4
YAML
printed=$("$prefix/bin/pelab" print-config away.yaml) || fail "print-config: $printed"
first=$(head -1 <<<"$printed")
[ "$first" = "# positional: $prefix/share/pelab/configs/positional/rotary.yaml" ] ||
  fail "print-config's first line is '$first'"
grep -q "type: rotary" <<<"$printed" || fail "print-config lacks type: rotary"
trained=$("$prefix/bin/pelab" train away.yaml --out run --no-progress 2>&1) || fail "train: $trained"
[ -f run/eval.csv ] && [ -f run/summary.json ] || fail "train wrote no eval.csv or summary.json"
echo "OK: installed into a temporary prefix; print-config and train ran from elsewhere"
