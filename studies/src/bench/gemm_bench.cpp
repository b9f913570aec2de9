#include "pelab/bench/gemm_bench.h"

#include <cblas.h>

#include <oneapi/dnnl/dnnl.h>
#include <algorithm>
#include <chrono>
#include <functional>

#include "pelab/backend/gemm.h"
#include "pelab/core/error.h"
#include "pelab/ops/ops.h"
#include "random_tensor.h"

namespace pelab {

namespace {
struct Config {
  const char* name;
  int64_t d, heads, T, B, vocab;
};
constexpr Config kConfigs[] = {
    {"tiny", 64, 4, 32, 32, 16}, {"small", 128, 4, 64, 32, 16}, {"medium", 256, 8, 128, 16, 16}};

Tensor random_matrix(int64_t rows, int64_t cols, uint64_t seed) {
  return bench_detail::random_normal({rows, cols}, seed);
}

// Median GFLOP/s of `fn`, each sample timing back-to-back calls for at least min_ms.
double measure(const std::function<void()>& fn, double flops, int samples, double min_ms) {
  using clock = std::chrono::steady_clock;
  fn();  // warm-up: primitive creation, pool, caches
  std::vector<double> rates;
  for (int s = 0; s < samples; ++s) {
    int64_t calls = 0;
    const auto start = clock::now();
    double elapsed = 0.0;
    do {
      fn();
      ++calls;
      elapsed = std::chrono::duration<double, std::milli>(clock::now() - start).count();
    } while (elapsed < min_ms);
    rates.push_back(flops * calls / (elapsed * 1e-3) / 1e9);
  }
  std::nth_element(rates.begin(), rates.begin() + rates.size() / 2, rates.end());
  return rates[rates.size() / 2];
}
}  // namespace

std::vector<GemmBenchShape> model_gemm_shapes(const std::string& config) {
  std::vector<GemmBenchShape> shapes;
  bool found = false;
  for (const Config& c : kConfigs) {
    if (config != "all" && config != c.name) continue;
    found = true;
    const int64_t M = c.B * c.T, d = c.d, f = 4 * c.d, dh = c.d / c.heads;
    const std::string n = c.name;
    // A linear layer y[M, out] = x[M, in]·Wᵀ: forward NT, input gradient NN, weight gradient TN.
    auto linear = [&](const std::string& what, int64_t in, int64_t out) {
      shapes.push_back({n + " " + what + " fwd", M, out, in, false, true});
      shapes.push_back({n + " " + what + " dX", M, in, out, false, false});
      shapes.push_back({n + " " + what + " dW", out, in, M, true, false});
    };
    linear("attn.q/k/v/o", d, d);
    linear("ffn.fc1", d, f);
    linear("ffn.fc2", f, d);
    // Inside the fused attention kernel, per (batch, head).
    shapes.push_back({n + " attn q·kᵀ", c.T, c.T, dh, false, true, GemmBenchShape::Via::GemmEntry});
    shapes.push_back({n + " attn α·v", c.T, dh, c.T, false, false, GemmBenchShape::Via::GemmEntry});
  }
  PELAB_CHECK(found, "unknown bench config '{}' (valid: tiny, small, medium, all)", config);
  return shapes;
}

std::vector<GemmBenchRow> run_gemm_bench(const std::vector<GemmBenchShape>& shapes,
                                         const std::string& bare, int samples, double min_ms) {
  PELAB_CHECK(bare == "onednn" || bare == "openblas",
              "unknown bare library '{}' (valid: onednn, openblas)", bare);
  NoGradGuard no_grad;
  std::vector<GemmBenchRow> rows;
  for (const GemmBenchShape& s : shapes) {
    // Stored operands: A is [M, K] or, transposed, [K, M]; B is [K, N] or [N, K].
    const Tensor a = s.trans_a ? random_matrix(s.K, s.M, 1) : random_matrix(s.M, s.K, 1);
    const Tensor b = s.trans_b ? random_matrix(s.N, s.K, 2) : random_matrix(s.K, s.N, 2);
    const Tensor op_a = s.trans_a ? transpose(a, 0, 1) : a;
    const Tensor op_b = s.trans_b ? transpose(b, 0, 1) : b;
    Tensor c = Tensor::empty({s.M, s.N});
    const int64_t lda = a.size(1), ldb = b.size(1);
    const double flops = 2.0 * s.M * s.N * s.K;
    std::function<void()> pelab_path;
    if (s.via == GemmBenchShape::Via::GemmEntry) {
      pelab_path = [&] {
        gemm(s.trans_a, s.trans_b, s.M, s.N, s.K, 1.0f, a.data(), lda, b.data(), ldb, 0.0f,
             c.data(), s.N);
      };
    } else if (!s.trans_a && s.trans_b) {
      pelab_path = [&] { (void)linear(a, b, Tensor()); };  // how the model calls it
    } else {
      pelab_path = [&] { (void)matmul(op_a, op_b); };
    }
    std::function<void()> bare_call;
    if (bare == "onednn") {
      bare_call = [&] {
        dnnl_sgemm(s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.M, s.N, s.K, 1.0f, a.data(), lda,
                   b.data(), ldb, 0.0f, c.data(), s.N);
      };
    } else {
      bare_call = [&] {
        cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans,
                    s.trans_b ? CblasTrans : CblasNoTrans, s.M, s.N, s.K, 1.0f, a.data(), lda,
                    b.data(), ldb, 0.0f, c.data(), s.N);
      };
    }
    // Alternate the two sides so drift in the machine's speed hits both alike.
    std::vector<double> ours, theirs;
    for (int round = 0; round < 3; ++round) {
      ours.push_back(measure(pelab_path, flops, samples, min_ms));
      theirs.push_back(measure(bare_call, flops, samples, min_ms));
    }
    std::sort(ours.begin(), ours.end());
    std::sort(theirs.begin(), theirs.end());
    rows.push_back({s, ours[1], theirs[1]});
  }
  return rows;
}

}  // namespace pelab
