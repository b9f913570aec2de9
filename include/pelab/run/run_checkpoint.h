// A run's checkpoint, the one owner of its format: the model's parameters and the resolved
// config it was trained with (pelab/nn/checkpoint.h), the optimizer's state as "optim.*", the
// data sampler's state as "rng.data" (I64 [8]: four 64-bit words as eight 32-bit halves, low
// half first) and, as metadata, the step, the optimizer's step count and training.stop_when's
// streak. The trainer writes it (run_checkpoint_tensors) and resumes from it
// (restore_run_checkpoint); `pelab eval` and `pelab dump` open it for evaluation
// (open_run_checkpoint): the model and every setting that indexes its outputs (vocab_out, the
// task, the lengths) come from one source. The stored config must equal the run directory's
// config.yaml, checked as strictly as `pelab train --resume` checks it, and the parameters must
// be finite.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/core/rng.h"
#include "pelab/io/safetensors.h"
#include "pelab/nn/encoder.h"
#include "pelab/train/optimizer.h"

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

// What a run checkpoint holds besides the model and the optimizer: where training stands.
struct TrainingState {
  int64_t step = 0;
  Generator::State data_rng{};
  std::optional<int64_t> stop_streak;  // training.stop_when's checks in a row, when it is on
  // The loss of the last step taken (none before the first): a run resumed after its last
  // step reports it as its final loss, as the run that took that step would have.
  std::optional<float> loss;
};

// The checkpoint of a run at `state`, written by the caller (SafetensorsWriter::write). The
// optimizer's state must be finite (the caller checks it: a checkpoint to go back to).
SafetensorsWriter run_checkpoint_tensors(const Encoder& model, const std::string& config_yaml,
                                         const Optimizer& optimizer, const TrainingState& state);

// Loads a run checkpoint into `model` and `optimizer` and returns where training stands, after
// checking every entry (the file may have been edited or corrupted) for what
// run_checkpoint_tensors can write: shape, dtype, range and finiteness; a refusal names the
// file and the entry. The caller has checked the stored config. `max_step`: the config's
// training.steps.
TrainingState restore_run_checkpoint(const SafetensorsFile& file, Encoder& model,
                                     Optimizer& optimizer, int64_t max_step);

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

// The keys `pelab eval --set` takes: those that change no parameter, so the checkpoint's
// parameters fit the model they make (rotary's scaling: MODEL.md leaves an evaluation-only
// override to the command line).
const std::vector<std::string>& evaluation_set_keys();
// `run` with `settings` ("key=value", each key one of evaluation_set_keys(); any other is an
// error naming it) for one evaluation: its config re-read from the run's config text with
// them, checked as a config is, and the model rebuilt for it with the checkpoint's
// parameters. The run's files are read, never written.
void set_for_evaluation(RunCheckpoint& run, const std::vector<std::string>& settings);

}  // namespace pelab
