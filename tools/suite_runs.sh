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

usage() {
  echo "usage: tools/suite_runs.sh save|restore NAME (a suite: chomsky, lm, pelab)" >&2
  exit 2
}

[ $# -eq 2 ] || usage
[[ $2 =~ ^[A-Za-z0-9_-]+$ ]] || usage
case "$1" in
  save)
    if [ ! -d "$OUT/$2" ]; then
      echo "no runs under $OUT/$2"
      exit 0
    fi
    PELAB_RECORD_FILES="config.yaml summary.json environment.json eval.csv" \
      tools/run_record.sh save "$OUT/$2" "$RECORD/$2/runs"
    ;;
  restore) tools/run_record.sh restore "$RECORD/$2/runs" "$OUT/$2" ;;
  *) usage ;;
esac
