#!/usr/bin/env bash
# The committed record of a suite's finished runs, so that a suite's recorded baseline, many
# core-hours on 2 cores, is made over several sittings and continues from what earlier ones
# finished instead of starting over.
#
#   tools/suite_runs.sh save NAME     copies every completed run under runs/suites/NAME/ to
#       results/suites/NAME/runs/: its config.yaml, summary.json, environment.json and
#       eval.csv (not its checkpoint, logs or per-position file)
#   tools/suite_runs.sh restore NAME  copies them back into runs/suites/NAME/ for each run
#       that has no directory there; `pelab suite run NAME` (and `pelab reproduce`, whose R1
#       and R2 read the chomsky suite's runs) then skip them and train the rest
#
# The suite's table and the reproductions read only these files. Each environment.json names
# the commit and CPU that trained its run. PELAB_SUITE_RUNS (default runs/suites) and
# PELAB_SUITE_RECORD (default results/suites) choose other directories.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${PELAB_SUITE_RUNS:-runs/suites}
RECORD=${PELAB_SUITE_RECORD:-results/suites}
FILES=(config.yaml summary.json environment.json eval.csv)

usage() {
  echo "usage: tools/suite_runs.sh save|restore NAME (a suite: chomsky, lm, pelab)" >&2
  exit 2
}

save() {
  local from=$OUT/$1 to=$RECORD/$1/runs saved=0
  [ -d "$from" ] || {
    echo "no runs under $from"
    return 0
  }
  while IFS= read -r summary; do
    grep -q '"status": "completed"' "$summary" || continue
    local run rel
    run=$(dirname "$summary")
    rel=${run#"$from"/}
    mkdir -p "$to/$rel"
    for f in "${FILES[@]}"; do
      if [ -f "$run/$f" ]; then cp "$run/$f" "$to/$rel/$f"; fi
    done
    saved=$((saved + 1))
  done < <(find "$from" -name summary.json | sort)
  echo "saved $saved finished runs of suite $1 to $to"
}

restore() {
  local from=$RECORD/$1/runs to=$OUT/$1 restored=0 kept=0
  [ -d "$from" ] || {
    echo "no recorded runs under $from"
    return 0
  }
  while IFS= read -r summary; do
    local run rel
    run=$(dirname "$summary")
    rel=${run#"$from"/}
    if [ -e "$to/$rel" ]; then  # never over a run that is there, finished or not
      kept=$((kept + 1))
      continue
    fi
    mkdir -p "$to/$rel"
    cp "$run"/* "$to/$rel/"
    restored=$((restored + 1))
  done < <(find "$from" -name summary.json | sort)
  echo "restored $restored finished runs of suite $1 into $to ($kept already there, left as they are)"
}

[ $# -eq 2 ] || usage
[[ $2 =~ ^[A-Za-z0-9_-]+$ ]] || usage
case "$1" in
  save) save "$2" ;;
  restore) restore "$2" ;;
  *) usage ;;
esac
