// `pelab sweep` and `pelab compare`.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "launcher_options.h"
#include "pelab/cli/commands.h"
#include "pelab/config/experiment.h"
#include "pelab/core/strings.h"
#include "pelab/report/report.h"
#include "pelab/sweep/slurm.h"
#include "pelab/sweep/sweep.h"

namespace pelab::cli {

namespace {

namespace fs = std::filesystem;

// Runs the comparison, prints its table and where it went; returns the number of completed runs.
int64_t compare_and_print(const CompareOptions& o) {
  const CompareOutput out = run_compare(o);
  fmt::print("{}", out.markdown);
  std::fflush(stdout);
  if (!out.plot_message.empty()) fmt::print(stderr, "pelab: {}\n", out.plot_message);
  fmt::print(stderr, "wrote {}\n", join(out.written));
  return out.comparison.completed_runs;
}

}  // namespace

void add_launcher_options(CLI::App& sweep, LauncherArgs& l, bool sweep_options) {
  sweep
      .add_option("--launcher", l.launcher,
                  "local (default): run here; slurm: submit a job array; print: one command "
                  "per run to stdout")
      ->check(CLI::IsMember({"local", "slurm", "print"}));
  add_integer(&sweep, "--max-parallel", l.max_parallel, range_of<int64_t>(1),
              "slurm: array tasks at a time");
  sweep
      .add_option("--slurm-opt", l.slurm_opts,
                  "slurm: KEY=VALUE for sbatch, e.g. partition=gpu, time=2:00:00, mem=4G, "
                  "account=proj (repeatable)")
      ->allow_extra_args(false);
  add_integer(&sweep, "--index", l.index, range_of<int64_t>(0),
              "train only run I (an array task does this)");
  if (!sweep_options) return;
  add_integer(&sweep, "--threads", l.threads, range_of<int64_t>(1, kMaxThreads),
              "threads per run (the override threads=T)");
  sweep.add_flag("--dry-run", l.dry_run, "slurm: write and print the script, submit nothing");
  sweep.add_option("--status", l.status, "report the runs of sweep directory DIR and exit");
}

void check_launcher_options(const LauncherArgs& l) {
  const bool slurm = l.launcher == "slurm";
  if (!slurm && l.max_parallel > 0)
    throw CLI::ValidationError("--max-parallel", "needs --launcher slurm (locally: --jobs)");
  if (!slurm && !l.slurm_opts.empty())
    throw CLI::ValidationError("--slurm-opt", "needs --launcher slurm");
  if (!slurm && l.dry_run) throw CLI::ValidationError("--dry-run", "needs --launcher slurm");
  if (l.index >= 0 && l.launcher != "local")
    throw CLI::ValidationError("--index", "trains one run here; it takes no --launcher");
}

std::string this_executable() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "pelab" : exe.string();
}

int submit_plan_to_slurm(const SweepPlan& plan, const LauncherArgs& l, const std::string& metric) {
  SlurmLaunch launch;
  launch.executable = this_executable();
  launch.max_parallel = l.max_parallel;
  launch.options = parse_slurm_options(l.slurm_opts);
  launch.metric = metric;
  launch.dry_run = l.dry_run;
  const SlurmSubmission s = submit_slurm_plan(plan, launch);
  if (s.indices.empty()) {
    fmt::print(stderr,
               "sweep {}: all {} runs are completed or still queued; nothing to submit (pelab "
               "sweep --status {})\n",
               s.out_dir, s.total, s.out_dir);
    return 0;
  }
  const std::string runs = fmt::format("{} of {} runs", s.indices.size(), s.total);
  if (l.dry_run) {
    fmt::print("{}", s.script);
    fmt::print(stderr,
               "wrote {} ({}) and {}; submit them with\n  jobid=$(sbatch --parsable {})\n  "
               "sbatch --dependency=afterany:$jobid {}\n",
               s.script_path, runs, s.compare_script_path, s.script_path, s.compare_script_path);
    return 0;
  }
  fmt::print("submitted array job {} ({}{}) and compare job {} (after the array)\n", s.array_job,
             runs, l.max_parallel > 0 ? fmt::format(", {} at a time", l.max_parallel) : "",
             s.compare_job);
  fmt::print(stderr, "logs in {}/slurm/; follow with: pelab sweep --status {}\n", s.out_dir,
             s.out_dir);
  return 0;
}

void add_sweep_commands(CLI::App& app, Action& action) {
  // ---- sweep ---------------------------------------------------------------------------
  struct SweepArgs {
    std::string config;
    std::vector<std::string> overrides;
    std::string out;
    int64_t jobs = 0;
    bool no_progress = false;
    std::string metric = "sequence_accuracy";
    LauncherArgs launch;
  };
  auto sa = std::make_shared<SweepArgs>();
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Train every run of a config's sweep: axes (in parallel), then compare them");
  sweep->add_option("config", sa->config, "the experiment config (YAML) with a sweep: section");
  sweep->add_option("overrides", sa->overrides,
                    "key=value overrides for every run, e.g. training.steps=200 or "
                    "sweep.seed=[0,1,2]");
  sweep->add_option("--out", sa->out, "sweep directory (default: runs/<name>)");
  add_integer(sweep, "--jobs", sa->jobs, range_of<int64_t>(1),
              "runs at a time (default: cores / threads per run)");
  sweep->add_flag("--no-progress", sa->no_progress, "progress lines instead of an updating line");
  sweep->add_option("--metric", sa->metric, "the metric of the final comparison")
      ->check(CLI::IsMember({"sequence_accuracy", "token_accuracy"}));
  add_launcher_options(*sweep, sa->launch, true);
  sweep->callback([sa, &action] {
    if (!sa->launch.status.empty()) {
      if (!sa->config.empty()) throw CLI::ValidationError("--status", "takes no CONFIG");
      action = [sa] {
        fmt::print("{}", sweep_status(sa->launch.status).report());
        return 0;
      };
      return;
    }
    if (sa->config.empty()) throw CLI::RequiredError("config");
    check_launcher_options(sa->launch);
    action = [sa] {
      const LauncherArgs& l = sa->launch;
      SweepOptions o;
      o.config_path = sa->config;
      o.overrides = sa->overrides;
      // Every launcher gives the runs the same threads (results depend on the thread count).
      if (l.threads > 0) o.overrides.push_back(fmt::format("threads={}", l.threads));
      o.out_dir = sa->out;
      o.jobs = sa->jobs;
      o.progress = !sa->no_progress;
      if (l.index >= 0) return run_sweep_task(o, l.index);
      if (l.launcher == "slurm") return submit_plan_to_slurm(plan_sweep(o), l, sa->metric);
      if (l.launcher == "print") {
        const std::vector<std::string> lines = sweep_commands(o, this_executable());
        for (const std::string& line : lines) fmt::print("{}\n", line);
        if (lines.empty()) fmt::print(stderr, "sweep: every run is completed; nothing to run\n");
        return 0;
      }
      const SweepResult r = run_sweep(o);
      if (!r.stopped && r.skipped + r.completed > 0) {
        CompareOptions c;
        c.dirs = {r.out_dir};
        c.metric = parse_metric(sa->metric);
        compare_and_print(c);
      }
      fmt::print("{}\n", r.tally());
      return r.exit_code();
    };
  });

  // ---- compare -------------------------------------------------------------------------
  struct CompareArgs {
    std::vector<std::string> dirs;
    std::string out;
    std::string metric = "sequence_accuracy";
    bool no_plots = false;
    double learned_at = CompareRule{}.learned_at;
    std::string select;
  };
  auto ca = std::make_shared<CompareArgs>();
  CLI::App* compare = app.add_subcommand(
      "compare",
      "Compare runs by length: mean over seeds with a 95% interval, median and max per scheme, "
      "tables and plots");
  compare->add_option("dirs", ca->dirs, "run or sweep directories (searched for runs)")->required();
  compare->add_option("--out", ca->out,
                      "where compare.md/.csv/.json and the plots go (default: the first DIR)");
  compare->add_option("--metric", ca->metric, "sequence_accuracy or token_accuracy")
      ->check(CLI::IsMember({"sequence_accuracy", "token_accuracy"}));
  compare->add_flag("--no-plots", ca->no_plots, "tables only");
  add_number(compare, "--learned-at", ca->learned_at, NumberRange{0.0, 1.0},
             "in-distribution validation score a run without training.stop_when must reach to "
             "count as having learned the task (default 0.95)");
  compare->add_option("--select", ca->select,
                      "an axis to choose per group by validation score, e.g. training.lr "
                      "(default: the sweep's sweep.select)");
  compare->callback([ca, &action] {
    action = [ca] {
      CompareOptions o;
      o.dirs = ca->dirs;
      o.out_dir = ca->out;
      o.metric = parse_metric(ca->metric);
      o.plots = !ca->no_plots;
      o.rule.learned_at = ca->learned_at;
      o.rule.select = ca->select;
      return compare_and_print(o) > 0 ? 0 : 1;
    };
  });
}

}  // namespace pelab::cli
