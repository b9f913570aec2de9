#include "pelab/backend/gemm.h"

#include <cblas.h>

#include <atomic>
#include <oneapi/dnnl/dnnl.h>

#include "pelab/core/error.h"
#include "pelab/core/parallel.h"

namespace pelab {

namespace {
std::atomic<GemmBackend> g_backend{GemmBackend::OneDnn};

// The oracle: plain loops with a double accumulator, no blocking, no cleverness.
void gemm_reference(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                    const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                    int64_t ldc) {
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
}  // namespace

GemmBackend gemm_backend() { return g_backend.load(); }
void set_gemm_backend(GemmBackend backend) { g_backend.store(backend); }

const char* to_string(GemmBackend backend) {
  switch (backend) {
    case GemmBackend::OneDnn: return "onednn";
    case GemmBackend::OpenBlas: return "openblas";
    case GemmBackend::Reference: return "reference";
  }
  return "?";
}

GemmBackend parse_gemm_backend(const std::string& name) {
  if (name == "onednn") return GemmBackend::OneDnn;
  if (name == "openblas") return GemmBackend::OpenBlas;
  if (name == "reference") return GemmBackend::Reference;
  throw Error(fmt::format("unknown GEMM backend '{}' (valid: onednn, openblas, reference)", name));
}

void gemm_with(GemmBackend backend, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
               float alpha, const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
               float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // an empty sum: C = beta·C (libraries disagree on this edge case)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  switch (backend) {
    case GemmBackend::OneDnn: {
      const dnnl_status_t status =
          dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      PELAB_CHECK(status == dnnl_success, "oneDNN sgemm failed (status {}) for M={} N={} K={}",
                  static_cast<int>(status), M, N, K);
      return;
    }
    case GemmBackend::OpenBlas:
      cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                  static_cast<blasint>(M), static_cast<blasint>(N), static_cast<blasint>(K), alpha,
                  A, static_cast<blasint>(lda), B, static_cast<blasint>(ldb), beta, C,
                  static_cast<blasint>(ldc));
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

void gemm_batched(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                  const float* A, int64_t lda, int64_t stride_a, const float* B, int64_t ldb,
                  int64_t stride_b, float beta, float* C, int64_t ldc, int64_t stride_c,
                  int64_t count) {
  const GemmBackend backend = gemm_backend();
  // Inside the region each call is single-threaded (oneDNN sees omp_in_parallel()).
  parallel_for(0, count, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k)
      gemm_with(backend, ta, tb, M, N, K, alpha, A + k * stride_a, lda, B + k * stride_b, ldb,
                beta, C + k * stride_c, ldc);
  });
}

}  // namespace pelab
