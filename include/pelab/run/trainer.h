// Training one run into its directory:
//   config.yaml        the resolved config (reloading it repeats the run)
//   environment.json   pelab version and commit, library versions, CPU, threads, seed
//   metrics.jsonl      one line per logged step (loss, lr, grad norm, tokens/s) and evaluation
//   train.log          the log
//   checkpoint.safetensors  parameters, optimizer state, data RNG state, step (atomic writes)
//   eval.csv, per_position.csv, summary.json   the final evaluation by length
// Ctrl-C / SIGTERM finishes the current step, saves and exits; --resume continues exactly.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "pelab/config/experiment.h"
#include "pelab/core/rng.h"
#include "pelab/data/batch.h"
#include "pelab/data/position_ids.h"
#include "pelab/data/task.h"
#include "pelab/nn/encoder.h"
#include "pelab/train/optimizer.h"
#include "pelab/train/schedule.h"

namespace pelab {

struct TrainOptions {
  std::string run_dir;
  bool resume = false;     // continue from run_dir/checkpoint.safetensors
  bool progress = true;    // a progress bar on a terminal
  int64_t stop_after = 0;  // stop (as if interrupted) after this many steps; 0 = never
  bool init_only = false;  // write the step-0 checkpoint and stop (`pelab init`)
};

struct TrainResult {
  bool completed = false;  // false when interrupted (resume later)
  int64_t steps_done = 0;
  double final_loss = 0;
};

// The training data of a run, batch after batch, exactly as the trainer draws it (the
// analyses replay it to count how often each position was trained on).
class TrainingStream {
 public:
  TrainingStream(const ExperimentConfig& config, const Task& task);
  // The next batch; its examples too when `examples` is given.
  Batch next(std::vector<Example>* examples = nullptr);
  Generator& rng() { return rng_; }  // its state is saved in checkpoints

 private:
  const ExperimentConfig& config_;
  const Task& task_;
  Generator rng_;
  std::optional<DigitRuns> digit_runs_;  // task.position_ids: digit_runs
};

// The model a run starts from: the config's model, initialised from its seed.
std::unique_ptr<Encoder> initial_model(const ExperimentConfig& config);

// What a run trains, built from the config in this order (`pelab bench --config` times its
// steps). Holds a reference to the config, which must outlive it.
struct Training {
  explicit Training(const ExperimentConfig& config);

  const std::unique_ptr<Task> task;
  const std::unique_ptr<Encoder> model;
  const std::unique_ptr<Optimizer> optimizer;
  const LrSchedule schedule;
  TrainingStream stream;
  const uint64_t dropout_base;  // step s's dropout masks are drawn from mix64(base ^ s)
  // training.stop_when's checks in a row at or above the threshold (nullopt when it is off).
  std::optional<int64_t> stop_streak;
};

struct StepStats {
  float loss = 0, lr = 0, grad_norm = 0;
};

// One optimisation step (step + 1 counting from 1) on `batch`: forward, backward, clipping,
// update. A non-finite loss, gradient or parameter ends the run with an error that names the
// step and, from `last_good`, the last good checkpoint.
StepStats train_step(const ExperimentConfig& config, Training& training, const Batch& batch,
                     int64_t step, const std::function<std::string()>& last_good);

TrainResult train_run(const ExperimentConfig& config, const TrainOptions& options);

}  // namespace pelab
