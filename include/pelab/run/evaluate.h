// Evaluation by length: the fixed evaluation set of each problem size n, with token and
// sequence accuracy, loss, and accuracy per position.
#pragma once

#include <string>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/data/task.h"
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
  // Randomized positions at evaluation: each draw's accuracies (the fields above are their
  // means); empty with one draw.
  std::vector<double> token_accuracy_draws, sequence_accuracy_draws;
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

// How an lm task's answers are predicted (pelab/run/decoding.h): by greedy generation
// (the reported evaluation), or teacher-forced, every answer slot in one forward pass
// (validation). A native layout reads every answer in one forward pass either way.
enum class AnswerDecoding { greedy, teacher_forced };

// What an evaluation reads of a run's config, and nothing more.
struct EvalSettings {
  std::vector<int64_t> lengths;  // problem sizes n
  int64_t examples = 0;          // per length
  int64_t batch_size = 0;
  // The sets depend only on the task, the length and this seed: every scheme and seed of an
  // experiment is judged on the same sequences.
  uint64_t seed = 0;
  int64_t train_min_length = 0, train_max_length = 0;  // marks the lengths trained on
  RandomizeConfig randomize;  // positions drawn as in training, where randomize.at_eval
  // task.position_ids: "digit_runs" numbers tokens by their digit runs, with no offset.
  std::string position_ids = "index";
};
// The evaluation the config states, at `lengths` instead of evaluation.lengths when given.
EvalSettings evaluation_settings(const ExperimentConfig& config, std::vector<int64_t> lengths = {});
// training.stop_when's validation sets at `lengths`: drawn with their own seed, apart from the
// evaluation sets that report results, stop_when.examples of each length.
EvalSettings validation_settings(const ExperimentConfig& config, std::vector<int64_t> lengths);

// Evaluates `model` on the sets `settings` names. For the lm layout,
// with greedy decoding: token accuracy is the share of answer slots (m answer tokens and
// <end>) whose generated token is the gold one; sequence accuracy is exact match (y_1..y_m,
// then <end>); the loss stays the teacher-forced cross-entropy on the same examples.
Evaluation evaluate(const Encoder& model, const Task& task, const EvalSettings& settings,
                    AnswerDecoding decoding = AnswerDecoding::greedy);
// The same on evaluation_settings(config, lengths).
Evaluation evaluate(const Encoder& model, const Task& task, const ExperimentConfig& config,
                    std::vector<int64_t> lengths = {},
                    AnswerDecoding decoding = AnswerDecoding::greedy);

// The in-distribution validation score (training.stop_when, and summary.json): the mean over
// the training lengths of token and sequence accuracy, on validation sets drawn with their
// own seed, apart from the evaluation sets that report the results. A file task has no
// generator: its validation sets are its evaluation file's examples at the training lengths.
struct Validation {
  std::vector<int64_t> lengths;  // the training lengths it was measured at
  double token_accuracy = 0;
  double sequence_accuracy = 0;
  double score(const std::string& metric) const {
    return metric == "sequence_accuracy" ? sequence_accuracy : token_accuracy;
  }
};
// The lengths validation uses: every training size the task has examples of.
std::vector<int64_t> validation_lengths(const Task& task, const ExperimentConfig& config);
Validation validate(const Encoder& model, const Task& task, const ExperimentConfig& config);

// CSV texts for a run directory. A run's own files round to six decimals (their bytes are part
// of what a run reproduces); `pelab eval --out` writes every digit (the shortest text that
// reads back as the same double), so two evaluations can be compared exactly.
enum class CsvDigits { six_decimals, full };
std::string eval_csv(const Evaluation& e, CsvDigits digits = CsvDigits::six_decimals);
std::string per_position_csv(const Evaluation& e, CsvDigits digits = CsvDigits::six_decimals);

}  // namespace pelab
