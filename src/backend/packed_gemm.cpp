#include "pelab/backend/packed_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#define PELAB_PACKED_AVX2 1
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "pelab/backend/small_gemm.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"

namespace pelab {

namespace {

// The register tile: 6 rows × 16 columns = twelve 8-float AVX registers of C, two of B and
// one broadcast of A — fifteen of the sixteen ymm registers.
constexpr int64_t kMr = 6;
constexpr int64_t kNr = 16;
// Cache blocking: a 16×KC panel of B (16 KiB) stays in L1 while 6×KC panels of A stream from
// L2 (an MC×KC block of 144 KiB when A is packed; rows of A itself when read in place); the
// KC×NC block of B lives in L3 (2 MiB).
constexpr int64_t kKc = kPackedKc;
constexpr int64_t kMc = 144;   // a multiple of kMr
constexpr int64_t kNc = 2048;  // a multiple of kNr
// Below this many flops per part, starting a parallel region costs more than it saves.
constexpr double kMinFlopsPerPart = 2e6;

// Packed panels of op(A) and op(B), one pair per thread, grown once and then reused: the
// steady-state training step allocates nothing here. (64-byte aligned, though the kernel
// only uses unaligned loads: a panel starts at a multiple of kc, which may be odd.)
struct PackBuffers {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> a, b;
  int64_t a_size = 0, b_size = 0;

  static float* grow(std::unique_ptr<float[], Free>& buffer, int64_t& size, int64_t needed) {
    if (size < needed) {
      const size_t bytes = (static_cast<size_t>(needed) * sizeof(float) + 63) / 64 * 64;
      buffer.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      PELAB_CHECK(buffer != nullptr, "out of memory packing a GEMM operand ({} bytes)", bytes);
      size = needed;
    }
    return buffer.get();
  }
};
thread_local PackBuffers t_buffers;

// A view of an operand block as the micro-kernel reads it: element (r, k) of a 6-row panel of
// op(A) is rows[r][k · k_stride]; element (k, j) of a 16-column panel of op(B) is
// base[k · k_stride + j]. Packed panels and operands read in place differ only in strides.
struct APanel {
  const float* row0;   // row 0 at k = 0
  int64_t row_stride;  // between rows: 1 (packed panel, or Aᵀ in place) or lda (A in place)
  int64_t k_stride;    // between k: kMr (packed), 1 (A in place) or lda (Aᵀ in place)
  int64_t rows;        // valid rows; the others repeat the last (sums computed, never stored)
  const float* row(int64_t r) const { return row0 + std::min(r, rows - 1) * row_stride; }
};
struct BPanel {
  const float* base;  // k = 0, column 0
  int64_t k_stride;   // kNr (packed) or ldb (B in place, each row contiguous in j)
};

// op(A)[i0 : i0+mc, p0 : p0+kc] → panels of kMr rows, each [kc][kMr], zero-padded.
void pack_a(bool trans_a, const float* A, int64_t lda, int64_t i0, int64_t mc, int64_t p0,
            int64_t kc, float* packed) {
  for (int64_t ir = 0; ir < mc; ir += kMr) {
    const int64_t rows = std::min(kMr, mc - ir);
    float* panel = packed + ir * kc;
    if (trans_a) {  // op(A)(i, k) = A[k, i]: a panel's rows are contiguous in memory
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = A + (p0 + k) * lda + i0 + ir;
        float* dst = panel + k * kMr;
        if (rows == kMr) {  // a copy of constant size: a few vector moves, not six of each
          std::memcpy(dst, src, kMr * sizeof(float));
          continue;
        }
        for (int64_t r = 0; r < rows; ++r) dst[r] = src[r];
        for (int64_t r = rows; r < kMr; ++r) dst[r] = 0.0f;
      }
    } else {  // op(A)(i, k) = A[i, k]
      for (int64_t r = 0; r < rows; ++r) {
        const float* src = A + (i0 + ir + r) * lda + p0;
        for (int64_t k = 0; k < kc; ++k) panel[k * kMr + r] = src[k];
      }
      for (int64_t r = rows; r < kMr; ++r)
        for (int64_t k = 0; k < kc; ++k) panel[k * kMr + r] = 0.0f;
    }
  }
}

#ifdef PELAB_PACKED_AVX2
// A full panel of Bᵀ: panel[k][c] = rows[c · ldb + k] for 16 rows c, by 8×8 transposes in
// registers (the element-by-element loop below costs about as much as the products of
// attention's small per-head GEMMs). Returns how many k it did: the multiple of 8 below kc.
__attribute__((target("avx2"))) int64_t pack_bt_panel_avx2(const float* rows, int64_t ldb,
                                                           int64_t kc, float* panel) {
  int64_t k0 = 0;
  for (; k0 + 8 <= kc; k0 += 8) {
    for (int64_t half = 0; half < kNr; half += 8) {
      const float* src = rows + half * ldb + k0;
      // r_c = B[c, k0 : k0+8] for the eight rows c of this half.
      const __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + ldb),
                   r2 = _mm256_loadu_ps(src + 2 * ldb), r3 = _mm256_loadu_ps(src + 3 * ldb),
                   r4 = _mm256_loadu_ps(src + 4 * ldb), r5 = _mm256_loadu_ps(src + 5 * ldb),
                   r6 = _mm256_loadu_ps(src + 6 * ldb), r7 = _mm256_loadu_ps(src + 7 * ldb);
      const __m256 u0 = _mm256_unpacklo_ps(r0, r1), u1 = _mm256_unpackhi_ps(r0, r1),
                   u2 = _mm256_unpacklo_ps(r2, r3), u3 = _mm256_unpackhi_ps(r2, r3),
                   u4 = _mm256_unpacklo_ps(r4, r5), u5 = _mm256_unpackhi_ps(r4, r5),
                   u6 = _mm256_unpacklo_ps(r6, r7), u7 = _mm256_unpackhi_ps(r6, r7);
      const __m256 s0 = _mm256_shuffle_ps(u0, u2, 0x44), s1 = _mm256_shuffle_ps(u0, u2, 0xEE),
                   s2 = _mm256_shuffle_ps(u1, u3, 0x44), s3 = _mm256_shuffle_ps(u1, u3, 0xEE),
                   s4 = _mm256_shuffle_ps(u4, u6, 0x44), s5 = _mm256_shuffle_ps(u4, u6, 0xEE),
                   s6 = _mm256_shuffle_ps(u5, u7, 0x44), s7 = _mm256_shuffle_ps(u5, u7, 0xEE);
      // t_k = B[half : half+8, k0 + k]: column k0 + k of this half, as a row of the panel.
      float* dst = panel + k0 * kNr + half;
      _mm256_storeu_ps(dst + 0 * kNr, _mm256_permute2f128_ps(s0, s4, 0x20));
      _mm256_storeu_ps(dst + 1 * kNr, _mm256_permute2f128_ps(s1, s5, 0x20));
      _mm256_storeu_ps(dst + 2 * kNr, _mm256_permute2f128_ps(s2, s6, 0x20));
      _mm256_storeu_ps(dst + 3 * kNr, _mm256_permute2f128_ps(s3, s7, 0x20));
      _mm256_storeu_ps(dst + 4 * kNr, _mm256_permute2f128_ps(s0, s4, 0x31));
      _mm256_storeu_ps(dst + 5 * kNr, _mm256_permute2f128_ps(s1, s5, 0x31));
      _mm256_storeu_ps(dst + 6 * kNr, _mm256_permute2f128_ps(s2, s6, 0x31));
      _mm256_storeu_ps(dst + 7 * kNr, _mm256_permute2f128_ps(s3, s7, 0x31));
    }
  }
  return k0;
}
#endif

// op(B)[p0 : p0+kc, j0 : j0+nc] → panels of kNr columns, each [kc][kNr], zero-padded.
// The kernel decides only how Bᵀ is transposed (registers or element by element), never the
// values written.
void pack_b(VectorKernel kernel, bool trans_b, const float* B, int64_t ldb, int64_t p0, int64_t kc,
            int64_t j0, int64_t nc, float* packed) {
  if (!trans_b) {  // op(B)(k, j) = B[k, j]: row k of the block, in one pass over its panels
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = B + (p0 + k) * ldb + j0;
      for (int64_t jr = 0; jr < nc; jr += kNr) {
        const int64_t cols = std::min(kNr, nc - jr);
        float* dst = packed + jr * kc + k * kNr;
        if (cols == kNr) {  // a full panel: a copy of constant size, a few vector moves
          std::memcpy(dst, src + jr, kNr * sizeof(float));
          continue;
        }
        // One pass over the full panel width: a separate zeroing loop for the padding
        // becomes a memset call per row, which costs more than the copy at these widths.
        for (int64_t c = 0; c < kNr; ++c) dst[c] = c < cols ? src[jr + c] : 0.0f;
      }
    }
    return;
  }
  for (int64_t jr = 0; jr < nc; jr += kNr) {  // op(B)(k, j) = B[j, k]
    const int64_t cols = std::min(kNr, nc - jr);
    float* panel = packed + jr * kc;
    int64_t done = 0;  // the first `done` k of every column, by the vector transpose
#ifdef PELAB_PACKED_AVX2
    if (cols == kNr && kernel != VectorKernel::Portable)
      done = pack_bt_panel_avx2(B + (j0 + jr) * ldb + p0, ldb, kc, panel);
#else
    (void)kernel;
#endif
    for (int64_t c = 0; c < cols; ++c) {
      const float* src = B + (j0 + jr + c) * ldb + p0;
      for (int64_t k = done; k < kc; ++k) panel[k * kNr + c] = src[k];
    }
    for (int64_t c = cols; c < kNr; ++c)
      for (int64_t k = 0; k < kc; ++k) panel[k * kNr + c] = 0.0f;
  }
}

// The micro-kernels: C[0:6, 0:16] (leading dimension ldc) = fma(beta, C, alpha·Σ_k a_k b_kᵀ);
// beta == 0 writes alpha·Σ without reading C. A full 16 columns of B must be readable (a
// packed panel, or a block of B read in place that is not at its right edge).
using MicroKernel = void (*)(int64_t kc, const APanel& a, const BPanel& b, float* c, int64_t ldc,
                             float alpha, float beta);

// C[0:rows, 0:cols] = fma(beta, C, alpha·sums) element by element (sums: [rows][kNr]); beta ==
// 0 never reads C. The AVX2 kernel's vector store computes exactly this.
void store_sums(const float* sums, int64_t rows, int64_t cols, float* c, int64_t ldc, float alpha,
                float beta) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      const float scaled = alpha * sums[r * kNr + j];
      float& out = c[r * ldc + j];
      out = beta == 0.0f ? scaled : std::fma(beta, out, scaled);
    }
}

// The same arithmetic one element at a time: the definition the AVX2 kernel must equal.
void micro_kernel_portable(int64_t kc, const APanel& a, const BPanel& b, float* c, int64_t ldc,
                           float alpha, float beta) {
  float acc[kMr][kNr] = {};
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t r = 0; r < kMr; ++r) {
      const float a_rk = a.row(r)[k * a.k_stride];
      const float* b_k = b.base + k * b.k_stride;
      for (int64_t j = 0; j < kNr; ++j) acc[r][j] = std::fma(a_rk, b_k[j], acc[r][j]);
    }
  store_sums(&acc[0][0], kMr, kNr, c, ldc, alpha, beta);
}

#ifdef PELAB_PACKED_AVX2
// Target attributes do not reach into lambdas or inlined helpers, hence the macros.
// PELAB_ROW_FMA(r, address): c[r][0:16] += A(r, k) · b[k][0:16], A(r, k) read from address.
#define PELAB_ROW_FMA(r, address)                    \
  {                                                  \
    const __m256 a_r = _mm256_broadcast_ss(address); \
    c##r##0 = _mm256_fmadd_ps(a_r, b0, c##r##0);     \
    c##r##1 = _mm256_fmadd_ps(a_r, b1, c##r##1);     \
  }
// One k of the tile: b[k][0:16] from b_k, A(r, k) for the six rows from the six addresses.
#define PELAB_TILE_K(b_k, a0, a1, a2, a3, a4, a5)                            \
  {                                                                          \
    const __m256 b0 = _mm256_loadu_ps(b_k), b1 = _mm256_loadu_ps((b_k) + 8); \
    PELAB_ROW_FMA(0, a0)                                                     \
    PELAB_ROW_FMA(1, a1)                                                     \
    PELAB_ROW_FMA(2, a2)                                                     \
    PELAB_ROW_FMA(3, a3)                                                     \
    PELAB_ROW_FMA(4, a4)                                                     \
    PELAB_ROW_FMA(5, a5)                                                     \
  }
#define PELAB_ROW_STORE(r)                                                                   \
  {                                                                                          \
    float* row = c + (r)*ldc;                                                                \
    const __m256 s0 = _mm256_mul_ps(alpha_v, c##r##0), s1 = _mm256_mul_ps(alpha_v, c##r##1); \
    if (beta == 0.0f) {                                                                      \
      _mm256_storeu_ps(row, s0);                                                             \
      _mm256_storeu_ps(row + 8, s1);                                                         \
    } else {                                                                                 \
      _mm256_storeu_ps(row, _mm256_fmadd_ps(beta_v, _mm256_loadu_ps(row), s0));              \
      _mm256_storeu_ps(row + 8, _mm256_fmadd_ps(beta_v, _mm256_loadu_ps(row + 8), s1));      \
    }                                                                                        \
  }
#define PELAB_TILE_DECLARE                                                                 \
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00; \
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
#define PELAB_TILE_STORE                                                       \
  const __m256 alpha_v = _mm256_set1_ps(alpha), beta_v = _mm256_set1_ps(beta); \
  PELAB_ROW_STORE(0)                                                           \
  PELAB_ROW_STORE(1)                                                           \
  PELAB_ROW_STORE(2)                                                           \
  PELAB_ROW_STORE(3)                                                           \
  PELAB_ROW_STORE(4)                                                           \
  PELAB_ROW_STORE(5)

// Any panels: six row pointers and one running offset, each broadcast a single addressed
// load. Serves edge tiles and B read in place; full tiles take the kernel below.
__attribute__((target("avx2,fma"))) void micro_kernel_avx2(int64_t kc, const APanel& a,
                                                           const BPanel& b, float* c, int64_t ldc,
                                                           float alpha, float beta) {
  PELAB_TILE_DECLARE
  const float *a0 = a.row(0), *a1 = a.row(1), *a2 = a.row(2), *a3 = a.row(3), *a4 = a.row(4),
              *a5 = a.row(5);
  int64_t a_offset = 0, b_offset = 0;
  for (int64_t k = 0; k < kc; ++k) {
    PELAB_TILE_K(b.base + b_offset, a0 + a_offset, a1 + a_offset, a2 + a_offset, a3 + a_offset,
                 a4 + a_offset, a5 + a_offset)
    a_offset += a.k_stride;
    b_offset += b.k_stride;
  }
  PELAB_TILE_STORE
}

// How a full tile's six rows of op(A) lie in memory, fixed at compile time so that the loop
// has no address arithmetic beyond one pointer step per operand.
enum class ALayout {
  Packed,   // a packed panel: row r at p[r], p steps by kMr
  Rows,     // A in place: six row pointers, k contiguous
  Columns,  // Aᵀ in place: row r at p[r], p steps by lda
};

// A full 6×16 tile with op(B) packed (k stride kNr; b_panel's own stride is not read). The same
// FMAs in the same order as the kernel above, so the same bits.
template <ALayout layout>
__attribute__((target("avx2,fma"))) void micro_kernel_avx2_full(int64_t kc, const APanel& a,
                                                                const BPanel& b_panel, float* c,
                                                                int64_t ldc, float alpha,
                                                                float beta) {
  PELAB_TILE_DECLARE
  const float* b = b_panel.base;
  if constexpr (layout == ALayout::Rows) {
    const float *a0 = a.row0, *a1 = a0 + a.row_stride, *a2 = a1 + a.row_stride,
                *a3 = a2 + a.row_stride, *a4 = a3 + a.row_stride, *a5 = a4 + a.row_stride;
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; ++k)
      PELAB_TILE_K(b + k * kNr, a0 + k, a1 + k, a2 + k, a3 + k, a4 + k, a5 + k)
  } else {
    const int64_t step = layout == ALayout::Packed ? kMr : a.k_stride;
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; ++k) {
      const float* p = a.row0 + k * step;  // (never a pointer past A's last column)
      PELAB_TILE_K(b + k * kNr, p, p + 1, p + 2, p + 3, p + 4, p + 5)
    }
  }
  PELAB_TILE_STORE
}

// Two full tiles side by side, C[0:6, 0:32], from two packed 16-column panels of B: one
// AVX-512 register per row and panel, twelve accumulators, so that the FMAs' latency is hidden
// as in the AVX2 kernel, at twice its width. Every element gets the AVX2 kernel's FMAs in the
// same order and the same store, so the same bits.
#define PELAB_PAIR_ROW_FMA(r, address)             \
  {                                                \
    const __m512 a_r = _mm512_set1_ps(*(address)); \
    p##r##0 = _mm512_fmadd_ps(a_r, b0, p##r##0);   \
    p##r##1 = _mm512_fmadd_ps(a_r, b1, p##r##1);   \
  }
#define PELAB_PAIR_K(k, a0, a1, a2, a3, a4, a5)                                               \
  {                                                                                           \
    const __m512 b0 = _mm512_loadu_ps(left + (k)*kNr), b1 = _mm512_loadu_ps(right + (k)*kNr); \
    PELAB_PAIR_ROW_FMA(0, a0)                                                                 \
    PELAB_PAIR_ROW_FMA(1, a1)                                                                 \
    PELAB_PAIR_ROW_FMA(2, a2)                                                                 \
    PELAB_PAIR_ROW_FMA(3, a3)                                                                 \
    PELAB_PAIR_ROW_FMA(4, a4)                                                                 \
    PELAB_PAIR_ROW_FMA(5, a5)                                                                 \
  }
#define PELAB_PAIR_ROW_STORE(r)                                                              \
  {                                                                                          \
    float* row = c + (r)*ldc;                                                                \
    const __m512 s0 = _mm512_mul_ps(alpha_v, p##r##0), s1 = _mm512_mul_ps(alpha_v, p##r##1); \
    if (beta == 0.0f) {                                                                      \
      _mm512_storeu_ps(row, s0);                                                             \
      _mm512_storeu_ps(row + kNr, s1);                                                       \
    } else {                                                                                 \
      _mm512_storeu_ps(row, _mm512_fmadd_ps(beta_v, _mm512_loadu_ps(row), s0));              \
      _mm512_storeu_ps(row + kNr, _mm512_fmadd_ps(beta_v, _mm512_loadu_ps(row + kNr), s1));  \
    }                                                                                        \
  }
using PairKernel = void (*)(int64_t kc, const APanel& a, const float* left, const float* right,
                            float* c, int64_t ldc, float alpha, float beta);

template <ALayout layout>
__attribute__((target("avx2,fma,avx512f"))) void micro_kernel_avx512_pair(
    int64_t kc, const APanel& a, const float* left, const float* right, float* c, int64_t ldc,
    float alpha, float beta) {
  __m512 p00 = _mm512_setzero_ps(), p01 = p00, p10 = p00, p11 = p00, p20 = p00, p21 = p00;
  __m512 p30 = p00, p31 = p00, p40 = p00, p41 = p00, p50 = p00, p51 = p00;
  if constexpr (layout == ALayout::Rows) {
    const float *a0 = a.row0, *a1 = a0 + a.row_stride, *a2 = a1 + a.row_stride,
                *a3 = a2 + a.row_stride, *a4 = a3 + a.row_stride, *a5 = a4 + a.row_stride;
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; ++k) PELAB_PAIR_K(k, a0 + k, a1 + k, a2 + k, a3 + k, a4 + k, a5 + k)
  } else {
    const int64_t step = layout == ALayout::Packed ? kMr : a.k_stride;
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; ++k) {
      const float* q = a.row0 + k * step;
      PELAB_PAIR_K(k, q, q + 1, q + 2, q + 3, q + 4, q + 5)
    }
  }
  const __m512 alpha_v = _mm512_set1_ps(alpha), beta_v = _mm512_set1_ps(beta);
  PELAB_PAIR_ROW_STORE(0)
  PELAB_PAIR_ROW_STORE(1)
  PELAB_PAIR_ROW_STORE(2)
  PELAB_PAIR_ROW_STORE(3)
  PELAB_PAIR_ROW_STORE(4)
  PELAB_PAIR_ROW_STORE(5)
}
#undef PELAB_PAIR_ROW_FMA
#undef PELAB_PAIR_K
#undef PELAB_PAIR_ROW_STORE
#undef PELAB_TILE_DECLARE
#undef PELAB_TILE_STORE
#undef PELAB_TILE_K
#undef PELAB_ROW_FMA
#undef PELAB_ROW_STORE
#endif  // PELAB_PACKED_AVX2

// One part of the product, on one thread: C[i0 : i0+m, j0 : j0+n].
void packed_gemm_part(VectorKernel kernel, PackingPolicy packing, bool trans_a, bool trans_b,
                      int64_t i0, int64_t m, int64_t j0, int64_t n, int64_t K, float alpha,
                      const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
                      float* C, int64_t ldc) {
#ifdef PELAB_PACKED_AVX2
  const bool avx2 = kernel != VectorKernel::Portable;  // Avx512 runs single tiles with AVX2
  const MicroKernel micro = avx2 ? micro_kernel_avx2 : micro_kernel_portable;
  // The kernel for a tile whose six rows of A are all valid (a packed panel always is: it is
  // zero-padded) and whose B is a packed panel: A's layout fixed at compile time.
  const MicroKernel full = !avx2            ? micro_kernel_portable
                           : packing.pack_a ? micro_kernel_avx2_full<ALayout::Packed>
                           : trans_a        ? micro_kernel_avx2_full<ALayout::Columns>
                                            : micro_kernel_avx2_full<ALayout::Rows>;
  // Two such tiles side by side, when both panels of B are full and packed.
  const PairKernel pair = kernel != VectorKernel::Avx512 ? nullptr
                          : packing.pack_a               ? micro_kernel_avx512_pair<ALayout::Packed>
                          : trans_a ? micro_kernel_avx512_pair<ALayout::Columns>
                                    : micro_kernel_avx512_pair<ALayout::Rows>;
#else
  (void)kernel;  // packed_gemm_with() refuses the vector kernels where they do not exist
  const MicroKernel micro = micro_kernel_portable, full = micro_kernel_portable;
  const PairKernel pair = nullptr;
#endif
  // Bᵀ is always packed: in place, a 16-column panel would need 16 loads per k.
  const bool pack_a_blocks = packing.pack_a, pack_b_blocks = packing.pack_b || trans_b;
  // K is cut into blocks of near-equal length (a function of K alone, so the order of the sums
  // is too).
  const int64_t k_blocks = (K + kKc - 1) / kKc;
  const int64_t kc_max = (K + k_blocks - 1) / k_blocks;
  const int64_t nc_max = std::min(kNc, (n + kNr - 1) / kNr * kNr);
  const int64_t mc_max = std::min(kMc, (m + kMr - 1) / kMr * kMr);
  float* packed_b =
      pack_b_blocks ? PackBuffers::grow(t_buffers.b, t_buffers.b_size, kc_max * nc_max) : nullptr;
  float* packed_a =
      pack_a_blocks ? PackBuffers::grow(t_buffers.a, t_buffers.a_size, kc_max * mc_max) : nullptr;
  // Edge tiles: their sums go here first. (When B is read in place, its partial last panel is
  // still packed, zero-padded, so that the kernel can always read 16 columns.)
  float c_edge[kMr * kNr];

  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    for (int64_t block = 0; block < k_blocks; ++block) {
      const int64_t pc = K * block / k_blocks, kc = K * (block + 1) / k_blocks - pc;
      const float block_beta = block == 0 ? beta : 1.0f;
      if (pack_b_blocks) {
        pack_b(kernel, trans_b, B, ldb, pc, kc, j0 + jc, nc, packed_b);
      } else if (nc % kNr != 0) {  // only the last, partial panel of B is packed
        const int64_t last = nc / kNr * kNr;
        packed_b = PackBuffers::grow(t_buffers.b, t_buffers.b_size, kc_max * kNr);
        pack_b(kernel, false, B, ldb, pc, kc, j0 + jc + last, nc - last, packed_b);
      }
      for (int64_t ic = 0; ic < m; ic += kMc) {
        const int64_t mc = std::min(kMc, m - ic);
        if (pack_a_blocks) pack_a(trans_a, A, lda, i0 + ic, mc, pc, kc, packed_a);
        // The panel of op(A) at row ir of this block, `rows` of them valid.
        const auto a_rows = [&](int64_t ir, int64_t rows) {
          const int64_t i = i0 + ic + ir;
          return pack_a_blocks ? APanel{packed_a + ir * kc, 1, kMr, kMr}
                 : trans_a     ? APanel{A + pc * lda + i, 1, lda, rows}
                               : APanel{A + i * lda + pc, lda, 1, rows};
        };
        // One 6×16 tile of C: rows ir.. of this block, the panel of B at column jr.
        const auto tile = [&](int64_t jr, int64_t ir) {
          const int64_t cols = std::min(kNr, nc - jr), rows = std::min(kMr, mc - ir);
          const int64_t i = i0 + ic + ir;
          const bool b_packed = pack_b_blocks || cols < kNr;
          const BPanel b_panel = pack_b_blocks ? BPanel{packed_b + jr * kc, kNr}
                                 : b_packed    ? BPanel{packed_b, kNr}
                                               : BPanel{B + pc * ldb + j0 + jc + jr, ldb};
          const APanel a_panel = a_rows(ir, rows);
          float* c_tile = C + i * ldc + j0 + jc + jr;
          const bool full_rows = rows == kMr || pack_a_blocks;
          const MicroKernel tile_kernel = full_rows && b_packed ? full : micro;
          if (rows == kMr && cols == kNr) {
            tile_kernel(kc, a_panel, b_panel, c_tile, ldc, alpha, block_beta);
          } else {
            // An edge tile: the raw sums (alpha 1, beta 0: exact), then the same store as the
            // kernel's, for the valid part only.
            tile_kernel(kc, a_panel, b_panel, c_edge, kNr, 1.0f, 0.0f);
            store_sums(c_edge, rows, cols, c_tile, ldc, alpha, block_beta);
          }
        };
        for (int64_t jr = 0; jr < nc; jr += kNr) {
          // This panel and the next, both full and packed: the pair kernel takes both at once
          // where the six rows are full, each takes its own tile elsewhere.
          const bool paired = pair != nullptr && pack_b_blocks && nc - jr >= 2 * kNr;
          for (int64_t ir = 0; ir < mc; ir += kMr) {
            if (paired && mc - ir >= kMr) {  // (an edge tile's sums go through c_edge)
              pair(kc, a_rows(ir, kMr), packed_b + jr * kc, packed_b + (jr + kNr) * kc,
                   C + (i0 + ic + ir) * ldc + j0 + jc + jr, ldc, alpha, block_beta);
              continue;
            }
            tile(jr, ir);
            if (paired) tile(jr + kNr, ir);
          }
          if (paired) jr += kNr;  // the next panel is done too
        }
      }
    }
  }
}

}  // namespace

PackingPolicy packed_gemm_packing(bool trans_a, bool /*trans_b*/, int64_t M, int64_t /*N*/,
                                  int64_t /*K*/) {
  // Measured at the model's shapes (one thread, best of 12 alternating rounds): B read in
  // place loses to a packed panel at every shape (rows of B lda apart share few L1 sets);
  // A in place wins except for the weight gradient's Aᵀ with many rows, which packing lets
  // the kernel read as one stream.
  return {trans_a && M >= 256, true};
}

void packed_gemm_with(VectorKernel kernel, PackingPolicy packing, int parts, bool trans_a,
                      bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                      int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  PELAB_CHECK(vector_kernel_runs_here(kernel), "this CPU cannot run the packed GEMM's {} kernel",
              describe(kernel));
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {  // an empty sum: C = beta·C
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  // Split the longer side of C into parts aligned to the register tile; each part packs its
  // own operands, so the shorter side's operand is packed once per part.
  const bool split_rows = M > N;
  const int64_t unit = split_rows ? kMr : kNr;
  const int64_t units = ((split_rows ? M : N) + unit - 1) / unit;
  parts = static_cast<int>(std::clamp<int64_t>(parts, 1, units));
  if (parts == 1) {
    packed_gemm_part(kernel, packing, trans_a, trans_b, 0, M, 0, N, K, alpha, A, lda, B, ldb, beta,
                     C, ldc);
    return;
  }
  // More parts than threads (tests ask for 7) share the pool's threads instead of growing it.
  const int threads = std::min(parts, omp_in_parallel() ? 1 : omp_get_max_threads());
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int part = 0; part < parts; ++part) {
    const int64_t lo = std::min(split_rows ? M : N, units * part / parts * unit);
    const int64_t hi = std::min(split_rows ? M : N, units * (part + 1) / parts * unit);
    if (lo >= hi) continue;
    if (split_rows)
      packed_gemm_part(kernel, packing, trans_a, trans_b, lo, hi - lo, 0, N, K, alpha, A, lda, B,
                       ldb, beta, C, ldc);
    else
      packed_gemm_part(kernel, packing, trans_a, trans_b, 0, M, lo, hi - lo, K, alpha, A, lda, B,
                       ldb, beta, C, ldc);
  }
}

void packed_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                 const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                 int64_t ldc) {
  if (!trans_b && M * N * K <= kSmallGemmMax && K <= kPackedKc) {  // the same sums, unpacked
    small_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  const double flops = 2.0 * M * N * K;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int parts = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(threads, static_cast<int64_t>(flops / kMinFlopsPerPart))));
  static const VectorKernel best = best_vector_kernel();  // chosen once: called per product
  packed_gemm_with(best, packed_gemm_packing(trans_a, trans_b, M, N, K), parts, trans_a, trans_b, M,
                   N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace pelab
