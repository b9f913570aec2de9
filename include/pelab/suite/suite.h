// Suites: named benchmarks fixed before their runs. A suite file (configs/suites/NAME.yaml)
// states the tasks, the model and training protocol every run takes, the budget (step cap,
// stop criterion, seeds, learning rates, evaluation lengths and examples) and the shipped
// schemes whose results are recorded for it; every scheme is trained under exactly the same
// settings. `pelab suite run NAME` trains every run not yet finished as one sweep plan
// (pelab/sweep/sweep.h: resumable, local or one Slurm job array), and `pelab suite report`
// writes the task × scheme table beside the recorded baselines (suite_report.h).
//
//   suite: chomsky                   # the file's stem
//   description: one line
//   tasks:                           # task → an experiment config (relative to this file);
//     reverse_string: ../tasks/reverse_string.yaml   # its task section is the task's
//     copy:                          # or the config and the task's own protocol keys, taken
//       config: ../tasks/copy.yaml   # after the suite's (a layout, an alphabet); the budget's
//       protocol: {task: {layout: lm, symbols: 64}}  # keys stay the suite's
//   protocol:                        # keys every run of every task and scheme takes
//     model: {d_model: 64, heads: 8, layers: 5, norm: post, causal: false}
//     training: {batch_size: 32, optimizer: adam, schedule: constant, warmup: 0}
//   budget:
//     steps: 1000                    # the cap (training.steps)
//     stop_when: {accuracy: 0.95, metric: sequence_accuracy, patience: 2, every: 100}
//     seeds: [0, 1, 2]
//     lrs: [0.0003, 0.001]           # each scheme and task keeps the best by validation
//     training_lengths: [1, 40]      # task.min_length, task.max_length (default: each
//                                    # task config's own)
//     evaluation_lengths: [8, 24, 40, 64, 100, 160]   # default: each task config's own
//     examples: 200                  # per evaluation length
//   schemes: [none, sinusoidal, rotary]   # the shipped schemes recorded, plain
//   randomized:                      # Ruoss et al. 2023: these also with randomized positions
//     schemes: [rotary]
//     max_position: 2048
//     eval_draws: 1
//   cost:                            # the cost model of --dry-run's estimate (suite_cost.h)
//     seconds_per_token: 2.33e-5     # the base scheme's step / (batch × padded length)
//     at_length: 79                  # the padded length it was measured at
//     measured: how and where
//     step_time: costs/step_time.yaml   # each scheme's step relative to the base's
//
// A run of the suite is its task's config with, in order, the protocol's keys, the task's own,
// the budget's,
// the scheme's (`positional=NAME` for a shipped group, `positional={type: NAME}` for a scheme
// without one, a group file's contents as one mapping) and the lr and seed. Its directory is
// <out>/task=T/scheme=S/training.lr=L/seed=N.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/suite/suite_cost.h"
#include "pelab/sweep/sweep.h"

namespace pelab {

struct SuiteTask {
  std::string name;
  std::string config;                 // absolute
  std::vector<std::string> protocol;  // the task's own KEY=VALUE overrides, after the suite's
  std::vector<int> protocol_lines;    // the line of each in the suite file
};

// One column of a suite's table.
struct SuiteScheme {
  std::string label;   // "rotary", "rotary+randomized", a group file's stem
  std::string source;  // a registry name, or the group file it was read from
  bool randomized = false;
  bool shipped = false;  // a scheme of the suite's own list (recorded baselines exist for it)
  std::vector<std::string> overrides;
};

struct SuiteBudget {
  int64_t steps = 0;
  std::vector<std::string> stop_when;      // training.stop_when.KEY=VALUE
  std::vector<std::string> seeds, lrs;     // as override text
  int64_t min_length = 0, max_length = 0;  // 0: each task config's own
  std::vector<int64_t> evaluation_lengths;
  int64_t examples = 0;
};

struct Suite {
  std::string name, description;
  std::string path;  // absolute
  std::vector<SuiteTask> tasks;
  std::vector<std::string> protocol;  // KEY=VALUE overrides every run takes
  std::vector<int> protocol_lines;    // the line of each in the suite file
  // The budget's override keys ("training.steps") → where the suite file gives them.
  std::vector<std::pair<std::string, std::string>> budget_lines;
  SuiteBudget budget;
  std::vector<std::string> schemes;     // shipped, plain
  std::vector<std::string> randomized;  // shipped, with randomized positions too
  int64_t max_position = 0, eval_draws = 1;
  SuiteCost cost;
  // Every run of the suite takes these after the protocol (the budget as overrides).
  std::vector<std::string> budget_overrides() const;
  // What every run of `task` takes before its scheme's keys: the protocol, the task's own
  // protocol, the budget.
  std::vector<std::string> task_overrides(const SuiteTask& task) const;
  // A digest of everything that fixes the suite's runs (protocol, budget, tasks' configs):
  // a recorded baseline counts only for the same one.
  std::string fingerprint() const;
};

// Reads and checks a suite file: every error names the file, the line and the key, and what
// would be valid. The protocol and budget are checked by loading each task's config with them.
Suite load_suite(const std::string& path);
// The same from the file's text (`path` names it and places its relative task paths).
Suite parse_suite(const std::string& text, const std::string& path);

// The suite files shipped (configs/suites/*.yaml on the config search path), by name.
std::vector<std::string> suite_files();
// A suite by name (configs/suites/NAME.yaml) or by the path of its file.
std::string find_suite(const std::string& name_or_path);

// The columns a run of the suite trains: `requested` as the command line gives them (a
// scheme's registry name, a config group file's path, either with "+randomized"), or, when
// empty, the suite's own schemes plain and those of `randomized` randomized.
std::vector<SuiteScheme> suite_schemes(const Suite& suite,
                                       const std::vector<std::string>& requested);

// Every run of the suite for these schemes, as a sweep plan (nothing is written). `command`
// is how a Slurm task re-plans it: the arguments after the executable, without --index.
SweepPlan plan_suite(const Suite& suite, const std::vector<SuiteScheme>& schemes,
                     const std::string& out_dir, const std::vector<std::string>& task_command,
                     const std::vector<std::string>& report_command);

// The default directory of a suite's runs: runs/suites/NAME.
std::string default_suite_dir(const Suite& suite);

}  // namespace pelab
