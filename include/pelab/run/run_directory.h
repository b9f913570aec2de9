// A run's directory and the files the trainer keeps in it: config.yaml, environment.json and
// metrics.jsonl when the run starts, the checkpoint while it trains (pelab/run/
// run_checkpoint.h), eval.csv, per_position.csv and summary.json when it ends; and the lock
// one process holds while it trains the run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "pelab/config/experiment.h"
#include "pelab/core/rng.h"
#include "pelab/data/task.h"
#include "pelab/io/file_lock.h"
#include "pelab/nn/encoder.h"
#include "pelab/run/evaluate.h"
#include "pelab/train/optimizer.h"

namespace pelab {

// The lock a trainer holds on its run directory while it runs (pelab/io/file_lock.h): one
// process trains a run at a time, whoever started it.
std::string run_lock_path(const std::string& run_dir);

// Whether `dir` holds a run: its config.yaml beside a checkpoint, a summary or the run's lock.
// Only the trainer writes into one; no other command may replace a file there.
bool is_run_directory(const std::string& dir);

// Writes `text` to run_dir/name atomically.
void write_run_file(const std::string& run_dir, const std::string& name, const std::string& text);

class RunDirectory {
 public:
  // Takes the run's lock. A new run goes into a directory that does not exist yet, holds only
  // what pelab writes into a run, or holds a run of this very config (refused otherwise, with
  // nothing created); on resume, the directory must hold a checkpoint of this very config.
  RunDirectory(const ExperimentConfig& config, const std::string& run_dir, bool resume);

  const std::string& path() const { return dir_; }

  // A new run's first files: config.yaml, environment.json and an empty metrics.jsonl.
  void write_start_files(const ExperimentConfig& config) const;

  // Parameters, optimizer state, the data RNG's state and the step. Parameters are finite
  // (train_step checks them after every update); so must the optimizer state be, or the file
  // would be a checkpoint that restore() refuses, not a good one to go back to.
  // `stop_streak`: training.stop_when's checks in a row at the threshold, when it is on;
  // `loss`: the last step's loss (none before the first step).
  void save_checkpoint(const Encoder& model, const Optimizer& optimizer, const Generator& data_rng,
                       int64_t step, std::optional<int64_t> stop_streak, std::optional<float> loss);

  // Loads what save_checkpoint saved and returns the step to continue from. Every entry is
  // checked before anything in the run directory changes (restore_run_checkpoint). Then
  // metrics logged after the checkpoint are dropped (they will be logged again) and stale
  // temporaries removed. `stop_streak` (when training.stop_when is on) gets the checks in a
  // row the run had made; `loss` the last step's loss, when the checkpoint holds it.
  int64_t restore(Encoder& model, Optimizer& optimizer, Generator& data_rng, int64_t max_step,
                  std::optional<int64_t>& stop_streak, std::optional<float>& loss);

  // Where a run that stops on bad numbers can be picked up again: the checkpoint this process
  // saved or restored, checked either way.
  std::string last_good() const;

  // The final evaluation: eval.csv, per_position.csv and summary.json (which marks the run
  // completed).
  void write_results(const ExperimentConfig& config, const Task& task, const Encoder& model,
                     const Evaluation& e, const Validation& validation,
                     std::optional<int64_t> stop_streak, int64_t step, double final_loss) const;

 private:
  const std::string dir_;
  const std::string ckpt_path_;
  const std::string config_yaml_;
  std::unique_ptr<FileLock> lock_;
  int64_t saved_step_ = -1;  // the step of the checkpoint on disk (-1: none yet)
};

}  // namespace pelab
