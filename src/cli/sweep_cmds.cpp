// `pelab sweep` and `pelab compare`.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "pelab/core/strings.h"
#include "pelab/experiment/compare.h"
#include "pelab/experiment/sweep.h"

namespace pelab::cli {

namespace {

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

void add_sweep_commands(CLI::App& app, Action& action) {
  // ---- sweep ---------------------------------------------------------------------------
  struct SweepArgs {
    std::string config;
    std::vector<std::string> overrides;
    std::string out;
    int64_t jobs = 0;
    bool no_progress = false;
    std::string metric = "sequence_accuracy";
  };
  auto sa = std::make_shared<SweepArgs>();
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Train every run of a config's sweep: axes (in parallel), then compare them");
  sweep->add_option("config", sa->config, "the experiment config (YAML) with a sweep: section")
      ->required();
  sweep->add_option("overrides", sa->overrides,
                    "key=value overrides for every run, e.g. training.steps=200 or "
                    "sweep.seed=[0,1,2]");
  sweep->add_option("--out", sa->out, "sweep directory (default: runs/<name>)");
  sweep->add_option("--jobs", sa->jobs, "runs at a time (default: cores / threads per run)")
      ->check(integer_at_least(1));
  sweep->add_flag("--no-progress", sa->no_progress, "progress lines instead of an updating line");
  sweep->add_option("--metric", sa->metric, "the metric of the final comparison")
      ->check(CLI::IsMember({"sequence_accuracy", "token_accuracy"}));
  sweep->callback([sa, &action] {
    action = [sa] {
      SweepOptions o;
      o.config_path = sa->config;
      o.overrides = sa->overrides;
      o.out_dir = sa->out;
      o.jobs = sa->jobs;
      o.progress = !sa->no_progress;
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
  };
  auto ca = std::make_shared<CompareArgs>();
  CLI::App* compare = app.add_subcommand(
      "compare", "Compare runs by length: mean ± std over seeds per scheme, tables and plots");
  compare->add_option("dirs", ca->dirs, "run or sweep directories (searched for runs)")->required();
  compare->add_option("--out", ca->out,
                      "where compare.md/.csv/.json and the plots go (default: the first DIR)");
  compare->add_option("--metric", ca->metric, "sequence_accuracy or token_accuracy")
      ->check(CLI::IsMember({"sequence_accuracy", "token_accuracy"}));
  compare->add_flag("--no-plots", ca->no_plots, "tables only");
  compare->callback([ca, &action] {
    action = [ca] {
      CompareOptions o;
      o.dirs = ca->dirs;
      o.out_dir = ca->out;
      o.metric = parse_metric(ca->metric);
      o.plots = !ca->no_plots;
      return compare_and_print(o) > 0 ? 0 : 1;
    };
  });
}

}  // namespace pelab::cli
