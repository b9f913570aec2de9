// An experiment's configuration: YAML sections model, positional, task, training, evaluation
// and sweep, read into typed structs once.
//
//   * Config groups: a section given as a name pulls a file, e.g. `positional: rotary` reads
//     configs/positional/rotary.yaml (searched next to the config, then in configs/).
//   * Overrides: `key=value` with a dotted key (`model.heads=8`, `positional.type=alibi`),
//     applied after groups, type-checked like the file; a typo names the nearest valid key.
//   * Resolution: vocabulary sizes come from the task, defaults are written out, and the
//     scheme resolves the keys that depend on the run (learned: max_len = the longest
//     length trained or evaluated on).
// The resolved config (to_yaml) is saved with every run and in every checkpoint.
#pragma once

#include <cstdint>
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

struct TrainingConfig {
  int64_t steps = 1000;
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
  int64_t log_every = 50;
  int64_t eval_every = 0;  // 0 = only at the end
  int64_t checkpoint_every = 500;
  bool check_finite = false;  // check every op's output for NaN/Inf (slow)
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
};

struct ExperimentConfig {
  std::string name = "experiment";
  uint64_t seed = 0;
  int64_t threads = 1;  // per run
  ModelConfig model;
  RandomizeConfig randomize;  // positional.randomize: how batches number their tokens
  TaskConfig task;
  TrainingConfig training;
  EvaluationConfig evaluation;
  SweepConfig sweep;
  std::string source;  // the file it came from
};

// Loads, applies groups and overrides ("key=value"), validates and resolves.
ExperimentConfig load_experiment(const std::string& path,
                                 const std::vector<std::string>& overrides = {});
// The same from YAML text (source = name used in messages; groups resolve from configs_dir).
ExperimentConfig parse_experiment(const std::string& text, const std::string& source,
                                  const std::vector<std::string>& overrides,
                                  const std::string& configs_dir);
// Every key, resolved. Reloading it gives the same config.
std::string to_yaml(const ExperimentConfig& config);

// The longest sequence (in tokens) the run trains or evaluates on.
int64_t longest_sequence(const ExperimentConfig& config, const Task& task);

}  // namespace pelab
