// A run's checkpoint, opened for evaluation: the model and every setting that indexes its
// outputs (vocab_out, the task, the lengths) come from one source. The checkpoint stores the
// resolved config it was trained with; it must equal the run directory's config.yaml, checked
// as strictly as `pelab train --resume` checks it, and its parameters must be finite.
#pragma once

#include <memory>
#include <string>

#include "pelab/experiment/config.h"
#include "pelab/io/safetensors.h"
#include "pelab/nn/encoder.h"

namespace pelab {

struct RunCheckpoint {
  std::string dir;              // the run directory
  std::string checkpoint_path;  // the checkpoint evaluated
  ExperimentConfig config;      // the run's config.yaml, equal to the checkpoint's
  std::unique_ptr<Encoder> model;
};

// Refuses a checkpoint whose stored config is not `config_yaml` (the text of `config_path`).
void check_checkpoint_config(const SafetensorsFile& file, const std::string& config_yaml,
                             const std::string& config_path);

// Refuses a model with a NaN or infinite parameter, naming the parameter and `source`.
void check_parameters_finite(const Encoder& model, const std::string& source);

// `run_or_checkpoint` is a run directory (its checkpoint.safetensors is evaluated) or a
// safetensors file inside one (that file is evaluated, against the directory's config.yaml).
RunCheckpoint open_run_checkpoint(const std::string& run_or_checkpoint);

}  // namespace pelab
