// An experiment's configuration: YAML sections model, positional, task, training, evaluation
// and sweep, read into typed structs once.
//
//   * Config groups: a section given as a name pulls a file, e.g. `positional: rotary` reads
//     configs/positional/rotary.yaml (searched next to the config, then in configs/).
//   * Overrides: `key=value` with a dotted key (`model.heads=8`, `positional.type=alibi`),
//     applied after groups, type-checked like the file; a typo names the nearest valid key.
//   * Resolution: vocabulary sizes come from the task (model.vocab_in and vocab_out may be
//     given only with the task's values, as a resolved config holds them), defaults are
//     written out, and the scheme resolves the keys that depend on the run (learned: max_len
//     = the longest length trained or evaluated on).
//   * Checks beyond each key's type and range: a group file names what it is (a positional
//     group its `type`, a task group its `name`); `name` is one path component (it names the
//     run's directory, runs/<name>); an override's or sweep axis's key is a dotted path of
//     plain names; every run of the sweep section loads.
// The resolved config (to_yaml) is saved with every run and in every checkpoint.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pelab/data/randomize.h"
#include "pelab/data/task.h"
#include "pelab/nn/model_config.h"

namespace pelab {

// Bounds that keep a typo from exhausting memory, far above real use: evaluation examples per
// length, a problem size n, threads per run. The command line holds its options to the same.
inline constexpr int64_t kMaxEvalExamples = 1000000;
inline constexpr int64_t kMaxProblemSize = 100000;
inline constexpr int64_t kMaxThreads = 256;

// Training to a criterion (training.stop_when): every `every` steps the model is scored on a
// validation set at the training lengths, drawn apart from the evaluation sets; training
// stops once the score is at least `accuracy` at `patience` checks in a row. training.steps
// is then the maximum. Off while accuracy is 0.
struct StopWhen {
  double accuracy = 0;                    // the threshold, in (0, 1]; 0 = off
  std::string metric = "token_accuracy";  // or sequence_accuracy
  int64_t patience = 1;                   // checks in a row at or above the threshold
  int64_t every = 100;                    // steps between checks
  int64_t examples = 64;                  // validation examples per training length
  bool enabled() const { return accuracy > 0; }
  // The criterion is met once `streak` checks in a row were at or above the threshold.
  bool met(int64_t streak) const { return streak >= patience; }
};

struct TrainingConfig {
  int64_t steps = 1000;  // with stop_when: the maximum
  int64_t batch_size = 32;
  std::string optimizer = "adamw";  // sgd | adam | adamw
  double lr = 1e-3;
  double weight_decay = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.98;
  double eps = 1e-8;
  double momentum = 0.9;  // sgd
  int64_t warmup = 100;
  std::string schedule = "cosine";  // constant | linear | cosine (after warm-up)
  double min_lr = 0.0;
  double clip_norm = 1.0;  // 0 = no clipping
  // per_example: each example of a batch draws its own size; per_batch: one size for the
  // whole batch, as Delétang et al.'s training loop draws it (and no padding).
  std::string length_sampling = "per_example";
  int64_t log_every = 50;
  int64_t eval_every = 0;  // 0 = only at the end
  int64_t checkpoint_every = 500;
  bool check_finite = false;  // check every op's output for NaN/Inf (slow)
  StopWhen stop_when;
};

struct EvaluationConfig {
  std::vector<int64_t> lengths;  // problem sizes n; default: a ladder up to 4× the training max
  int64_t examples = 200;        // per length
  int64_t batch_size = 64;
  uint64_t seed = 1234;  // fixed: every scheme and seed is judged on the same sequences
};

struct SweepConfig {
  // Each axis: a dotted key and its values (as override text); runs = the product.
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  int64_t parallel = 0;  // concurrent runs; 0 = as many as cores
  // An axis whose value compare chooses per group by in-distribution validation score
  // (training.lr), fixed with the sweep, before its runs; "" = none.
  std::string select;
};

struct ExperimentConfig {
  std::string name = "experiment";  // the run's directory name: one path component
  uint64_t seed = 0;
  int64_t threads = 1;  // per run
  ModelConfig model;
  RandomizeConfig randomize;  // positional.randomize: how batches number their tokens
  TaskConfig task;
  TrainingConfig training;
  EvaluationConfig evaluation;
  SweepConfig sweep;
  std::string source;  // the file it came from
  // Each section given as a config group (`positional: rotary`) → the group file it was read
  // from (print-config shows them).
  std::map<std::string, std::string> group_files;
};

// Loads, applies groups and overrides ("key=value"), validates and resolves. Every section
// is validated, the sweep's too: each of its runs is loaded as `pelab sweep` will load it.
ExperimentConfig load_experiment(const std::string& path,
                                 const std::vector<std::string>& overrides = {});
// As load_experiment, and `sweep_runs` receives the configs of the sweep's runs loaded to
// check them, in expand_sweep's order (pelab/sweep/sweep.h): each is what load_experiment of
// the file with the overrides, then that run's axis values, then `sweep={}` gives.
ExperimentConfig load_experiment(const std::string& path, const std::vector<std::string>& overrides,
                                 std::vector<ExperimentConfig>& sweep_runs);
// A run's config.yaml, to check the run's checkpoint against (pelab/run/
// run_checkpoint.h): as load_experiment, except that the values the task determines are taken
// from the task even where the file gives others, so that a task edited since training shows
// as a difference from the checkpoint's config. A run's config has no sweep.
ExperimentConfig load_run_config(const std::string& path);
// The same from YAML text (source = name used in messages; groups resolve from configs_dir).
ExperimentConfig parse_experiment(const std::string& text, const std::string& source,
                                  const std::vector<std::string>& overrides,
                                  const std::string& configs_dir);
// Config groups (`positional: rotary` → <dir>/positional/rotary.yaml) are looked up in the
// config's own configs directory first, then in `dirs`, in order (the command line's
// --config-path, PELAB_CONFIG_PATH, then the configs shipped with pelab). Process-wide: set
// once, before configs are read.
void set_config_search_path(std::vector<std::string> dirs);
// The directories groups of a config whose own configs directory is `configs_dir` are looked
// up in, in order.
std::vector<std::string> config_search_path(const std::string& configs_dir);

// Every key, resolved. Reloading it gives the same config.
std::string to_yaml(const ExperimentConfig& config);

// The longest sequence (in tokens) the run trains or evaluates on.
int64_t longest_sequence(const ExperimentConfig& config, const Task& task);

}  // namespace pelab
