#!/usr/bin/env bash
# The committed record of the reproductions' finished runs (R1–R3), so that a full run of them,
# hours on 2 cores, continues from what earlier runs finished instead of starting over.
#
#   studies/tools/claim_runs.sh save     copies every completed run of a reproduction's
#       experiment (a sweep of a config under studies/configs/reproductions/) from
#       runs/claims/runs/ to studies/results/claims/runs/: its config.yaml, summary.json,
#       environment.json, eval.csv and per_position.csv (not its checkpoint nor its logs)
#   studies/tools/claim_runs.sh restore  copies them back into runs/claims/runs/ for each run
#       that has no directory there; `pelab reproduce` then skips them (a completed
#       summary.json is a finished run) and trains the rest
#
# A reproduction that reads a suite (R1, R2) trains its longer probes beside the suite's own
# runs, in runs/suites/NAME-stepsN/ (the suite's runs themselves are the suite's record,
# tools/suite_runs.sh). Those probes are the reproduction's: both commands save them to
# studies/results/claims/suites/NAME-stepsN/runs/ and restore them, as tools/suite_runs.sh
# keeps a suite's runs (the same files).
#
# The reproductions read only these files, never a checkpoint, so a restored run serves them
# as the run itself would. Each environment.json names the commit and CPU that trained it, and
# the report lists those commits. Set PELAB_CLAIMS_OUT (default runs/claims) and
# PELAB_CLAIM_RUNS (default studies/results/claims) to use other directories.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${PELAB_CLAIMS_OUT:-runs/claims}
RECORD=${PELAB_CLAIM_RUNS:-studies/results/claims}
SUITE_RUNS=${PELAB_SUITE_RUNS:-runs/suites}
RUN_FILES="config.yaml summary.json environment.json eval.csv per_position.csv"

usage() {
  echo "usage: studies/tools/claim_runs.sh save|restore" >&2
  exit 2
}

# The experiment directories under $1/runs whose sweep ran a reproduction's config.
reproduction_experiments() {
  local root=$1/runs
  [ -d "$root" ] || return 0
  for sweep in "$root"/*/sweep.json; do
    [ -f "$sweep" ] || continue
    if grep -q '"config": "[^"]*/configs/reproductions/[^"/]*\.yaml"' "$sweep"; then
      basename "$(dirname "$sweep")"
    fi
  done
}

# The probes' directories (NAME-stepsN) under $1.
probe_dirs() {
  local dir
  for dir in "$1"/*-steps[0-9]*/; do
    [ -d "$dir" ] && basename "$dir"
  done
  return 0
}

save() {
  local experiments probe
  mapfile -t experiments < <(reproduction_experiments "$OUT")
  if [ ${#experiments[@]} -eq 0 ]; then  # no DIR would save every run under $OUT/runs
    echo "saved 0 finished runs: no reproduction's experiment under $OUT/runs"
  else
    PELAB_RECORD_FILES=$RUN_FILES tools/run_record.sh save "$OUT/runs" "$RECORD/runs" \
      "${experiments[@]}"
  fi
  for probe in $(probe_dirs "$SUITE_RUNS"); do
    PELAB_SUITE_RUNS=$SUITE_RUNS PELAB_SUITE_RECORD=$RECORD/suites tools/suite_runs.sh save "$probe"
  done
}

restore() {
  local probe
  PELAB_RECORD_FILES=$RUN_FILES tools/run_record.sh restore "$RECORD/runs" "$OUT/runs"
  for probe in $(probe_dirs "$RECORD/suites"); do
    PELAB_SUITE_RUNS=$SUITE_RUNS PELAB_SUITE_RECORD=$RECORD/suites tools/suite_runs.sh restore "$probe"
  done
}

[ $# -eq 1 ] || usage
case "$1" in
  save) save ;;
  restore) restore ;;
  *) usage ;;
esac
