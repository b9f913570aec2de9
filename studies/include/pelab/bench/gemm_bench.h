// `pelab bench gemm`: pelab's matmul path against the bare library call, at the model's
// shapes. Both sides run the same product on the same (cache-hot) operands; the pelab side
// goes through the Tensor ops (linear, matmul on views: output allocation, layout checks,
// dispatch), the bare side calls the library directly into a preallocated buffer.
#pragma once

#include <string>
#include <vector>

namespace pelab {

struct GemmBenchShape {
  std::string label;  // where the model uses it, e.g. "small ffn.fc1 fwd"
  int64_t M, N, K;
  bool trans_a, trans_b;
  // How the model reaches this product: through the Tensor ops (linear / matmul on views) or,
  // inside the fused attention kernel, through the gemm() entry point directly.
  enum class Via { TensorOps, GemmEntry } via = Via::TensorOps;
};

struct GemmBenchRow {
  GemmBenchShape shape;
  double pelab_gflops;  // median over samples
  double bare_gflops;   // median over samples
};

// The shapes of the three reference configs' linear layers (forward, dX, dW) and attention.
std::vector<GemmBenchShape> model_gemm_shapes(const std::string& config);  // tiny|small|medium|all

// `bare` is the library the bare call uses: "onednn" or "openblas".
std::vector<GemmBenchRow> run_gemm_bench(const std::vector<GemmBenchShape>& shapes,
                                         const std::string& bare, int samples, double min_ms);

}  // namespace pelab
