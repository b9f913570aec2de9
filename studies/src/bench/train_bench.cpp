#include "pelab/bench/train_bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/core/rng.h"
#include "pelab/core/strings.h"
#include "pelab/nn/encoder.h"
#include "pelab/positional/scheme.h"
#include "pelab/tensor/storage.h"
#include "pelab/train/optimizer.h"

namespace pelab {

namespace {
constexpr int64_t kRelativeK = 16;  // Shaw clipping distance of the reference model
}  // namespace

const std::vector<BenchConfig>& bench_configs() {
  static const std::vector<BenchConfig> configs = {
      {"tiny", 64, 2, 4, 32, 32, 16},
      {"small", 128, 4, 4, 64, 32, 16},
      {"medium", 256, 4, 8, 128, 16, 16},
  };
  return configs;
}

const BenchConfig& bench_config(const std::string& name) {
  for (const BenchConfig& c : bench_configs())
    if (c.name == name) return c;
  throw Error(fmt::format("unknown bench config '{}' (valid: tiny, small, medium)", name));
}

// Every registered scheme, in the registry's order: a scheme added to the table is benched
// without a line here.
const std::vector<std::string>& bench_schemes() {
  static const std::vector<std::string> schemes = scheme_names();
  return schemes;
}

namespace {
// The schemes the PyTorch reference script implements itself (rotary as "rope").
bool torch_has(const std::string& scheme) {
  return scheme == "none" || scheme == "sinusoidal" || scheme == "learned" || scheme == "rotary" ||
         scheme == "relative" || scheme == "alibi";
}
}  // namespace

// Where the reference script has no implementation, a scheme is compared with the reference's
// scheme that acts where it does (its facts in the registry): an input table with sinusoidal,
// queries and keys with rope, a logit bias with ALiBi, logits and values with Shaw's.
bool torch_scheme_is_stand_in(const std::string& scheme) {
  return !torch_has(scheme);
}

std::string torch_scheme_name(const std::string& scheme) {
  if (torch_has(scheme)) return scheme == "rotary" ? "rope" : scheme;
  switch (scheme_info(scheme).acts) {
    case SchemeInfo::Acts::Input:
      return "sinusoidal";
    case SchemeInfo::Acts::QueriesAndKeys:
      return "rope";
    case SchemeInfo::Acts::LogitsAndValues:
      return "relative";
    case SchemeInfo::Acts::Logits:
      return "alibi";
    case SchemeInfo::Acts::Nowhere:
      break;
  }
  return "none";
}

ModelConfig bench_model_config(const BenchConfig& c, const std::string& scheme) {
  PELAB_CHECK(
      std::find(bench_schemes().begin(), bench_schemes().end(), scheme) != bench_schemes().end(),
      "unknown bench scheme '{}' (valid: {})", scheme, join(bench_schemes()));
  ModelConfig m;
  m.vocab_in = c.vocab;
  m.vocab_out = c.vocab;
  m.d_model = c.d_model;
  m.heads = c.heads;
  m.layers = c.layers;
  m.d_ff = 4 * c.d_model;
  m.dropout = 0.0;
  m.norm = "pre";
  m.causal = scheme_info(scheme).causal_only;  // xpos, cope; the reference stays bidirectional
  m.activation = "gelu";
  m.positional.type = scheme;
  if (scheme == "learned") m.positional.keys.set("max_len", c.T);
  if (scheme == "relative") m.positional.keys.set("max_distance", kRelativeK);
  return m;
}

Batch bench_batch(const BenchConfig& c, uint64_t seed) {
  Generator rng(seed);
  const int64_t B = c.B, T = c.T;
  Batch batch = Batch::padding(B, T);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = rng.uniform_int(T / 2, T);
    int32_t prev = 0;
    for (int64_t t = 0; t < T; ++t) {
      const int64_t i = b * T + t;
      const int32_t x = static_cast<int32_t>(rng.uniform_int(1, c.vocab - 1));
      const bool real = t < len;
      batch.tokens.values[i] = real ? x : 0;
      batch.positions.values[i] = static_cast<int32_t>(t);
      batch.key_mask.values[i] = real ? 1 : 0;
      batch.targets.values[i] = real ? static_cast<int32_t>((x + prev) % c.vocab) : -1;
      prev = x;
    }
  }
  return batch;
}

double bench_matmul_flops(const BenchConfig& c, const std::string& scheme) {
  return matmul_flops(bench_model_config(c, scheme), c.B, c.T, static_cast<double>(c.B * c.T));
}

double matmul_flops(const ModelConfig& m, int64_t B, int64_t T, double rows) {
  const double D = m.d_model, F = m.ffn_width(), L = m.layers, C = m.vocab_out;
  const double N = static_cast<double>(B) * T, R = rows;
  const double linear = L * (8 * R * D * D + 4 * R * D * F) + 2 * R * D * C;  // q,k,v,o; FFN; head
  double attention = L * 4 * N * T * D;                                       // QKᵀ and αV
  if (m.positional.type == "relative" && m.positional.keys.has("max_distance"))
    attention += L * 2 * 2 * N * D * (2 * m.positional.keys.integer("max_distance") + 1);
  return 3 * (linear + attention);
}

double peak_rss_mb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KB on Linux
}

StepTiming time_training_steps(const ModelConfig& model_config, const Batch& batch,
                               const TrainCaseOptions& o) {
  set_num_threads(o.threads);
  Encoder model(model_config, make_scheme, /*init_seed=*/0);
  // AdamW as the reference script builds it: weight decay on every parameter.
  AdamOptions adam;
  adam.weight_decay = 0.01;
  AdamW optimizer(model.params().all(), adam);
  constexpr float kLr = 1e-3f;
  return time_steps(o, [&] {
    optimizer.zero_grad();
    const Encoder::Output out = model.forward(batch, /*training=*/true);
    out.loss.backward();
    optimizer.step(kLr);
    return static_cast<double>(out.loss.item());
  });
}

StepTiming time_steps(const TrainCaseOptions& o, const std::function<double()>& step) {
  PELAB_CHECK(o.threads >= 1 && o.warmup >= 0 && o.min_steps >= 1 && o.max_steps >= o.min_steps,
              "bench: need threads >= 1, warm-up >= 0 and 1 <= min steps <= max steps");
  double loss = 0;
  for (int i = 0; i < o.warmup; ++i) loss = step();

  using clock = std::chrono::steady_clock;
  std::vector<double> ms;
  StepTiming r;
  const auto start = clock::now();
  while (static_cast<int>(ms.size()) < o.max_steps) {
    memory::reset_peak_live_bytes();
    const auto t0 = clock::now();
    loss = step();
    ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    r.peak_tensor_mb =
        std::max(r.peak_tensor_mb, static_cast<double>(memory::peak_live_bytes()) / 1e6);
    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    if (static_cast<int>(ms.size()) >= o.min_steps && elapsed > o.max_seconds) break;
  }
  std::sort(ms.begin(), ms.end());
  r.steps = static_cast<int>(ms.size());
  r.ms_median = ms[ms.size() / 2];  // the reference script's median: the upper one
  r.ms_min = ms.front();
  r.final_loss = loss;
  return r;
}

TrainCaseResult run_train_case(const std::string& config, const std::string& scheme,
                               const TrainCaseOptions& o) {
  const BenchConfig& c = bench_config(config);
  const Batch batch = bench_batch(c, 0);
  const StepTiming t = time_training_steps(bench_model_config(c, scheme), batch, o);
  TrainCaseResult r;
  r.config = config;
  r.scheme = scheme;
  r.threads = o.threads;
  r.steps = t.steps;
  r.ms_median = t.ms_median;
  r.ms_min = t.ms_min;
  r.tokens_per_step = static_cast<double>(c.B * c.T);
  r.tokens_per_s = r.tokens_per_step / (r.ms_median * 1e-3);
  r.real_tokens_per_step = static_cast<double>(
      std::count(batch.key_mask.values.begin(), batch.key_mask.values.end(), 1));
  r.real_tokens_per_s = r.real_tokens_per_step / (r.ms_median * 1e-3);
  // What pelab computes: the linear layers over the real tokens only.
  r.gflop_per_step =
      matmul_flops(bench_model_config(c, scheme), c.B, c.T, r.real_tokens_per_step) / 1e9;
  r.gflops = r.gflop_per_step / (r.ms_median * 1e-3);
  r.final_loss = t.final_loss;
  PELAB_CHECK(std::isfinite(t.final_loss), "bench {} {}: the loss is {}", config, scheme,
              t.final_loss);
  return r;
}

EvalCaseResult run_eval_case(const std::string& config, const std::string& scheme, int64_t length,
                             int threads) {
  PELAB_CHECK(length >= 1 && threads >= 1, "bench: need length >= 1 and threads >= 1");
  BenchConfig c = bench_config(config);
  c.T = length;
  c.B = 1;
  set_num_threads(threads);
  const Encoder model(bench_model_config(c, scheme), make_scheme, /*init_seed=*/0);
  Batch batch = bench_batch(c, /*seed=*/1);
  std::fill(batch.key_mask.values.begin(), batch.key_mask.values.end(), 1);
  for (int64_t t = 0; t < length; ++t) {  // every token real
    if (batch.tokens.values[t] == 0) batch.tokens.values[t] = 1;
    if (batch.targets.values[t] < 0) batch.targets.values[t] = 0;
  }
  NoGradGuard no_grad;
  const auto t0 = std::chrono::steady_clock::now();
  const Encoder::Output out = model.forward(batch);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  PELAB_CHECK(std::isfinite(out.loss.item()), "bench eval {} {} T={}: the loss is not finite",
              config, scheme, length);
  EvalCaseResult r;
  r.config = config;
  r.scheme = scheme;
  r.length = length;
  r.threads = threads;
  r.ms = ms;
  r.full_scores_mb = static_cast<double>(c.heads) * length * length * 4.0 / (1024.0 * 1024.0);
  return r;
}

}  // namespace pelab
