// A run's checkpoint, opened for evaluation: the model and every setting that indexes its
// outputs (vocab_out, the task, the lengths) come from one source. The checkpoint stores the
// resolved config it was trained with; it must equal the run directory's config.yaml, checked
// as strictly as `pelab train --resume` checks it, and its parameters must be finite.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "pelab/experiment/config.h"
#include "pelab/io/safetensors.h"
#include "pelab/nn/encoder.h"

namespace pelab {

// Where a run checkpoint stands: its metadata besides the config.
struct CheckpointProgress {
  int64_t step = 0;                    // training steps done
  int64_t optimizer_steps = 0;         // equal to `step`: one optimizer step per training step
  std::optional<int64_t> stop_streak;  // training.stop_when's checks in a row, when saved
};

struct RunCheckpoint {
  std::string dir;              // the run directory
  std::string checkpoint_path;  // the checkpoint evaluated
  ExperimentConfig config;      // the run's config.yaml, equal to the checkpoint's
  std::unique_ptr<Encoder> model;
  CheckpointProgress progress;
};

// The metadata checks `--resume` and `pelab eval` share, for what save_checkpoint writes (the
// file may have been edited or corrupted); each refusal names the checkpoint and the entry.
// The format tag must be this pelab's:
void check_checkpoint_format(const SafetensorsFile& file);
// and the step, the optimizer's step count and the stop streak integers in range, the step
// at most `max_step` (the config's training.steps):
CheckpointProgress checkpoint_progress(const SafetensorsFile& file, int64_t max_step);

// Refuses a checkpoint whose stored config is not `config_yaml` (the text of `config_path`).
void check_checkpoint_config(const SafetensorsFile& file, const std::string& config_yaml,
                             const std::string& config_path);

// Refuses a model with a NaN or infinite parameter, naming the parameter and `source`.
void check_parameters_finite(const Encoder& model, const std::string& source);

// `run_or_checkpoint` is a run directory (its checkpoint.safetensors is evaluated) or a
// safetensors file inside one (that file is evaluated, against the directory's config.yaml).
RunCheckpoint open_run_checkpoint(const std::string& run_or_checkpoint);

}  // namespace pelab
