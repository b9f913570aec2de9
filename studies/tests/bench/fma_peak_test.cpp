// The FMA peak `pelab bench` divides by: measured with the widest vectors the CPU has.
#include "pelab/bench/fma_peak.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pelab {
namespace {

TEST(FmaPeak, UsesTheWidestVectorsAndGivesAFiniteRate) {
  const FmaPeak peak = measure_fma_peak();
  __builtin_cpu_init();
  const char* widest = __builtin_cpu_supports("avx512f")                                 ? "avx512"
                       : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "avx2"
                                                                                         : "scalar";
  EXPECT_EQ(peak.isa, widest);
  EXPECT_TRUE(std::isfinite(peak.gflops_per_core));
  // Any core of the last fifteen years runs at least one FMA per nanosecond.
  EXPECT_GT(peak.gflops_per_core, 2.0);
}

}  // namespace
}  // namespace pelab
