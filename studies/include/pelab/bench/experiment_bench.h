// `pelab bench --config default`: the training-step speed of the experiments pelab ships, the
// runs users wait on, beside the reference configs (pelab/bench/train_bench.h). A case loads
// the experiment's config and builds its task, model, optimizer and batches exactly as
// `pelab train` does (pelab/run/trainer.h); a timed step is one iteration of the
// trainer's loop without its logging: drawing the batch, then train_step (forward, backward,
// clipping, the finite checks, update). No evaluation and no checkpoint.
//
// Named cases (files under the config search path: PELAB_CONFIG_PATH, then the configs shipped
// with pelab):
//   default     configs/default.yaml, the default comparison
//   quickstart  configs/quickstart.yaml, the first run of the README
//   claim       studies/configs/claims/c01.yaml: the default comparison made bidirectional, the
//               setting most claims train (default.yaml with a few overrides)
//   survey      configs/tasks/reverse.yaml, one experiment of the task survey
// or the path of any .yaml: an experiment config, or a claim config (its settings.experiment
// with its settings.overrides, the sweep axes aside).
#pragma once

#include <string>
#include <vector>

#include "pelab/bench/train_bench.h"
#include "pelab/config/experiment.h"

namespace pelab {

// The named cases, in the order the help lists them.
const std::vector<std::string>& experiment_case_names();
// True for tiny, small and medium.
bool is_reference_config(const std::string& config);

// Where a case's training runs come from: an experiment file and the overrides every run of
// it gets (a claim's, or none).
struct ExperimentCase {
  std::string path;
  std::vector<std::string> overrides;
};
// A named case or a .yaml path; an unknown name is an error that lists the valid ones.
ExperimentCase find_experiment_case(const std::string& config);

// The case's config as `pelab train` would run it with `threads` threads: with `scheme` as
// the positional group (`positional=<scheme>`, as the sweeps set it), or the config's own
// scheme when `scheme` is empty. Without its sweep section: one run.
ExperimentConfig load_experiment_case(const std::string& config, const std::string& scheme,
                                      int threads);

// Builds the run's pieces, warms up, times the steps (tokens: means over the timed steps,
// whose batches differ); in this process.
TrainCaseResult run_experiment_case(const std::string& config, const std::string& scheme,
                                    const TrainCaseOptions& options);

}  // namespace pelab
