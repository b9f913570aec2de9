// Evaluation by length: the fixed evaluation set of each problem size n, with token and
// sequence accuracy, loss, and accuracy per position.
#pragma once

#include <string>
#include <vector>

#include "pelab/data/task.h"
#include "pelab/experiment/config.h"
#include "pelab/nn/encoder.h"

namespace pelab {

struct LengthResult {
  int64_t length = 0;  // problem size n
  int64_t tokens = 0;  // sequence length in tokens
  int64_t examples = 0;
  int64_t scored = 0;  // scored target positions
  double token_accuracy = 0;
  double sequence_accuracy = 0;  // every scored position right
  double loss = 0;               // mean cross-entropy per scored position
  bool in_training = false;      // task.min_length ≤ n ≤ task.max_length
};

struct PositionResult {
  int64_t length = 0;    // problem size n
  int64_t position = 0;  // token index in the sequence
  int64_t scored = 0;
  int64_t correct = 0;
  double loss_sum = 0;
};

struct Evaluation {
  std::vector<LengthResult> by_length;
  std::vector<PositionResult> by_position;
};

// Evaluates `model` at `lengths` (default: config.evaluation.lengths).
Evaluation evaluate(const Encoder& model, const Task& task, const ExperimentConfig& config,
                    std::vector<int64_t> lengths = {});

// CSV texts for a run directory.
std::string eval_csv(const Evaluation& e);
std::string per_position_csv(const Evaluation& e);

}  // namespace pelab
