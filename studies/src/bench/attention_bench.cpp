#include "pelab/bench/attention_bench.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/nn/attention.h"
#include "random_tensor.h"

namespace pelab {

namespace {

using bench_detail::random_normal;

// The median of `calls` timed calls of each of fns (call c of every fn before call c + 1 of
// any), after 20 untimed rounds.
std::vector<double> alternating_medians_ms(int calls,
                                           const std::vector<std::function<void(int)>>& fns) {
  using clock = std::chrono::steady_clock;
  constexpr int kWarmup = 20;
  std::vector<std::vector<double>> ms(fns.size());
  for (int c = 0; c < kWarmup + calls; ++c)
    for (size_t f = 0; f < fns.size(); ++f) {
      const auto start = clock::now();
      fns[f](c);
      const double elapsed =
          std::chrono::duration<double, std::milli>(clock::now() - start).count();
      if (c >= kWarmup) ms[f].push_back(elapsed);
    }
  std::vector<double> medians;
  for (std::vector<double>& m : ms) {
    std::nth_element(m.begin(), m.begin() + m.size() / 2, m.end());
    medians.push_back(m[m.size() / 2]);
  }
  return medians;
}

// The kernels this length runs: the block kernel, and the rows-in-lanes one where it applies.
std::vector<std::string> kernels_for(const AttentionBenchOptions& o) {
  std::vector<std::string> kernels{"blocks"};
  if (row_lanes_runs(o.d_model / o.heads)) kernels.emplace_back("lanes");
  return kernels;
}

std::vector<AttentionBenchRow> bench_length(const AttentionBenchOptions& o, int64_t T) {
  const Shape shape{o.batch, T, o.d_model};  // q, k, v, z: [B, T, d]
  Tensor q = random_normal(shape, 1), k = random_normal(shape, 2), v = random_normal(shape, 3);
  const Tensor dz = random_normal(shape, 4);
  IntTensor mask;
  mask.shape = Shape({o.batch, T});
  mask.values.assign(static_cast<size_t>(o.batch * T), 1);
  const std::vector<std::string> kernels = kernels_for(o);
  std::vector<AttentionOptions> options(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    options[i].heads = o.heads;
    options[i].dropout = static_cast<float>(o.dropout);
    options[i].skip_padded_queries = true;  // as training runs it
    options[i].row_lanes = kernels[i] == "lanes";
  }
  std::vector<std::function<void(int)>> forward, training;
  for (AttentionOptions& opt : options) {
    forward.emplace_back([&](int call) {
      opt.dropout_seed = static_cast<uint64_t>(call);
      const NoGradGuard no_grad;
      (void)attention(q, k, v, mask, nullptr, opt);
    });
    training.emplace_back([&](int call) {
      opt.dropout_seed = static_cast<uint64_t>(call);
      sum_all(mul(attention(q, k, v, mask, nullptr, opt), dz)).backward();
      for (Tensor* x : {&q, &k, &v}) x->zero_grad();
    });
  }
  const std::vector<double> forward_ms = alternating_medians_ms(o.calls, forward);
  for (Tensor* x : {&q, &k, &v}) x->set_requires_grad(true);
  const std::vector<double> training_ms = alternating_medians_ms(o.calls, training);
  // Six products of T × T × d_h per (sequence, head): two forward, four backward.
  const double multiply_adds = 6.0 * static_cast<double>(o.batch * T * T * o.d_model);
  std::vector<AttentionBenchRow> rows;
  for (size_t i = 0; i < kernels.size(); ++i)
    rows.push_back({T, kernels[i], forward_ms[i], training_ms[i],
                    2.0 * multiply_adds / (training_ms[i] * 1e-3) / 1e9});
  return rows;
}

}  // namespace

std::vector<AttentionBenchRow> run_attention_bench(const AttentionBenchOptions& o) {
  PELAB_CHECK(o.heads >= 1 && o.d_model % o.heads == 0,
              "bench attention: {} heads do not divide d_model = {}", o.heads, o.d_model);
  set_num_threads(o.threads);
  std::vector<AttentionBenchRow> rows;
  for (const int64_t T : o.lengths)
    for (AttentionBenchRow& row : bench_length(o, T)) rows.push_back(std::move(row));
  return rows;
}

int print_attention_bench(const AttentionBenchOptions& o) {
  const auto rows = run_attention_bench(o);
  fmt::print(
      "attention op alone: batch {}, d_model {}, {} heads, dropout {}, {} thread(s); median of {} "
      "alternating calls; ×: the time against the block kernel's\n",
      o.batch, o.d_model, o.heads, o.dropout, o.threads, o.calls);
  fmt::print("{:>7} {:>7} {:>11} {:>11} {:>9} {:>9} {:>9}\n", "length", "kernel", "forward ms",
             "fwd+bwd ms", "GFLOP/s", "fwd ×", "fwd+bwd ×");
  nlohmann::json out = nlohmann::json::array();
  const AttentionBenchRow* blocks = nullptr;  // this length's block kernel row: the ratios' base
  for (const auto& r : rows) {
    if (r.kernel == "blocks") blocks = &r;
    fmt::print("{:>7} {:>7} {:>11.3f} {:>11.3f} {:>9.1f} {:>9.3f} {:>9.3f}\n", r.length, r.kernel,
               r.forward_ms, r.training_ms, r.product_gflops, r.forward_ms / blocks->forward_ms,
               r.training_ms / blocks->training_ms);
    out.push_back({{"length", r.length},
                   {"kernel", r.kernel},
                   {"forward_ms", r.forward_ms},
                   {"training_ms", r.training_ms},
                   {"product_gflops", r.product_gflops}});
  }
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    PELAB_CHECK(f.good(), "bench attention: cannot write {}", o.json);
    f << nlohmann::json{{"batch", o.batch},     {"d_model", o.d_model}, {"heads", o.heads},
                        {"dropout", o.dropout}, {"threads", o.threads}, {"rows", out}}
             .dump(2)
      << "\n";
  }
  return 0;
}

}  // namespace pelab
