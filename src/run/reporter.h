// What a run tells as it trains: the log (on the console, unless a progress bar owns the
// terminal, and in train.log), metrics.jsonl, and the progress bar. The trainer's own.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/data/task.h"
#include "pelab/run/evaluate.h"
#include "pelab/run/trainer.h"

namespace pelab {

class Reporter {
 public:
  Reporter(const ExperimentConfig& c, const TrainOptions& options);

  spdlog::logger& log() { return log_; }

  // Opens metrics.jsonl for appending and starts the clock, at `first_step`.
  void begin(int64_t first_step);

  // A step done: its tokens count towards tokens/s; every training.log_every steps (and at
  // the last) a metrics line, a log line and the bar.
  void step(int64_t step, const std::vector<Example>& examples, float loss, float lr,
            float grad_norm);

  // An evaluation during training, as a metrics line.
  void evaluation(int64_t step, const Evaluation& e);

  // A training.stop_when check, as a metrics line and a log line.
  void validation(int64_t step, const Validation& v, const StopWhen& w, int64_t streak);

  // Ends the bar's line.
  void end_bar();

  // The final evaluation, a log line per length.
  void final_evaluation(const Evaluation& e);

 private:
  static spdlog::sink_ptr console_sink(bool bar);

  const ExperimentConfig& c_;
  const std::string dir_;
  const bool bar_;
  spdlog::logger log_;
  std::ofstream metrics_;
  std::chrono::steady_clock::time_point start_, window_start_;
  int64_t first_step_ = 0;
  int64_t tokens_since_ = 0;
};

}  // namespace pelab
