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

// Median of `calls` timed calls of fn(call), after 20 untimed ones.
double median_ms(int calls, const std::function<void(int)>& fn) {
  using clock = std::chrono::steady_clock;
  constexpr int kWarmup = 20;
  std::vector<double> ms;
  for (int c = 0; c < kWarmup + calls; ++c) {
    const auto start = clock::now();
    fn(c);
    const double elapsed = std::chrono::duration<double, std::milli>(clock::now() - start).count();
    if (c >= kWarmup) ms.push_back(elapsed);
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

AttentionBenchRow bench_length(const AttentionBenchOptions& o, int64_t T) {
  const Shape shape{o.batch, T, o.d_model};  // q, k, v, z: [B, T, d]
  Tensor q = random_normal(shape, 1), k = random_normal(shape, 2), v = random_normal(shape, 3);
  const Tensor dz = random_normal(shape, 4);
  IntTensor mask;
  mask.shape = Shape({o.batch, T});
  mask.values.assign(static_cast<size_t>(o.batch * T), 1);
  AttentionOptions options;
  options.heads = o.heads;
  options.dropout = static_cast<float>(o.dropout);
  options.skip_padded_queries = true;  // as training runs it
  AttentionBenchRow row{T, 0.0, 0.0, 0.0};
  row.forward_ms = median_ms(o.calls, [&](int call) {
    options.dropout_seed = static_cast<uint64_t>(call);
    const NoGradGuard no_grad;
    (void)attention(q, k, v, mask, nullptr, options);
  });
  for (Tensor* x : {&q, &k, &v}) x->set_requires_grad(true);
  row.training_ms = median_ms(o.calls, [&](int call) {
    options.dropout_seed = static_cast<uint64_t>(call);
    sum_all(mul(attention(q, k, v, mask, nullptr, options), dz)).backward();
    for (Tensor* x : {&q, &k, &v}) x->zero_grad();
  });
  // Six products of T × T × d_h per (sequence, head): two forward, four backward.
  const double multiply_adds = 6.0 * static_cast<double>(o.batch * T * T * o.d_model);
  row.product_gflops = 2.0 * multiply_adds / (row.training_ms * 1e-3) / 1e9;
  return row;
}

}  // namespace

std::vector<AttentionBenchRow> run_attention_bench(const AttentionBenchOptions& o) {
  PELAB_CHECK(o.heads >= 1 && o.d_model % o.heads == 0,
              "bench attention: {} heads do not divide d_model = {}", o.heads, o.d_model);
  set_num_threads(o.threads);
  std::vector<AttentionBenchRow> rows;
  for (const int64_t T : o.lengths) rows.push_back(bench_length(o, T));
  return rows;
}

int print_attention_bench(const AttentionBenchOptions& o) {
  const auto rows = run_attention_bench(o);
  fmt::print(
      "attention op alone: batch {}, d_model {}, {} heads, dropout {}, {} thread(s); median of {} "
      "calls\n",
      o.batch, o.d_model, o.heads, o.dropout, o.threads, o.calls);
  fmt::print("{:>7} {:>12} {:>16} {:>16}\n", "length", "forward ms", "fwd+bwd ms",
             "products GFLOP/s");
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    fmt::print("{:>7} {:>12.3f} {:>16.3f} {:>16.1f}\n", r.length, r.forward_ms, r.training_ms,
               r.product_gflops);
    out.push_back({{"length", r.length},
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
