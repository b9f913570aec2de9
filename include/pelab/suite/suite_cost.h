// A suite's cost model: the core-seconds of one run, from its config and the suite file's
// cost section. `pelab suite run --dry-run` prints it per run and summed; the suite's page
// states the sum as the budget's cost.
//
//   cost:
//     seconds_per_token: 2.30e-5   # the base scheme's training step / (batch × padded
//                                  # length), one thread, at sequences of at_length tokens
//     at_length: 79
//     measured: how and where
//     step_time: costs/step_time.yaml   # relative to this file, or the same mapping inline:
//       # base: none                  # the scheme seconds_per_token was measured with
//       # factors: {rotary: 1.04, fire: 6.33}   # a scheme's step / the base's (registry names)
//       # measured: how and where
//
// A run costs, in base-scheme training tokens at at_length:
//
//   training    steps × batch × E[T tokens read at T], T the tokens of the longest example of
//               a batch (batches are padded to it; sizes drawn uniformly from the range)
//   evaluation  Σ over evaluation lengths n: examples × draws × forward(n) / 3
//   validation  (steps / every) × examples × draws × Σ over training sizes n: forward(n) / 3
//
// times seconds_per_token. A forward pass is a third of a training step. A token read at
// sequence length T costs
//
//   w(T) + (step_time − 1) · T / at_length
//
// w(T) = (linear + attention·T) / (linear + attention·at_length) scales the base scheme's token
// with the length it is read at: per layer and token, linear = 4·d² + 2·d·d_ff multiply-adds
// (projections, feed-forward) and attention = 2·d a key (scores and the weighted sum), so the
// T² part of attention is in. The scheme's extra over the base, measured at at_length, is taken
// to be per pair of tokens (the positional schemes that cost more act on the attention logits:
// a bias, Shaw's tables, FIRE's MLP over every pair), so it too grows with T. forward(n) =
// tokens(n) at tokens(n), one pass; with greedy generation (task.layout: lm at evaluation) every
// generated token re-reads its prefix (no cache): Σ over answer slots s of p + s tokens read at
// p + s, p the prompt. Validation is one pass even then (teacher-forced).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "pelab/config/experiment.h"

namespace pelab {

class MapReader;

// Each scheme's training step relative to the base scheme's, on the model it was measured on.
struct StepTimes {
  std::string base;
  std::map<std::string, double> factors;  // registry scheme name → step / base's step
  std::string measured;
  std::string source;  // the file they were read from
};

struct SuiteCost {
  double seconds_per_token = 0;
  int64_t at_length = 0;
  std::string measured;
  StepTimes step_time;
};

// Reads a suite file's cost section (`cost` is it; `suite_path` places a step_time file).
// Errors name the file, the key and what is valid.
SuiteCost read_suite_cost(MapReader& cost, const std::string& suite_path);

struct RunCost {
  int64_t steps = 0;
  double core_seconds = 0;  // training + evaluation + validation
  double training = 0, evaluation = 0, validation = 0;
  std::string scheme;  // the run's positional type
  double step_time = 1;
  bool step_time_known = true;  // false: no factor for the scheme; counted as the base
};

// The run's estimate at its step cap: an upper bound on training (the criterion ends most runs
// that learn sooner).
RunCost estimate_run(const SuiteCost& cost, const ExperimentConfig& run);

// The weight w(T) of the base scheme's token read at sequence length T, for a model of width
// d_model and feed-forward width d_ff (1 at at_length).
double token_weight(int64_t d_model, int64_t d_ff, double length, double at_length);
// A token of a scheme of that step_time read at length T (step_time at at_length).
double token_cost(int64_t d_model, int64_t d_ff, double step_time, double length, double at_length);

// The expected longest of `batch` sizes drawn uniformly from [lo, hi]: the padded batch's size.
double expected_longest(int64_t lo, int64_t hi, int64_t batch);

}  // namespace pelab
