// `pelab bench`: training-step speed of the reference model at three sizes, the same model,
// batch and optimizer as the PyTorch reference script (docs/performance.md):
//
//   pre-LN encoder, exact GELU, FFN 4·d, vocabulary = classes = 16, no dropout, AdamW
//   (lr 1e-3, weight decay 0.01 on every parameter), one fixed synthetic batch with lengths
//   uniform in [T/2, T], pad id 0, target y_t = (x_t + x_{t−1}) mod 16, padding ignored.
//
// One case = (config, scheme, threads). run_train_case() times it in this process; the CLI
// runs every case in a child process of its own so that each peak RSS is the case's own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pelab/data/batch.h"
#include "pelab/nn/model_config.h"

namespace pelab {

struct BenchConfig {
  std::string name;  // tiny | small | medium
  int64_t d_model, layers, heads, T, B, vocab;
};

// The three reference configs, smallest first.
const std::vector<BenchConfig>& bench_configs();
const BenchConfig& bench_config(const std::string& name);  // error listing the valid names
// Every scheme the benchmark covers (pelab's names): every registered scheme, in the
// registry's order.
const std::vector<std::string>& bench_schemes();
// The reference script's scheme to compare a pelab scheme with: the same scheme under its
// name there (rotary is "rope"), or, for one the script lacks, the scheme it has that acts
// where this one does (SchemeInfo::acts): sinusoidal for an input table, rope for queries and
// keys, alibi for a logit bias, relative for logits and values.
std::string torch_scheme_name(const std::string& scheme);
// True when torch_scheme_name(scheme) is a stand-in rather than the same scheme.
bool torch_scheme_is_stand_in(const std::string& scheme);

ModelConfig bench_model_config(const BenchConfig& c, const std::string& scheme);
// The fixed synthetic batch of the reference script's pattern (not its values: its RNG is
// PyTorch's). Positions 0..T−1.
Batch bench_batch(const BenchConfig& c, uint64_t seed);
// Matmul FLOPs of one training step (forward + backward = 3 × forward), the reference
// script's count: linear layers, QKᵀ and αV, and relative's table products. Elementwise work,
// LayerNorm, softmax, GELU and AdamW are not counted.
double bench_matmul_flops(const BenchConfig& c, const std::string& scheme);
// The same count for any model on a [B, T] batch (T counts the padding) whose row-wise parts
// (the linear layers) run on `rows` rows: B·T in the reference script; the real tokens in
// pelab's training, which leaves padding out of them (Encoder::PaddedRows).
double matmul_flops(const ModelConfig& model, int64_t B, int64_t T, double rows);

struct TrainCaseOptions {
  int threads = 1;
  int warmup = 5;
  int max_steps = 30;      // timed steps at most
  int min_steps = 10;      // timed steps at least
  double max_seconds = 8;  // stop timing after this once min_steps are done
};

struct TrainCaseResult {
  std::string config, scheme;
  int threads = 1;
  int steps = 0;  // timed
  double ms_median = 0, ms_min = 0;
  // Per step: B·T, the padding counted (what the reference script counts), and the real
  // tokens only (what `pelab train` logs). Means over the timed steps where batches vary.
  double tokens_per_step = 0, real_tokens_per_step = 0;
  double tokens_per_s = 0, real_tokens_per_s = 0;
  double gflop_per_step = 0, gflops = 0;
  double final_loss = 0;
  double peak_rss_mb = 0;  // filled by whoever measures the process (0 = not measured)
};

// Builds the model, warms up, times the steps; in this process, with `threads` OpenMP threads.
TrainCaseResult run_train_case(const std::string& config, const std::string& scheme,
                               const TrainCaseOptions& options);

// The timing loop itself, for any model and batch (the claims time variants of the reference
// model): AdamW as the reference script builds it, in this process.
struct StepTiming {
  int steps = 0;  // timed
  double ms_median = 0, ms_min = 0;
  double final_loss = 0;
  // The most bytes tensors held at once during one step (forward, backward and update), in MB:
  // unlike peak RSS, this is the step's own, whatever ran before in the process.
  double peak_tensor_mb = 0;
};
StepTiming time_training_steps(const ModelConfig& model, const Batch& batch,
                               const TrainCaseOptions& options);
// The loop under both: options.warmup untimed calls of `step` (one training step; it returns
// the loss), then timed calls, in this process (the caller sets the threads).
StepTiming time_steps(const TrainCaseOptions& options, const std::function<double()>& step);

// Long evaluation: one forward pass without gradients of `config`'s model on one sequence of
// `length` tokens (all real). Attention works in blocks of query rows, so memory grows with
// length·d, never with length² per head: peak RSS shows it.
struct EvalCaseResult {
  std::string config, scheme;
  int64_t length = 0;
  int threads = 1;
  double ms = 0;
  double peak_rss_mb = 0;     // filled by whoever measures the process
  double full_scores_mb = 0;  // what one layer's [heads, T, T] scores would take
};
EvalCaseResult run_eval_case(const std::string& config, const std::string& scheme, int64_t length,
                             int threads);

// Peak resident set size of this process so far, in MB (getrusage).
double peak_rss_mb();

}  // namespace pelab
