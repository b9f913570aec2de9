// The judgements of the published reproductions R1, R2 and R3 on synthetic numbers: the papers'
// score (an unweighted mean over the test lengths, the maximum over the sweep), R3's mean
// reciprocal rank, each verdict,
// and each precondition that leaves a task or scheme out or makes the verdict inconclusive,
// at the ceiling and at the floor.
#include "pelab/claims/published_verdicts.h"

#include "verdict_checks.h"

#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <cmath>

namespace pelab::claims {
namespace {

const LearnedCount kTwoOfThreeLearned{2, 3};

// ---- the papers' score ----

TEST(PublishedVerdicts, BeyondTrainingAverageIsUnweightedOverLengths) {
  // Lengths 8..40 were trained on; 64, 100 and 200 count once each, however long they are
  // (a mean over tokens would weigh 200 three times as much as 64).
  const std::vector<LengthScore> lengths = {
      {8, 1.0, true}, {40, 0.9, true}, {64, 0.6, false}, {100, 0.5, false}, {200, 0.1, false}};
  EXPECT_NEAR(beyond_training_average(lengths), 0.4, 1e-12);
  EXPECT_NEAR(in_training_average(lengths), 0.95, 1e-12);
  // Beyond training is the evaluation's in_training flag (compare's definition), not the
  // length: a length flagged as trained on is not beyond training, whatever it is.
  std::vector<LengthScore> flagged = lengths;
  flagged[2].in_training = true;
  EXPECT_NEAR(beyond_training_average(flagged), 0.3, 1e-12);
  // Nothing beyond training: no score.
  EXPECT_TRUE(std::isnan(beyond_training_average({{8, 1.0, true}})));
  EXPECT_TRUE(std::isnan(beyond_training_average({})));
  EXPECT_TRUE(std::isnan(in_training_average({{64, 0.6, false}})));
}

TEST(PublishedVerdicts, BestOverSweepIsTheMaximumOverSchemesSeedsAndLearningRates) {
  const std::vector<ScoredRun> runs = {{"rotary", "0.001", 0, 0.55},
                                       {"rotary", "0.0003", 1, 0.61},
                                       {"alibi", "0.001", 2, 0.58},
                                       {"none", "0.001", 0, std::nan("")}};
  const SweepBest best = best_over_sweep(runs);
  EXPECT_DOUBLE_EQ(best.score, 0.61);
  EXPECT_EQ(best.scheme, "rotary");
  EXPECT_EQ(best.lr, "0.0003");
  EXPECT_EQ(best.seed, 1u);
  EXPECT_EQ(best.runs, 3);  // the run without a score is not compared
  const SweepBest none = best_over_sweep({});
  EXPECT_TRUE(std::isnan(none.score));
  EXPECT_EQ(none.runs, 0);
}

// ---- R1 ----

R1Task r1_task(const std::string& name, double best, bool learned = true) {
  R1Task t;
  t.name = name;
  if (learned) t.learned_schemes = {"rotary"};
  t.best.score = best;
  t.best.in_distribution = 1.0;
  t.best.scheme = "rotary";
  t.best.lr = "0.001";
  t.best.runs = 30;
  return t;
}

R1Numbers r1(std::vector<R1Task> tasks) {
  R1Numbers n;
  n.tasks = std::move(tasks);
  return n;
}

TEST(PublishedVerdicts, R1SupportedRefutedMixed) {
  EXPECT_EQ(judge_r1(r1({r1_task("parity", 0.52), r1_task("reverse", 0.62)})).verdict,
            Verdict::Supported);
  EXPECT_EQ(judge_r1(r1({r1_task("parity", 0.95), r1_task("reverse", 0.90)})).verdict,
            Verdict::Refuted);
  const Judgement mixed = judge_r1(r1({r1_task("parity", 0.52), r1_task("reverse", 0.97)}));
  EXPECT_EQ(mixed.verdict, Verdict::Mixed);
  EXPECT_TRUE(says(mixed, "1 of 2 judged tasks solved")) << mixed.because;
  EXPECT_TRUE(says(mixed, "reverse 0.970 (rotary, lr 0.001, seed 0; in distribution 1.000)"))
      << mixed.because;
  // The line is the config's.
  R1Numbers strict = r1({r1_task("parity", 0.95)});
  strict.solved = 0.99;
  EXPECT_EQ(judge_r1(strict).verdict, Verdict::Supported);
}

TEST(PublishedVerdicts, R1AtTheCeilingAndTheFloorIsAVerdict) {
  // The rule judges each task against a fixed line, not tasks against each other: every
  // task solved perfectly refutes the claim, every task at 0 supports it.
  EXPECT_EQ(judge_r1(r1({r1_task("parity", 1.0), r1_task("reverse", 1.0)})).verdict,
            Verdict::Refuted);
  EXPECT_EQ(judge_r1(r1({r1_task("parity", 0.0), r1_task("reverse", 0.0)})).verdict,
            Verdict::Supported);
}

TEST(PublishedVerdicts, R1LeavesOutTasksNoSchemeLearned) {
  // A task that no scheme learned in distribution is named and left out, even when its best
  // score would have decided the verdict.
  const Judgement j =
      judge_r1(r1({r1_task("parity", 0.99, /*learned=*/false), r1_task("reverse", 0.6)}));
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_TRUE(says(j, "left out: parity (no scheme learned it in distribution)")) << j.because;
  // A task with no score beyond the training lengths is left out too.
  R1Task unscored = r1_task("reverse", std::nan(""));
  unscored.best.runs = 0;
  const Judgement k = judge_r1(r1({unscored, r1_task("parity", 0.95)}));
  EXPECT_EQ(k.verdict, Verdict::Refuted);
  EXPECT_TRUE(says(k,
                   "reverse (no run evaluated beyond the training lengths reached an "
                   "in-distribution token accuracy of 0.95)"))
      << k.because;
}

TEST(PublishedVerdicts, R1JudgesOnlyTasksWhoseBestRunLearnedTheTrainingLengths) {
  // A best run below 0.95 in distribution may be undertrained: its task is left out, even
  // when it would have supported the claim.
  R1Task under = r1_task("parity", 0.52);
  under.best.in_distribution = 0.94;
  R1Task unknown = r1_task("cycle_navigation", 0.52);
  unknown.best.in_distribution = std::nan("");
  const Judgement j = judge_r1(r1({under, unknown, r1_task("reverse", 0.95)}));
  EXPECT_EQ(j.verdict, Verdict::Refuted);
  EXPECT_TRUE(says(j,
                   "parity (its best run's in-distribution token accuracy 0.940 is below "
                   "0.95)"))
      << j.because;
  EXPECT_TRUE(says(j, "cycle_navigation (its best run's in-distribution")) << j.because;
  // At the line it is judged; the line is the config's.
  R1Task at = r1_task("parity", 0.52);
  at.best.in_distribution = 0.95;
  EXPECT_EQ(judge_r1(r1({at})).verdict, Verdict::Supported);
  R1Numbers lenient = r1({under});
  lenient.min_in_distribution = 0.90;
  EXPECT_EQ(judge_r1(lenient).verdict, Verdict::Supported);
  EXPECT_EQ(judge_r1(r1({under})).verdict, Verdict::Inconclusive);
}

// The best is taken among the runs that learned the training lengths: a higher test score from
// a run that did not learn them is not a candidate.
TEST(PublishedVerdicts, R1BestIsAmongTheRunsThatLearned) {
  const std::vector<ScoredRun> runs = {{"rotary", "0.001", 0, 0.80, 0.90},
                                       {"alibi", "0.001", 1, 0.60, 0.97},
                                       {"none", "0.0003", 2, 0.55, 0.99}};
  const SweepBest learned = best_over_sweep(runs, 0.95);
  EXPECT_EQ(learned.scheme, "alibi");
  EXPECT_EQ(learned.score, 0.60);
  EXPECT_EQ(learned.runs, 2);
  EXPECT_EQ(best_over_sweep(runs).scheme, "rotary");  // no threshold: every run
  EXPECT_EQ(best_over_sweep(runs, 0.995).runs, 0);
}

// The claim speaks of every task: too few judged tasks cannot decide it either way.
TEST(PublishedVerdicts, R1NeedsItsMinimumOfJudgedTasks) {
  R1Numbers n = r1({r1_task("parity", 0.52), r1_task("reverse", 0.62),
                    r1_task("odds_first", 0.99, /*learned=*/false)});
  n.min_tasks = 3;
  const Judgement j = judge_r1(n);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "2 of 3 tasks judged")) << j.because;
  EXPECT_TRUE(says(j, "the claim needs 3")) << j.because;
  n.min_tasks = 2;
  EXPECT_EQ(judge_r1(n).verdict, Verdict::Supported);
}

TEST(PublishedVerdicts, R1PrintsItsBudgetBesideTheVerdict) {
  R1Numbers n = r1({r1_task("parity", 0.52)});
  n.budget = "At most 1000 steps: not solved may be undertraining.";
  EXPECT_FALSE(says(judge_r1(r1({r1_task("parity", 0.52)})), "undertraining"));  // none set
  const std::string because = judge_r1(n).because;
  EXPECT_TRUE(
      because.ends_with("judged tasks solved. At most 1000 steps: not solved may be "
                        "undertraining"))  // the report adds the full stop
      << because;
  n.tasks.front().learned_schemes.clear();
  const Judgement none = judge_r1(n);
  EXPECT_EQ(none.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(none, "undertraining")) << none.because;
}

TEST(PublishedVerdicts, R1InconclusiveWhenNoTaskIsLeft) {
  for (const double best : {0.0, 0.5, 1.0}) {  // floor, between, ceiling: none is judged
    const Judgement j =
        judge_r1(r1({r1_task("parity", best, /*learned=*/false), r1_task("reverse", best, false)}));
    EXPECT_EQ(j.verdict, Verdict::Inconclusive) << best;
    EXPECT_TRUE(says(j, "no task is left to judge")) << j.because;
    EXPECT_TRUE(says(j, "parity") && says(j, "reverse")) << j.because;
  }
  EXPECT_EQ(judge_r1(r1({})).verdict, Verdict::Inconclusive);
}

// ---- R2 ----

R2Task pair(const std::string& task, std::vector<double> plain, std::vector<double> randomized,
            LearnedCount plain_learned = kLearned, LearnedCount randomized_learned = kLearned) {
  return {task, plain_learned, randomized_learned, std::move(plain), std::move(randomized)};
}

TEST(PublishedVerdicts, RandomizationGainIsTheMeanOverTasksWithSeedsResampledPerTask) {
  const std::vector<R2Task> tasks = {pair("parity", {0.5, 0.5, 0.5}, {0.7, 0.8, 0.9}),
                                     pair("reverse", {0.6, 0.6, 0.6}, {0.6, 0.6, 0.6})};
  const Gain g = randomization_gain(tasks);
  EXPECT_NEAR(g.mean, (0.3 + 0.0) / 2, 1e-12);
  EXPECT_EQ(g.tasks, 2);
  // Only parity's randomized seeds vary: the interval is theirs, halved by the mean over
  // two tasks, and lies within [0.2, 0.4] / 2.
  EXPECT_GE(g.interval.low, 0.1 - 1e-12);
  EXPECT_LE(g.interval.high, 0.2 + 1e-12);
  EXPECT_LT(g.interval.low, g.mean);
  EXPECT_GT(g.interval.high, g.mean);
  // Deterministic: the same numbers give the same interval, bit for bit.
  const Gain again = randomization_gain(tasks);
  EXPECT_EQ(g.interval.low, again.interval.low);
  EXPECT_EQ(g.interval.high, again.interval.high);
  // One seed a side: no spread, the interval is the difference itself.
  const Gain single = randomization_gain({pair("parity", {0.5}, {0.6})});
  EXPECT_NEAR(single.interval.low, 0.1, 1e-12);
  EXPECT_NEAR(single.interval.high, 0.1, 1e-12);
  // Nothing to compare: no gain.
  EXPECT_TRUE(std::isnan(randomization_gain({}).mean));
  EXPECT_TRUE(std::isnan(randomization_gain({pair("parity", {}, {0.5})}).mean));
}

// A scheme whose two tasks gain `delta` each, with a little spread over seeds.
R2Scheme scheme(const std::string& name, double delta, LearnedCount plain = kLearned) {
  return {name,
          {pair("parity", {0.49, 0.50, 0.51}, {0.49 + delta, 0.50 + delta, 0.51 + delta}, plain),
           pair("reverse", {0.59, 0.60, 0.61}, {0.59 + delta, 0.60 + delta, 0.61 + delta})}};
}

// A scheme whose gain is noisy: about +0.05 on average, seeds from −0.2 to +0.3, so its
// interval runs from below 0 to above the smallest gain of interest.
R2Scheme unclear_scheme(const std::string& name) {
  return {name,
          {pair("parity", {0.5, 0.5, 0.5}, {0.3, 0.55, 0.8}),
           pair("reverse", {0.6, 0.6, 0.6}, {0.4, 0.65, 0.9})}};
}

R2Numbers r2(std::vector<R2Scheme> schemes) {
  R2Numbers n;
  n.schemes = std::move(schemes);
  return n;
}

TEST(PublishedVerdicts, R2SchemeEffects) {
  // Gains with a spread of ±0.01 over seeds: the interval lies within about ±0.01 of delta.
  const std::vector<R2SchemeResult> e =
      r2_effects(r2({scheme("rotary", 0.2), scheme("alibi", -0.2), scheme("learned", 0.0),
                     scheme("relative", 0.2, kTwoOfThreeLearned), scheme("sinusoidal", 0.03),
                     unclear_scheme("none")}));
  ASSERT_EQ(e.size(), 6u);
  EXPECT_EQ(e[0].effect, R2Effect::Raised);
  EXPECT_EQ(e[1].effect, R2Effect::Lowered);
  // Around 0, within ±0.05: shown too small to matter.
  EXPECT_EQ(e[2].effect, R2Effect::NoGain);
  // relative's parity did not learn plain: one task left, fewer than 2, not judged.
  EXPECT_EQ(e[3].effect, R2Effect::NotJudged);
  // The one task that counts is named with its gain, as a finding.
  EXPECT_EQ(e[3].not_judged.rfind("tasks that count: 1, needed: 2; findings, randomized − plain: "
                                  "reverse +0.200 [",
                                  0),
            0u)
      << e[3].not_judged;
  EXPECT_EQ(e[3].gain.tasks, 1);
  ASSERT_EQ(e[3].left_out.size(), 1u);
  EXPECT_NE(e[3].left_out[0].find("parity (learned in distribution: plain 2 of 3, randomized 3 "
                                  "of 3)"),
            std::string::npos)
      << e[3].left_out[0];
  // Above 0 but within ±0.05: too small to matter, even though it excludes 0 ("no gain" is
  // checked first, as R3's "level").
  EXPECT_EQ(e[4].effect, R2Effect::NoGain);
  EXPECT_GT(e[4].gain.interval.low, 0);
  // An interval from below 0 to above min_gain: unclear.
  EXPECT_EQ(e[5].effect, R2Effect::Unclear);
  EXPECT_LT(e[5].gain.interval.low, 0);
  EXPECT_GT(e[5].gain.interval.high, 0.05);
  // min_gain is the config's: at 0.005 the same gain around 0 is unclear.
  R2Numbers strict = r2({scheme("learned", 0.0)});
  strict.min_gain = 0.005;
  EXPECT_EQ(r2_effects(strict)[0].effect, R2Effect::Unclear);
}

TEST(PublishedVerdicts, R2SchemesExcludedBeforeTheRunsAreNotJudged) {
  // An excluded scheme keeps its gain in the table but does not count, with its reason.
  R2Numbers n = r2({scheme("rotary", 0.2), scheme("relative", -0.2)});
  n.excluded = {{"relative", "clipped at k = 8"}};
  const std::vector<R2SchemeResult> e = r2_effects(n);
  EXPECT_EQ(e[1].effect, R2Effect::NotJudged);
  EXPECT_EQ(e[1].not_judged, "clipped at k = 8");
  EXPECT_NEAR(e[1].gain.mean, -0.2, 1e-12);
  const Judgement j = judge_r2(n);
  EXPECT_EQ(j.verdict, Verdict::Supported);
  EXPECT_TRUE(says(j, "not judged: relative (clipped at k = 8)")) << j.because;
  // R2's config excludes none since its runs are the suite's, whose relative is
  // Transformer-XL's as R2's (the earlier rounds excluded Shaw's, clipped at k = 8).
  const YAML::Node config =
      YAML::LoadFile(std::string(PELAB_SOURCE_DIR) + "/studies/configs/claims/r02.yaml");
  EXPECT_FALSE(config["settings"]["not_judged"]);
}

TEST(PublishedVerdicts, R2SupportedRefutedMixedInconclusive) {
  // More than half raised and none lowered.
  EXPECT_EQ(
      judge_r2(r2({scheme("rotary", 0.2), scheme("alibi", 0.1), scheme("learned", 0.0)})).verdict,
      Verdict::Supported);
  // More than half lowered or no gain, none raised.
  const Judgement refuted =
      judge_r2(r2({scheme("rotary", -0.2), scheme("alibi", 0.0), unclear_scheme("learned")}));
  EXPECT_EQ(refuted.verdict, Verdict::Refuted);
  EXPECT_TRUE(says(refuted,
                   "of 3 judged schemes (of 3 named) 0 raised, 1 lowered, 1 with no gain of "
                   "0.05 or more, 0 split, 1 unclear"))
      << refuted.because;
  EXPECT_EQ(judge_r2(r2({scheme("rotary", 0.0), scheme("alibi", 0.0)})).verdict, Verdict::Refuted);
  // Raised, but one lowered.
  const Judgement lowered =
      judge_r2(r2({scheme("rotary", 0.2), scheme("alibi", 0.2), scheme("learned", -0.2)}));
  EXPECT_EQ(lowered.verdict, Verdict::Mixed);
  EXPECT_TRUE(says(lowered, "2 raised, 1 lowered")) << lowered.because;
  // Half raised is not most; one raised forbids refuted.
  EXPECT_EQ(judge_r2(r2({scheme("rotary", 0.2), scheme("alibi", 0.0)})).verdict, Verdict::Mixed);
  EXPECT_EQ(
      judge_r2(r2({scheme("rotary", 0.2), scheme("alibi", 0.0), scheme("learned", 0.0)})).verdict,
      Verdict::Mixed);
  // Within noise is not refuted: every scheme unclear, or most of them, is inconclusive.
  for (const std::vector<R2Scheme>& schemes :
       {std::vector<R2Scheme>{unclear_scheme("rotary"), unclear_scheme("alibi")},
        std::vector<R2Scheme>{unclear_scheme("rotary"), unclear_scheme("alibi"),
                              scheme("learned", 0.0)}}) {
    const Judgement j = judge_r2(r2(schemes));
    EXPECT_EQ(j.verdict, Verdict::Inconclusive);
    EXPECT_TRUE(says(j, "the noise is as large as the effect")) << j.because;
  }
  // Half unclear is not most: one raised, one unclear is mixed.
  EXPECT_EQ(judge_r2(r2({scheme("rotary", 0.2), unclear_scheme("alibi")})).verdict, Verdict::Mixed);
  // "Most" counts the named schemes: one raised of three named, the two others not judged, is
  // no majority of anything; nor are two raised of four named with two not judged.
  const Judgement j = judge_r2(r2({scheme("rotary", 0.2), scheme("alibi", 0.0, kTwoOfThreeLearned),
                                   scheme("learned", 0.0, kTwoOfThreeLearned)}));
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "no more than half of the 3 named schemes are judged")) << j.because;
  EXPECT_TRUE(says(j, "not judged: alibi (tasks that count: 1, needed: 2; findings")) << j.because;
  EXPECT_EQ(judge_r2(r2({scheme("rotary", 0.2), scheme("alibi", 0.2),
                         scheme("learned", 0.0, kTwoOfThreeLearned),
                         scheme("sinusoidal", 0.0, kTwoOfThreeLearned)}))
                .verdict,
            Verdict::Inconclusive);
  // Three judged of four named, two raised: not more than half of the named, so mixed.
  EXPECT_EQ(judge_r2(r2({scheme("rotary", 0.2), scheme("alibi", 0.2), scheme("learned", 0.0),
                         scheme("sinusoidal", 0.0, kTwoOfThreeLearned)}))
                .verdict,
            Verdict::Mixed);
  // Schemes excluded before the runs are not named: they do not count against "most".
  R2Numbers excluded = r2({scheme("rotary", 0.2), scheme("alibi", 0.2), scheme("relative", 0.0)});
  excluded.excluded = {{"relative", "clipped"}};
  EXPECT_EQ(judge_r2(excluded).verdict, Verdict::Supported);
}

// A mean over tasks must not hide a task it lowered: raised on the mean, lowered on one task,
// is split, which does not count as raised.
TEST(PublishedVerdicts, R2RaisedOnTheMeanButLoweredOnATaskIsSplit) {
  const R2Scheme split{"learned",
                       {pair("parity", {0.49, 0.50, 0.51}, {0.39, 0.40, 0.41}),
                        pair("cycle_navigation", {0.29, 0.30, 0.31}, {0.69, 0.70, 0.71})}};
  const std::vector<R2SchemeResult> e = r2_effects(r2({split}));
  EXPECT_EQ(e[0].effect, R2Effect::Split);
  EXPECT_GT(e[0].gain.interval.low, 0);
  ASSERT_EQ(e[0].lowered.size(), 1u);
  EXPECT_EQ(e[0].lowered[0], "parity");
  const Judgement j = judge_r2(r2({split, scheme("rotary", 0.2), scheme("alibi", 0.2)}));
  EXPECT_EQ(j.verdict, Verdict::Supported);  // 2 of 3 raised, none lowered
  EXPECT_TRUE(says(j, "learned split (+0.150")) << j.because;
  EXPECT_TRUE(says(j, "lowered on parity")) << j.because;
  EXPECT_EQ(judge_r2(r2({split, scheme("rotary", 0.2), scheme("alibi", 0.0)})).verdict,
            Verdict::Mixed);
}

// One seed a side gives a point, not an interval: the task does not count.
TEST(PublishedVerdicts, R2NeedsTwoSeedsASide) {
  R2Scheme s{"rotary",
             {pair("parity", {0.5}, {0.7, 0.8, 0.9}), pair("reverse", {0.6, 0.6}, {0.8, 0.8})}};
  const std::vector<R2SchemeResult> e = r2_effects(r2({s}));
  EXPECT_EQ(e[0].effect, R2Effect::NotJudged);
  EXPECT_EQ(e[0].gain.tasks, 1);
  ASSERT_EQ(e[0].left_out.size(), 1u);
  EXPECT_NE(e[0].left_out[0].find("parity (seeds: plain 1, randomized 3; an interval needs 2 a "
                                  "side)"),
            std::string::npos)
      << e[0].left_out[0];
  R2Numbers one = r2({s});
  one.min_seeds = 1;
  EXPECT_EQ(r2_effects(one)[0].effect, R2Effect::Raised);
}

TEST(PublishedVerdicts, R2AtTheCeilingAndTheFloor) {
  // Plain and randomized both at the ceiling, or both at chance (here 0.5, two classes): no
  // gain can show, so the tasks do not count, no scheme is judged: inconclusive.
  for (const double level : {0.5, 0.51, 0.98, 0.995, 1.0}) {
    R2Scheme s{"rotary",
               {pair("parity", {level, level, level}, {level, level, level}),
                pair("reverse", {level, level, level}, {level, level, level})}};
    for (R2Task& task : s.tasks) task.chance = 0.5;
    const std::vector<R2SchemeResult> e = r2_effects(r2({s}));
    EXPECT_EQ(e[0].effect, R2Effect::NotJudged) << level;
    ASSERT_EQ(e[0].left_out.size(), 2u) << level;
    EXPECT_NE(e[0].left_out[0].find(level > 0.9 ? "both at the ceiling" : "both at chance 0.500"),
              std::string::npos)
        << e[0].left_out[0];
    EXPECT_EQ(judge_r2(r2({s})).verdict, Verdict::Inconclusive) << level;
  }
  // One side off the ceiling or above chance: the task counts.
  R2Scheme s{"rotary",
             {pair("parity", {1.0, 1.0, 1.0}, {0.9, 0.9, 0.9}),
              pair("reverse", {0.5, 0.5, 0.5}, {0.6, 0.6, 0.6})}};
  for (R2Task& task : s.tasks) task.chance = 0.5;
  EXPECT_EQ(r2_effects(r2({s}))[0].gain.tasks, 2);
  // The ceiling is 0.98: one side just below it counts.
  R2Scheme below{"rotary",
                 {pair("parity", {0.979, 0.979, 0.979}, {0.99, 0.99, 0.99}),
                  pair("reverse", {0.99, 0.99, 0.99}, {0.979, 0.979, 0.979})}};
  EXPECT_EQ(r2_effects(r2({below}))[0].gain.tasks, 2);
}

TEST(PublishedVerdicts, R2InconclusiveWhenNoSchemeIsJudged) {
  // Randomized runs that did not learn leave every task out.
  R2Scheme s = scheme("rotary", 0.3);
  for (R2Task& t : s.tasks) t.randomized_learned = kTwoOfThreeLearned;
  const Judgement j = judge_r2(r2({s}));
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "not judged: rotary (tasks that count: 0, needed: 2)")) << j.because;
  // Too few tasks for min_tasks.
  R2Numbers n = r2({scheme("rotary", 0.3)});
  n.min_tasks = 3;
  EXPECT_EQ(judge_r2(n).verdict, Verdict::Inconclusive);
  n.min_tasks = 1;
  EXPECT_EQ(judge_r2(n).verdict, Verdict::Supported);
  EXPECT_EQ(judge_r2(r2({})).verdict, Verdict::Inconclusive);
}

// ---- R3 ----

// A scheme's three seeds around `mean` (±0.01).
R3Scores scores(const std::string& scheme, double mean, LearnedCount learned = kLearned) {
  return {scheme, learned, {mean - 0.01, mean, mean + 0.01}, {0, 1, 2}};
}

R3Numbers r3(std::vector<R3Task> tasks) {
  R3Numbers n;
  n.tasks = std::move(tasks);
  return n;
}

TEST(PublishedVerdicts, R3ComparesNoPEWithEachOtherScheme) {
  // NoPE at 0.30 against T5 0.42 (behind), ALiBi 0.30 (level), rotary 0.01 (ahead), and a
  // noisy sinusoidal whose seeds span 0.0 to 0.6 (unclear).
  R3Task copy{"copy",
              {scores("none", 0.30),
               scores("t5", 0.42),
               scores("alibi", 0.30),
               scores("rotary", 0.01),
               {"sinusoidal", kLearned, {0.0, 0.3, 0.6}, {0, 1, 2}}}};
  const std::vector<R3Comparison> c = r3_comparisons(r3({copy}));
  ASSERT_EQ(c.size(), 4u);  // the reference is not compared with itself
  EXPECT_EQ(c[0].other, "t5");
  EXPECT_EQ(c[0].standing, R3Standing::Behind);
  EXPECT_NEAR(c[0].difference.mean, -0.12, 1e-12);
  EXPECT_EQ(c[1].standing, R3Standing::Level);
  EXPECT_NEAR(c[1].difference.mean, 0.0, 1e-12);
  EXPECT_EQ(c[2].standing, R3Standing::Ahead);
  EXPECT_NEAR(c[2].difference.mean, 0.29, 1e-12);
  EXPECT_EQ(c[3].standing, R3Standing::Unclear);
  EXPECT_LT(c[3].difference.interval.low, -0.05);
  EXPECT_GT(c[3].difference.interval.high, 0.05);
  for (const R3Comparison& x : c) EXPECT_EQ(x.task, "copy");
  // A small deficit shown to lie within ±margin is level, not behind, though its interval
  // excludes 0: NoPE 0.30 against 0.32, each ±0.01 over seeds.
  const std::vector<R3Comparison> small =
      r3_comparisons(r3({{"copy", {scores("none", 0.30), scores("t5", 0.32)}}}));
  EXPECT_LT(small[0].difference.interval.high, 0);
  EXPECT_GT(small[0].difference.interval.low, -0.05);
  EXPECT_EQ(small[0].standing, R3Standing::Level);
  // The margin is the config's: at 0.001 the level pair is unclear.
  R3Numbers strict = r3({copy});
  strict.margin = 0.001;
  EXPECT_EQ(r3_comparisons(strict)[1].standing, R3Standing::Unclear);
  // The reference is the config's too.
  R3Numbers against_t5 = r3({copy});
  against_t5.reference = "t5";
  EXPECT_EQ(r3_comparisons(against_t5)[0].other, "none");
  EXPECT_EQ(r3_comparisons(against_t5)[0].standing, R3Standing::Ahead);
}

TEST(PublishedVerdicts, R3LeavesOutSchemesThatDidNotLearnAndSaturatedPairs) {
  R3Task copy{
      "copy",
      {scores("none", 0.30), scores("t5", 0.50, kTwoOfThreeLearned), scores("rotary", 0.01)}};
  std::vector<R3Comparison> c = r3_comparisons(r3({copy}));
  EXPECT_EQ(c[0].standing, R3Standing::NotJudged);
  EXPECT_EQ(c[0].left_out, "t5 learned it in distribution in 2 of 3 runs");
  EXPECT_EQ(c[1].standing, R3Standing::Ahead);
  // NoPE not learned: every comparison on the task is left out, naming NoPE.
  copy.schemes[0].learned = kTwoOfThreeLearned;
  c = r3_comparisons(r3({copy}));
  for (const R3Comparison& x : c) {
    EXPECT_EQ(x.standing, R3Standing::NotJudged);
    EXPECT_EQ(x.left_out, "none learned it in distribution in 2 of 3 runs");
  }
  const Judgement j = judge_r3(r3({copy}));
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "no comparison of none with another scheme counts")) << j.because;
  // Both at the floor or both at the ceiling: the pair cannot be ranked.
  for (const double level : {0.0, 0.02, 0.98, 1.0}) {
    const R3Task flat{
        "reverse",
        {{"none", kLearned, {level, level}, {0, 1}}, {"rotary", kLearned, {level, level}, {0, 1}}}};
    const std::vector<R3Comparison> x = r3_comparisons(r3({flat}));
    EXPECT_EQ(x[0].standing, R3Standing::NotJudged) << level;
    EXPECT_NE(x[0].left_out.find(level > 0.5 ? "both at the ceiling" : "both at the floor"),
              std::string::npos)
        << x[0].left_out;
    EXPECT_EQ(judge_r3(r3({flat})).verdict, Verdict::Inconclusive) << level;
  }
  // One side off the floor counts: NoPE at 0.03 against rotary at 0 is judged (level: the
  // difference lies within ±0.05), at 0.10 ahead.
  for (const auto& [nope, standing] :
       {std::pair{0.03, R3Standing::Level}, std::pair{0.10, R3Standing::Ahead}}) {
    const R3Task edge{
        "reverse",
        {{"none", kLearned, {nope, nope}, {0, 1}}, {"rotary", kLearned, {0, 0}, {0, 1}}}};
    EXPECT_EQ(r3_comparisons(r3({edge}))[0].standing, standing) << nope;
  }
  // A task without the reference: its comparisons say so.
  const R3Task missing{"reverse", {scores("rotary", 0.2)}};
  EXPECT_EQ(r3_comparisons(r3({missing}))[0].left_out, "none was not run");
}

TEST(PublishedVerdicts, R3SupportedRefutedMixedInconclusive) {
  const auto task = [](const std::string& name, std::vector<double> others) {
    R3Task t{name, {scores("none", 0.5)}};
    const char* names[] = {"t5", "alibi", "rotary", "sinusoidal"};
    for (size_t i = 0; i < others.size(); ++i) t.schemes.push_back(scores(names[i], others[i]));
    return t;
  };
  // Ahead or level everywhere, none behind.
  const Judgement supported = judge_r3(r3({task("copy", {0.5, 0.1, 0.0}), task("reverse", {0.2})}));
  EXPECT_EQ(supported.verdict, Verdict::Supported);
  EXPECT_TRUE(says(supported,
                   "of 4 comparisons that count (of 4) 3 ahead, 1 level (within ±0.05), 0 "
                   "behind, 0 unclear"))
      << supported.because;
  EXPECT_TRUE(says(supported, "copy level with t5 (+0.000")) << supported.because;
  // One behind forbids supported.
  EXPECT_EQ(judge_r3(r3({task("copy", {0.8, 0.1, 0.0})})).verdict, Verdict::Mixed);
  // Most behind, none ahead: refuted (level does not save it).
  EXPECT_EQ(judge_r3(r3({task("copy", {0.8, 0.9, 0.5})})).verdict, Verdict::Refuted);
  // Most behind but one ahead: mixed.
  EXPECT_EQ(judge_r3(r3({task("copy", {0.8, 0.9, 0.1})})).verdict, Verdict::Mixed);
  // Half behind is not most.
  EXPECT_EQ(judge_r3(r3({task("copy", {0.8, 0.5})})).verdict, Verdict::Mixed);
  // Most comparisons unclear: the noise decides, inconclusive.
  R3Task noisy = task("copy", {0.5});
  noisy.schemes.push_back({"alibi", kLearned, {0.1, 0.5, 0.9}, {0, 1, 2}});
  noisy.schemes.push_back({"rotary", kLearned, {0.2, 0.5, 0.8}, {0, 1, 2}});
  const Judgement j = judge_r3(r3({noisy}));
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "the noise is as large as the difference")) << j.because;
  EXPECT_EQ(judge_r3(r3({})).verdict, Verdict::Inconclusive);
}

// The verdict speaks of every scheme on both tasks: it needs more than half of all the
// comparisons, and one for each scheme, to count; and two seeds a side for an interval.
TEST(PublishedVerdicts, R3NeedsEnoughComparisonsAndSeeds) {
  const auto task = [](const std::string& name, LearnedCount rotary) {
    return R3Task{name,
                  {scores("none", 0.5), scores("t5", 0.1), scores("alibi", 0.1),
                   scores("rotary", 0.1, rotary)}};
  };
  // 6 comparisons; rotary's 2 left out: 4 of 6 count, but rotary has none.
  const Judgement no_rotary =
      judge_r3(r3({task("copy", kTwoOfThreeLearned), task("reverse", kTwoOfThreeLearned)}));
  EXPECT_EQ(no_rotary.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(no_rotary, "no comparison with rotary counts")) << no_rotary.because;
  EXPECT_EQ(judge_r3(r3({task("copy", kLearned), task("reverse", kTwoOfThreeLearned)})).verdict,
            Verdict::Supported);
  // Half counting is not enough.
  R3Task copy = task("copy", kLearned);
  R3Task reverse{
      "reverse",
      {scores("none", 0.5), scores("t5", 0.1, kTwoOfThreeLearned),
       scores("alibi", 0.1, kTwoOfThreeLearned), scores("rotary", 0.1, kTwoOfThreeLearned)}};
  const Judgement half = judge_r3(r3({copy, reverse}));
  EXPECT_EQ(half.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(half, "no more than half of the 6 comparisons count")) << half.because;
  // One seed a side: a point, not an interval; left out.
  const R3Task single{"copy",
                      {{"none", kLearned, {0.5}, {0}}, {"rotary", kLearned, {0.1, 0.1}, {0, 1}}}};
  const std::vector<R3Comparison> c = r3_comparisons(r3({single}));
  EXPECT_EQ(c[0].standing, R3Standing::NotJudged);
  EXPECT_EQ(c[0].left_out, "seeds: none 1, rotary 2; an interval needs 2 a side");
  R3Numbers one = r3({single});
  one.min_seeds = 1;
  EXPECT_EQ(r3_comparisons(one)[0].standing, R3Standing::Ahead);
}

// The rule on published means taken as exact: R3's own figures (configs/claims/r03.yaml) put
// NoPE behind T5 on copy, so the rule calls the paper's own numbers mixed.
TEST(PublishedVerdicts, R3RuleOnThePapersOwnFigures) {
  const YAML::Node config =
      YAML::LoadFile(std::string(PELAB_SOURCE_DIR) + "/studies/configs/claims/r03.yaml");
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, double>>>> means;
  for (const auto& task : config["settings"]["published"]) {
    means.push_back({task.first.as<std::string>(), {}});
    for (const auto& scheme : task.second)
      means.back().second.push_back(
          {scheme.first.as<std::string>(), scheme.second[0].as<double>()});
  }
  const double margin = config["settings"]["margin"].as<double>();
  const std::vector<R3PointComparison> c = r3_point_comparisons("none", means, margin);
  ASSERT_EQ(c.size(), 8u);
  const auto find = [&](const std::string& task, const std::string& other) {
    return *std::find_if(c.begin(), c.end(), [&](const R3PointComparison& x) {
      return x.task == task && x.other == other;
    });
  };
  EXPECT_EQ(find("copy", "t5").standing, R3Standing::Behind);
  EXPECT_NEAR(find("copy", "t5").difference, 0.305 - 0.420, 1e-12);
  EXPECT_EQ(find("copy", "alibi").standing, R3Standing::Level);
  EXPECT_EQ(find("copy", "rotary").standing, R3Standing::Ahead);
  EXPECT_EQ(find("reverse", "t5").standing, R3Standing::Level);
  EXPECT_EQ(r3_point_verdict(c), Verdict::Mixed);
  // Exactly at the margin is level; no figures, no verdict.
  EXPECT_EQ(
      r3_point_comparisons("none", {{"copy", {{"none", 0.30}, {"t5", 0.35}}}}, 0.05)[0].standing,
      R3Standing::Level);
  EXPECT_EQ(r3_point_verdict({}), Verdict::Inconclusive);
}

TEST(PublishedVerdicts, R3MeanReciprocalRankSharesTiedRanks) {
  // Seed 0: none 0.9 > t5 0.5 > rotary 0.0; seed 1: t5 0.6 > none 0.4 = rotary 0.4 (tied for
  // ranks 2 and 3: each gets (1/2 + 1/3) / 2).
  const R3Task copy{"copy",
                    {{"none", kLearned, {0.9, 0.4}, {0, 1}},
                     {"t5", kLearned, {0.5, 0.6}, {0, 1}},
                     {"rotary", kLearned, {0.0, 0.4}, {0, 1}}}};
  const double tied = (1.0 / 2 + 1.0 / 3) / 2;
  std::vector<std::pair<std::string, double>> mrr = mean_reciprocal_rank({copy});
  ASSERT_EQ(mrr.size(), 3u);
  EXPECT_EQ(mrr[0].first, "none");
  EXPECT_NEAR(mrr[0].second, (1.0 + tied) / 2, 1e-12);
  EXPECT_NEAR(mrr[1].second, (0.5 + 1.0) / 2, 1e-12);
  EXPECT_NEAR(mrr[2].second, (1.0 / 3 + tied) / 2, 1e-12);
  // Seeds are matched, not positions: the same scores listed in another seed order rank the
  // same. A seed some scheme lacks is not a query.
  R3Task shuffled = copy;
  shuffled.schemes[1] = {"t5", kLearned, {0.6, 0.5, 0.99}, {1, 0, 7}};
  mrr = mean_reciprocal_rank({shuffled});
  EXPECT_NEAR(mrr[0].second, (1.0 + tied) / 2, 1e-12);
  EXPECT_NEAR(mrr[1].second, (0.5 + 1.0) / 2, 1e-12);
  // All tied: every scheme gets the mean of 1, 1/2 and 1/3.
  const R3Task flat{"reverse",
                    {{"none", kLearned, {0.0}, {0}},
                     {"t5", kLearned, {0.0}, {0}},
                     {"rotary", kLearned, {0.0}, {0}}}};
  for (const auto& [scheme, value] : mean_reciprocal_rank({flat}))
    EXPECT_NEAR(value, (1.0 + 0.5 + 1.0 / 3) / 3, 1e-12) << scheme;
}

// ---- this round's rules ----

// R1's positive controls: tasks the paper's Transformer solves. "Not solved" on the claimed
// tasks counts only when every control is judged and solved; a solved task needs no control.
TEST(PublishedVerdicts, R1PositiveControlsGateEveryVerdictButRefuted) {
  const auto with_controls = [](std::vector<R1Task> tasks, std::vector<R1Task> controls) {
    R1Numbers n = r1(std::move(tasks));
    n.controls = std::move(controls);
    return n;
  };
  const std::vector<R1Task> unsolved = {r1_task("parity_check", 0.52), r1_task("odds_first", 0.60)};
  // Control: both controls solved, the claim's verdict stands and names them.
  const Judgement ok = judge_r1(
      with_controls(unsolved, {r1_task("even_pairs", 0.99), r1_task("bucket_sort", 0.93)}));
  EXPECT_EQ(ok.verdict, Verdict::Supported);
  EXPECT_TRUE(says(ok, "positive controls solved: even_pairs 0.990")) << ok.because;
  // One control below the line: not solved is no evidence, inconclusive.
  const Judgement weak = judge_r1(
      with_controls(unsolved, {r1_task("even_pairs", 0.99), r1_task("bucket_sort", 0.70)}));
  EXPECT_EQ(weak.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(weak, "a positive control is not solved")) << weak.because;
  EXPECT_TRUE(says(weak, "positive controls failed: bucket_sort 0.700")) << weak.because;
  // A control no scheme learned in distribution fails it too.
  const Judgement unlearned = judge_r1(
      with_controls(unsolved, {r1_task("even_pairs", 0.99), r1_task("bucket_sort", 0.99, false)}));
  EXPECT_EQ(unlearned.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(unlearned, "bucket_sort (no scheme learned it in distribution)"))
      << unlearned.because;
  // Mixed needs the controls as well (its unsolved half is no evidence without them).
  EXPECT_EQ(judge_r1(with_controls({r1_task("parity_check", 0.52), r1_task("odds_first", 0.97)},
                                   {r1_task("even_pairs", 0.50)}))
                .verdict,
            Verdict::Inconclusive);
  // Every claimed task solved refutes the claim whatever the controls.
  EXPECT_EQ(judge_r1(with_controls({r1_task("parity_check", 0.95), r1_task("odds_first", 0.97)},
                                   {r1_task("even_pairs", 0.50)}))
                .verdict,
            Verdict::Refuted);
  // Too few claimed tasks is inconclusive still, with the controls named.
  R1Numbers few = with_controls({r1_task("parity_check", 0.52)}, {r1_task("even_pairs", 0.99)});
  few.min_tasks = 2;
  const Judgement j = judge_r1(few);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "1 of 1 tasks judged")) << j.because;
  EXPECT_TRUE(says(j, "positive controls solved: even_pairs")) << j.because;
}

// R2: a scheme with fewer tasks that count than min_tasks is not judged, and the gain of each
// task that counts is named beside the reason, as a finding; a judged scheme has none.
TEST(PublishedVerdicts, R2NamesTheGainsOfTooFewTasksAsFindings) {
  R2Scheme one{"rotary", {pair("bucket_sort", {0.49, 0.50, 0.51}, {0.69, 0.70, 0.71})}};
  const Judgement j = judge_r2(r2({one}));
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j,
                   "rotary (tasks that count: 1, needed: 2; findings, randomized − plain: "
                   "bucket_sort +0.200 ["))
      << j.because;
  // None counts: no finding to name.
  R2Scheme none{"rotary", {pair("parity", {0.5, 0.5}, {0.5, 0.5}, kTwoOfThreeLearned)}};
  EXPECT_EQ(r2_effects(r2({none}))[0].not_judged, "tasks that count: 0, needed: 2");
  // Control: with two tasks that count the scheme is judged, without findings.
  const std::vector<R2SchemeResult> judged = r2_effects(r2({scheme("rotary", 0.2)}));
  EXPECT_EQ(judged[0].effect, R2Effect::Raised);
  EXPECT_TRUE(judged[0].not_judged.empty()) << judged[0].not_judged;
}

// R3: an unclear comparison whose point estimate already lies below −margin blocks
// "supported" (inconclusive instead); one whose estimate lies within the tolerance does not,
// and the rule leaves the other verdicts alone.
TEST(PublishedVerdicts, R3AnUnclearComparisonBeyondTheToleranceBlocksSupported) {
  // NoPE at 0.5 with ±0.01 seeds; alibi's seeds spread widely around `alibi`.
  const auto copy = [](double alibi) {
    return R3Task{"copy",
                  {scores("none", 0.5),
                   scores("t5", 0.5),
                   {"alibi", kLearned, {alibi - 0.3, alibi, alibi + 0.3}, {0, 1, 2}},
                   scores("rotary", 0.0),
                   scores("sinusoidal", 0.0)}};
  };
  // alibi at 0.562: NoPE − alibi −0.062 (the last round's copy), unclear.
  const Judgement blocked = judge_r3(r3({copy(0.562)}));
  const std::vector<R3Comparison> c = r3_comparisons(r3({copy(0.562)}));
  ASSERT_EQ(c[1].other, "alibi");
  ASSERT_EQ(c[1].standing, R3Standing::Unclear);
  EXPECT_NEAR(c[1].difference.mean, -0.062, 1e-12);
  EXPECT_EQ(blocked.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(blocked,
                   "point estimate lies beyond the tolerance -0.05 (copy against "
                   "alibi, -0.062)"))
      << blocked.because;
  // Control: the same spread with the estimate within the tolerance (−0.03) is supported.
  const Judgement within = judge_r3(r3({copy(0.53)}));
  EXPECT_EQ(r3_comparisons(r3({copy(0.53)}))[1].standing, R3Standing::Unclear);
  EXPECT_EQ(within.verdict, Verdict::Supported) << within.because;
  // The margin is the config's: at 0.1 the −0.062 estimate is within it.
  R3Numbers wide = r3({copy(0.562)});
  wide.margin = 0.1;
  EXPECT_EQ(judge_r3(wide).verdict, Verdict::Supported) << judge_r3(wide).because;
  // A verdict other than supported is left alone: with T5 behind it is mixed either way.
  R3Task behind = copy(0.562);
  behind.schemes[1] = scores("t5", 0.8);
  EXPECT_EQ(judge_r3(r3({behind})).verdict, Verdict::Mixed);
}

}  // namespace
}  // namespace pelab::claims
