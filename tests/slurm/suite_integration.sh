#!/usr/bin/env bash
# `pelab suite run --launcher slurm` against the real local Slurm (tools/slurm_local.sh,
# docs/cluster.md), as tests/slurm/sweep_integration.sh tests `pelab sweep`, whose launcher
# the suite uses. A tiny suite (one task, 2 schemes x 2 seeds) is trained once here and once
# as one job array; every run's files must equal the local ones byte for byte, and the report
# job must write the local table. Then one run is deleted and resubmitted, and its task
# requeued mid-run: it must save, resume when it starts again, and end identical.
# Every wait is bounded (PELAB_SLURM_TEST_TIMEOUT seconds each).
#
#   tests/slurm/suite_integration.sh PELAB_BINARY
#
# The last line is "N passed, N failed" (exit 0 when none failed, else 1), or
# "SKIPPED: <reason>" with exit 77 when Slurm's daemons cannot run on this machine. A cluster
# this test started is stopped again at the end; one already running is left so.
readonly HARNESS_NAME=suite
source "$(dirname "$0")/harness.sh"

mkdir -p "$work/configs/suites" "$work/configs/tasks"
cat >"$work/configs/tasks/shift.yaml" <<'EOF'
name: slurm-suite
seed: 0
model:
  d_model: 16
  heads: 2
  layers: 1
positional: rotary
task:
  name: shift
  shift: 1
  min_length: 1
  max_length: 8
EOF
# Enough steps that a one-thread run takes several seconds (the requeue must find it mid-run).
cat >"$work/configs/suites/tiny.yaml" <<'EOF'
suite: tiny
description: the Slurm test's suite
tasks:
  shift: ../tasks/shift.yaml
protocol:
  threads: 1
  training: {batch_size: 16, warmup: 10, log_every: 100, checkpoint_every: 1000}
budget:
  steps: 16000
  seeds: [0, 1]
  lrs: [0.001]
  training_lengths: [1, 8]
  evaluation_lengths: [4, 8, 16]
  examples: 32
schemes: [none, rotary]
cost:
  seconds_per_token: 1.0e-5
  at_length: 8
  measured: a guess
  step_time: {base: none, factors: {rotary: 1.5}, measured: a guess}
EOF
suite=$work/configs/suites/tiny.yaml
runs=("task=shift/scheme=none/training.lr=0.001/seed=0" "task=shift/scheme=none/training.lr=0.001/seed=1"
  "task=shift/scheme=rotary/training.lr=0.001/seed=0" "task=shift/scheme=rotary/training.lr=0.001/seed=1")
local_dir=$work/local
slurm_dir=$work/slurm
suite_cmd=("$pelab" suite run "$suite" --out "$slurm_dir" --launcher slurm --max-parallel 2
  --slurm-opt time=10)

# submit: runs the suite command; sets array and compare to the job ids it printed.
submit() {
  local out
  out=$("${suite_cmd[@]}" 2>"$work/submit.err")
  echo "$out"
  array=$(sed -n 's/^submitted array job \([0-9]*\) .*compare job \([0-9]*\) .*/\1/p' <<<"$out")
  compare=$(sed -n 's/^submitted array job \([0-9]*\) .*compare job \([0-9]*\) .*/\2/p' <<<"$out")
  [ -n "$array" ] && [ -n "$compare" ]
}
untimed() { sed 's/,"tokens_per_s":[-+.0-9e]*//' "$1"; }
same_run() { # INDEX: the Slurm run's results equal the local run's, byte for byte
  local r=${runs[$1]} f
  for f in checkpoint.safetensors eval.csv per_position.csv config.yaml summary.json; do
    cmp -s "$local_dir/$r/$f" "$slurm_dir/$r/$f" || {
      echo "  $r/$f differs"
      return 1
    }
  done
  cmp -s <(untimed "$local_dir/$r/metrics.jsonl") <(untimed "$slurm_dir/$r/metrics.jsonl") || {
    echo "  $r/metrics.jsonl differs (apart from its speed)"
    return 1
  }
}

echo "== the same suite here"
"$pelab" suite run "$suite" --out "$local_dir" --jobs 2 --no-progress --no-plots \
  >"$work/local.out" 2>&1 || {
  cat "$work/local.out"
  fail "the local suite completes"
}

echo "== as one Slurm job array"
submit
check "sbatch accepted the array and the report job" [ -n "$array" ]
check "the script runs the four runs two at a time" \
  file_has "$slurm_dir/slurm/sweep.sbatch" '^#SBATCH --array=0-3%2$'
check "each task plans the suite again and trains its index" \
  file_has "$slurm_dir/slurm/sweep.sbatch" "suite run $suite --out $slurm_dir --index"
check "the last job writes the suite's table" file_has "$slurm_dir/slurm/compare.sbatch" "suite report"
wait_for "array job $array to end" job_gone "$array"
wait_for "report job $compare to end" job_gone "$compare"
for i in 0 1 2 3; do check "run ${runs[$i]} equals the local run byte for byte" same_run "$i"; done
check "the report job wrote the local table" cmp -s "$local_dir/suite.csv" "$slurm_dir/suite.csv"

echo "== a task requeued mid-run saves, waits in the queue and resumes"
victim=${runs[3]}
rm -rf "${slurm_dir:?}/$victim"
submit
check "the resubmission holds only the deleted run" \
  file_has "$slurm_dir/slurm/sweep.sbatch" '^#SBATCH --array=3%2$'
if wait_closely training_mid_run "$slurm_dir/$victim"; then
  scontrol requeue "${array}_3"
  wait_for "the requeued run to save" file_has "$slurm_dir/$victim/status.json" '"interrupted"'
  wait_for "task ${array}_3 to be queued again" task_pending "${array}_3"
  # Instead of the 2 minutes' requeue delay; but not within the second of the requeue: Slurm
  # revokes the old instance's credential with a time in whole seconds, and a task started
  # again in that same second is killed as "Job credential revoked" and never resumes.
  sleep 2
  scontrol update JobId="${array}_3" StartTime=now
  wait_for "array job $array to end" job_gone "$array"
  wait_for "report job $compare to end" job_gone "$compare"
  check "the requeued task resumed the run" file_has "$slurm_dir/slurm/run-3.log" "^resume "
  check "the requeued run equals the local run byte for byte" same_run 3
else
  fail "run 3 was still running when it was to be requeued"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
