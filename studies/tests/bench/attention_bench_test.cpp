// `pelab bench attention` measures; these check only that it runs what it says and reports
// each length once per kernel with finite, positive figures (no timing is asserted).
#include "pelab/bench/attention_bench.h"

#include <gtest/gtest.h>

#include <cmath>

#include "pelab/core/error.h"
#include "pelab/nn/attention.h"

namespace pelab {
namespace {

TEST(AttentionBench, ReportsEveryLengthOnce) {
  AttentionBenchOptions o;
  o.lengths = {5, 9};
  o.batch = 2;
  o.d_model = 16;
  o.heads = 4;
  o.calls = 2;
  const auto rows = run_attention_bench(o);
  ASSERT_EQ(rows.size(), 2u);  // heads of width 4: the block kernel only
  EXPECT_EQ(rows[0].length, 5);
  EXPECT_EQ(rows[1].length, 9);
  for (const auto& r : rows) {
    EXPECT_EQ(r.kernel, "blocks");
    EXPECT_TRUE(std::isfinite(r.forward_ms) && r.forward_ms > 0.0);
    EXPECT_TRUE(std::isfinite(r.training_ms) && r.training_ms > 0.0);
    EXPECT_TRUE(std::isfinite(r.product_gflops) && r.product_gflops > 0.0);
  }
}

// Heads of width 8 (or 16): the rows-in-lanes kernel beside the block kernel, where the CPU runs
// it.
TEST(AttentionBench, TimesTheLanesKernelBesideTheBlockKernel) {
  AttentionBenchOptions o;
  o.lengths = {5};
  o.batch = 2;
  o.d_model = 16;
  o.heads = 2;
  o.calls = 2;
  const auto rows = run_attention_bench(o);
  const bool lanes_here = row_lanes_runs(8);
  ASSERT_EQ(rows.size(), lanes_here ? 2u : 1u);
  EXPECT_EQ(rows[0].kernel, "blocks");
  if (lanes_here) {
    EXPECT_EQ(rows[1].kernel, "lanes");
  }
  for (const auto& r : rows) EXPECT_TRUE(std::isfinite(r.training_ms) && r.training_ms > 0.0);
}

TEST(AttentionBench, RefusesHeadsThatDoNotDivideTheWidth) {
  AttentionBenchOptions o;
  o.d_model = 16;
  o.heads = 3;
  o.calls = 1;
  EXPECT_THROW(run_attention_bench(o), Error);
}

}  // namespace
}  // namespace pelab
