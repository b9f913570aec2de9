#!/usr/bin/env bash
# `pelab sweep --launcher slurm` against the real local Slurm (tools/slurm_local.sh,
# docs/cluster.md). A 2 schemes × 2 seeds sweep is trained once here and once as a job
# array; the runs' checkpoints, eval.csv, per_position.csv, config.yaml and
# metrics.jsonl (apart from its speed) and the compare job's compare.md must equal the local
# ones byte for byte. Then one run is deleted and resubmitted, and its task requeued mid-run:
# it must save, and resume when it starts again. Another run is deleted and resubmitted, its
# task cancelled mid-run (it saves), and the next submission must resume only that run. Both
# must again end identical to the local runs.
# Every wait is bounded (PELAB_SLURM_TEST_TIMEOUT seconds each).
#
#   tests/slurm/sweep_integration.sh PELAB_BINARY
#
# The last line is "N passed, N failed" (exit 0 when none failed, else 1), or
# "SKIPPED: <reason>" with exit 77 when Slurm's daemons cannot run on this machine. A cluster
# this test started is stopped again at the end; one already running is left so.
readonly HARNESS_NAME=sweep
source "$(dirname "$0")/harness.sh"

# A tiny model, but enough steps that a one-thread run takes several seconds (the cancel
# below must find it mid-run); periodic checkpoints as a real sweep would have.
cat >"$work/sweep.yaml" <<'EOF'
name: slurm-it
seed: 0
model:
  d_model: 16
  heads: 2
  layers: 1
task:
  name: shift
  shift: 1
  min_length: 1
  max_length: 8
training:
  steps: 16000
  batch_size: 16
  warmup: 10
  log_every: 100
  checkpoint_every: 1000
evaluation:
  lengths: [4, 8, 16]
  examples: 32
sweep:
  positional.type: [none, rotary]
  seed: [0, 1]
EOF
runs=("positional.type=none/seed=0" "positional.type=none/seed=1"
  "positional.type=rotary/seed=0" "positional.type=rotary/seed=1")
local_dir=$work/local
slurm_dir=$work/slurm
sweep_cmd=("$pelab" sweep "$work/sweep.yaml" --out "$slurm_dir" --threads 1 --launcher slurm
  --max-parallel 2 --slurm-opt time=10)

# submit: runs the sweep command; sets array and compare to the job ids it printed.
submit() {
  local out
  out=$("${sweep_cmd[@]}" 2>"$work/submit.err")
  echo "$out"
  array=$(sed -n 's/^submitted array job \([0-9]*\) .*compare job \([0-9]*\) .*/\1/p' <<<"$out")
  compare=$(sed -n 's/^submitted array job \([0-9]*\) .*compare job \([0-9]*\) .*/\2/p' <<<"$out")
  [ -n "$array" ] && [ -n "$compare" ]
}
# The numbers of compare.md: its text without the lines that name directories.
numbers() { grep -v -e "$local_dir" -e "$slurm_dir" "$1/compare.md"; }
# metrics.jsonl without the measured speed, which differs from run to run.
untimed() { sed 's/,"tokens_per_s":[-+.0-9e]*//' "$1"; }
same_run() { # INDEX: the Slurm run's results equal the local run's, byte for byte
  local r=${runs[$1]} f
  for f in checkpoint.safetensors eval.csv per_position.csv config.yaml; do
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
all_completed() {
  local r
  for r in "${runs[@]}"; do
    if ! file_has "$slurm_dir/$r/summary.json" '"completed"' ||
      ! file_has "$slurm_dir/$r/status.json" '"completed"'; then
      echo "  $r is not completed"
      return 1
    fi
  done
}

echo "== the same sweep here, one thread per run"
"$pelab" sweep "$work/sweep.yaml" --out "$local_dir" --threads 1 --jobs 2 --no-progress \
  >"$work/local.out" 2>&1 || {
  cat "$work/local.out"
  fail "the local sweep completes"
}

echo "== as a Slurm job array"
submit
check "sbatch accepted the array and the compare job" [ -n "$array" ]
check "sweep.json is written before the tasks run" [ -s "$slurm_dir/sweep.json" ]
check "the script runs the four runs two at a time" \
  file_has "$slurm_dir/slurm/sweep.sbatch" '^#SBATCH --array=0-3%2$'
"$pelab" sweep --status "$slurm_dir" >"$work/status.out" 2>&1
check "--status reports the submitted sweep" file_has "$work/status.out" '4 runs: '
"${sweep_cmd[@]}" >"$work/again.out" 2>&1
check "submitting again while the array is queued or running submits nothing" \
  file_has "$work/again.out" 'nothing to submit'
wait_for "array job $array to end" job_gone "$array"
wait_for "compare job $compare to end" job_gone "$compare"
check "the four runs completed in their own directories" all_completed
for i in 0 1 2 3; do check "run ${runs[$i]} equals the local run byte for byte" same_run "$i"; done
check "the compare job wrote compare.md" [ -s "$slurm_dir/compare.md" ]
check "compare.md has the local sweep's numbers" cmp -s <(numbers "$local_dir") <(numbers "$slurm_dir")
check "each task logs to slurm/run-INDEX.log" file_has "$slurm_dir/slurm/run-3.log" "^done "
"$pelab" sweep --status "$slurm_dir" >"$work/status.out" 2>&1
check "--status counts four done" file_has "$work/status.out" '4 runs: 4 done, 0 running'
"${sweep_cmd[@]}" >"$work/again.out" 2>&1
check "resubmitting a finished sweep submits nothing" file_has "$work/again.out" 'nothing to submit'

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
  check "the requeued run saved its checkpoint" [ -s "$slurm_dir/$victim/checkpoint.safetensors" ]
  "$pelab" sweep --status "$slurm_dir" >"$work/status.out" 2>&1
  check "--status shows the requeued run queued" \
    file_has "$work/status.out" "pending positional.type=rotary/seed=1: queued ("
  # Instead of the 2 minutes' requeue delay; but not within the second of the requeue: Slurm
  # revokes the old instance's credential with a time in whole seconds, and a task started
  # again in that same second is killed as "Job credential revoked" and never resumes.
  sleep 2
  scontrol update JobId="${array}_3" StartTime=now
  wait_for "array job $array to end" job_gone "$array"
  wait_for "compare job $compare to end" job_gone "$compare"
  check "the requeued task resumed the run" \
    file_has "$slurm_dir/slurm/run-3.log" "^resume  *$victim from step .* (requeued 1 time(s))"
  check "the requeued run equals the local run byte for byte" same_run 3
else
  fail "run 3 was still running when it was to be requeued"
fi

echo "== a task cancelled mid-run saves, and only its run is submitted again"
victim=${runs[2]}
# What a run trained again would change: its status.json (the seconds) and its files' times.
fingerprint() {
  local i
  for i in 0 1 3; do
    stat -c '%n %y' "$slurm_dir/${runs[$i]}"/{checkpoint.safetensors,status.json}
    cat "$slurm_dir/${runs[$i]}/status.json"
  done
}
fingerprint >"$work/kept"
rm -rf "${slurm_dir:?}/$victim"
submit
check "the resubmission holds only the deleted run" \
  file_has "$slurm_dir/slurm/sweep.sbatch" '^#SBATCH --array=2%2$'
if wait_closely training_mid_run "$slurm_dir/$victim"; then
  scancel "${array}_2"
  wait_for "task ${array}_2 to end" job_gone "$array"
  wait_for "compare job $compare to end" job_gone "$compare"
  check "the cancelled run recorded that it was interrupted" \
    file_has "$slurm_dir/$victim/status.json" '"interrupted"'
  check "the cancelled run saved its checkpoint" [ -s "$slurm_dir/$victim/checkpoint.safetensors" ]
  check "the cancelled run did not finish" [ ! -e "$slurm_dir/$victim/summary.json" ]
  "$pelab" sweep --status "$slurm_dir" >"$work/status.out" 2>&1
  check "--status counts it pending" file_has "$work/status.out" '3 done, 0 running, 0 failed, 1 pending'
else
  fail "run 2 was still running when it was to be cancelled"
fi
submit
check "the next submission holds only the cancelled run" \
  file_has "$slurm_dir/slurm/sweep.sbatch" '^#SBATCH --array=2%2$'
wait_for "array job $array to end" job_gone "$array"
wait_for "compare job $compare to end" job_gone "$compare"
check "the run resumed from its checkpoint" file_has "$slurm_dir/slurm/run-2.log" "^resume "
check "the four runs completed" all_completed
check "the resumed run equals the local run byte for byte" same_run 2
check "the other runs were not trained again" cmp -s "$work/kept" <(fingerprint)
check "compare.md again has the local sweep's numbers" \
  cmp -s <(numbers "$local_dir") <(numbers "$slurm_dir")

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
