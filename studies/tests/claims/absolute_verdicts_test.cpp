// The judgements of C2, C3, C4, C14 and C16 on synthetic results: each claim's supported,
// refuted and mixed cases, and each precondition that makes it inconclusive (not learned, at
// the ceiling, at the floor, within the noise).
#include "pelab/claims/absolute_verdicts.h"

#include "verdict_checks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace pelab::claims {
namespace {

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

// A scale of three runs: its accuracies, learned count and steps per run.
C3Scale scale(double value, double ratio, std::vector<double> accuracy, int64_t learned = 3,
              std::vector<double> steps = {400, 400, 400}) {
  return {value,
          ratio,
          {learned, 3, fmt::format("scale {}", value)},
          summarize(accuracy),
          summarize(steps),
          Stat{}};
}

// Sinusoidal with every exact property; scale 1 learns in 400 steps; a scale of 100 puts
// position at 71× the token, one of 10 at 7.1× (not judged: below dominated_ratio 10).
C3Numbers c3(std::vector<double> largest, int64_t largest_learned = 3,
             std::vector<double> largest_steps = {400, 400, 400}) {
  C3Numbers n;
  n.unique = n.length_independent = n.bounded = true;
  n.at_one = scale(1, 0.71, {1.0, 0.99, 1.0});
  n.others = {scale(10, 7.1, {1.0, 1.0, 1.0}),
              scale(100, 71, largest, largest_learned, largest_steps)};
  return n;
}

TEST(AbsoluteVerdicts, C3SmallIsJudgedWhereThePositionDominates) {
  EXPECT_EQ(judge_c3(c3({0.11, 0.21, 0.15}), {}).verdict, Verdict::Supported);
  // Small refuted while the exact properties hold: the claim is mixed.
  EXPECT_EQ(judge_c3_small(c3({0.90, 0.92, 0.91}), {}).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c3(c3({0.90, 0.92, 0.91}), {}).verdict, Verdict::Mixed);
  // Each harm has its own measure: most runs not learning, or twice the steps, harm even at
  // an accuracy the selected learning rate kept high.
  EXPECT_EQ(judge_c3_small(c3({0.90, 0.92, 0.91}, 1), {}).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c3_small(c3({0.90, 0.92, 0.91}, 3, {900, 1000, 1100}), {}).verdict,
            Verdict::Supported);
  // Control: the 7.1× scale is not judged, so its harm changes nothing.
  C3Numbers n = c3({0.11, 0.21, 0.15});
  n.others[0] = scale(10, 7.1, {0.1, 0.1, 0.1}, 0);
  EXPECT_EQ(judge_c3(n, {}).verdict, Verdict::Supported);
  EXPECT_EQ(c3_harm(n.others[0], n.at_one, {}), "harms");
}

TEST(AbsoluteVerdicts, C3EachExactPropertyCounts) {
  C3Numbers n = c3({0.11, 0.21, 0.15});
  n.bounded = false;
  const Judgement j = judge_c3(n, {});
  EXPECT_EQ(j.verdict, Verdict::Mixed);
  EXPECT_TRUE(says(j, "but not bounded")) << j.because;
  n = c3({0.90, 0.92, 0.91});
  n.unique = n.length_independent = n.bounded = false;
  EXPECT_EQ(judge_c3(n, {}).verdict, Verdict::Refuted);
}

TEST(AbsoluteVerdicts, C3ThresholdSweepShowsWhereTheVerdictTurns) {
  const auto sweep = c3_threshold_sweep(c3({0.60, 0.61, 0.62}), {}, {0.25, 0.5});
  ASSERT_EQ(sweep.size(), 2u);
  EXPECT_EQ(sweep[0].second, Verdict::Supported);  // keeps ≤ 0.75: yes
  EXPECT_EQ(sweep[1].second, Verdict::Refuted);    // keeps ≤ 0.5: no
}

TEST(AbsoluteVerdicts, C3InconclusivePreconditions) {
  // Scale 1 did not learn.
  C3Numbers n = c3({0.1, 0.1, 0.1});
  n.at_one.learned = {0, 3, "sinusoidal at scale 1"};
  Judgement j = judge_c3(n, {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "in 0 of 3 runs")) << j.because;
  // Both at the ceiling.
  j = judge_c3(c3({0.99, 1.0, 1.0}), {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "ceiling")) << j.because;
  // The dominated scale straddles half of scale 1's accuracy, every run learned, no slower.
  j = judge_c3(c3({0.2, 0.5, 0.8}), {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "within the noise")) << j.because;
  // No scale dominates.
  n = c3({0.1, 0.1, 0.1});
  n.others.pop_back();
  j = judge_c3(n, {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "no scale puts position")) << j.because;
}

// ---- C4 ----

// Three absolute runs' early and late accuracies, and a relative control that drops by
// `control_drop` in each of its three runs (give or take 0.01).
C4Numbers c4(std::vector<double> early, std::vector<double> late, double trained = 0.9,
             double beyond = 0.1, double control_drop = 0.0) {
  C4Numbers n;
  n.early = summarize(early);
  n.late = summarize(late);
  std::vector<double> drop;
  for (size_t i = 0; i < early.size(); ++i) drop.push_back(early[i] - late[i]);
  n.drop = summarize(drop);
  n.controls = {{"relative", summarize({control_drop - 0.01, control_drop, control_drop + 0.01})}};
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

// The same absolute drop (0.14), beside a relative control that drops as much or more, is not
// the claim's mechanism (uneven counts of absolute positions): not supported.
TEST(AbsoluteVerdicts, C4RelativeControlThatDropsAsMuchDefeatsTheMechanism) {
  const Judgement j = judge_c4(c4({0.95, 0.96, 0.97}, {0.80, 0.82, 0.84}, 0.9, 0.1, 0.2), 0.05);
  EXPECT_EQ(j.verdict, Verdict::Mixed);
  EXPECT_TRUE(says(j, "relative drops 0.200 with no absolute position")) << j.because;
  EXPECT_EQ(judge_c4(c4({0.95, 0.96, 0.97}, {0.80, 0.82, 0.84}, 0.9, 0.8, 0.2), 0.05).verdict,
            Verdict::Refuted);
  // Control: a control that drops 0.05 leaves the absolute drop 0.09 above it.
  EXPECT_EQ(judge_c4(c4({0.95, 0.96, 0.97}, {0.80, 0.82, 0.84}, 0.9, 0.1, 0.05), 0.05).verdict,
            Verdict::Supported);
  // Without a control the rule cannot tell.
  C4Numbers none = c4({0.95, 0.96, 0.97}, {0.80, 0.82, 0.84});
  none.controls.clear();
  EXPECT_EQ(judge_c4(none, 0.05).verdict, Verdict::Inconclusive);
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
  // The absolute drop exceeds the control's by gap on average, but within the noise.
  C4Numbers noisy = c4({0.95, 0.96, 0.97}, {0.80, 0.82, 0.84}, 0.9, 0.1, 0.05);
  noisy.controls[0].second = summarize({-0.1, 0.05, 0.2});
  j = judge_c4(noisy, 0.05);
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

// ---- C2's loss curves ----

TEST(AbsoluteVerdicts, C2LossCurvesHoldAStoppedRunsLastValue) {
  // A fast run stops at step 20 with loss 0.1; a slow one goes on to step 40.
  const LossCurve fast = {{0, 2.0}, {10, 1.0}, {20, 0.1}};
  const LossCurve slow = {{0, 2.0}, {10, 1.6}, {20, 1.2}, {30, 1.0}, {40, 0.8}};
  const LossCurve mean = carried_forward_mean({fast, slow});
  const LossCurve expected = {{0, 2.0}, {10, 1.3}, {20, 0.65}, {30, 0.55}, {40, 0.45}};
  ASSERT_EQ(mean.size(), expected.size());
  for (size_t i = 0; i < mean.size(); ++i) {
    EXPECT_EQ(mean[i].first, expected[i].first);
    EXPECT_NEAR(mean[i].second, expected[i].second, 1e-12) << "step " << mean[i].first;
  }
  // Control: averaging only the runs still training would jump up to the slow run's 1.0 at
  // step 30, above the 0.65 at step 20; held, the mean keeps falling.
  EXPECT_LT(mean[3].second, mean[2].second);
  // A run that logs from a later step counts from there on.
  const LossCurve late = carried_forward_mean({{{5, 1.0}}, {{0, 3.0}}});
  ASSERT_EQ(late.size(), 2u);
  EXPECT_DOUBLE_EQ(late[0].second, 3.0);
  EXPECT_DOUBLE_EQ(late[1].second, 2.0);
}

// ---- C16 ----

// Three runs: the shared energy ÷ chance per run, token accuracy 1.0, and the accuracy
// without the tokens' part in the position span per run.
C16Numbers c16(std::vector<double> shared, std::vector<double> without, int64_t learned = 3) {
  return {{learned, 3, "sinusoidal"},
          summarize(shared),
          summarize({1.0, 1.0, 1.0}),
          summarize(without)};
}

TEST(AbsoluteVerdicts, C16FunctionalTestDecidesEitherWay) {
  // Between the geometry's bounds (0.5 – 1.0, the last round's 0.80): the functional test
  // decides alone, supported when removing the span costs nothing, refuted when it costs a lot
  // (the last round's 1.00 → 0.66).
  const std::vector<double> between = {0.75, 0.8, 0.85};
  EXPECT_EQ(judge_c16(c16(between, {0.99, 0.98, 0.99}), {}).verdict, Verdict::Supported);
  const Judgement refuted = judge_c16(c16(between, {0.6, 0.66, 0.72}), {});
  EXPECT_EQ(refuted.verdict, Verdict::Refuted);
  EXPECT_TRUE(says(refuted, "at least 0.2: not separate")) << refuted.because;
  // Control: a loss between harm_max and harm_refuted_min is mixed.
  EXPECT_EQ(judge_c16(c16(between, {0.9, 0.88, 0.89}), {}).verdict, Verdict::Mixed);
}

TEST(AbsoluteVerdicts, C16GeometryOnlySoftensTheFunctionalTest) {
  // A test that loses nothing while the subspaces share more than chance: mixed.
  const Judgement a = judge_c16(c16({1.7, 1.8, 1.9}, {1.0, 0.99, 1.0}), {});
  EXPECT_EQ(a.verdict, Verdict::Mixed);
  EXPECT_TRUE(says(a, "contradicts the functional test")) << a.because;
  // A test that loses much while the subspaces are apart: mixed too.
  EXPECT_EQ(judge_c16(c16({0.1, 0.12, 0.14}, {0.5, 0.5, 0.5}), {}).verdict, Verdict::Mixed);
  // Agreement either way keeps the test's verdict.
  EXPECT_EQ(judge_c16(c16({0.1, 0.12, 0.14}, {0.99, 0.99, 0.99}), {}).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c16(c16({1.7, 1.8, 1.9}, {0.4, 0.4, 0.4}), {}).verdict, Verdict::Refuted);
}

TEST(AbsoluteVerdicts, C16InconclusiveWhenNotLearnedOrWithinNoise) {
  Judgement j = judge_c16(c16({0.1, 0.12, 0.14}, {0.0, 0.0, 0.0}, 0), {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "in 0 of 3 runs")) << j.because;
  // The loss straddles harm_refuted_min.
  j = judge_c16(c16({0.75, 0.8, 0.85}, {0.6, 0.8, 1.0}), {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "the token accuracy the functional test loses")) << j.because;
  // The shared energy straddles the bound that would soften a supported test.
  j = judge_c16(c16({0.5, 1.0, 1.5}, {1.0, 1.0, 1.0}), {});
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "shared energy")) << j.because;
}

}  // namespace
}  // namespace pelab::claims
