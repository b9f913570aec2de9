// pelab's own kernel for small products (attention's per-head GEMMs: 32×32×16 at the tiny
// config), where a library call costs more in dispatch than in arithmetic: a library call on
// such a product runs at 15–20 GFLOP/s.
//
// op(A) and op(B) are packed into thread-local panels (A in 4-row strips, k-major; B in
// 16-column strips, k-major, zero-padded), then a 4×16 register tile accumulates over k in
// order with fused multiply-adds. Each C element is one in-order sum over k, so the result
// does not depend on the thread count.
#pragma once

#include <cstdint>

namespace pelab::detail {

void small_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                int64_t ldc);

}  // namespace pelab::detail
