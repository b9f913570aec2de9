// The packed kernel's arithmetic without its packing and blocking, for products so small
// that copying panels and cutting edge tiles cost more than the multiply-adds: attention's
// per-head products in a small model (16×16×8 in the default experiment, thousands a step).
// packed_gemm() hands it every product with B untransposed of at most kSmallGemmMax
// multiply-adds (with Bᵀ the packed kernel's transposes in registers are faster than any
// copy this could make). Attention with narrow heads calls it directly for its per-head
// products of any size up to K = kPackedKc (nn/attention.cpp), with k and v transposed once
// per head: one copy serves every block of query rows.
//
// Each element of C is what packed_gemm() computes (backend/packed_gemm.h): one float
// accumulator summed with fused multiply-adds in order k = 0, 1, …, then stored as
// fma(beta, C, alpha·s) (beta == 0: alpha·s, C never read). K is at most kPackedKc, one block
// of the reduction, so the sums are the same too and the two give the same bits
// (tests/backend/small_gemm_test.cpp).
//
// How: four rows of C by sixteen columns stay in eight AVX registers while k runs (eight rows
// in eight AVX-512 registers where the CPU has them); each step broadcasts op(A)(i, k) and
// reads row k of B in place, masked at the right edge.
#pragma once

#include <cstdint>

#include "pelab/core/machine.h"

namespace pelab {

inline constexpr int64_t kSmallGemmMax = 32 * 32 * 32;  // multiply-adds

using SmallGemmKernel = VectorKernel;  // chosen per CPU as core/machine.h says

// C[M, N] = alpha · op(A) · B + beta · C (row-major, as gemm() with trans_b false);
// K ≤ kPackedKc. Single-threaded.
void small_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                int64_t ldc);
// The same with a chosen kernel (tests).
void small_gemm_with(SmallGemmKernel kernel, bool trans_a, bool trans_b, int64_t M, int64_t N,
                     int64_t K, float alpha, const float* A, int64_t lda, const float* B,
                     int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace pelab
