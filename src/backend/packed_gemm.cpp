#include "pelab/backend/packed_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#define PELAB_PACKED_AVX2 1
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

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
constexpr int64_t kKc = 256;
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

// op(B)[p0 : p0+kc, j0 : j0+nc] → panels of kNr columns, each [kc][kNr], zero-padded.
void pack_b(bool trans_b, const float* B, int64_t ldb, int64_t p0, int64_t kc, int64_t j0,
            int64_t nc, float* packed) {
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    const int64_t cols = std::min(kNr, nc - jr);
    float* panel = packed + jr * kc;
    if (trans_b) {  // op(B)(k, j) = B[j, k]
      for (int64_t c = 0; c < cols; ++c) {
        const float* src = B + (j0 + jr + c) * ldb + p0;
        for (int64_t k = 0; k < kc; ++k) panel[k * kNr + c] = src[k];
      }
      for (int64_t c = cols; c < kNr; ++c)
        for (int64_t k = 0; k < kc; ++k) panel[k * kNr + c] = 0.0f;
    } else {  // op(B)(k, j) = B[k, j]: a panel's columns are contiguous in memory
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = B + (p0 + k) * ldb + j0 + jr;
        float* dst = panel + k * kNr;
        for (int64_t c = 0; c < cols; ++c) dst[c] = src[c];
        for (int64_t c = cols; c < kNr; ++c) dst[c] = 0.0f;
      }
    }
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
#define PELAB_ROW_FMA(r)                                     \
  {                                                          \
    const __m256 a_r = _mm256_broadcast_ss(a##r + a_offset); \
    c##r##0 = _mm256_fmadd_ps(a_r, b0, c##r##0);             \
    c##r##1 = _mm256_fmadd_ps(a_r, b1, c##r##1);             \
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

// Six row pointers and one running offset: each broadcast is a single addressed load, for
// every layout of A.
__attribute__((target("avx2,fma"))) void micro_kernel_avx2(int64_t kc, const APanel& a,
                                                           const BPanel& b, float* c, int64_t ldc,
                                                           float alpha, float beta) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float *a0 = a.row(0), *a1 = a.row(1), *a2 = a.row(2), *a3 = a.row(3), *a4 = a.row(4),
              *a5 = a.row(5);
  int64_t a_offset = 0, b_offset = 0;
  for (int64_t k = 0; k < kc; ++k) {
    const float* b_k = b.base + b_offset;
    const __m256 b0 = _mm256_loadu_ps(b_k), b1 = _mm256_loadu_ps(b_k + 8);
    PELAB_ROW_FMA(0)
    PELAB_ROW_FMA(1)
    PELAB_ROW_FMA(2)
    PELAB_ROW_FMA(3)
    PELAB_ROW_FMA(4)
    PELAB_ROW_FMA(5)
    a_offset += a.k_stride;
    b_offset += b.k_stride;
  }
  const __m256 alpha_v = _mm256_set1_ps(alpha), beta_v = _mm256_set1_ps(beta);
  PELAB_ROW_STORE(0)
  PELAB_ROW_STORE(1)
  PELAB_ROW_STORE(2)
  PELAB_ROW_STORE(3)
  PELAB_ROW_STORE(4)
  PELAB_ROW_STORE(5)
}
#undef PELAB_ROW_FMA
#undef PELAB_ROW_STORE
#endif  // PELAB_PACKED_AVX2

// One part of the product, on one thread: C[i0 : i0+m, j0 : j0+n].
void packed_gemm_part(PackedKernel kernel, PackingPolicy packing, bool trans_a, bool trans_b,
                      int64_t i0, int64_t m, int64_t j0, int64_t n, int64_t K, float alpha,
                      const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
                      float* C, int64_t ldc) {
#ifdef PELAB_PACKED_AVX2
  const MicroKernel micro =
      kernel == PackedKernel::Avx2 ? micro_kernel_avx2 : micro_kernel_portable;
#else
  (void)kernel;  // packed_gemm_with() refuses Avx2 where it does not exist
  const MicroKernel micro = micro_kernel_portable;
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
        pack_b(trans_b, B, ldb, pc, kc, j0 + jc, nc, packed_b);
      } else if (nc % kNr != 0) {  // only the last, partial panel of B is packed
        const int64_t last = nc / kNr * kNr;
        packed_b = PackBuffers::grow(t_buffers.b, t_buffers.b_size, kc_max * kNr);
        pack_b(false, B, ldb, pc, kc, j0 + jc + last, nc - last, packed_b);
      }
      for (int64_t ic = 0; ic < m; ic += kMc) {
        const int64_t mc = std::min(kMc, m - ic);
        if (pack_a_blocks) pack_a(trans_a, A, lda, i0 + ic, mc, pc, kc, packed_a);
        for (int64_t jr = 0; jr < nc; jr += kNr) {
          const int64_t cols = std::min(kNr, nc - jr);
          const BPanel b_panel = pack_b_blocks ? BPanel{packed_b + jr * kc, kNr}
                                 : cols < kNr  ? BPanel{packed_b, kNr}
                                               : BPanel{B + pc * ldb + j0 + jc + jr, ldb};
          for (int64_t ir = 0; ir < mc; ir += kMr) {
            const int64_t rows = std::min(kMr, mc - ir);
            const int64_t i = i0 + ic + ir;
            const APanel a_panel = pack_a_blocks ? APanel{packed_a + ir * kc, 1, kMr, kMr}
                                   : trans_a     ? APanel{A + pc * lda + i, 1, lda, rows}
                                                 : APanel{A + i * lda + pc, lda, 1, rows};
            float* c_tile = C + i * ldc + j0 + jc + jr;
            if (rows == kMr && cols == kNr) {
              micro(kc, a_panel, b_panel, c_tile, ldc, alpha, block_beta);
              continue;
            }
            // An edge tile: the raw sums (alpha 1, beta 0: exact), then the same store as the
            // kernel's, for the valid part only.
            micro(kc, a_panel, b_panel, c_edge, kNr, 1.0f, 0.0f);
            store_sums(c_edge, rows, cols, c_tile, ldc, alpha, block_beta);
          }
        }
      }
    }
  }
}

}  // namespace

PackedKernel packed_gemm_best_kernel() {
#ifdef PELAB_PACKED_AVX2
  static const PackedKernel best = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                                       ? PackedKernel::Avx2
                                       : PackedKernel::Portable;
  return best;
#else
  return PackedKernel::Portable;
#endif
}

const char* to_string(PackedKernel kernel) {
  return kernel == PackedKernel::Avx2 ? "avx2" : "portable";
}

PackingPolicy packed_gemm_packing(bool trans_a, bool /*trans_b*/, int64_t M, int64_t /*N*/,
                                  int64_t /*K*/) {
  // Measured at the model's shapes (one thread, best of 12 alternating rounds): B read in
  // place loses to a packed panel at every shape (rows of B lda apart share few L1 sets);
  // A in place wins except for the weight gradient's Aᵀ with many rows, which packing lets
  // the kernel read as one stream.
  return {trans_a && M >= 256, true};
}

void packed_gemm_with(PackedKernel kernel, PackingPolicy packing, int parts, bool trans_a,
                      bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                      int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  PELAB_CHECK(kernel == PackedKernel::Portable || packed_gemm_best_kernel() == PackedKernel::Avx2,
              "this CPU has no AVX2 and FMA for the packed GEMM's avx2 kernel");
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
  const double flops = 2.0 * M * N * K;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int parts = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(threads, static_cast<int64_t>(flops / kMinFlopsPerPart))));
  packed_gemm_with(packed_gemm_best_kernel(), packed_gemm_packing(trans_a, trans_b, M, N, K), parts,
                   trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace pelab
