// Sweeps: the runs of one config are the product of its `sweep:` axes, e.g.
//
//   sweep:
//     positional.type: [none, rotary]
//     seed: [0, 1, 2]
//
// gives 6 runs, each a `pelab train` of the same config with the axis values as overrides,
// in <out>/positional.type=none/seed=0 ... (one directory level per axis, in axis order).
//
// Runs execute as child processes (`<exe> train CONFIG k=v... --out DIR --no-progress`,
// stdout and stderr to DIR/stdout.log), `jobs` at a time, so a crash in one run cannot take
// the sweep down. Re-running a sweep skips completed runs (summary.json says "completed"),
// resumes runs that have a checkpoint but no summary, and redoes failed or missing ones.
//
// Files a sweep writes:
//   <out>/sweep.json       the config, overrides, axes and runs (name, values, overrides)
//   <out>/.sweep.lock      flock'ed while a sweep runs there (a second one is refused)
//   <run>/stdout.log       the run's stdout and stderr
//   <run>/status.json      {"status": "running" | "completed" | "failed" | "interrupted",
//                           "exit_code", "signal", "error" (last line of stdout.log),
//                           "seconds", "command"}
// SIGINT/SIGTERM: stop launching, forward SIGINT to the running children (they save a
// checkpoint and exit), wait for them; a second signal kills them (their last checkpoint is
// kept; the next sweep resumes from it).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pelab/config/experiment.h"

namespace pelab {

struct SweepRun {
  std::vector<std::pair<std::string, std::string>> values;  // axis key, value (axis order)
  std::string name;                                         // "positional.type=none/seed=0"
  std::string dir;                                          // <out>/<name>
  std::vector<std::string> overrides;  // the sweep's overrides, then the axis values
};

// The runs of `axes` (the product, first axis outermost), under `out_dir`. Each run's
// overrides are `base_overrides`, then "key=value" per axis, then "sweep={}" (a run is a plain
// training run: its config.yaml holds no sweep section, so adding seeds later keeps the
// existing runs valid). A value is used verbatim in the override; in the directory name
// characters other than [A-Za-z0-9._+,=-] become '_'. Two runs with the same directory, an
// axis without values or an empty key are errors.
std::vector<SweepRun> expand_sweep(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& axes,
    const std::string& out_dir, const std::vector<std::string>& base_overrides = {});

// The directory name of one axis value: "key=value" with the value made path-safe.
std::string sweep_dir_component(const std::string& key, const std::string& value);

// What a sweep does with a run directory.
enum class RunAction { skip, resume, fresh };

struct RunPlan {
  RunAction action = RunAction::fresh;
  std::string reason;            // "completed", "failed before (exit 1)", "checkpoint", "new", ...
  bool config_mismatch = false;  // the directory holds a run of a different config
};

// Decides from the files in `dir`:
//   summary.json with "status": "completed"     → skip (config_mismatch if its config.yaml
//                                                  exists and differs)
//   status.json with "status": "failed"         → fresh (redo)
//   checkpoint.safetensors and the same config  → resume
//   anything else (nothing, a changed config)   → fresh
// `config_yaml` is the run's resolved config (to_yaml); empty = do not compare.
RunPlan plan_run(const std::string& dir, const std::string& config_yaml);

// The last non-empty line of a text file ("" if there is none or it cannot be read).
std::string last_line(const std::string& path);

struct SweepOptions {
  std::string config_path;
  std::vector<std::string> overrides;
  std::string out_dir;  // default: runs/<name>
  int64_t jobs = 0;     // concurrent runs; 0 = sweep.parallel if set, else cores / config threads
  std::string executable = "/proc/self/exe";  // the pelab binary the runs execute
  bool progress = true;        // an updating line on a terminal (periodic lines otherwise)
  double report_seconds = 60;  // the period of progress lines when not on a terminal
};

struct SweepResult {
  std::string out_dir;
  int64_t total = 0;      // runs in the sweep
  int64_t skipped = 0;    // already completed
  int64_t completed = 0;  // completed by this sweep
  int64_t failed = 0;
  int64_t interrupted = 0;  // stopped (signal); resumed by the next sweep
  int64_t not_started = 0;  // never launched (the sweep was interrupted)
  bool stopped = false;     // the sweep itself got SIGINT/SIGTERM
  int exit_code() const { return failed ? 1 : (interrupted || not_started || stopped) ? 3 : 0; }
  std::string tally() const;  // the one-line summary
};

// One run of a planned sweep.
struct PlannedRun {
  SweepRun run;             // its axis values, name, directory and overrides
  std::string config_path;  // its own config (absolute); "" = the plan's (a suite's runs have one
                            // config per task)
  std::string config_yaml;  // its resolved config (to_yaml)
  int64_t steps = 0;        // its training.steps
  int64_t threads = 1;      // its threads
  RunPlan plan;             // skip, resume or fresh, and why
};

// A sweep before anything runs: every run's config loaded and validated, and every run
// directory read to decide what to do with it. Any launcher runs run i of the plan with
// run_planned(plan, i, ...), or start_planned_run and finish_planned_run, as the local sweep
// does.
struct SweepPlan {
  std::string name;                    // the experiment's
  std::string config_path;             // absolute
  std::vector<std::string> overrides;  // the sweep's own; every run's overrides start with them
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  std::string select;  // sweep.select: the axis compare chooses by validation score
  std::string out_dir;
  int64_t jobs = 1;  // concurrent runs: options.jobs, else sweep.parallel, else default_jobs()
  std::vector<PlannedRun> runs;  // expand_sweep's order
  // The pelab arguments (after the executable, before `--index I`) that rebuild this plan and
  // train one of its runs, and those that compare its finished runs: by default `sweep CONFIG
  // OVERRIDES... --out OUT` and `compare OUT`; a plan built by another command (`pelab suite`)
  // names that command, so that a Slurm task plans exactly what the submission planned.
  std::vector<std::string> task_command;
  std::vector<std::string> report_command;
  // The config run i trains.
  const std::string& config_of(size_t i) const {
    return runs.at(i).config_path.empty() ? config_path : runs.at(i).config_path;
  }
};

// Plans the sweep of `options` without writing anything. Errors: no sweep axes, a run whose
// config is invalid ("sweep run NAME: ..."), a directory that holds a completed run of a
// different config.
SweepPlan plan_sweep(const SweepOptions& options);

// A directory that holds a completed run of another config would be skipped, and its results
// reported as this sweep's: refuses, naming the first such directory and how the configs
// differ.
void check_completed_runs_match(const SweepPlan& plan);

// The arguments of `pelab` that train run i:
//   train CONFIG OVERRIDES... --out DIR --no-progress [--resume]   (CONFIG = plan.config_of(i))
std::vector<std::string> train_arguments(const SweepPlan& plan, size_t i);

enum class RunOutcome { completed, interrupted, failed };

struct FinishedRun {
  RunOutcome outcome = RunOutcome::failed;
  std::string line;  // the sweep's line about it: "done   NAME in 0:42", "FAILED NAME ...", ...
};

// A run that start_planned_run started.
struct StartedRun {
  size_t index = 0;  // in plan.runs
  pid_t pid = -1;    // -1: it could not be started (see `failure`)
  std::chrono::steady_clock::time_point start;
  int64_t start_step = 0;  // the step it resumes from (0 for a fresh run)
  std::string command;     // "pelab train ...", as a shell would take it
  FinishedRun failure;     // when pid is -1
};

// Prepares run i's directory (a fresh run starts without a stale checkpoint or summary),
// starts `executable` with train_arguments(), its output to stdout.log, and writes
// status.json ("running", or "failed" when it cannot be started).
StartedRun start_planned_run(const SweepPlan& plan, size_t i, const std::string& executable);

// Records in status.json how a started run ended (`wait_status` as waitpid gives it). A run
// counts as completed only when it exited 0 and wrote a completed summary.json; `stopping`
// (the sweep got a signal) makes a run that a signal ended interrupted rather than failed.
FinishedRun finish_planned_run(const SweepPlan& plan, const StartedRun& run, int wait_status,
                               bool stopping);

// Runs run i of the plan to its end, as the local sweep runs each: start, wait, record.
FinishedRun run_planned(const SweepPlan& plan, size_t i, const std::string& executable);

// Writes <out>/sweep.json (atomically): the config, overrides, axes, jobs and runs.
void write_manifest(const SweepPlan& plan);

// The arguments as one shell command line, each quoted where a shell would need it.
std::string join_command(const std::vector<std::string>& args);

// Plans the sweep (plan_sweep), then runs the runs to do, `jobs` at a time, in this
// process's children. Progress and per-run lines go to stderr.
SweepResult run_sweep(const SweepOptions& options);

// Runs the runs of a plan that are not completed, as run_sweep does (the directory lock,
// sweep.json, `plan.jobs` at a time); `options` gives the executable and the progress display.
// A run's child dies with this process: a sweep killed outright (SIGKILL) leaves no run
// training behind it, and the same command again resumes each from its last checkpoint.
SweepResult run_sweep_plan(const SweepPlan& plan, const SweepOptions& options);

// The default number of concurrent runs: usable cores / threads per run, at least 1.
int64_t default_jobs(int64_t threads_per_run);

}  // namespace pelab
