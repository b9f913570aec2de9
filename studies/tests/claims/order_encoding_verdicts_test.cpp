// The judgements of C1, C5, C8–C12 on synthetic numbers: every verdict each rule can give,
// and, for the trained claims, each precondition that makes the experiment unable to tell
// (schemes that did not learn, results all at the ceiling or all at the floor); and C10's
// table of verdicts across thresholds, as reproduce writes it.
#include "pelab/claims/order_encoding_verdicts.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pelab_process.h"

namespace pelab::claims::order_encoding {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// C1 with none exactly equivariant, at chance, and two schemes that learned.
C1Numbers c1_supported() {
  C1Numbers n;
  n.none_permutation_error = 1e-7;
  n.sinusoidal_permutation_error = 0.8;
  n.none = {"none", 0.05};
  n.schemes = {{"sinusoidal", 0.97}, {"rotary", 0.93}};
  return n;
}

TEST(OrderEncodingVerdicts, C1SupportedRefutedMixed) {
  const C1Rule rule;
  C1Numbers n = c1_supported();
  Judgement j = judge_c1(n, rule);
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_TRUE(contains(j.because, "weakest positional scheme rotary 0.93")) << j.because;

  n.none = {"none", 0.6};  // none learned an order task
  EXPECT_EQ(judge_c1(n, rule).verdict, Verdict::Refuted);
  n = c1_supported();
  n.none_permutation_error = 1e-3;  // not exactly equivariant
  EXPECT_EQ(judge_c1(n, rule).verdict, Verdict::Refuted);
  n = c1_supported();
  n.sinusoidal_permutation_error = 1e-6;  // the check cannot see positions at all
  EXPECT_EQ(judge_c1(n, rule).verdict, Verdict::Refuted);

  n = c1_supported();
  n.none = {"none", 0.35};  // above chance, below refuting
  EXPECT_EQ(judge_c1(n, rule).verdict, Verdict::Mixed);
  n = c1_supported();
  n.schemes[1].mean = 0.8;  // a scheme learned (validation) but evaluates below the bar
  EXPECT_EQ(judge_c1(n, rule).verdict, Verdict::Mixed);
}

TEST(OrderEncodingVerdicts, C1InconclusiveWhenSchemesDidNotLearnOrAllSaturate) {
  const C1Rule rule;
  C1Numbers n = c1_supported();
  n.schemes_not_learned = "rotary learned the task in distribution in 1 of 3 runs";
  Judgement j = judge_c1(n, rule);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_EQ(j.because,
            "the experiment cannot tell: rotary learned the task in distribution in 1 of 3 runs");

  // Ceiling: none solves the task too, so the task does not need order.
  n = c1_supported();
  n.none.mean = 1.0;
  n.schemes = {{"sinusoidal", 1.0}, {"rotary", 0.99}};
  j = judge_c1(n, rule);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(contains(j.because, "at the ceiling")) << j.because;

  // Floor: nothing learned (even when compare's rule was met on validation).
  n = c1_supported();
  n.none.mean = 0.0;
  n.schemes = {{"sinusoidal", 0.01}, {"rotary", 0.0}};
  j = judge_c1(n, rule);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(contains(j.because, "at the floor")) << j.because;

  n = c1_supported();
  n.schemes.clear();
  EXPECT_EQ(judge_c1(n, rule).verdict, Verdict::Inconclusive);
}

C5Numbers c5_numbers(double sinusoidal_extrapolation) {
  C5Numbers n;
  n.sinusoidal_in_distribution = 0.99;
  n.sinusoidal_extrapolation = sinusoidal_extrapolation;
  n.seeds = 3;
  n.extrapolation = {{"sinusoidal", sinusoidal_extrapolation}, {"learned", 0.0}, {"rotary", 0.4}};
  return n;
}

TEST(OrderEncodingVerdicts, C5SupportedRefutedMixed) {
  const C5Rule rule;
  Judgement j = judge_c5(c5_numbers(0.7), rule);
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_TRUE(contains(j.because, "beyond the training lengths 0.7")) << j.because;
  EXPECT_EQ(judge_c5(c5_numbers(0.05), rule).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c5(c5_numbers(0.3), rule).verdict, Verdict::Mixed);
  EXPECT_EQ(judge_c5(c5_numbers(0.5), rule).verdict, Verdict::Supported);  // bounds included
  EXPECT_EQ(judge_c5(c5_numbers(0.1), rule).verdict, Verdict::Refuted);
}

TEST(OrderEncodingVerdicts, C5InconclusiveWhenSinusoidalDidNotLearnOrAllSaturate) {
  const C5Rule rule;
  C5Numbers n = c5_numbers(0.7);
  n.sinusoidal_not_learned = "sinusoidal learned the task in distribution in 0 of 3 runs";
  Judgement j = judge_c5(n, rule);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(starts_with(j.because, "the experiment cannot tell: sinusoidal learned"));

  // Ceiling: every scheme is perfect beyond training, so the lengths test no extrapolation.
  n = c5_numbers(1.0);
  n.extrapolation = {{"sinusoidal", 1.0}, {"learned", 0.99}, {"rotary", 1.0}};
  j = judge_c5(n, rule);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(contains(j.because,
                       "beyond the training lengths every compared value is at the "
                       "ceiling"))
      << j.because;

  // Floor: nothing extrapolates at all.
  n = c5_numbers(0.0);
  n.extrapolation = {{"sinusoidal", 0.0}, {"learned", 0.0}, {"rotary", 0.02}};
  j = judge_c5(n, rule);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(contains(j.because, "at the floor")) << j.because;
}

// The analytic claims are measured exactly: no precondition, so never inconclusive.
TEST(OrderEncodingVerdicts, C8ShiftErrorAgainstItsBounds) {
  const ErrorRule rule;
  Judgement j = judge_c8({2e-7, 1024, 9}, rule);
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_EQ(j.because, "largest error 2.00e-07 over positions 0..1023 and 9 shifts");
  EXPECT_EQ(judge_c8({0.5, 1024, 9}, rule).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c8({1e-3, 1024, 9}, rule).verdict, Verdict::Mixed);
  EXPECT_EQ(judge_c8({0.0, 1, 0}, rule).verdict, Verdict::Supported);
}

TEST(OrderEncodingVerdicts, C9PeakAtTheReferenceAndASteadyFall) {
  C9Numbers n{128, 128, 254, 0, -1, 0.0, 64.0};
  EXPECT_EQ(judge_c9(n).verdict, Verdict::Supported);
  n.rises = 40;
  n.first_rise = 12;
  n.largest_rise = 3.2;
  const Judgement j = judge_c9(n);
  EXPECT_EQ(j.verdict, Verdict::Mixed);
  EXPECT_TRUE(contains(j.because, "40 of 254 steps")) << j.because;
  EXPECT_TRUE(contains(j.because, "(5% of the peak 64)")) << j.because;
  n.argmax = 127;
  EXPECT_EQ(judge_c9(n).verdict, Verdict::Refuted);
  n.peak = 0;  // a degenerate table: no division by zero
  EXPECT_EQ(judge_c9(n).verdict, Verdict::Refuted);
}

TEST(OrderEncodingVerdicts, C10MostDimensionsBarelyMoveAtEveryLength) {
  // Shares of dimensions that move: below 0.5 means most barely move.
  Judgement j = judge_c10({{{64, 0.2}, {256, 0.3}, {1024, 0.45}}}, 0.5);
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_TRUE(
      starts_with(j.because, "most dimensions barely move at 3 of 3 lengths: true at L = 64"))
      << j.because;
  EXPECT_EQ(judge_c10({{{64, 0.6}, {256, 0.7}, {1024, 0.9}}}, 0.5).verdict, Verdict::Refuted);
  j = judge_c10({{{64, 0.4}, {256, 0.55}, {1024, 0.7}}}, 0.5);
  EXPECT_EQ(j.verdict, Verdict::Mixed);
  // Each length's own verdict is said: the claim is true over the first 64 positions only.
  EXPECT_EQ(j.because,
            "most dimensions barely move at 1 of 3 lengths: true at L = 64 (60% barely move); "
            "false at L = 256 (45% barely move), L = 1024 (30% barely move)");
  // Exactly half barely moving is not "most".
  EXPECT_EQ(judge_c10({{{64, 0.5}}}, 0.5).verdict, Verdict::Refuted);
  // Every dimension still (a threshold above every span) or every one moving.
  EXPECT_EQ(judge_c10({{{64, 0.0}, {1024, 0.0}}}, 0.5).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c10({{{64, 1.0}, {1024, 1.0}}}, 0.5).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c10({}, 0.5).verdict, Verdict::Mixed);
}

TEST(OrderEncodingVerdicts, C11RotaryKeepsRelativePositionAndNorms) {
  const ErrorRule rule;
  Judgement j = judge_c11({3e-7, 0.9999998, 1.0000003}, rule);
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_TRUE(contains(j.because, "at most 3.00e-07")) << j.because;
  EXPECT_EQ(judge_c11({0.3, 1.0, 1.0}, rule).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c11({1e-7, 0.5, 1.0}, rule).verdict, Verdict::Refuted);  // norms shrink
  EXPECT_EQ(judge_c11({1e-7, 1.0, 1.2}, rule).verdict, Verdict::Refuted);  // norms grow
  EXPECT_EQ(judge_c11({1e-3, 1.0, 1.0}, rule).verdict, Verdict::Mixed);
  EXPECT_EQ(judge_c11({1e-7, 1.0, 1.001}, rule).verdict, Verdict::Mixed);
}

TEST(OrderEncodingVerdicts, C12NoteConstructionSaysWhetherItRunsAsWritten) {
  const ErrorRule rule;
  Judgement j = judge_c12({0.4, 0.6, 1.4}, "operands could not be broadcast", rule);
  EXPECT_EQ(j.verdict, Verdict::Refuted);
  EXPECT_TRUE(
      starts_with(j.because, "the example as written fails (operands could not be broadcast); "))
      << j.because;
  j = judge_c12({1e-8, 1.0, 1.0}, "runs", rule);
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_TRUE(starts_with(j.because, "the example runs as written; ")) << j.because;
  EXPECT_EQ(judge_c12({1e-3, 1.0, 1.0}, "runs", rule).verdict, Verdict::Mixed);
}

// C10 as reproduce runs it: the verdict at the chosen threshold, and beside it the verdict
// the same rule gives across a range of thresholds (in claims.json and in the details).
TEST(OrderEncodingVerdicts, C10ReportsTheVerdictAcrossThresholds) {
  const testing::TempDir tmp;
  ReproduceOptions o;
  o.only = {"C10"};
  o.quick = true;
  o.out = tmp / "c10";
  o.configs_dir = std::string(PELAB_SOURCE_DIR) + "/studies/configs";
  const std::vector<ClaimResult> results = reproduce(o);
  ASSERT_EQ(results.size(), 1u);
  const ClaimResult& c10 = results[0];
  const nlohmann::json& sweep = c10.numbers["threshold_sweep"];
  ASSERT_GE(sweep.size(), 3u);
  const double chosen = c10.numbers["threshold"].get<double>();
  int64_t at_chosen = 0;
  for (const nlohmann::json& row : sweep) {
    EXPECT_EQ(row["by_length"].size(), 3u);  // the config's three lengths
    if (row["threshold"].get<double>() == chosen) {
      ++at_chosen;
      EXPECT_EQ(row["verdict"], to_string(c10.verdict));
    }
  }
  EXPECT_EQ(at_chosen, 1);
  EXPECT_TRUE(contains(c10.details, "(chosen)")) << c10.details;
  // Each length's verdict across the thresholds is in the reason.
  EXPECT_TRUE(contains(c10.because, "it is true at L = 64 at ")) << c10.because;
  // Raising the threshold can only make more dimensions count as barely moving.
  for (size_t i = 1; i < sweep.size(); ++i)
    for (size_t l = 0; l < 3; ++l)
      EXPECT_GE(sweep[i]["by_length"][l]["barely_moving_share"].get<double>(),
                sweep[i - 1]["by_length"][l]["barely_moving_share"].get<double>());
}

}  // namespace
}  // namespace pelab::claims::order_encoding
