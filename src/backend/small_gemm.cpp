#include "small_gemm.h"

#include <algorithm>
#include <vector>

namespace pelab::detail {

namespace {
constexpr int64_t kMr = 4;   // rows of the register tile
constexpr int64_t kNr = 16;  // columns: two 8-float vectors

typedef float v8 __attribute__((vector_size(32), aligned(4)));

inline v8 load8(const float* p) {
  v8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void store8(float* p, v8 v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// tile[4][16] = Σ_k ap[k][0..3] ⊗ bp[k][0..15], k in order.
void micro_kernel(int64_t K, const float* __restrict ap, const float* __restrict bp,
                  float* __restrict tile) {
  v8 c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {}, c30 = {}, c31 = {};
  for (int64_t k = 0; k < K; ++k) {
    const v8 b0 = load8(bp + k * kNr), b1 = load8(bp + k * kNr + 8);
    const float* a = ap + k * kMr;
    const v8 a0 = v8{} + a[0], a1 = v8{} + a[1], a2 = v8{} + a[2], a3 = v8{} + a[3];
    c00 += a0 * b0;  // contracted to fused multiply-adds
    c01 += a0 * b1;
    c10 += a1 * b0;
    c11 += a1 * b1;
    c20 += a2 * b0;
    c21 += a2 * b1;
    c30 += a3 * b0;
    c31 += a3 * b1;
  }
  store8(tile + 0, c00), store8(tile + 8, c01), store8(tile + 16, c10), store8(tile + 24, c11);
  store8(tile + 32, c20), store8(tile + 40, c21), store8(tile + 48, c30), store8(tile + 56, c31);
}
}  // namespace

void small_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  const int64_t mp = (M + kMr - 1) / kMr, np = (N + kNr - 1) / kNr;
  thread_local std::vector<float> a_pack, b_pack;
  a_pack.assign(static_cast<size_t>(mp * K * kMr), 0.0f);
  b_pack.assign(static_cast<size_t>(np * K * kNr), 0.0f);
  // a_pack[s][k][r] = op(A)[s·4 + r, k]
  for (int64_t i = 0; i < M; ++i) {
    float* dst = a_pack.data() + (i / kMr) * K * kMr + i % kMr;
    if (ta) {
      for (int64_t k = 0; k < K; ++k) dst[k * kMr] = A[k * lda + i];
    } else {
      for (int64_t k = 0; k < K; ++k) dst[k * kMr] = A[i * lda + k];
    }
  }
  // b_pack[s][k][c] = op(B)[k, s·16 + c]
  if (tb) {
    for (int64_t j = 0; j < N; ++j) {
      float* dst = b_pack.data() + (j / kNr) * K * kNr + j % kNr;
      for (int64_t k = 0; k < K; ++k) dst[k * kNr] = B[j * ldb + k];
    }
  } else {
    for (int64_t k = 0; k < K; ++k)
      for (int64_t s = 0; s < np; ++s) {
        const int64_t j0 = s * kNr, w = std::min(kNr, N - j0);
        std::copy_n(B + k * ldb + j0, w, b_pack.data() + (s * K + k) * kNr);
      }
  }
  alignas(64) float tile[kMr * kNr];
  for (int64_t si = 0; si < mp; ++si) {
    const int64_t i0 = si * kMr, rows = std::min(kMr, M - i0);
    for (int64_t sj = 0; sj < np; ++sj) {
      const int64_t j0 = sj * kNr, cols = std::min(kNr, N - j0);
      micro_kernel(K, a_pack.data() + si * K * kMr, b_pack.data() + sj * K * kNr, tile);
      for (int64_t r = 0; r < rows; ++r) {
        float* c = C + (i0 + r) * ldc + j0;
        const float* t = tile + r * kNr;
        if (beta == 0.0f) {  // C is not read: it may hold anything
          for (int64_t j = 0; j < cols; ++j) c[j] = alpha * t[j];
        } else {
          for (int64_t j = 0; j < cols; ++j) c[j] = alpha * t[j] + beta * c[j];
        }
      }
    }
  }
}

}  // namespace pelab::detail
