#!/usr/bin/env bash
# Smoke test of the local single-node Slurm (tools/slurm_local.sh, docs/cluster.md): a job
# array runs two tasks at a time and all of them finish, a dependent job waits for the whole
# array, and scancel delivers SIGTERM to a running job. Every wait is bounded.
# The last line is "N passed, N failed" (exit 0 when none failed, else 1), or
# "SKIPPED: <reason>" with exit 77 when Slurm's daemons cannot run on this machine.
# A cluster this test started is stopped again at the end; one already running is left so.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

readonly SKIPPED=77
readonly WAIT=${PELAB_SLURM_TEST_TIMEOUT:-90} # seconds, for each wait below
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

job_listed() { [ -n "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }
job_gone() { ! job_listed "$1"; }
job_state() { squeue -h -j "$1" -o %T 2>/dev/null | head -n1; }
job_reason() { squeue -h -j "$1" -o %r 2>/dev/null | head -n1; }
# True once the scheduler has given pending job ID a reason, or the job has left the queue.
reason_known() { [ "$(job_reason "$1")" != None ] || job_gone "$1"; }
file_has() { grep -q "$2" "$1" 2>/dev/null; }

# FILE: the largest number of intervals ("ID START END" lines) that overlap at one moment.
max_overlap() {
  awk '{ start[NR] = $2; end[NR] = $3 }
       END { best = 0
             for (i = 1; i <= NR; i++) { n = 0
               for (j = 1; j <= NR; j++) if (start[j] <= start[i] && start[i] < end[j]) n++
               if (n > best) best = n }
             print best }' "$1"
}

# sbatch ARGS...: prints the job id, and notes it so that the jobs are cancelled at exit.
submit() {
  local id
  id=$(sbatch --parsable --time=2 --chdir="$work" "$@") || return 1
  echo "$id" >>"$work/submitted"
  echo "$id"
}

was_running=no
tools/slurm_local.sh status >/dev/null 2>&1 && was_running=yes
start_output=$(tools/slurm_local.sh start 2>&1)
start_status=$?
if [ $start_status -eq "$SKIPPED" ]; then
  echo "$start_output"
  echo "SKIPPED: ${start_output##*cannot run Slurm here: }"
  exit "$SKIPPED"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/pelab-slurm-smoke.XXXXXX")
cleanup() {
  if [ -s "$work/submitted" ]; then xargs scancel <"$work/submitted" 2>/dev/null; fi
  if [ $was_running = no ]; then tools/slurm_local.sh stop >/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
if [ $start_status -ne 0 ]; then
  echo "$start_output"
  fail "the cluster starts"
  echo "$passed passed, $failed failed"
  exit 1
fi
pass "the cluster starts (${start_output##*slurm_local: })"
eval "$(tools/slurm_local.sh env)"

# Each task records "ID START END" (seconds since the epoch) when it ends.
cat >"$work/task.sh" <<'EOF'
#!/bin/sh
start=$(date +%s.%N)
sleep 4
echo "$SLURM_ARRAY_TASK_ID $start $(date +%s.%N)" >"record-$SLURM_ARRAY_TASK_ID"
EOF
cat >"$work/after.sh" <<'EOF'
#!/bin/sh
date +%s.%N >after-array
EOF
cat >"$work/trap.sh" <<'EOF'
#!/bin/bash
trap 'echo TERM >signal; exit 143' TERM
echo running >signal
sleep 60 &
wait
EOF

array=$(submit --array=0-3%2 --cpus-per-task=1 -o 'array-%a.out' "$work/task.sh") &&
  after=$(submit --dependency="afterany:$array" -o after.out "$work/after.sh")
if [ -z "${after:-}" ]; then
  fail "sbatch accepts the array and the dependent job"
else
  wait_for "a reason for job $after" reason_known "$after"
  pending_reason=$(job_reason "$after")
  if [ "$pending_reason" = Dependency ]; then
    pass "the dependent job waits for the array (reason Dependency)"
  else
    fail "the dependent job waits for the array: reason '$pending_reason', want Dependency"
  fi

  wait_for "array $array to finish" job_gone "$array"
  cat "$work"/record-* >"$work/records" 2>/dev/null
  ids=$(cut -d' ' -f1 "$work/records" | sort | tr '\n' ' ')
  if [ "$ids" = "0 1 2 3 " ]; then
    pass "all four array tasks ran to the end"
  else
    fail "all four array tasks ran to the end: finished '$ids', want '0 1 2 3 '"
  fi
  overlap=$(max_overlap "$work/records")
  if [ "$overlap" = 2 ]; then
    pass "--array=0-3%2 runs exactly two tasks at a time"
  else
    fail "--array=0-3%2 runs exactly two tasks at a time: at most $overlap did (the node has $(sinfo -h -o %c) CPUs)"
  fi

  wait_for "dependent job $after to finish" file_has "$work/after-array" .
  last_end=$(sort -k3 -g "$work/records" | tail -n1 | cut -d' ' -f3)
  if [ -s "$work/after-array" ] &&
    awk -v a="$(cat "$work/after-array")" -v e="${last_end:-inf}" 'BEGIN { exit !(a >= e) }'; then
    pass "the afterany job runs after the last array task ended"
  else
    fail "the afterany job runs after the last array task ended (ran at '$(cat "$work/after-array" 2>/dev/null)', last task ended at '$last_end')"
  fi
fi

# scancel sends SIGTERM to the batch script itself (a trainer run by it saves on SIGTERM).
victim=$(submit -o trap.out "$work/trap.sh")
if [ -n "$victim" ] && wait_for "job $victim to run" file_has "$work/signal" running; then
  scancel "$victim"
  if wait_for "job $victim to get SIGTERM" file_has "$work/signal" TERM &&
    wait_for "job $victim to end" job_gone "$victim"; then
    pass "scancel delivers SIGTERM to the running batch script"
  else
    fail "scancel delivers SIGTERM to the running batch script (state '$(job_state "$victim")')"
  fi
else
  fail "a job to cancel starts running"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
