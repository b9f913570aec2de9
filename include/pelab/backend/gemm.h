// The one GEMM entry point. Every matrix product in pelab goes through gemm(), which
// dispatches to oneDNN, OpenBLAS, pelab's own packed kernel (backend/packed_gemm.h) or the
// naive reference kernel (the test oracle).
//
// The default backend, Auto, picks per product: small products (at most 32·32·32
// multiply-adds: attention's per-head ones in a small model, thousands a step) go to pelab's
// packed kernel, which avoids a library call's fixed cost; of the rest, oneDNN's sgemm is the
// faster one except on the weight-gradient layout (op(A) = Aᵀ, B plain, a long reduction K),
// where OpenBLAS is faster at the model's shapes (`pelab bench gemm` measures both;
// docs/performance.md has the figures).
// OpenBLAS always runs single-threaded; outside a parallel region pelab splits the product's
// columns (or rows) over the OpenMP pool itself — one pool, not two, and a fixed split per
// thread count, so results repeat bit for bit. On the larger products the packed kernel is
// level with the libraries, and a training step no faster with it (docs/performance.md).
//
//   C[M, N] = alpha · op(A)[M, K] · op(B)[K, N] + beta · C      (row-major)
//
// op(A) = A (stored [M, K], leading dimension lda) or Aᵀ (stored [K, M]); likewise B.
#pragma once

#include <cstdint>
#include <string>

namespace pelab {

enum class GemmBackend { Auto, OneDnn, OpenBlas, Packed, Reference };

GemmBackend gemm_backend();
void set_gemm_backend(GemmBackend backend);
const char* to_string(GemmBackend backend);
// "auto" | "onednn" | "openblas" | "packed" | "reference"
GemmBackend parse_gemm_backend(const std::string& name);
// The backend Auto uses for this product (Packed, OneDnn or OpenBlas), on this machine.
GemmBackend auto_gemm_backend(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K);
// The same rule for an OpenBLAS that runs (or does not run) a vector kernel for the CPU.
GemmBackend auto_gemm_backend(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                              bool openblas_fast);

// OpenBLAS chooses its kernels for the CPU when it loads, by the CPU's model; a CPU newer than
// the library gets its generic SSE3 kernel ("Prescott"), several times slower than oneDNN
// there (Debian bookworm's 0.3.21 on an Intel Xeon of family 6, model 207). Whether the core
// OpenBLAS chose (openblas_get_corename(): "Haswell", "SkylakeX", "Prescott", ...) is one of
// its AVX2 or AVX-512 kernels; and whether this process's OpenBLAS runs one.
bool openblas_core_is_vectorised(const std::string& core);
bool openblas_vectorised();
std::string openblas_core();

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

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
