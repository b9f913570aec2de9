// A suite's results: the task × scheme table, its recorded baselines, and its page.
//
// Each cell is one task and one column (a scheme, plain or randomized), compared by
// pelab/report/compare.h over its runs (the lr selected by in-distribution validation, as
// the suite's protocol says): the score is the extrapolation score, each seed's mean accuracy
// over the evaluation lengths beyond training; the cell shows its maximum over seeds (what
// Delétang et al. and Ruoss et al. report) and its mean with a 95% bootstrap interval
// (pelab/report/statistics.h). A cell whose runs did not all meet the in-distribution
// criterion is marked: ✗ when none did, "k/n learned" otherwise.
//
// Recorded baselines: results/suites/NAME/SCHEME.json (beside the configs/ that hold the
// suite) holds one shipped scheme's per-run summaries — the numbers compare reads from
// summary.json, no run directory — with the commit, the CPU and the suite's fingerprint they
// were made under. A table shows the recorded columns of every shipped scheme that was not
// run, marked as recorded; a recording of another fingerprint (the suite changed since) is
// left out, and said so.
#pragma once

#include <string>
#include <vector>

#include "pelab/report/compare.h"
#include "pelab/suite/suite.h"

namespace pelab {

struct SuiteCell {
  bool present = false;  // any run of it trained (completed or diverged)
  Group group;           // compare's group of its runs
  int64_t missing = 0;   // runs not finished (left out of the numbers)
  // Why the cell's scheme cannot represent its task at the suite's settings (pelab/report/
  // representable.h, from its planned runs' config), "" when it can: the table then says "not
  // representable at these settings" in place of its numbers, which are no result about the
  // scheme. Recorded columns (no config) are not checked.
  std::string not_representable;
};

struct SuiteColumn {
  std::string label;
  bool randomized = false;
  bool recorded = false;  // from results/suites/NAME/, not run here
  std::string commit, cpu, date;
};

struct SuiteTable {
  std::string suite;
  Metric metric = Metric::sequence_accuracy;
  std::vector<std::string> tasks;
  std::vector<SuiteColumn> columns;
  std::vector<std::vector<SuiteCell>> cells;  // [task][column]
  std::vector<std::string> notes;             // recordings left out, and why
};

// The directory of a suite's recorded baselines: results/suites/NAME beside its configs/ for a
// file in configs/suites/, else under the suite file's own directory.
std::string recorded_dir(const Suite& suite);

// The table of the runs of `plan` (plan_suite for `schemes`) with, beside them, the recorded
// columns under `recorded` of the suite's shipped schemes that were not run ("" = none).
SuiteTable suite_table(const Suite& suite, const SweepPlan& plan,
                       const std::vector<SuiteScheme>& schemes, const std::string& recorded,
                       Metric metric = Metric::sequence_accuracy);

std::string suite_markdown(const SuiteTable& t);
std::string suite_csv(const SuiteTable& t);
std::string suite_latex(const SuiteTable& t);

struct SuiteReport {
  SuiteTable table;
  std::vector<std::string> written;
  std::string plot_message;  // "" or one line (gnuplot missing)
};

// Writes suite.md, suite.csv, suite.tex and the heat map (suite_heatmap.{svg,png,gp}) into
// out_dir.
SuiteReport write_suite_report(const SuiteTable& table, const std::string& out_dir,
                               const std::string& gnuplot = "gnuplot");

// Each task's comparison by length, as `pelab compare` writes it (compare.md/.csv/.json and
// the plots, into <out>/task=T/): the columns run here, the lr chosen by validation, each
// length apart. Returns the files written.
std::vector<std::string> write_task_comparisons(const Suite& suite, const std::string& out_dir,
                                                bool plots);

// Writes <recorded>/SCHEME.json for each shipped scheme of `schemes` whose runs in `plan` are
// all finished (completed or diverged), with the commit and CPUs that trained them, read from
// each run's environment.json. Errors (nothing written): a scheme the suite does not ship, a
// run not finished, a scheme whose runs come from more than one commit, or from a build that
// was not one clean commit ("-dirty", "unknown") unless `allow_dirty` (then "(not clean)" is
// recorded beside it). Returns the files written.
std::vector<std::string> record_suite(const Suite& suite, const SweepPlan& plan,
                                      const std::vector<SuiteScheme>& schemes,
                                      const std::string& recorded, bool allow_dirty);

// The suite's page (docs/suites/NAME.md): its description, its table and heat map from the
// recorded baselines alone (or that they are not recorded yet), then `budget`
// (suite_budget_markdown). `figure` is the heat map's file name next to the page ("" when
// none was drawn).
std::string suite_page(const Suite& suite, const SuiteTable& recorded_table,
                       const std::string& figure, const std::string& budget);

// The budget's arithmetic as Markdown: runs, steps, the estimate (estimate_run summed over
// every run of `plan`) and what the estimate assumes.
std::string suite_budget_markdown(const Suite& suite, const SweepPlan& plan);

}  // namespace pelab
