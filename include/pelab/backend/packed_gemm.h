// pelab's own single-precision GEMM: the packed (Goto / BLIS) algorithm around a 6×16
// register-tile micro-kernel for AVX2 and FMA (and a 6×32 one for AVX-512).
//
// The algorithm: K is cut into blocks of at most 256; op(B) is copied in KC×NC blocks into
// panels of 16 columns, op(A) (optionally) in MC×KC blocks into panels of 6 rows, laid out
// in the order the micro-kernel reads them (Bᵀ by 8×8 transposes in registers); the
// micro-kernel keeps a 6×16 tile of C in twelve AVX registers for a whole block of the
// reduction, with a loop per layout of A for full tiles (strides fixed at compile time). An
// operand that is not packed is read in place through the same strides (Bᵀ is always packed).
// Packed edge panels are padded with zeros (a partial panel of B always is); A read in place
// repeats its last valid row; edge tiles are stored through a small buffer.
//
// Numerics, fixed by design so that every variant gives the same bits:
//   - each element of C is one float accumulator, summed with fused multiply-adds in order
//     k = 0, 1, … within each K block (the blocks depend on K alone);
//   - a block's sum s is stored as fma(beta, C, alpha·s) for the first block and
//     fma(1, C, alpha·s) = C + alpha·s for later ones (beta == 0 never reads C);
//   - packing or not, and the split over threads, only decide where the operands are read
//     from and which thread computes an element, never how.
// So the AVX-512 and AVX2 micro-kernels, the portable one, every packing policy and every
// thread count give bit-identical results (tests/backend/packed_gemm_test.cpp checks it).
//
// Where it stands (docs/performance.md has the figures): ahead of both libraries on most of
// attention's per-head products, level with them on the linear layers, and no faster than the
// libraries in a whole training step; Auto sends it the small
// products (backend/gemm.h), where a library call's fixed cost dominates. A backend of its
// own too (`pelab bench gemm --backend packed`, `pelab bench --gemm packed`). Off x86 only the
// portable micro-kernel exists.
#pragma once

#include <cstdint>

#include "pelab/core/machine.h"

namespace pelab {

// The reduction's blocks, a function of K alone (so the order of every sum is): K is cut into
// ceil(K / kPackedKc) near-equal blocks.
inline constexpr int64_t kPackedKc = 256;

// C[M, N] = alpha · op(A) · op(B) + beta · C (row-major, as gemm()). Splits the larger of M
// and N over the OpenMP pool outside a parallel region; single-threaded inside one.
void packed_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                 const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                 int64_t ldc);

// Which operands are copied into panels; the others are read in place. Bᵀ is always packed.
// A pure speed choice: packing changes no result (the micro-kernel adds the same products
// in the same order either way).
struct PackingPolicy {
  bool pack_a = false;
  bool pack_b = false;
};
// The policy packed_gemm() uses for this product.
PackingPolicy packed_gemm_packing(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K);

// The same with a chosen micro-kernel, packing and number of parts (tests, benchmarks): Avx2
// runs the 6×16 tile, Avx512 also the pair of tiles side by side in AVX-512 registers (the
// same FMAs per element in the same order), Portable the definition element by element.
void packed_gemm_with(VectorKernel kernel, PackingPolicy packing, int parts, bool trans_a,
                      bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                      int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace pelab
