#include "pelab/backend/small_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#define PELAB_SMALL_AVX2 1
#include <immintrin.h>
#endif

#include <cmath>

#include "pelab/backend/packed_gemm.h"
#include "pelab/core/error.h"

namespace pelab {

namespace {

// Row k of op(B) = B is read at brows + k·ldb, contiguous in j.

// The definition, one element at a time: what the AVX2 kernel must equal.
void small_rows_portable(bool trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                         int64_t lda, const float* brows, int64_t ldb, float beta, float* C,
                         int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k < K; ++k)
        sum = std::fma(trans_a ? A[k * lda + i] : A[i * lda + k], brows[k * ldb + j], sum);
      const float scaled = alpha * sum;
      float& out = C[i * ldc + j];
      out = beta == 0.0f ? scaled : std::fma(beta, out, scaled);
    }
}

#ifdef PELAB_SMALL_AVX2
// The tiles below are templates on the layout of A and on whether the tile has all its rows,
// so that the loop over k holds only loads, broadcasts and multiply-adds: a test per row
// and per k there cost as much as the arithmetic of attention's per-head products. Target
// attributes do not reach into inlined helpers, so each template carries its own.

// The mask of the first n ≤ 8 lanes, from a window of eight lanes into this.
constexpr int32_t kLaneWindow[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// A free function, not a lambda: clang does not give a lambda its enclosing function's target.
__attribute__((target("avx2,fma"))) inline __m256i first_lanes(int64_t n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLaneWindow + 8 - n));
}

template <bool kTransA>
inline float a_at(const float* A, int64_t lda, int64_t i, int64_t k) {
  return kTransA ? A[k * lda + i] : A[i * lda + k];
}

// C[i : i+8, :N] for N ≤ 8, one register per row, masked to `rows` rows (all eight when kFull).
template <bool kTransA, bool kFull>
__attribute__((target("avx2,fma"))) void narrow_tile_avx2(int64_t i, int64_t rows, int64_t K,
                                                          __m256i m, float alpha, const float* A,
                                                          int64_t lda, const float* brows,
                                                          int64_t ldb, float beta, float* C,
                                                          int64_t ldc) {
  __m256 acc[8];
  for (int r = 0; r < 8; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    const __m256 b = _mm256_maskload_ps(brows + k * ldb, m);
    for (int r = 0; r < 8; ++r) {
      if (!kFull && r >= rows) break;
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(a_at<kTransA>(A, lda, i + r, k)), b, acc[r]);
    }
  }
  const __m256 valpha = _mm256_set1_ps(alpha), vbeta = _mm256_set1_ps(beta);
  for (int r = 0; r < 8; ++r) {
    if (!kFull && r >= rows) break;
    float* c = C + (i + r) * ldc;
    __m256 out = _mm256_mul_ps(valpha, acc[r]);
    if (beta != 0.0f) out = _mm256_fmadd_ps(vbeta, _mm256_maskload_ps(c, m), out);
    _mm256_maskstore_ps(c, m, out);
  }
}

// C[i : i+4, j : j+16] in eight registers, masked to `rows` rows and the columns `m0`, `m1`
// select (the left and right eight).
template <bool kTransA, bool kFull>
__attribute__((target("avx2,fma"))) void wide_tile_avx2(int64_t i, int64_t rows, int64_t K,
                                                        __m256i m0, __m256i m1, float alpha,
                                                        const float* A, int64_t lda,
                                                        const float* brows, int64_t ldb, float beta,
                                                        float* C, int64_t ldc) {
  __m256 acc[4][2];
  for (int r = 0; r < 4; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    const float* b = brows + k * ldb;
    const __m256 b0 = _mm256_maskload_ps(b, m0), b1 = _mm256_maskload_ps(b + 8, m1);
    for (int r = 0; r < 4; ++r) {
      if (!kFull && r >= rows) break;
      const __m256 a = _mm256_set1_ps(a_at<kTransA>(A, lda, i + r, k));
      acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
    }
  }
  const __m256 valpha = _mm256_set1_ps(alpha), vbeta = _mm256_set1_ps(beta);
  for (int r = 0; r < 4; ++r) {
    if (!kFull && r >= rows) break;
    float* c = C + (i + r) * ldc;
    __m256 s0 = _mm256_mul_ps(valpha, acc[r][0]), s1 = _mm256_mul_ps(valpha, acc[r][1]);
    if (beta != 0.0f) {
      s0 = _mm256_fmadd_ps(vbeta, _mm256_maskload_ps(c, m0), s0);
      s1 = _mm256_fmadd_ps(vbeta, _mm256_maskload_ps(c + 8, m1), s1);
    }
    _mm256_maskstore_ps(c, m0, s0);
    _mm256_maskstore_ps(c + 8, m1, s1);
  }
}

template <bool kTransA>
__attribute__((target("avx2,fma"))) void small_rows_avx2_as(int64_t M, int64_t N, int64_t K,
                                                            float alpha, const float* A,
                                                            int64_t lda, const float* brows,
                                                            int64_t ldb, float beta, float* C,
                                                            int64_t ldc) {
  if (N <= 8) {  // one register per row: eight rows at a time
    const __m256i m = first_lanes(N);
    int64_t i = 0;
    for (; i + 8 <= M; i += 8)
      narrow_tile_avx2<kTransA, true>(i, 8, K, m, alpha, A, lda, brows, ldb, beta, C, ldc);
    if (i < M)
      narrow_tile_avx2<kTransA, false>(i, M - i, K, m, alpha, A, lda, brows, ldb, beta, C, ldc);
    return;
  }
  for (int64_t j = 0; j < N; j += 16) {
    const int64_t cols = N - j < 16 ? N - j : 16;
    const int64_t left = cols < 8 ? cols : 8;
    const __m256i m0 = first_lanes(left), m1 = first_lanes(cols - left);
    int64_t i = 0;
    for (; i + 4 <= M; i += 4)
      wide_tile_avx2<kTransA, true>(i, 4, K, m0, m1, alpha, A, lda, brows + j, ldb, beta, C + j,
                                    ldc);
    if (i < M)
      wide_tile_avx2<kTransA, false>(i, M - i, K, m0, m1, alpha, A, lda, brows + j, ldb, beta,
                                     C + j, ldc);
  }
}

void small_rows_avx2(bool trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                     int64_t lda, const float* brows, int64_t ldb, float beta, float* C,
                     int64_t ldc) {
  if (trans_a)
    small_rows_avx2_as<true>(M, N, K, alpha, A, lda, brows, ldb, beta, C, ldc);
  else
    small_rows_avx2_as<false>(M, N, K, alpha, A, lda, brows, ldb, beta, C, ldc);
}

// C[i : i+8, j : j+16] in eight AVX-512 registers, one row each, masked to `rows` rows and
// the columns `m` selects: the AVX2 kernel's tile of 4 × 16 in eight registers, twice the
// rows for the same number of multiply-add instructions. The same fused multiply-adds per
// element in the same order, so the same bits. Rows of at most eight columns fill only half a
// register either way; those stay with the AVX2 kernel, which holds eight of them.
template <bool kTransA, bool kFull>
__attribute__((target("avx2,fma,avx512f"))) void tile_avx512(int64_t i, int64_t rows, int64_t K,
                                                             __mmask16 m, float alpha,
                                                             const float* A, int64_t lda,
                                                             const float* brows, int64_t ldb,
                                                             float beta, float* C, int64_t ldc) {
  __m512 acc[8];
  for (int r = 0; r < 8; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    const __m512 b = _mm512_maskz_loadu_ps(m, brows + k * ldb);
    for (int r = 0; r < 8; ++r) {
      if (!kFull && r >= rows) break;
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a_at<kTransA>(A, lda, i + r, k)), b, acc[r]);
    }
  }
  const __m512 valpha = _mm512_set1_ps(alpha), vbeta = _mm512_set1_ps(beta);
  for (int r = 0; r < 8; ++r) {
    if (!kFull && r >= rows) break;
    float* c = C + (i + r) * ldc;
    __m512 out = _mm512_mul_ps(valpha, acc[r]);
    if (beta != 0.0f) out = _mm512_fmadd_ps(vbeta, _mm512_maskz_loadu_ps(m, c), out);
    _mm512_mask_storeu_ps(c, m, out);
  }
}

template <bool kTransA>
__attribute__((target("avx2,fma,avx512f"))) void small_rows_avx512_as(
    int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* brows,
    int64_t ldb, float beta, float* C, int64_t ldc) {
  for (int64_t j = 0; j < N; j += 16) {
    const int64_t cols = N - j < 16 ? N - j : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << cols) - 1u);
    int64_t i = 0;
    for (; i + 8 <= M; i += 8)
      tile_avx512<kTransA, true>(i, 8, K, m, alpha, A, lda, brows + j, ldb, beta, C + j, ldc);
    if (i < M)
      tile_avx512<kTransA, false>(i, M - i, K, m, alpha, A, lda, brows + j, ldb, beta, C + j, ldc);
  }
}

void small_rows_avx512(bool trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                       int64_t lda, const float* brows, int64_t ldb, float beta, float* C,
                       int64_t ldc) {
  if (trans_a)
    small_rows_avx512_as<true>(M, N, K, alpha, A, lda, brows, ldb, beta, C, ldc);
  else
    small_rows_avx512_as<false>(M, N, K, alpha, A, lda, brows, ldb, beta, C, ldc);
}
#endif  // PELAB_SMALL_AVX2

}  // namespace

void small_gemm_with(SmallGemmKernel kernel, bool trans_a, bool trans_b, int64_t M, int64_t N,
                     int64_t K, float alpha, const float* A, int64_t lda, const float* B,
                     int64_t ldb, float beta, float* C, int64_t ldc) {
  PELAB_CHECK(vector_kernel_runs_here(kernel), "this CPU cannot run the small GEMM's {} kernel",
              describe(kernel));
  PELAB_CHECK(K <= kPackedKc && !trans_b,
              "internal error: small_gemm takes K ≤ {} and B untransposed, got K = {}{}", kPackedKc,
              K, trans_b ? " and Bᵀ" : "");
  if (M <= 0 || N <= 0) return;
#ifdef PELAB_SMALL_AVX2
  if (kernel == SmallGemmKernel::Avx512 && N > 8) {
    small_rows_avx512(trans_a, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  if (kernel != SmallGemmKernel::Portable) {
    small_rows_avx2(trans_a, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
#endif
  small_rows_portable(trans_a, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void small_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                int64_t ldc) {
  small_gemm_with(best_vector_kernel(), trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C,
                  ldc);
}

}  // namespace pelab
