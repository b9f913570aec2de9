// The judgements of C2, C3, C4, C14 and C16 on synthetic results: each claim's supported,
// refuted and mixed cases, and each precondition that makes it inconclusive (not learned, at
// the ceiling, at the floor, within the noise).
#include "pelab/claims/absolute_verdicts.h"

#include <gtest/gtest.h>

namespace pelab::claims {
namespace {

bool says(const Judgement& j, const std::string& words) {
  return j.because.find(words) != std::string::npos;
}

TEST(AbsoluteVerdicts, SideOfUsesTheWholeInterval) {
  EXPECT_EQ(side_of(summarize({3.0, 3.1, 3.2}), 2.0), Side::Above);
  EXPECT_EQ(side_of(summarize({1.0, 1.1, 1.2}), 2.0), Side::Below);
  EXPECT_EQ(side_of(summarize({1.0, 2.0, 3.0}), 2.0), Side::Straddles);
  EXPECT_EQ(side_of(summarize({2.5}), 2.0), Side::Above);  // one seed: the value itself
}

// ---- C2 ----

C2Scheme scheme(const std::string& name, std::vector<double> steps, double accuracy,
                int64_t not_reached = 0) {
  const int64_t runs = static_cast<int64_t>(steps.size());
  return {name,
          {runs, runs, name},
          summarize(steps),
          not_reached,
          summarize(std::vector<double>(steps.size(), accuracy))};
}

C2Length length(int64_t max_length, std::vector<double> index_steps, double index_accuracy,
                std::vector<double> normalized_steps, double normalized_accuracy) {
  return {max_length,
          scheme("sinusoidal", {100, 110, 120}, 1.0),
          {scheme("index", index_steps, index_accuracy),
           scheme("normalized", normalized_steps, normalized_accuracy)}};
}

TEST(AbsoluteVerdicts, C2SupportedWhenBothHurtAndIndexWorsensWithLength) {
  const C2Rule rule;
  const Judgement j = judge_c2({length(8, {300, 310, 320}, 1.0, {100, 110, 120}, 0.5),
                                length(24, {900, 910, 920}, 1.0, {100, 110, 120}, 0.5)},
                               rule);
  EXPECT_EQ(j.verdict, Verdict::Supported) << j.because;
  // The order the lengths come in does not matter.
  EXPECT_EQ(judge_c2({length(24, {900, 910, 920}, 1.0, {100, 110, 120}, 0.5),
                      length(8, {300, 310, 320}, 1.0, {100, 110, 120}, 0.5)},
                     rule)
                .verdict,
            Verdict::Supported);
}

TEST(AbsoluteVerdicts, C2RefutedWhenNeitherIsHurtAtAnyLength) {
  const Judgement j = judge_c2({length(8, {100, 110, 120}, 1.0, {100, 110, 120}, 1.0),
                                length(24, {100, 110, 120}, 1.0, {100, 110, 120}, 1.0)},
                               {});
  EXPECT_EQ(j.verdict, Verdict::Refuted) << j.because;
}

TEST(AbsoluteVerdicts, C2MixedWhenOnlyOneIsHurtOrTheHurtShrinksWithLength) {
  EXPECT_EQ(judge_c2({length(8, {100, 110, 120}, 1.0, {100, 110, 120}, 1.0),
                      length(24, {900, 910, 920}, 1.0, {100, 110, 120}, 1.0)},
                     {})
                .verdict,
            Verdict::Mixed);
  // Both hurt at the longest length, but index less slowed there than at the shortest.
  EXPECT_EQ(judge_c2({length(8, {900, 910, 920}, 1.0, {100, 110, 120}, 0.5),
                      length(24, {300, 310, 320}, 1.0, {100, 110, 120}, 0.5)},
                     {})
                .verdict,
            Verdict::Mixed);
}

TEST(AbsoluteVerdicts, C2InconclusiveWithoutAYardstick) {
  C2Length l = length(24, {900, 910, 920}, 1.0, {900, 910, 920}, 1.0);
  l.reference.learned.learned = 1;  // the reference at the floor: it did not learn
  l.reference.in_distribution = summarize({0.0, 0.01, 0.0});
  Judgement j = judge_c2({l}, {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "sinusoidal learned the task in distribution in 1 of 3 runs")) << j.because;
  l = length(24, {900, 910, 920}, 1.0, {900, 910, 920}, 1.0);
  l.reference.not_reached = 2;
  j = judge_c2({l}, {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "never met the training criterion in 2 of 3 runs")) << j.because;
}

TEST(AbsoluteVerdicts, C2InconclusiveWhenAGuessStraddlesTheSlowdownBound) {
  // Twice sinusoidal's mean is 220; index's steps spread from 150 to 300 across seeds (as
  // steps to a target did across CPU kinds), all at the ceiling in accuracy.
  const Judgement j = judge_c2({length(24, {150, 220, 300}, 1.0, {900, 910, 920}, 1.0)}, {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "index's steps")) << j.because;
}

TEST(AbsoluteVerdicts, C2AGuessThatNeverGotThereUnderItsBoundCannotTell) {
  // Index's budget ran out below twice sinusoidal's steps: a lower bound, not a measurement.
  C2Length l = length(24, {150, 160, 170}, 1.0, {900, 910, 920}, 1.0);
  l.guesses[0].not_reached = 1;
  const Judgement j = judge_c2({l}, {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "index's steps")) << j.because;
}

// ---- C3 ----

C3Numbers c3(std::vector<double> at_one, std::vector<double> largest, int64_t learned = 3) {
  return {{learned, 3, "sinusoidal at scale 1"}, summarize(at_one), 100, summarize(largest)};
}

TEST(AbsoluteVerdicts, C3SupportedOrRefutedByTheDropFraction) {
  EXPECT_EQ(judge_c3(c3({1.0, 0.99, 1.0}, {0.11, 0.21, 0.15}), 0.5).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c3(c3({1.0, 0.99, 1.0}, {0.90, 0.92, 0.91}), 0.5).verdict, Verdict::Refuted);
}

TEST(AbsoluteVerdicts, C3ThresholdSweepShowsWhereTheVerdictTurns) {
  const auto sweep = c3_threshold_sweep(c3({1.0, 1.0, 1.0}, {0.60, 0.61, 0.62}), {0.25, 0.5});
  ASSERT_EQ(sweep.size(), 2u);
  EXPECT_EQ(sweep[0].second, Verdict::Supported);  // keeps ≤ 0.75: yes
  EXPECT_EQ(sweep[1].second, Verdict::Refuted);    // keeps ≤ 0.5: no
}

TEST(AbsoluteVerdicts, C3InconclusivePreconditions) {
  // Scale 1 did not learn.
  Judgement j = judge_c3(c3({0.5, 0.6, 0.4}, {0.1, 0.1, 0.1}, 0), 0.5);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "in 0 of 3 runs")) << j.because;
  // Both at the ceiling.
  j = judge_c3(c3({1.0, 1.0, 1.0}, {0.99, 1.0, 1.0}), 0.5);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "ceiling")) << j.because;
  // Both at the floor (scale 1 counted as learned: the saturation check alone decides).
  j = judge_c3(c3({0.01, 0.0, 0.02}, {0.0, 0.0, 0.0}), 0.5);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "floor")) << j.because;
  // The largest scale straddles half of scale 1's accuracy.
  j = judge_c3(c3({1.0, 1.0, 1.0}, {0.2, 0.5, 0.8}), 0.5);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "straddles")) << j.because;
}

// ---- C4 ----

C4Numbers c4(std::vector<double> early, std::vector<double> late, double trained = 0.9,
             double beyond = 0.1) {
  C4Numbers n;
  n.early = summarize(early);
  n.late = summarize(late);
  n.compared = {{"sinusoidal early", n.early.mean}, {"sinusoidal late", n.late.mean}};
  n.trained = trained;
  n.beyond = beyond;
  return n;
}

TEST(AbsoluteVerdicts, C4Verdicts) {
  EXPECT_EQ(judge_c4(c4({0.95, 0.96, 0.97}, {0.80, 0.82, 0.84}), 0.05).verdict, Verdict::Supported);
  // No bias inside training; longer sequences suffer beyond it.
  EXPECT_EQ(judge_c4(c4({0.90, 0.91, 0.92}, {0.90, 0.91, 0.92}), 0.05).verdict, Verdict::Mixed);
  EXPECT_EQ(judge_c4(c4({0.90, 0.91, 0.92}, {0.90, 0.91, 0.92}, 0.9, 0.8), 0.05).verdict,
            Verdict::Refuted);
}

TEST(AbsoluteVerdicts, C4InconclusiveAtTheCeilingTheFloorOrWithinNoise) {
  Judgement j = judge_c4(c4({1.0, 1.0, 1.0}, {1.0, 1.0, 1.0}), 0.05);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "ceiling")) << j.because;
  j = judge_c4(c4({0.0, 0.01, 0.0}, {0.0, 0.0, 0.0}), 0.05);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "floor")) << j.because;
  j = judge_c4(c4({0.70, 0.95, 0.99}, {0.60, 0.85, 0.95}), 0.05);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "within their 95% intervals")) << j.because;
}

// ---- C14 ----

C14Numbers c14(std::vector<double> extrapolation, double worst = 0, int64_t learned = 3) {
  return {{learned, 3, "learned"}, summarize(extrapolation), worst};
}

TEST(AbsoluteVerdicts, C14Verdicts) {
  EXPECT_EQ(judge_c14(c14({0.0, 0.0, 0.01}), {}).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c14(c14({0.8, 0.85, 0.9}), {}).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c14(c14({0.0, 0.0, 0.0}, 0.3), {}).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c14(c14({0.29, 0.3, 0.31}), {}).verdict, Verdict::Mixed);
}

TEST(AbsoluteVerdicts, C14InconclusiveWhenNotLearnedOrWithinNoise) {
  // In distribution at the floor: learned did not learn the task.
  Judgement j = judge_c14(c14({0.0, 0.0, 0.0}, 0, 0), {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "learned learned the task in distribution in 0 of 3 runs")) << j.because;
  j = judge_c14(c14({0.0, 0.05, 0.4}), {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "straddles")) << j.because;
}

// ---- C16 ----

C16Numbers c16(std::vector<double> shared, double accuracy, double without, int64_t learned = 3) {
  return {{learned, 3, "sinusoidal"},
          summarize(shared),
          summarize({accuracy, accuracy, accuracy}),
          summarize({without, without, without})};
}

TEST(AbsoluteVerdicts, C16Verdicts) {
  EXPECT_EQ(judge_c16(c16({0.1, 0.12, 0.14}, 1.0, 0.99), {}).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c16(c16({1.7, 1.8, 1.9}, 1.0, 0.4), {}).verdict, Verdict::Refuted);
  // Little shared energy, but the functional test says the tokens need that span.
  EXPECT_EQ(judge_c16(c16({0.1, 0.12, 0.14}, 1.0, 0.5), {}).verdict, Verdict::Mixed);
  EXPECT_EQ(judge_c16(c16({0.7, 0.75, 0.8}, 1.0, 0.99), {}).verdict, Verdict::Mixed);
}

TEST(AbsoluteVerdicts, C16InconclusiveWhenNotLearnedOrWithinNoise) {
  Judgement j = judge_c16(c16({0.1, 0.12, 0.14}, 0.0, 0.0, 0), {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "in 0 of 3 runs")) << j.because;
  j = judge_c16(c16({0.3, 0.5, 0.9}, 1.0, 1.0), {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "straddles")) << j.because;
}

}  // namespace
}  // namespace pelab::claims
