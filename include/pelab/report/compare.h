// Comparing runs: the finished runs under some directories are grouped by every config key
// that differs between them except `seed` (typically positional.type), and each group's
// accuracy per evaluated length is summarised over its seeds: mean with a 95% bootstrap
// interval, median and maximum (papers report the maximum over seeds).
//
// The protocol, fixed before the runs:
//   * learned: a run learned the task in distribution when its training.stop_when criterion
//     was met, or (without one) when its in-distribution validation score reaches
//     `learned_at`. A group whose runs did not all learn is marked in every table and plot;
//     its extrapolation numbers are not comparable with the others'. A run whose training
//     diverged (NaN or Inf; `pelab train` exit code 4) did not learn: it counts in its group
//     and in the selection (with a validation score of 0) though it has no numbers.
//   * selection: with `sweep.select: training.lr` (or compare --select), each group keeps,
//     of the values of that axis, the one with the best mean in-distribution validation
//     score, as Delétang et al. and Ruoss et al. choose their learning rates.
//
// Outputs (write_comparison):
//   compare.md    a Markdown table: one row per group, one column per length ("0.98 [0.95,
//                 1.00]"; lengths marked * were in training); a table over seeds (mean and
//                 interval, median, max, runs that learned); the selection, if any; then the
//                 runs that diverged; the runs left out (failed, incomplete, not started)
//   compare.csv   long format: group,length,in_training,mean,std,n,seeds,values,median,max,
//                 ci_low,ci_high (seeds and values ';'-separated, in the same order; std
//                 empty when n < 2)
//   compare.json  everything, including the summaries and accuracy by position
//   accuracy_by_length.{png,svg,gp}, accuracy_by_position.{png,svg,gp}   (with gnuplot)
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pelab {

enum class Metric { sequence_accuracy, token_accuracy };
Metric parse_metric(const std::string& name);  // throws Error naming the valid ones
std::string metric_name(Metric m);

// One run directory found under the compared directories.
struct RunRecord {
  struct Point {
    int64_t length = 0;
    bool in_training = false;
    double sequence_accuracy = 0;
    double token_accuracy = 0;
  };
  std::string dir;
  std::string status;  // completed | diverged | failed | incomplete | running | not started
  std::string detail;  // why it is not completed (one line)
  uint64_t seed = 0;
  std::map<std::string, std::string> config;  // config.yaml flattened: "positional.type" → "rotary"
  std::vector<std::string> config_order;      // its keys in file order
  std::vector<Point> eval;                    // from summary.json
  // In-distribution validation scores (summary.json's "validation"; absent in runs written
  // before it existed: NaN, and the in-distribution evaluation stands in).
  double validation_sequence_accuracy = std::numeric_limits<double>::quiet_NaN();
  double validation_token_accuracy = std::numeric_limits<double>::quiet_NaN();
  std::optional<bool> stop_when_met;  // set when the run trained with training.stop_when
  int64_t steps = -1;                 // the training steps it took (summary.json's "steps")
  std::string sweep_select;           // its sweep's select (sweep.json), "" if none
  int64_t train_min_length = 0, train_max_length = 0;
  int64_t order = -1;  // the run's index in its sweep.json (-1 if none)
  // Why its scheme cannot represent its task at its settings (pelab/report/representable.h),
  // over every evaluated length and in distribution only; "" when it can, or when its
  // config.yaml no longer loads (a run of an older pelab).
  std::string not_representable, not_representable_in_distribution;
};

// Every run directory under `dirs` (a directory holding summary.json, config.yaml or
// status.json), plus runs listed in a sweep.json that have no directory yet ("not started").
// Sorted by sweep order, then by path (numbers in names compare as numbers).
std::vector<RunRecord> find_runs(const std::vector<std::string>& dirs);

// Reads one run directory (the status is derived from summary.json / status.json / files).
RunRecord read_run(const std::string& dir);

// The "key.sub: value" pairs of a YAML mapping, in document order (sequences as "[a, b]").
std::vector<std::pair<std::string, std::string>> flatten_yaml(const std::string& text);

// Over seeds: mean, sample standard deviation (n - 1; NaN when n < 2), count, median,
// maximum and the 95% bootstrap interval of the mean (deterministic resampling).
struct Stat {
  double mean = 0;
  double std = 0;
  int64_t n = 0;
  std::vector<uint64_t> seeds;
  std::vector<double> values;
  double median = 0;
  double max = 0;
  double ci_low = 0, ci_high = 0;
};
Stat summarize(const std::vector<double>& values, const std::vector<uint64_t>& seeds = {});

struct GroupLength {
  int64_t length = 0;
  bool in_training = false;
  Stat stat;   // the comparison's metric
  Stat token;  // token accuracy, shown beside sequence accuracy (the same as stat when the
               // metric is token accuracy)
};

struct PositionStat {
  int64_t position = 0;
  double mean = 0, std = 0;
  int64_t n = 0;
};

struct Group {
  std::string label;         // values of the group keys joined by " / " (or the experiment's name)
  int64_t learned_runs = 0;  // runs that learned the task in distribution (see above)
  // The runs that trained: the completed ones and those that diverged (did not learn).
  int64_t trained_runs() const { return static_cast<int64_t>(runs.size() + diverged.size()); }
  bool all_learned() const { return learned_runs == trained_runs(); }
  // A run of the group whose config.yaml tells its settings (completed if any, else diverged).
  const std::string& first_run() const { return runs.empty() ? diverged.front() : runs.front(); }
  // The selection (sweep.select): each value of the selected key with its runs' mean
  // validation score, in sweep order, and the value kept.
  struct Candidate {
    std::string value;
    double validation = 0;
    int64_t runs = 0;
  };
  std::vector<Candidate> candidates;
  std::string selected;
  std::vector<std::pair<std::string, std::string>> keys;  // group key → value ("—" if absent)
  std::vector<std::string> runs;                          // completed run directories
  std::vector<std::string> diverged;    // run directories whose training diverged (no numbers)
  std::vector<GroupLength> lengths;     // ascending
  Stat in_distribution, extrapolation;  // per seed: the mean over those lengths
  Stat in_distribution_token, extrapolation_token;        // the same in token accuracy
  Stat in_distribution_sequence, extrapolation_sequence;  // and in sequence accuracy (the same
                                                          // as the metric's unless it is token)
  // Why the group's settings cannot represent its task (its runs' not_representable): its
  // numbers beyond training are then no result about its scheme; "" when they can. And the
  // same in distribution (its runs' not_representable_in_distribution): then none of its
  // numbers is. The first is empty whenever the second is.
  std::string not_representable, not_representable_in_distribution;
  // The training steps each run took: with training.stop_when, where it met the criterion, so
  // the groups' extrapolation is measured at different points of training.
  Stat steps;
  int64_t train_max_length = 0;
  // Token accuracy by position at the longest length the comparison evaluated, averaged over
  // seeds (from per_position.csv; empty if the group did not evaluate that length).
  std::vector<PositionStat> by_position;
  int64_t last_train_position = -1;  // the last position of the longest training length
};

// The rules of a comparison (see the top of this file).
struct CompareRule {
  double learned_at = 0.95;  // the validation score that counts as learned without stop_when
  std::string select;        // a key to select by validation score ("" = none, or sweep.select)
};

struct Comparison {
  Metric metric = Metric::sequence_accuracy;
  CompareRule rule;
  std::vector<std::string> dirs;        // what was compared
  std::vector<std::string> group_keys;  // the config keys that tell the groups apart
  std::vector<Group> groups;
  std::vector<int64_t> lengths;  // every evaluated length, ascending
  int64_t position_length = 0;   // the length of the by-position summaries
  // Every diverged run: at the selected value (or without a selection) in its group's
  // `diverged`, at the others only in the selection.
  std::vector<RunRecord> diverged;
  std::vector<RunRecord> excluded;  // not completed (listed, not dropped silently)
  int64_t completed_runs = 0;
};

// The config keys that tell `runs` apart (not seed, not sweep.*), reduced to the fewest that
// give the same grouping (positional.base, present only for rotary, goes with positional.type).
// Preferred: keys named in the run directories ("key=value" components), positional.type,
// task.name, keys every run has.
std::vector<std::string> grouping_keys(const std::vector<RunRecord>& runs);

// Groups the completed and diverged runs and summarises them; the others go to `excluded`.
// Statistics are over the completed runs; a diverged run counts as one that did not learn. The
// group keys are computed over every run that has a config.yaml (failed ones too).
// `read_positions` reads each run's per_position.csv (off for synthetic runs without one).
Comparison compare_runs(const std::vector<RunRecord>& runs, Metric metric,
                        bool read_positions = true, const CompareRule& rule = {});

// Whether a run learned the task in distribution under `rule`, judged by `metric`.
bool run_learned(const RunRecord& run, Metric metric, const CompareRule& rule);

// A group's label as tables and plots show it: "rotary", "rotary (did not learn)" or "rotary
// (learned 2 of 3)", so that its extrapolation is not read as comparable with the others';
// "relative / 2 (not representable at these settings)" when its settings cannot represent the
// task in distribution, "t5 (not representable beyond training)" when only beyond, which says
// more than whether it learned.
std::string group_label(const Group& g);

// A cell of sequence accuracy with token accuracy beside it, as every table shows them:
// `sequence_text` (a formatted statistic), " / ", then the token accuracy's mean ("0.02 [0.00,
// 0.05] / 0.91"; only `sequence_text` when the token statistic has no values).
std::string with_token(const std::string& sequence_text, const Stat& token);
// The same pair where token accuracy is the table's metric: sequence accuracy's mean, " / ",
// then `token_text` ("0.02 / 0.91 [0.88, 0.94]"), so that sequence accuracy stands left of the
// slash in every table; only `token_text` when the sequence statistic has no values.
std::string with_sequence(const Stat& sequence, const std::string& token_text);

// "0.98 ± 0.01" ("0.98" when n = 1, "—" when n = 0).
std::string format_stat(const Stat& s, int decimals = 2);
// "0.98 [0.95, 1.00]": the mean and its 95% bootstrap interval ("0.98" when n = 1).
std::string format_interval(const Stat& s, int decimals = 2);
// One of the statistic's numbers, `x` ("0.98"), or "—" when the statistic has no values.
std::string format_number(const Stat& s, double x, int decimals = 2);
// One of the statistic's numbers, `x`, or NaN when the statistic has no values (a JSON writer
// writes it as null).
double number_or_nan(const Stat& s, double x);

std::string comparison_markdown(const Comparison& c);
std::string comparison_csv(const Comparison& c);
std::string comparison_json(const Comparison& c);  // pretty JSON text

}  // namespace pelab
