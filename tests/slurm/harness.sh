# The harness the Slurm integration tests share, sourced by each after setting
# HARNESS_NAME: the PELAB_BINARY argument, PASS/FAIL counting, bounded waits and squeue
# probes, then the local cluster started (or the test SKIPPED with exit 77 where Slurm's
# daemons cannot run), a work directory, and a cleanup that cancels the test's jobs, stops
# a cluster it started and keeps the work directory when something failed.
set -uo pipefail
readonly SKIPPED=77
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 PELAB_BINARY"
  exit 2
fi
pelab=$(realpath "$1")
cd "$(dirname "$0")/../.." || exit 1

readonly WAIT=${PELAB_SLURM_TEST_TIMEOUT:-120}
passed=0
failed=0
pass() {
  echo "PASS: $*"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}
check() { # DESCRIPTION COMMAND...
  local description=$1
  shift
  if "$@"; then pass "$description"; else fail "$description"; fi
}

# DESCRIPTION COMMAND...: polls COMMAND every half second until it succeeds; false after WAIT.
wait_for() {
  local description=$1 i
  shift
  for ((i = 0; i < WAIT * 2; i++)); do
    "$@" && return 0
    sleep 0.5
  done
  echo "timed out after ${WAIT}s waiting for $description"
  return 1
}
# COMMAND...: polls COMMAND every 0.1 s until it succeeds; false after WAIT.
wait_closely() {
  local i
  for ((i = 0; i < WAIT * 10; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}
# Gone: squeue lists nothing for it, or no longer knows it. A squeue that fails otherwise (a
# controller too busy to answer on a loaded machine) says nothing, so it is not taken as gone.
job_gone() {
  local out
  if out=$(squeue -h -j "$1" -o %i 2>&1); then [ -z "$out" ]; else [[ $out == *"Invalid job id"* ]]; fi
}
task_pending() { [ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = PENDING ]; }
file_has() { grep -q "$2" "$1" 2>/dev/null; }
# RUN_DIR: true once the run has logged a training step and not yet finished.
training_mid_run() { file_has "$1/metrics.jsonl" '"step"' && [ ! -e "$1/summary.json" ]; }

was_running=no
tools/slurm_local.sh status >/dev/null 2>&1 && was_running=yes
start_output=$(tools/slurm_local.sh start 2>&1)
start_status=$?
if [ $start_status -eq "$SKIPPED" ]; then
  echo "$start_output"
  echo "SKIPPED: ${start_output##*cannot run Slurm here: }"
  exit "$SKIPPED"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/pelab-slurm-${HARNESS_NAME}.XXXXXX")
cleanup() {
  local jobs
  mapfile -t jobs < <(grep -ho '"[a-z]*_job": "[0-9]*"' "$work/slurm/slurm/jobs.json" 2>/dev/null |
    grep -o '[0-9][0-9]*')
  if [ ${#jobs[@]} -gt 0 ]; then scancel "${jobs[@]}" 2>/dev/null; fi
  if [ $was_running = no ]; then tools/slurm_local.sh stop >/dev/null; fi
  if [ "$failed" -gt 0 ]; then echo "kept $work (logs, runs) to look at"; else rm -rf "$work"; fi
}
trap cleanup EXIT
if [ $start_status -ne 0 ]; then
  echo "$start_output"
  fail "the cluster starts"
  echo "$passed passed, $failed failed"
  exit 1
fi
eval "$(tools/slurm_local.sh env)"
