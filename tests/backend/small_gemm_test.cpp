// The small-product GEMM (backend/small_gemm.h): bit for bit what the packed kernel computes,
// with A or Aᵀ, on every edge, alpha and beta, with either of its kernels; and packed_gemm()
// hands it the small products.
#include "pelab/backend/small_gemm.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/gemm_problem.h"
#include "pelab/backend/packed_gemm.h"

namespace pelab {
namespace {

using testing::GemmProblem;
using testing::GemmShape;
using testing::same_bits;

// Every kernel this CPU can run: each ISA path is checked where it exists.
std::vector<SmallGemmKernel> small_kernels() {
  std::vector<SmallGemmKernel> runnable;
  for (const SmallGemmKernel k :
       {SmallGemmKernel::Avx512, SmallGemmKernel::Avx2, SmallGemmKernel::Portable})
    if (vector_kernel_runs_here(k)) runnable.push_back(k);
  return runnable;
}

// Single elements, every row count modulo 4 and 8 and column count modulo 16 (masked edges),
// the default experiment's attention products (16×16×8, 16×8×16, 16×16×16) and K up to a
// whole block.
const std::vector<GemmShape> kSmallShapes = {
    {1, 1, 1},   {1, 9, 5},   {2, 16, 8},   {3, 17, 3},   {4, 8, 16},  {5, 31, 2},
    {16, 16, 8}, {16, 8, 16}, {33, 33, 8},  {7, 40, 29},  {6, 1, 256}, {32, 32, 32},
    {9, 12, 4},  {15, 20, 7}, {16, 16, 16}, {11, 16, 16}, {24, 24, 3}};

TEST(SmallGemm, EqualsTheVectorKernelBitForBit) {
  for (const GemmShape& s : kSmallShapes)
    for (const bool trans_a : {false, true})
      for (const float alpha : {1.0f, 0.35f})
        for (const float beta : {0.0f, 1.0f, -0.5f}) {
          const GemmProblem p(trans_a, false, s, beta == 0.0f);
          std::vector<float> packed = p.C;
          packed_gemm_with(best_vector_kernel(), {}, 1, p.ta, p.tb, s.M, s.N, s.K, alpha,
                           p.A.data(), p.lda, p.B.data(), p.ldb, beta, packed.data(), p.ldc);
          for (const SmallGemmKernel kernel : small_kernels()) {
            std::vector<float> small = p.C;
            small_gemm_with(kernel, p.ta, p.tb, s.M, s.N, s.K, alpha, p.A.data(), p.lda, p.B.data(),
                            p.ldb, beta, small.data(), p.ldc);
            EXPECT_TRUE(same_bits(small, packed))
                << s.M << "x" << s.N << "x" << s.K << " Aᵀ " << trans_a << " alpha " << alpha
                << " beta " << beta << " kernel " << static_cast<int>(kernel);
          }
        }
}

// packed_gemm() — what Auto calls for small products, which it hands to small_gemm — gives the
// bits of its blocked path: which of the two runs a product is invisible in the results.
TEST(SmallGemm, PackedGemmGivesTheBlockedPathsBits) {
  for (const GemmShape& s : {GemmShape{16, 16, 8}, GemmShape{32, 32, 32}, GemmShape{33, 33, 33}}) {
    const GemmProblem p(true, false, s);
    std::vector<float> through = p.C, blocked = p.C;
    packed_gemm(p.ta, p.tb, s.M, s.N, s.K, 0.5f, p.A.data(), p.lda, p.B.data(), p.ldb, 1.0f,
                through.data(), p.ldc);
    packed_gemm_with(best_vector_kernel(), {}, 1, p.ta, p.tb, s.M, s.N, s.K, 0.5f, p.A.data(),
                     p.lda, p.B.data(), p.ldb, 1.0f, blocked.data(), p.ldc);
    EXPECT_TRUE(same_bits(through, blocked)) << s.M;
  }
}

TEST(SmallGemm, RefusesALongReductionOrBTransposed) {
  std::vector<float> a(kPackedKc + 1, 1.0f), b(kPackedKc + 1, 1.0f), c(1);
  EXPECT_THROW(small_gemm(false, false, 1, 1, kPackedKc + 1, 1.0f, a.data(), kPackedKc + 1,
                          b.data(), 1, 0.0f, c.data(), 1),
               std::exception);
  EXPECT_THROW(small_gemm(false, true, 1, 1, 1, 1.0f, a.data(), 1, b.data(), 1, 0.0f, c.data(), 1),
               std::exception);
}

}  // namespace
}  // namespace pelab
