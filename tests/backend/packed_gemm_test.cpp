// The packed GEMM: against the reference kernel on every layout and on shapes that take each
// path (edge tiles, several K blocks, several MC and NC blocks), and the bit-for-bit promises
// of include/pelab/backend/packed_gemm.h: every vector micro-kernel equals the portable one, and
// no split over threads changes a result.
#include "pelab/backend/packed_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/gemm_problem.h"

namespace pelab {
namespace {

using testing::GemmProblem;
using testing::GemmShape;
using testing::same_bits;
using testing::worst_error;

// A GEMM problem and its result through the packed GEMM with a chosen micro-kernel, packing
// and number of parts.
struct Problem : GemmProblem {
  using GemmProblem::GemmProblem;

  std::vector<float> packed(VectorKernel kernel, int parts, float alpha, float beta,
                            PackingPolicy packing = {}) const {
    std::vector<float> out = C;
    packed_gemm_with(kernel, packing, parts, ta, tb, s.M, s.N, s.K, alpha, A.data(), lda, B.data(),
                     ldb, beta, out.data(), ldc);
    return out;
  }
};

// Shapes that take every path: single elements, edge tiles in both directions, K split into
// uneven blocks (K > 256), more than one MC block (M > 144), more than one NC block (N > 2048),
// the model's own shapes (tiny attention, a linear layer), and Bᵀ panels whose K leaves 6 after
// the 8×8 transposes, with an odd leading dimension (K + 5).
const std::vector<GemmShape> kPackedShapes = {
    {1, 1, 1},     {5, 15, 3},    {6, 16, 7},    {7, 17, 1},    {32, 32, 16}, {33, 47, 257},
    {150, 20, 64}, {13, 2100, 9}, {64, 48, 600}, {128, 64, 33}, {12, 32, 22}, {13, 40, 30}};

const PackingPolicy kPackings[] = {{false, false}, {true, false}, {false, true}, {true, true}};

// Every kernel this CPU can run, the best first.
std::vector<VectorKernel> vector_kernels() {
  std::vector<VectorKernel> runnable;
  for (VectorKernel k : {VectorKernel::Avx512, VectorKernel::Avx2, VectorKernel::Portable})
    if (vector_kernel_runs_here(k)) runnable.push_back(k);
  return runnable;
}

TEST(PackedGemm, MatchesTheReferenceOnEveryLayout) {
  for (const GemmShape& s : kPackedShapes)
    for (int layout = 0; layout < 4; ++layout)
      for (float beta : {0.0f, 1.0f, 0.5f}) {
        const Problem p(layout & 1, layout & 2, s);
        const std::vector<float> ref = p.through(GemmBackend::Reference, 0.75f, beta);
        const std::vector<float> got = p.packed(best_vector_kernel(), 1, 0.75f, beta);
        EXPECT_LE(worst_error(got, ref, s.K, 1e-5), 1.0)
            << "M=" << s.M << " N=" << s.N << " K=" << s.K << " layout=" << layout
            << " beta=" << beta;
      }
}

TEST(PackedGemm, BetaZeroNeverReadsC) {
  for (const VectorKernel kernel : vector_kernels())
    for (const GemmShape& s : {GemmShape{6, 16, 8}, GemmShape{7, 19, 300}})
      for (int layout = 0; layout < 4; ++layout) {
        const Problem p(layout & 1, layout & 2, s, /*nan_c=*/true);
        const std::vector<float> got = p.packed(kernel, 1, 1.0f, 0.0f, {true, false});
        for (int64_t i = 0; i < s.M; ++i)
          for (int64_t j = 0; j < s.N; ++j)
            ASSERT_TRUE(std::isfinite(got[i * p.ldc + j]))
                << describe(kernel) << " layout=" << layout << " M=" << s.M;
      }
}

TEST(PackedGemm, LeavesEverythingOutsideCAlone) {
  const Problem p(true, false, {7, 19, 300});
  const std::vector<float> got = p.packed(best_vector_kernel(), 2, 0.5f, 0.25f);
  for (int64_t i = 0; i < p.s.M; ++i)
    for (int64_t j = p.s.N; j < p.ldc; ++j)  // the padding of each row of C
      EXPECT_EQ(got[i * p.ldc + j], p.C[i * p.ldc + j]);
}

// The oracle of every vector kernel: the portable one, element by element. The shapes include
// pairs of full panels with full and edge rows (N ≥ 32), so the AVX-512 pair kernel runs in
// every layout of A.
TEST(PackedGemm, EveryVectorKernelEqualsThePortableOneBitForBit) {
  if (vector_kernels().size() < 2) GTEST_SKIP() << "no AVX2 on this CPU";
  for (const VectorKernel kernel : vector_kernels()) {
    if (kernel == VectorKernel::Portable) continue;
    for (const GemmShape& s : kPackedShapes)
      for (int layout = 0; layout < 4; ++layout)
        for (float beta : {0.0f, 0.5f}) {
          const Problem p(layout & 1, layout & 2, s);
          for (const PackingPolicy packing : kPackings)
            EXPECT_TRUE(same_bits(p.packed(kernel, 1, 0.75f, beta, packing),
                                  p.packed(VectorKernel::Portable, 1, 0.75f, beta, packing)))
                << describe(kernel) << " M=" << s.M << " N=" << s.N << " K=" << s.K
                << " layout=" << layout << " pack_a=" << packing.pack_a
                << " pack_b=" << packing.pack_b;
        }
  }
}

// The control: on a product the pair kernel takes (two full panels, full rows, K over one
// block), the bit comparison above does tell summation orders apart: the reference's sums in
// double are as close as rounding allows, yet not the same bits.
TEST(PackedGemm, TheBitComparisonTellsThePairKernelFromOtherSums) {
  if (!vector_kernel_runs_here(VectorKernel::Avx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (int layout = 0; layout < 4; ++layout) {
    const Problem p(layout & 1, layout & 2, {12, 64, 300});
    const std::vector<float> pair = p.packed(VectorKernel::Avx512, 1, 0.75f, 0.5f, {true, true});
    const std::vector<float> ref = p.through(GemmBackend::Reference, 0.75f, 0.5f);
    EXPECT_LE(worst_error(pair, ref, p.s.K, 1e-5), 1.0) << "layout=" << layout;
    EXPECT_FALSE(same_bits(pair, ref)) << "layout=" << layout;
  }
}

TEST(PackedGemm, PackingOrReadingInPlaceGivesTheSameBits) {
  for (const GemmShape& s : kPackedShapes)
    for (int layout = 0; layout < 4; ++layout) {
      const Problem p(layout & 1, layout & 2, s);
      const std::vector<float> in_place = p.packed(best_vector_kernel(), 1, 0.75f, 0.5f);
      for (const PackingPolicy packing :
           {PackingPolicy{true, false}, PackingPolicy{false, true}, PackingPolicy{true, true}})
        EXPECT_TRUE(same_bits(in_place, p.packed(best_vector_kernel(), 1, 0.75f, 0.5f, packing)))
            << "M=" << s.M << " N=" << s.N << " K=" << s.K << " layout=" << layout
            << " pack_a=" << packing.pack_a << " pack_b=" << packing.pack_b;
    }
}

// Splitting moves the operand blocks each part starts from (a row offset into A, a column
// offset into B), in every layout and with every operand packed or read in place.
TEST(PackedGemm, EverySplitOverThreadsGivesTheSameBits) {
  for (const GemmShape& s : kPackedShapes)
    for (int layout = 0; layout < 4; ++layout)
      for (const PackingPolicy packing : kPackings) {
        const Problem p(layout & 1, layout & 2, s);
        const std::vector<float> one = p.packed(best_vector_kernel(), 1, 1.5f, 0.5f, packing);
        for (int parts : {2, 3, 7})
          EXPECT_TRUE(same_bits(one, p.packed(best_vector_kernel(), parts, 1.5f, 0.5f, packing)))
              << "M=" << s.M << " N=" << s.N << " K=" << s.K << " layout=" << layout
              << " pack_a=" << packing.pack_a << " pack_b=" << packing.pack_b << " parts=" << parts;
      }
}

// B read in place with exactly 16 columns per row has the stride of a packed panel; it must
// still be read as B in place (the full-tile kernel is chosen by whether B was packed, not by
// its stride): the same bits as packing it, and the reference's values.
TEST(PackedGemm, BInPlaceWithLeadingDimensionSixteen) {
  Problem p(false, false, {12, 16, 40});
  p.ldb = 16;
  p.B = testing::random_values(p.s.K * p.ldb, 2);
  const std::vector<float> ref = p.through(GemmBackend::Reference, 0.75f, 0.5f);
  const std::vector<float> in_place =
      p.packed(best_vector_kernel(), 1, 0.75f, 0.5f, {false, false});
  EXPECT_LE(worst_error(in_place, ref, p.s.K, 1e-5), 1.0);
  for (const VectorKernel kernel : vector_kernels())
    for (const PackingPolicy packing : kPackings)
      EXPECT_TRUE(same_bits(in_place, p.packed(kernel, 1, 0.75f, 0.5f, packing)))
          << describe(kernel) << " pack_a=" << packing.pack_a << " pack_b=" << packing.pack_b;
}

TEST(PackedGemm, AnEmptySumScalesC) {
  const Problem p(false, false, {3, 4, 0});
  const std::vector<float> got = p.packed(best_vector_kernel(), 1, 1.0f, 0.5f);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(got[i * p.ldc + j], 0.5f * p.C[i * p.ldc + j]);
}

}  // namespace
}  // namespace pelab
