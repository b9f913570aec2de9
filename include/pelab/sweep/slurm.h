// Launchers of a sweep other than the local one: Slurm job arrays, one command per run for
// another scheduler, and the entry point both use, which trains one run of the plan.
//
// `pelab sweep CONFIG --launcher slurm` plans the sweep (plan_sweep), writes sweep.json and
//   <out>/slurm/sweep.sbatch    a job array, one task per run to do (missing, failed or
//                               interrupted), `--array=INDICES%P`, `--requeue`, append-mode
//                               logs <out>/slurm/run-<index>.log; each task execs
//                               `pelab sweep CONFIG OVERRIDES... --out OUT --index I`
//   <out>/slurm/compare.sbatch  `pelab compare OUT`, submitted --dependency=afterany:ARRAY
//   <out>/slurm/jobs.json       the submissions: array and compare job ids, indices
// and submits both with sbatch (unless dry_run). Only the submitting process writes these
// sweep-level files, each by atomic rename; a task writes only inside its run's directory.
//
// `--index I` trains run I of the plan (its index in expand_sweep's order, which is also its
// array index) exactly as the local sweep would: the same arguments, directory and skip /
// resume / redo decision, status.json written around it. It holds an flock on
// <run>/.run.lock meanwhile, so two tasks that were handed the same run cannot both train it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pelab/sweep/sweep.h"

namespace pelab {

// --slurm-opt KEY=VALUE: an sbatch option for the array's tasks (key without dashes).
using SlurmOption = std::pair<std::string, std::string>;

// Parses and checks --slurm-opt values: KEY=VALUE with a known key (account, partition, qos,
// time, mem, mem-per-cpu, cpus-per-task, constraint, gres, gpus, reservation, exclude,
// nodelist, tmp, mail-type, mail-user, job-name), a value a batch script can hold unquoted,
// and time, memory and CPU counts in Slurm's formats. Keys the launcher sets itself (array,
// output, requeue, dependency, ...) and repeated keys are errors, each one line.
std::vector<SlurmOption> parse_slurm_options(const std::vector<std::string>& options);

struct SlurmLaunch {
  std::string executable;                    // the pelab binary the tasks run (made absolute)
  int64_t max_parallel = 0;                  // tasks at a time (`%P`); 0 = as many as Slurm allows
  std::vector<SlurmOption> options;          // parse_slurm_options()
  std::string metric = "sequence_accuracy";  // of the compare job
  bool dry_run = false;                      // write the scripts, submit nothing
};

// The runs a launcher must start: every run not completed (missing, failed, interrupted).
std::vector<size_t> runs_to_launch(const SweepPlan& plan);

// Array indices as Slurm takes them, consecutive ones as ranges: {0,1,2,5,7,8} → "0-2,5,7-8".
std::string array_indices(const std::vector<size_t>& indices);

// The plan with its sweep and run directories made absolute (a task may start elsewhere).
SweepPlan absolute_plan(SweepPlan plan);

// The command that trains run `index` of the plan:
//   EXECUTABLE sweep CONFIG OVERRIDES... --out OUT --index INDEX
std::vector<std::string> task_arguments(const SweepPlan& plan, const std::string& executable,
                                        size_t index);

// The threads each run of the plan trains with (the largest `threads` of its configs).
int64_t plan_threads(const SweepPlan& plan);

// <out>/slurm/sweep.sbatch for the runs `indices` of an absolute plan.
std::string slurm_array_script(const SweepPlan& plan, const std::vector<size_t>& indices,
                               const SlurmLaunch& launch);

// <out>/slurm/compare.sbatch: `pelab compare OUT`, with the array's account, partition, qos,
// reservation and time limit.
std::string slurm_compare_script(const SweepPlan& plan, const SlurmLaunch& launch);

struct SlurmSubmission {
  std::string out_dir;
  std::string script_path;  // <out>/slurm/sweep.sbatch ("" when nothing is to do)
  std::string script;       // its text
  std::string compare_script_path;
  std::vector<size_t> indices;         // the runs submitted
  size_t total = 0;                    // runs in the sweep
  std::string array_job, compare_job;  // job ids ("" on a dry run)
};

// Plans the sweep, writes sweep.json and the scripts, and submits the array and the compare
// job with sbatch (unless launch.dry_run), recording them in <out>/slurm/jobs.json. Runs still
// pending or running in an earlier submission (squeue) are not submitted again. Errors: sbatch
// missing or failing, and plan_sweep's.
SlurmSubmission submit_slurm_sweep(const SweepOptions& options, const SlurmLaunch& launch);
// The same for a plan built elsewhere (`pelab suite`): its task_command and report_command
// say what the array's tasks and the compare job run.
SlurmSubmission submit_slurm_plan(const SweepPlan& plan, const SlurmLaunch& launch);

// `--launcher print`: writes sweep.json and returns the command of each run to do, one line
// each (task_arguments, shell-quoted).
std::vector<std::string> sweep_commands(const SweepOptions& options, const std::string& executable);

// `--index I`: trains run I of the sweep of `options` in a child (as the local sweep does),
// forwarding SIGINT/SIGTERM to it so that it saves its checkpoint. Prints its line to stderr;
// returns the exit code: 0 completed (or already completed), 3 interrupted, 1 failed.
int run_sweep_task(const SweepOptions& options, int64_t index);
// The same for run `index` of a plan built elsewhere (`pelab suite ... --index I`).
int run_plan_task(SweepPlan plan, int64_t index, const std::string& executable);

enum class RunState { done, running, failed, pending };

struct RunStatus {
  std::string name;
  RunState state = RunState::pending;
  std::string detail;  // "not started", "interrupted; resumes from step 40", "exit 1: ...", ...
};

struct SweepStatus {
  std::string out_dir;
  std::vector<RunStatus> runs;  // sweep.json's order
  std::string scheduler;        // what squeue said of the last array job ("" when unavailable)
  int64_t count(RunState s) const;
  std::string report() const;  // counts, then the runs not done, one line each
};

// The state of every run of the sweep in `out_dir` (which must hold sweep.json), from the run
// directories; squeue, where it exists, tells queued tasks from stale "running" ones.
SweepStatus sweep_status(const std::string& out_dir);

}  // namespace pelab
