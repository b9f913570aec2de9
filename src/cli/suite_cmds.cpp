// `pelab suite`: list, run, report, record and docs (pelab/suite/).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "launcher_options.h"
#include "pelab/cli/commands.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/io/atomic_file.h"
#include "pelab/io/read_file.h"
#include "pelab/run/provenance.h"
#include "pelab/suite/suite.h"
#include "pelab/suite/suite_report.h"
#include "pelab/sweep/slurm.h"

namespace pelab::cli {

namespace {

namespace fs = std::filesystem;

// The options every subcommand that names a suite's runs takes.
struct SuiteArgs {
  std::string suite;
  std::vector<std::string> schemes;
  std::string out;
  std::string recorded;
  std::string metric = "sequence_accuracy";
  bool no_plots = false;
};

void add_suite_options(CLI::App* cmd, SuiteArgs& a) {
  cmd->add_option("suite", a.suite, "a suite's name (pelab suite list) or its file")->required();
  add_name_list(cmd, "--schemes", a.schemes,
                "columns to train: scheme names or config group files (path/to/group.yaml), "
                "each optionally with +randomized (default: the suite's own)");
  cmd->add_option("--out", a.out, "the suite's run directory (default: runs/suites/NAME)");
  cmd->add_option("--recorded", a.recorded,
                  "the recorded baselines (default: results/suites/NAME beside the suite's "
                  "configs/, or under a suite file's own directory elsewhere)");
  cmd->add_option("--metric", a.metric, "the metric of the table")
      ->check(CLI::IsMember({"sequence_accuracy", "token_accuracy"}));
}

// The suite, its columns and its plan, as every subcommand and every Slurm task sees them.
struct Planned {
  Suite suite;
  std::vector<SuiteScheme> schemes;
  SweepPlan plan;
  std::string recorded;
};

Planned plan_of(const SuiteArgs& a) {
  Planned p;
  p.suite = load_suite(find_suite(a.suite));
  p.schemes = suite_schemes(p.suite, a.schemes);
  const std::string out =
      fs::absolute(a.out.empty() ? default_suite_dir(p.suite) : a.out).lexically_normal().string();
  std::vector<std::string> common = {p.suite.path};
  if (!a.schemes.empty()) common.insert(common.end(), {"--schemes", join(a.schemes, ",")});
  common.insert(common.end(), {"--out", out});
  std::vector<std::string> task = {"suite", "run"}, report = {"suite", "report"};
  task.insert(task.end(), common.begin(), common.end());
  report.insert(report.end(), common.begin(), common.end());
  if (!a.recorded.empty())
    report.insert(report.end(), {"--recorded", fs::absolute(a.recorded).string()});
  report.insert(report.end(), {"--metric", a.metric});  // the Slurm report job's table
  p.plan = plan_suite(p.suite, p.schemes, out, task, report);
  p.recorded = a.recorded.empty() ? recorded_dir(p.suite) : a.recorded;
  return p;
}

int write_report(const Planned& p, const SuiteArgs& a) {
  const SuiteTable table =
      suite_table(p.suite, p.plan, p.schemes, p.recorded, parse_metric(a.metric));
  SuiteReport report = write_suite_report(table, p.plan.out_dir, a.no_plots ? "" : "gnuplot");
  // Each task's table by length, beside the suite's.
  const std::vector<std::string> tasks =
      write_task_comparisons(p.suite, p.plan.out_dir, !a.no_plots);
  report.written.insert(report.written.end(), tasks.begin(), tasks.end());
  fmt::print("{}", suite_markdown(table));
  std::fflush(stdout);
  if (!report.plot_message.empty() && !a.no_plots)
    fmt::print(stderr, "pelab: {}\n", report.plot_message);
  fmt::print(stderr, "wrote {}\n", join(report.written));
  return 0;
}

// --dry-run: every run with its estimated cost, then the total; nothing is written.
int print_dry_run(const Planned& p) {
  double total = 0, todo = 0, training = 0, evaluation = 0, validation = 0;
  int64_t runs_todo = 0;
  std::set<std::string> unknown;  // schemes without a step-time factor
  for (size_t i = 0; i < p.plan.runs.size(); ++i) {
    const PlannedRun& r = p.plan.runs[i];
    const RunCost cost =
        estimate_run(p.suite.cost, parse_experiment(r.config_yaml, r.run.name, {}, ""));
    total += cost.core_seconds;
    training += cost.training;
    evaluation += cost.evaluation;
    validation += cost.validation;
    const bool done = r.plan.action == RunAction::skip;
    if (!done) {
      todo += cost.core_seconds;
      ++runs_todo;
    }
    if (!cost.step_time_known) unknown.insert(cost.scheme);
    fmt::print("{:<7} {}  steps<={}  ~{:.4f} core-h\n", done ? "done" : r.plan.reason, r.run.name,
               cost.steps, cost.core_seconds / 3600);
  }
  const SuiteCost& c = p.suite.cost;
  fmt::print(
      "suite {}: {} runs, {} to do: at most {:.1f} core-hours to do ({:.1f} for all {}: "
      "training {:.1f}, evaluation {:.1f}, validation {:.1f}), every run at its step "
      "cap; cost model (src/suite/suite_cost.h): {:.3g} s a "
      "training token of {} at length {} ({}), each scheme's step relative to it from {}\n",
      p.suite.name, p.plan.runs.size(), runs_todo, todo / 3600, total / 3600, p.plan.runs.size(),
      training / 3600, evaluation / 3600, validation / 3600, c.seconds_per_token, c.step_time.base,
      c.at_length, c.measured.empty() ? "not stated" : c.measured, c.step_time.source);
  if (!unknown.empty())
    fmt::print("no step-time factor for {}: counted as {}'s step\n",
               join(std::vector<std::string>(unknown.begin(), unknown.end())), c.step_time.base);
  // What the table will set beside the columns run here.
  std::vector<std::string> recorded;
  for (const SuiteScheme& s : suite_schemes(p.suite, {}))
    if (std::none_of(p.schemes.begin(), p.schemes.end(),
                     [&](const SuiteScheme& run) { return run.label == s.label; }) &&
        fs::exists(fs::path(p.recorded) / (s.label + ".json")))
      recorded.push_back(s.label);
  fmt::print("recorded baselines beside them ({}): {}\n", p.recorded,
             recorded.empty() ? std::string("none recorded yet") : join(recorded));
  return 0;
}

void add_list(CLI::App& suite, Action& action) {
  CLI::App* list = suite.add_subcommand("list", "The shipped suites: name, tasks, schemes, runs");
  list->callback([&action] {
    action = [] {
      for (const std::string& file : suite_files()) {
        const Suite s = load_suite(file);
        const size_t per_scheme = s.tasks.size() * s.budget.lrs.size() * s.budget.seeds.size();
        fmt::print("{:<10} {} tasks, {} schemes + {} randomized, {} runs a scheme: {}\n", s.name,
                   s.tasks.size(), s.schemes.size(), s.randomized.size(), per_scheme,
                   s.description);
      }
      return 0;
    };
  });
}

struct RunArgs {
  SuiteArgs suite;
  LauncherArgs launch;
  int64_t jobs = 0;
  bool dry_run = false;
  bool no_progress = false;
};

void add_run(CLI::App& suite, Action& action) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* run = suite.add_subcommand(
      "run", "Train every run of the suite not yet finished (resumable), then write its table");
  add_suite_options(run, a->suite);
  add_integer(run, "--jobs", a->jobs, range_of<int64_t>(1), "local: runs at a time");
  run->add_flag("--dry-run", a->dry_run,
                "print the runs and their estimated core-hours; write and submit nothing");
  run->add_flag("--no-progress", a->no_progress, "progress lines instead of an updating line");
  run->add_flag("--no-plots", a->suite.no_plots, "no heat map");
  add_launcher_options(*run, a->launch, false);
  run->callback([a, &action] {
    check_launcher_options(a->launch);
    if (a->dry_run && a->launch.index >= 0)
      throw CLI::ValidationError("--dry-run", "plans the whole suite; it takes no --index");
    action = [a] {
      Planned p = plan_of(a->suite);
      if (a->dry_run) return print_dry_run(p);
      if (a->launch.index >= 0) return run_plan_task(p.plan, a->launch.index, this_executable());
      if (a->launch.launcher == "slurm")
        return submit_plan_to_slurm(p.plan, a->launch, a->suite.metric);
      if (a->launch.launcher == "print") {
        const SweepPlan abs = absolute_plan(p.plan);
        for (size_t i : runs_to_launch(abs))
          fmt::print("{}\n", join_command(task_arguments(abs, this_executable(), i)));
        return 0;
      }
      SweepOptions o;
      o.executable = this_executable();
      o.progress = !a->no_progress;
      if (a->jobs > 0) p.plan.jobs = a->jobs;
      const SweepResult r = run_sweep_plan(p.plan, o);
      if (!r.stopped && r.skipped + r.completed > 0) write_report(p, a->suite);
      fmt::print("{}\n", r.tally());
      return r.exit_code();
    };
  });
}

void add_report(CLI::App& suite, Action& action) {
  auto a = std::make_shared<SuiteArgs>();
  CLI::App* report = suite.add_subcommand(
      "report",
      "Write the suite's table (Markdown, CSV, LaTeX) and heat map from its runs and "
      "the recorded baselines");
  add_suite_options(report, *a);
  report->add_flag("--no-plots", a->no_plots, "no heat map");
  report->callback([a, &action] { action = [a] { return write_report(plan_of(*a), *a); }; });
}

void add_record(CLI::App& suite, Action& action) {
  struct RecordArgs {
    SuiteArgs suite;
    bool allow_dirty = false;
  };
  auto a = std::make_shared<RecordArgs>();
  CLI::App* record = suite.add_subcommand(
      "record",
      "Write the recorded baselines (results/suites/NAME/SCHEME.json) of a finished "
      "suite run, with the commit and CPUs that trained its runs");
  add_suite_options(record, a->suite);
  record->add_flag("--allow-dirty", a->allow_dirty,
                   "record runs trained by a build that was not one clean commit (says so)");
  record->callback([a, &action] {
    action = [a] {
      const Planned p = plan_of(a->suite);
      // The runs name the build that trained them (record_suite checks it); the suite and
      // task files read here must be committed too. The binary recording them may be any.
      const fs::path configs = fs::path(p.suite.path).parent_path().parent_path();
      const Provenance tree = read_provenance(configs.string(), a->allow_dirty);
      const std::string& changes = tree.source_changes;  // `git status --porcelain` lines
      const std::string first = changes.substr(0, changes.find('\n'));
      PELAB_CHECK(changes.empty() || a->allow_dirty,
                  "pelab suite record: {} has uncommitted changes ({}{}); commit them first, or "
                  "pass --allow-dirty",
                  tree.source_dir, first.size() > 3 ? first.substr(3) : first,
                  changes.find('\n') + 1 < changes.size() ? ", …" : "");
      for (const std::string& f :
           record_suite(p.suite, p.plan, p.schemes, p.recorded, a->allow_dirty))
        fmt::print("wrote {}\n", f);
      return 0;
    };
  });
}

// A suite's page ends with what is written by hand (the budget beside the papers'), from this
// line on; `pelab suite docs` keeps it when it writes the rest.
constexpr const char* kHandWritten = "<!-- Written by hand from here on";

std::string hand_written_part(const std::string& page) {
  std::error_code ec;
  if (!fs::exists(page, ec)) return "";
  const std::string text = read_regular_file(page, "a suite's page", uint64_t{16} << 20);
  const size_t at = text.find(kHandWritten);
  return at == std::string::npos ? "" : "\n" + text.substr(at);
}

void add_docs(CLI::App& suite, Action& action) {
  struct DocsArgs {
    std::string suite, docs = "docs/suites", recorded;
  };
  auto a = std::make_shared<DocsArgs>();
  CLI::App* docs = suite.add_subcommand(
      "docs", "Write the suite's page (docs/suites/NAME.md) from its recorded baselines");
  docs->add_option("suite", a->suite, "a suite's name or its file")->required();
  docs->add_option("--docs", a->docs, "where the page goes (default: docs/suites)");
  docs->add_option("--recorded", a->recorded, "the recorded baselines (default: the suite's)");
  docs->callback([a, &action] {
    action = [a] {
      SuiteArgs args;
      args.suite = a->suite;
      args.recorded = a->recorded;
      args.out = (fs::temp_directory_path() / "pelab-suite-docs-none").string();  // no runs
      const Planned p = plan_of(args);
      const SuiteTable table = suite_table(p.suite, SweepPlan{}, {}, p.recorded);
      std::string figure;
      if (!table.columns.empty()) {
        const SuiteReport written = write_suite_report(table, a->docs + "/" + p.suite.name);
        if (written.plot_message.empty()) figure = p.suite.name + "/suite_heatmap.svg";
      }
      const std::string page =
          suite_page(p.suite, table, figure, suite_budget_markdown(p.suite, p.plan));
      const std::string path = a->docs + "/" + p.suite.name + ".md";
      fs::create_directories(a->docs);
      write_file_atomic(path, page + hand_written_part(path));
      fmt::print("wrote {}\n", path);
      return 0;
    };
  });
}

}  // namespace

void add_suite_commands(CLI::App& app, Action& action) {
  CLI::App* suite = app.add_subcommand(
      "suite",
      "Named benchmark suites: fixed tasks, protocol and budget; resumable runs; tables "
      "beside recorded baselines");
  suite->require_subcommand(1);
  add_list(*suite, action);
  add_run(*suite, action);
  add_report(*suite, action);
  add_record(*suite, action);
  add_docs(*suite, action);
}

}  // namespace pelab::cli
