// The judgements of C6, C15, C7 and C13 on synthetic numbers: each verdict, and each
// precondition that makes it inconclusive (at the ceiling, at the floor, within noise).
#include "pelab/claims/relative_cost_verdicts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "pelab/core/error.h"
#include "verdict_checks.h"

namespace pelab::claims {
namespace {

const LearnedCount kOneOfThreeLearned{1, 3};

C6Numbers c6(double a, double b, LearnedCount learned_b = kLearned) {
  C6Numbers n;
  n.ks = {{4, kLearned, around(a), ""}, {16, learned_b, around(b), ""}};
  return n;
}

TEST(RelativeCostVerdicts, C6SupportedRefutedMixed) {
  EXPECT_EQ(judge_c6(c6(0.9, 1.0)).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c6(c6(0.02, 0.05)).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c6(c6(0.9, 0.05)).verdict, Verdict::Mixed);
  // A k that did not learn is left out of the judgement, and named.
  const Judgement j = judge_c6(c6(0.9, 0.05, kOneOfThreeLearned));
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_TRUE(says(j, "not learned in distribution: k = 16 (1 of 3 runs)")) << j.because;
}

TEST(RelativeCostVerdicts, C6InconclusiveWhenNoKLearned) {
  C6Numbers n = c6(0.0, 0.0, kOneOfThreeLearned);
  n.ks[0].learned = kOneOfThreeLearned;
  const Judgement j = judge_c6(n);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "no k learned the task in distribution")) << j.because;
}

C15Numbers c15(double sinusoidal, double learned, double relative, double rotary) {
  C15Numbers n;
  n.absolute = {{"sinusoidal", kLearned, around(sinusoidal), {}, ""},
                {"learned", kLearned, around(learned), {}, ""}};
  n.claimed = {{"relative", kLearned, around(relative), {}, ""},
               {"rotary", kLearned, around(rotary), {}, ""}};
  return n;
}

TEST(RelativeCostVerdicts, C15SupportedRefutedMixed) {
  EXPECT_EQ(judge_c15(c15(0.3, 0.5, 0.9, 0.95)).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c15(c15(0.3, 0.9, 0.9, 0.5)).verdict, Verdict::Refuted);
  const Judgement mixed = judge_c15(c15(0.3, 0.5, 0.9, 0.52));
  EXPECT_EQ(mixed.verdict, Verdict::Mixed);
  EXPECT_TRUE(says(mixed, "best absolute scheme learned")) << mixed.because;
}

TEST(RelativeCostVerdicts, C15InconclusiveAtTheCeilingTheFloorOrNotLearned) {
  const Judgement top = judge_c15(c15(1.0, 0.99, 1.0, 0.995));
  EXPECT_EQ(top.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(top, "ceiling")) << top.because;
  const Judgement bottom = judge_c15(c15(0.0, 0.01, 0.015, 0.0));
  EXPECT_EQ(bottom.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(bottom, "floor")) << bottom.because;
  C15Numbers n = c15(0.3, 0.5, 0.9, 0.95);
  n.claimed[1].learned = kOneOfThreeLearned;
  const Judgement unlearned = judge_c15(n);
  EXPECT_EQ(unlearned.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(unlearned,
                   "rotary learned the task in distribution at the short distance in 1 of 3 runs"));
}

TEST(RelativeCostVerdicts, C15InconclusiveWhenTheMarginIsWithinNoise) {
  C15Numbers n = c15(0.3, 0.5, 0.6, 0.9);
  n.claimed[0].accuracy = summarize({0.3, 0.6, 0.9}, {0, 1, 2});  // 0.1 above, wide interval
  const Judgement j = judge_c15(n);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "within their 95% intervals")) << j.because;
}

// Step times of three rounds around `mean`, `spread` either side; `shift` rotates which
// round is slow, so two cases with different shifts do not move together.
std::vector<double> rounds(double mean, double spread = 0.1, int shift = 0) {
  std::vector<double> r = {mean - spread, mean, mean + spread};
  std::rotate(r.begin(), r.begin() + shift, r.end());
  return r;
}

// Timings of one length: relative, the slowest other and rotary as given; none 10 ms. The
// cases' noise is out of step (`spread` ms either side, slow in different rounds).
C7Length c7_length(int64_t T, double relative, double rotary, double spread = 0.1) {
  C7Length l;
  l.length = T;
  l.none = rounds(10, spread, 0);
  l.relative = rounds(relative, spread, 1);
  l.others = {{"sinusoidal", rounds(10, spread, 2)},
              {"learned", rounds(10.2, spread, 2)},
              {"rotary", rounds(rotary, spread, 1)}};
  return l;
}

C7Numbers c7(double relative, double rotary, double spread = 0.1) {
  C7Numbers n;
  n.lengths = {c7_length(64, relative, rotary, spread), c7_length(256, relative, rotary, spread)};
  return n;
}

TEST(RelativeCostVerdicts, C7SupportedRefutedMixed) {
  EXPECT_EQ(judge_c7(c7(15, 10.5)).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c7(c7(10.3, 13)).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c7(c7(15, 13)).verdict, Verdict::Mixed);
  C7Numbers n = c7(15, 10.5);
  n.lengths[1] = c7_length(256, 10.2, 10.5);  // relative slower at one length only
  const Judgement j = judge_c7(n);
  EXPECT_EQ(j.verdict, Verdict::Mixed);
  EXPECT_TRUE(says(j, "at 1 of 2 lengths")) << j.because;
}

// The ratio is taken round by round: a slow spell that slows both cases in the same round
// cancels. Exact values: equal ratios give a point interval; two rounds with ratios 1 and 2
// give means of resamples in {1, 1.5, 2}, so the 95% percentile interval is [1, 2].
TEST(RelativeCostVerdicts, PairedRatioIsTheMeanOfPerRoundRatios) {
  const RatioInterval steady = paired_ratio({12, 24, 36}, {10, 20, 30});
  EXPECT_DOUBLE_EQ(steady.mean, 1.2);
  EXPECT_DOUBLE_EQ(steady.low, 1.2);
  EXPECT_DOUBLE_EQ(steady.high, 1.2);
  EXPECT_EQ(steady.rounds, 3);
  const RatioInterval two = paired_ratio({10, 40}, {10, 20});
  EXPECT_DOUBLE_EQ(two.mean, 1.5);
  EXPECT_DOUBLE_EQ(two.low, 1.0);
  EXPECT_DOUBLE_EQ(two.high, 2.0);
  // Control: the same step times unpaired (the rounds' order shuffled on one side) no longer
  // cancel the slow spell, and the interval widens.
  const RatioInterval unpaired = paired_ratio({36, 12, 24}, {10, 20, 30});
  EXPECT_LT(unpaired.low, 1.2);
  EXPECT_GT(unpaired.high, 1.2);
  EXPECT_THROW(paired_ratio({1, 2}, {1}), Error);
}

TEST(RelativeCostVerdicts, C7ASlowSpellSharedByARoundDoesNotBlurTheRatio) {
  // Relative 1.2 × sinusoidal and rotary 1.05 × none in every round, while the machine slows
  // every case of a round by up to 3× from round to round: the paired ratios decide.
  C7Numbers n;
  C7Length l;
  l.length = 64;
  l.none = {10, 20, 30};
  l.relative = {12, 24, 36};
  l.others = {{"sinusoidal", {10, 20, 30}}, {"rotary", {10.5, 21, 31.5}}};
  n.lengths = {l};
  const Judgement j = judge_c7(n);
  EXPECT_EQ(j.verdict, Verdict::Supported) << j.because;
  // The slowest other is rotary: 12 / 10.5 in every round.
  EXPECT_TRUE(says(j, "1.143× [1.143, 1.143] over rotary")) << j.because;
  EXPECT_TRUE(says(j, "1.050× [1.050, 1.050] at T = 64")) << j.because;
}

// The report says timing needs a quiet machine and whether it was: below quiet_below cores
// of other processes it was; at or above it was not; unreadable, it says so.
TEST(RelativeCostVerdicts, TimingSaysWhetherTheMachineWasQuiet) {
  EXPECT_TRUE(says({Verdict::Mixed, quiet_text(0.02, 0.1)}, "This one was quiet"));
  EXPECT_TRUE(says({Verdict::Mixed, quiet_text(0.02, 0.1)}, "Timing needs a quiet machine"));
  EXPECT_TRUE(says({Verdict::Mixed, quiet_text(0.8, 0.1)}, "This one was not quiet"));
  EXPECT_TRUE(says({Verdict::Mixed, quiet_text(0.1, 0.1)}, "was not quiet"));
  EXPECT_TRUE(says({Verdict::Mixed, quiet_text(std::nan(""), 0.1)}, "could not be read"));
  EXPECT_EQ(quiet_clause(0.02, 0.1), " (timed on a quiet machine: others used 0.02 cores)");
  EXPECT_EQ(quiet_clause(1.5, 0.1),
            " (the machine was NOT quiet while timing: others used 1.50 cores)");
}

TEST(RelativeCostVerdicts, C7InconclusiveWhenTheNoiseStraddlesAThreshold) {
  // ±1.5 ms around 10 ms, out of step: relative at 11 ms cannot be told from 1.1 × the
  // slowest other.
  const Judgement j = judge_c7(c7(11.2, 10.2, 1.5));
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "straddles its threshold")) << j.because;
  C7Numbers single = c7(15, 10.5);
  single.lengths[0].relative = {15.0};
  const Judgement one = judge_c7(single);
  EXPECT_EQ(one.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(one, "fewer than two rounds")) << one.because;
}

C13Numbers c13(double add_accuracy, double concat_accuracy, double concat_ms,
               LearnedCount concat_learned = kLearned) {
  C13Numbers n;
  n.variants = {{"sinusoidal, add", kLearned, add_accuracy},
                {"sinusoidal, concat", concat_learned, concat_accuracy}};
  n.costs = {{"sinusoidal", rounds(10, 0.01), rounds(concat_ms, 0.01)}};
  return n;
}

TEST(RelativeCostVerdicts, C13SupportedRefutedMixed) {
  EXPECT_EQ(judge_c13(c13(0.99, 0.98, 13)).verdict, Verdict::Supported);
  // All at the ceiling is what "both work" means: not a reason to be inconclusive.
  EXPECT_EQ(judge_c13(c13(1.0, 1.0, 13)).verdict, Verdict::Supported);
  EXPECT_EQ(judge_c13(c13(0.99, 0.4, 13, kOneOfThreeLearned)).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c13(c13(0.99, 0.98, 9)).verdict, Verdict::Refuted);
  EXPECT_EQ(judge_c13(c13(0.99, 0.98, 10.3)).verdict, Verdict::Mixed);
  // The equal-total-width cost is said, not judged: the same verdict whatever it is.
  C13Numbers n = c13(0.99, 0.98, 13);
  n.equal_total_width = {{"sinusoidal", rounds(13), rounds(13)}};
  const Judgement j = judge_c13(n);
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_TRUE(says(j, "at equal total width (not judged): sinusoidal 1.000×")) << j.because;
}

// A variant whose every run diverged has no value (NaN): it did not learn, so beside a variant
// that learned the claim is refuted; with no variant that has numbers it cannot tell.
TEST(RelativeCostVerdicts, C13DivergedVariantDidNotLearn) {
  const double none = std::numeric_limits<double>::quiet_NaN();
  const Judgement one = judge_c13(c13(0.99, none, 13, LearnedCount(0, 5)));
  EXPECT_EQ(one.verdict, Verdict::Refuted);
  EXPECT_TRUE(says(one, "not learned in distribution: sinusoidal, concat (0 of 5 runs)"))
      << one.because;
  C13Numbers diverged = c13(none, none, 13, LearnedCount(0, 5));
  diverged.variants[0].learned = LearnedCount(0, 5);
  const Judgement all = judge_c13(diverged);
  EXPECT_EQ(all.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(all, "every run of every variant diverged")) << all.because;
}

TEST(RelativeCostVerdicts, C13InconclusiveAtTheFloorOrWithinNoise) {
  const Judgement floor = judge_c13(c13(0.0, 0.01, 13, kOneOfThreeLearned));
  EXPECT_EQ(floor.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(floor, "floor")) << floor.because;
  C13Numbers n = c13(0.99, 0.98, 10.5);
  n.costs[0].concat_ms = rounds(10.5, 1.0, 1);
  const Judgement noisy = judge_c13(n);
  EXPECT_EQ(noisy.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(noisy, "straddles its threshold")) << noisy.because;
}

}  // namespace
}  // namespace pelab::claims
