#include "pelab/backend/gemm.h"

#include <cblas.h>

#include <oneapi/dnnl/dnnl.h>
#include <algorithm>
#include <atomic>
#include <cctype>

#include "pelab/backend/packed_gemm.h"
#include "pelab/backend/small_gemm.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"

namespace pelab {

namespace {
std::atomic<GemmBackend> g_backend{GemmBackend::Auto};

// The oracle: plain loops with a double accumulator, no blocking, no cleverness.
void gemm_reference(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        const float a = ta ? A[k * lda + i] : A[i * lda + k];
        const float b = tb ? B[j * ldb + k] : B[k * ldb + j];
        acc += static_cast<double>(a) * b;
      }
      float& c = C[i * ldc + j];
      // beta == 0 must ignore C entirely (it may hold NaN from an uninitialised buffer).
      c = static_cast<float>(alpha * acc + (beta == 0.0f ? 0.0 : static_cast<double>(beta) * c));
    }
  }
}
// OpenBLAS single-threaded, once, whoever calls first: Debian's OpenBLAS is the pthread
// build, whose own pool would fight the OpenMP one.
void openblas_single_threaded() {
  static const bool done = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
}

void openblas_call(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                   int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(M), static_cast<blasint>(N), static_cast<blasint>(K), alpha, A,
              static_cast<blasint>(lda), B, static_cast<blasint>(ldb), beta, C,
              static_cast<blasint>(ldc));
}

// OpenBLAS over the OpenMP pool: each thread computes a block of C's columns (or rows, when
// there are more rows), in multiples of 16 so the library's vector kernels see whole panels.
// Every element of C is one library call's dot product over all of K, so the split changes
// no rounding within a thread count.
void openblas_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                   int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  openblas_single_threaded();
  constexpr int64_t kPanel = 16;
  constexpr double kMinFlopsPerThread = 2e6;  // below this the fork costs more than it saves
  const double flops = 2.0 * M * N * K;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const bool split_cols = N >= M;
  const int64_t panels = ((split_cols ? N : M) + kPanel - 1) / kPanel;
  const int64_t parts =
      std::min<int64_t>({threads, panels, static_cast<int64_t>(flops / kMinFlopsPerThread)});
  if (parts <= 1) {
    openblas_call(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int64_t part = 0; part < parts; ++part) {
    const int64_t p0 = panels * part / parts * kPanel;
    const int64_t p1 = std::min(split_cols ? N : M, panels * (part + 1) / parts * kPanel);
    if (p0 >= p1) continue;
    if (split_cols) {  // C[:, p0:p1] = op(A) · op(B)[:, p0:p1]
      const float* b = tb ? B + p0 * ldb : B + p0;
      openblas_call(ta, tb, M, p1 - p0, K, alpha, A, lda, b, ldb, beta, C + p0, ldc);
    } else {  // C[p0:p1, :] = op(A)[p0:p1, :] · op(B)
      const float* a = ta ? A + p0 : A + p0 * lda;
      openblas_call(ta, tb, p1 - p0, N, K, alpha, a, lda, B, ldb, beta, C + p0 * ldc, ldc);
    }
  }
}
}  // namespace

constexpr int64_t kSmallWeightGradient = 64 * 256;  // M·N: output elements

bool openblas_core_is_vectorised(const std::string& core) {
  // OpenBLAS's x86-64 cores with AVX2 or AVX-512 kernels (its DYNAMIC_ARCH names).
  std::string lower = core;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* name :
       {"haswell", "excavator", "zen", "skylakex", "cooperlake", "sapphirerapids"})
    if (lower == name) return true;
  return false;
}

std::string openblas_core() {
  return openblas_get_corename();
}

bool openblas_vectorised() {
  static const bool vectorised = openblas_core_is_vectorised(openblas_core());
  return vectorised;
}

GemmBackend auto_gemm_backend(bool ta, bool tb, int64_t M, int64_t N, int64_t K) {
  return auto_gemm_backend(ta, tb, M, N, K, openblas_vectorised());
}

GemmBackend auto_gemm_backend(bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                              bool openblas_fast) {
  // Small products (attention's per head: 16×16×8 in the default experiment, thousands a step)
  // cost a library call's fixed overhead more than their arithmetic; pelab's own kernel has
  // none (docs/performance.md).
  if (M * N * K <= kSmallGemmMax) return GemmBackend::Packed;
  // The weight-gradient layout with a long reduction: oneDNN's sgemm is well below OpenBLAS's
  // rate there (`pelab bench gemm --config medium`, docs/performance.md). A small weight's
  // gradient (at most 64 × 256, R1's model) goes to pelab's kernel, as fast there: OpenBLAS's
  // first call maps a 128 MiB buffer and touches a quarter of it, a small model's whole size.
  // An OpenBLAS without a vector kernel for this CPU is slower than oneDNN: oneDNN then.
  if (ta && !tb && K >= 512) {
    if (M * N <= kSmallWeightGradient) return GemmBackend::Packed;
    return openblas_fast ? GemmBackend::OpenBlas : GemmBackend::OneDnn;
  }
  return GemmBackend::OneDnn;
}

GemmBackend gemm_backend() {
  return g_backend.load();
}
void set_gemm_backend(GemmBackend backend) {
  g_backend.store(backend);
}

const char* to_string(GemmBackend backend) {
  switch (backend) {
    case GemmBackend::Auto:
      return "auto";
    case GemmBackend::OneDnn:
      return "onednn";
    case GemmBackend::OpenBlas:
      return "openblas";
    case GemmBackend::Reference:
      return "reference";
    case GemmBackend::Packed:
      return "packed";
  }
  return "?";
}

GemmBackend parse_gemm_backend(const std::string& name) {
  if (name == "auto") return GemmBackend::Auto;
  if (name == "onednn") return GemmBackend::OneDnn;
  if (name == "openblas") return GemmBackend::OpenBlas;
  if (name == "reference") return GemmBackend::Reference;
  if (name == "packed") return GemmBackend::Packed;
  throw Error(fmt::format(
      "unknown GEMM backend '{}' (valid: auto, onednn, openblas, packed, reference)", name));
}

void gemm_with(GemmBackend backend, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
               const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
               int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // an empty sum: C = beta·C (libraries disagree on this edge case)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  if (backend == GemmBackend::Auto) backend = auto_gemm_backend(ta, tb, M, N, K);
  switch (backend) {
    case GemmBackend::Auto:  // resolved above
    case GemmBackend::OneDnn: {
      const dnnl_status_t status =
          dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      PELAB_CHECK(status == dnnl_success, "oneDNN sgemm failed (status {}) for M={} N={} K={}",
                  static_cast<int>(status), M, N, K);
      return;
    }
    case GemmBackend::OpenBlas:
      openblas_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      return;
    case GemmBackend::Packed:
      packed_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      return;
    case GemmBackend::Reference:
      gemm_reference(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      return;
  }
}

void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  gemm_with(gemm_backend(), ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm_batched(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                  int64_t lda, int64_t stride_a, const float* B, int64_t ldb, int64_t stride_b,
                  float beta, float* C, int64_t ldc, int64_t stride_c, int64_t count) {
  const GemmBackend backend = gemm_backend();
  // Inside the region each call is single-threaded (oneDNN sees omp_in_parallel()).
  parallel_for(0, count, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k)
      gemm_with(backend, ta, tb, M, N, K, alpha, A + k * stride_a, lda, B + k * stride_b, ldb, beta,
                C + k * stride_c, ldc);
  });
}

}  // namespace pelab
