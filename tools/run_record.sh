#!/usr/bin/env bash
# The committed record of finished runs: work of many sittings (a suite's baseline, the
# reproductions) continues from what earlier sittings finished instead of starting over.
# tools/suite_runs.sh and studies/tools/claim_runs.sh name the directories; this copies.
#
#   tools/run_record.sh save RUNS RECORD [DIR ...]  for every completed run under RUNS (or
#       under RUNS/DIR for each DIR given), copies its files to the same place under RECORD
#   tools/run_record.sh restore RECORD RUNS         copies every recorded run back to the same
#       place under RUNS, unless RUNS already has that run's directory (finished or not)
#
# A run is a directory with a summary.json; a completed one says "status": "completed". The
# files saved are config.yaml, summary.json, environment.json and eval.csv (never a checkpoint
# or a log); PELAB_RECORD_FILES (space-separated) replaces that list. Each environment.json names
# the commit and CPU that trained its run.
set -euo pipefail
read -r -a FILES <<<"${PELAB_RECORD_FILES:-config.yaml summary.json environment.json eval.csv}"

usage() {
  echo "usage: tools/run_record.sh save RUNS RECORD [DIR ...] | restore RECORD RUNS" >&2
  exit 2
}

save() {
  local from=$1 to=$2 saved=0
  shift 2
  local dirs=("$@")
  [ ${#dirs[@]} -gt 0 ] || dirs=(.)
  for dir in "${dirs[@]}"; do
    [ -d "$from/$dir" ] || continue
    while IFS= read -r summary; do
      grep -q '"status": "completed"' "$summary" || continue
      local run rel
      run=$(dirname "$summary")
      rel=${run#"$from"/}
      rel=${rel#./}
      mkdir -p "$to/$rel"
      for f in "${FILES[@]}"; do
        if [ -f "$run/$f" ]; then cp "$run/$f" "$to/$rel/$f"; fi
      done
      saved=$((saved + 1))
    done < <(find "$from/$dir" -name summary.json | sort)
  done
  echo "saved $saved finished runs to $to"
}

restore() {
  local from=$1 to=$2 restored=0 kept=0
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
  echo "restored $restored finished runs into $to ($kept already there, left as they are)"
}

[ $# -ge 3 ] || usage
case "$1" in
  save) shift && save "$@" ;;
  restore) [ $# -eq 3 ] || usage && restore "$2" "$3" ;;
  *) usage ;;
esac
