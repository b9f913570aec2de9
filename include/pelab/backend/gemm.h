// The one GEMM entry point. Every matrix product in pelab goes through gemm(), which
// dispatches to oneDNN, OpenBLAS or the naive reference kernel (the test oracle).
//
//   C[M, N] = alpha · op(A)[M, K] · op(B)[K, N] + beta · C      (row-major)
//
// op(A) = A (stored [M, K], leading dimension lda) or Aᵀ (stored [K, M]); likewise B.
#pragma once

#include <cstdint>
#include <string>

namespace pelab {

enum class GemmBackend { OneDnn, OpenBlas, Reference };

GemmBackend gemm_backend();
void set_gemm_backend(GemmBackend backend);
const char* to_string(GemmBackend backend);
GemmBackend parse_gemm_backend(const std::string& name);  // "onednn" | "openblas" | "reference"

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
          const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
          int64_t ldc);

// The same product through an explicitly chosen backend (benchmarks and tests).
void gemm_with(GemmBackend backend, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
               float alpha, const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
               float* C, int64_t ldc);

// `count` independent products; operand k starts at A + k·stride_a, etc. Runs the batch
// in parallel over the OpenMP pool with each product single-threaded.
void gemm_batched(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                  const float* A, int64_t lda, int64_t stride_a, const float* B, int64_t ldb,
                  int64_t stride_b, float beta, float* C, int64_t ldc, int64_t stride_c,
                  int64_t count);

}  // namespace pelab
