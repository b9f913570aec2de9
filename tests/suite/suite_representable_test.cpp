// The suite's table says "not representable at these settings" in a cell whose scheme cannot
// represent its task at the suite's settings (docs/model.md, "Representability"), with the
// reason under the table; the control, one step inside, is an ordinary cell.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pelab/suite/suite.h"
#include "pelab/suite/suite_report.h"
#include "pelab_process.h"

namespace pelab::testing {
namespace {

TEST(SuiteRepresentable, ACellThatCannotRepresentItsTaskSaysWhy) {
  TempDir dir;
  fs::create_directories(dir.path() / "configs" / "suites");
  fs::create_directories(dir.path() / "configs" / "tasks");
  // shift by 1 (tiny_config's), trained on sizes 1-6: longest training distance 5.
  write_file(dir.path() / "configs" / "tasks" / "shift.yaml",
             tiny_config("tiny-shift", "training:\n  steps: 4\n  warmup: 0\n"));
  const fs::path file = dir.path() / "configs" / "suites" / "tiny.yaml";
  write_file(file, R"(suite: tiny
description: the tiny test suite
tasks:
  shift: ../tasks/shift.yaml
protocol:
  model: {d_model: 16, heads: 2, layers: 1}
budget:
  steps: 4
  seeds: [0]
  lrs: [0.003]
  training_lengths: [1, 6]
  evaluation_lengths: [4, 12]
  examples: 4
schemes: [none]
cost:
  seconds_per_token: 1.0e-5
  at_length: 8
  measured: a test's guess
  step_time: {base: none, factors: {relative: 1.2}, measured: a test's guess}
)");
  const Suite s = load_suite(file.string());
  write_file(dir / "k1.yaml", "type: relative\nmax_distance: 1\n");  // k = the offset: fails
  write_file(dir / "k2.yaml", "type: relative\nmax_distance: 2\n");  // the control
  const std::vector<SuiteScheme> schemes = suite_schemes(s, {dir / "k1.yaml", dir / "k2.yaml"});
  const SweepPlan plan = plan_suite(s, schemes, dir / "out", {}, {});
  const SuiteTable t = suite_table(s, plan, schemes, "");
  ASSERT_EQ(t.cells.size(), 1u);
  ASSERT_EQ(t.cells[0].size(), 2u);
  EXPECT_NE(t.cells[0][0].not_representable.find("k = 1 does not exceed the offset"),
            std::string::npos)
      << t.cells[0][0].not_representable;
  EXPECT_EQ(t.cells[0][1].not_representable, "");
  const std::string md = suite_markdown(t);
  EXPECT_NE(md.find("| shift | not representable at these settings (note 1) | (1 to run) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("1. shift, k1: relative's k = 1 does not exceed"), std::string::npos) << md;
  EXPECT_NE(suite_csv(t).find("\"relative's k = 1 does not exceed"), std::string::npos);
  EXPECT_NE(suite_latex(t).find(" & n/r"), std::string::npos);
}

// The shipped suites choose settings every column can represent every task at (the survey's
// relative at k = 9 for long_range's offset 8, T5's buckets capped so that evaluation meets
// none that training never reached): no cell of theirs may say otherwise.
TEST(SuiteRepresentable, EveryShippedSuiteCellIsRepresentable) {
  set_config_search_path({PELAB_SOURCE_DIR "/configs"});
  TempDir dir;
  for (const std::string name : {"chomsky", "pelab", "lm"}) {
    const Suite s = load_suite(find_suite(name));
    const std::vector<SuiteScheme> schemes = suite_schemes(s, {});
    const SweepPlan plan = plan_suite(s, schemes, dir / name, {}, {});
    const SuiteTable t = suite_table(s, plan, schemes, "");
    for (size_t row = 0; row < t.cells.size(); ++row)
      for (size_t col = 0; col < t.cells[row].size(); ++col)
        EXPECT_EQ(t.cells[row][col].not_representable, "")
            << name << " row " << row << " column " << col;
  }
  set_config_search_path({});
}

}  // namespace
}  // namespace pelab::testing
