// Finite-difference gradient check in float32.
//
// L = Σ_k w_k · f(x)_k with fixed random weights w, accumulated in double. For each checked
// input element we compare dL/dx from backward() with the central difference
// (L(x+ε) − L(x−ε)) / 2ε. Why these tolerances hold in float32: each output carries a
// rounding error of about 6e-8 relative, so the difference quotient carries about
// 6e-8·|L|·√n / ε ≈ 1e-4 relative for ε = 1e-2 and our small sizes; the truncation error
// is O(ε²·f''') ≈ 1e-4. A wrong gradient (a missing term, a transposed index, a factor of
// two) is off by far more than the 2e-3 relative + 2e-3 absolute we allow. Products are
// computed with the reference GEMM (double accumulation) while checking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/ops/ops.h"

namespace pelab::testing {

struct GradCheckOptions {
  double epsilon = 1e-2;
  double rtol = 2e-3;
  double atol = 2e-3;
  int max_elements_per_input = 64;  // checked elements are spread evenly over the input
};

struct GradCheckResult {
  bool ok = true;
  std::string message;  // the first mismatches, with input, index, analytic and numeric
  double max_error = 0.0;
};

// `inputs` require gradients; fn builds the output from them.
GradCheckResult gradcheck(const std::function<Tensor(const TensorList&)>& fn, TensorList inputs,
                          const GradCheckOptions& options = {}, uint64_t seed = 1);

// Random tensors for tests (seeded, no dependence on anything else).
Tensor random_tensor(const Shape& shape, uint64_t seed, float scale = 1.0f);

// Largest |a − b| / (atol + rtol·|b|) over elements; ≤ 1 means "close".
double closeness(const Tensor& a, const Tensor& b, double rtol, double atol);

}  // namespace pelab::testing
