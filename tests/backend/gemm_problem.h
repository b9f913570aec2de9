// One GEMM problem for the backend tests: random operands of a given shape and layout, stored
// with padded leading dimensions (so that no backend may assume packed rows), and the measure
// by which a result is compared with the reference kernel's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "pelab/backend/gemm.h"
#include "pelab/core/rng.h"

namespace pelab::testing {

// Whether two results are equal bit for bit (NaNs included).
inline bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

struct GemmShape {
  int64_t M, N, K;
};

inline std::vector<float> random_values(int64_t n, uint64_t seed) {
  Generator rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng.normal(0.0f, 1.0f);
  return v;
}

// C = alpha·op(A)·op(B) + beta·C; C starts random, or NaN to show that beta == 0 never reads it.
struct GemmProblem {
  bool ta, tb;
  GemmShape s;
  int64_t lda, ldb, ldc;
  std::vector<float> A, B, C;

  GemmProblem(bool trans_a, bool trans_b, GemmShape shape, bool nan_c = false)
      : ta(trans_a), tb(trans_b), s(shape) {
    const int64_t a_rows = ta ? s.K : s.M, a_cols = ta ? s.M : s.K;
    const int64_t b_rows = tb ? s.N : s.K, b_cols = tb ? s.K : s.N;
    lda = a_cols + 3;
    ldb = b_cols + 5;
    ldc = s.N + 7;
    A = random_values(a_rows * lda, 1);
    B = random_values(b_rows * ldb, 2);
    C = nan_c ? std::vector<float>(static_cast<size_t>(s.M * ldc),
                                   std::numeric_limits<float>::quiet_NaN())
              : random_values(s.M * ldc, 3);
  }

  // The result through `backend` (C itself is left as it was).
  std::vector<float> through(GemmBackend backend, float alpha, float beta) const {
    std::vector<float> out = C;
    gemm_with(backend, ta, tb, s.M, s.N, s.K, alpha, A.data(), lda, B.data(), ldb, beta, out.data(),
              ldc);
    return out;
  }
};

// The worst error of `got` against `ref`, in units of tolerance·√K·(1 + |ref|): at most 1.0
// passes. The √K allows for the growth of rounding error along the reduction.
inline double worst_error(const std::vector<float>& got, const std::vector<float>& ref, int64_t K,
                          double tolerance) {
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    worst = std::max(
        worst, std::fabs(got[i] - ref[i]) /
                   (tolerance * std::sqrt(static_cast<double>(K)) * (1.0 + std::fabs(ref[i]))));
  return worst;
}

}  // namespace pelab::testing
