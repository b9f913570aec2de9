// Every GEMM backend against the reference kernel, on every layout, at sizes that take
// each path: small products, the weight-gradient layout Auto sends to OpenBLAS, and products
// large enough for pelab to split OpenBLAS over the thread pool.
#include "pelab/backend/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/gemm_problem.h"
#include "pelab/core/parallel.h"

namespace pelab {
namespace {

using testing::GemmProblem;
using testing::GemmShape;
using testing::worst_error;

// C = 0.75·op(A)·op(B) + beta·C through `backend`, with padded leading dimensions.
std::vector<float> run(GemmBackend backend, bool ta, bool tb, const GemmShape& c, float beta) {
  return GemmProblem(ta, tb, c).through(backend, 0.75f, beta);
}

TEST(Gemm, EveryBackendMatchesTheReferenceOnEveryLayout) {
  const int saved = num_threads();
  const std::vector<GemmShape> cases = {{1, 1, 1},     {7, 5, 3},      {33, 17, 65},
                                        {64, 48, 600}, {96, 80, 1024}, {40, 300, 700}};
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const GemmShape& c : cases) {
      for (int layout = 0; layout < 4; ++layout) {
        const bool ta = layout & 1, tb = layout & 2;
        for (float beta : {0.0f, 0.5f}) {
          const std::vector<float> ref = run(GemmBackend::Reference, ta, tb, c, beta);
          for (GemmBackend b : {GemmBackend::Auto, GemmBackend::OneDnn, GemmBackend::OpenBlas,
                                GemmBackend::Packed}) {
            const std::vector<float> got = run(b, ta, tb, c, beta);
            EXPECT_LE(worst_error(got, ref, c.K, 1e-4), 1.0)
                << to_string(b) << " M=" << c.M << " N=" << c.N << " K=" << c.K << " ta=" << ta
                << " tb=" << tb << " beta=" << beta << " threads=" << threads;
          }
        }
      }
    }
  }
  set_num_threads(saved);
}

// OpenBLAS's generic kernel on a CPU it does not know is several times slower than oneDNN
// (docs/performance.md): only its AVX2 and AVX-512 cores count as vectorised.
TEST(Gemm, OnlyOpenBlasVectorCoresCountAsVectorised) {
  for (const char* core : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "zen"})
    EXPECT_TRUE(openblas_core_is_vectorised(core)) << core;
  for (const char* core : {"Prescott", "Core2", "Nehalem", "Sandybridge", "Unknown", ""})
    EXPECT_FALSE(openblas_core_is_vectorised(core)) << core;
  EXPECT_EQ(openblas_vectorised(), openblas_core_is_vectorised(openblas_core()));
}

TEST(Gemm, AutoSendsSmallProductsToPackedAndLongWeightGradientsToOpenBlas) {
  EXPECT_EQ(auto_gemm_backend(true, false, 256, 1024, 2048, true), GemmBackend::OpenBlas);
  // An OpenBLAS without a vector kernel for the CPU is not used.
  EXPECT_EQ(auto_gemm_backend(true, false, 256, 1024, 2048, false), GemmBackend::OneDnn);
  EXPECT_EQ(auto_gemm_backend(true, false, 64, 256, 2048, false), GemmBackend::Packed);
  EXPECT_EQ(auto_gemm_backend(true, false, 256, 1024, 2048),
            openblas_vectorised() ? GemmBackend::OpenBlas : GemmBackend::OneDnn)
      << "OpenBLAS runs its " << openblas_core() << " kernel here";
  EXPECT_EQ(auto_gemm_backend(false, true, 2048, 1024, 256), GemmBackend::OneDnn);
  EXPECT_EQ(auto_gemm_backend(false, false, 2048, 256, 1024), GemmBackend::OneDnn);
  EXPECT_EQ(auto_gemm_backend(true, false, 64, 32, 32), GemmBackend::OneDnn);
  EXPECT_EQ(auto_gemm_backend(true, false, 32, 32, 32), GemmBackend::Packed);
  EXPECT_EQ(auto_gemm_backend(false, true, 16, 16, 8), GemmBackend::Packed);
  EXPECT_EQ(parse_gemm_backend("auto"), GemmBackend::Auto);
  EXPECT_EQ(gemm_backend(), GemmBackend::Auto);  // the default
}

TEST(Gemm, RepeatsBitForBitForAGivenThreadCount) {
  const int saved = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (GemmBackend b :
         {GemmBackend::Auto, GemmBackend::OneDnn, GemmBackend::OpenBlas, GemmBackend::Packed}) {
      const std::vector<float> first = run(b, true, false, {256, 320, 2048}, 0.0f);
      const std::vector<float> again = run(b, true, false, {256, 320, 2048}, 0.0f);
      EXPECT_EQ(first, again) << to_string(b) << " threads=" << threads;
    }
  }
  set_num_threads(saved);
}

}  // namespace
}  // namespace pelab
