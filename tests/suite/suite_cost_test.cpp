// A suite's cost model (pelab/suite/suite_cost.h): the weight of a token by the length it is
// read at, the padded batch, the scheme's step-time factor, evaluation's cost with attention
// and greedy generation, and the shipped model giving back the steps it was measured from.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/suite/suite.h"
#include "pelab/suite/suite_cost.h"

namespace pelab::testing {
namespace {

SuiteCost test_cost() {
  SuiteCost c;
  c.seconds_per_token = 1e-5;
  c.at_length = 40;
  c.step_time.base = "none";
  c.step_time.factors = {{"none", 1}, {"fire", 6}};
  return c;
}

// The survey's copy task under a few overrides, as one run.
ExperimentConfig copy_run(std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), {"sweep={}", "positional=none"});
  return load_experiment(PELAB_SOURCE_DIR "/configs/tasks/copy.yaml", overrides);
}

TEST(SuiteCost, ATokenWeighsOneAtTheMeasuredLengthAndMoreWhenLonger) {
  EXPECT_DOUBLE_EQ(token_weight(64, 256, 79, 79), 1);
  EXPECT_LT(token_weight(64, 256, 20, 79), 1);
  // At d_model 64 and d_ff 256 a token's linear work is 49152 multiply-adds a layer and its
  // attention 128 a key: at 1500 tokens attention is four times the linear part.
  EXPECT_NEAR(token_weight(64, 256, 1500, 0), (49152 + 128 * 1500) / 49152.0, 1e-12);
  // The control: a wider model's attention weighs less beside its linear work.
  EXPECT_LT(token_weight(256, 1024, 1500, 79), token_weight(64, 256, 1500, 79));
}

TEST(SuiteCost, ABatchIsPaddedToItsLongestExample) {
  EXPECT_NEAR(expected_longest(1, 40, 32), 39.2219, 1e-4);
  EXPECT_DOUBLE_EQ(expected_longest(7, 7, 32), 7);
  EXPECT_NEAR(expected_longest(1, 2, 1), 1.5, 1e-12);  // one example: the mean
  EXPECT_NEAR(expected_longest(1, 2, 2), 1.75, 1e-12);
}

// With per_batch sizes a step has no padding: its tokens are the mean over the sizes, fewer
// than a padded batch's (the control: per_example, padded to the longest).
TEST(SuiteCost, PerBatchSizesCostTheMeanSize) {
  const SuiteCost cost = test_cost();
  const RunCost padded = estimate_run(cost, copy_run({"task.min_length=8", "task.max_length=8"}));
  const RunCost one = estimate_run(cost, copy_run({"task.min_length=8", "task.max_length=8",
                                                   "training.length_sampling=per_batch"}));
  EXPECT_DOUBLE_EQ(one.training, padded.training);  // one size: nothing to pad
  const RunCost mixed = estimate_run(cost, copy_run({}));
  const RunCost per_batch = estimate_run(cost, copy_run({"training.length_sampling=per_batch"}));
  EXPECT_LT(per_batch.training, 0.8 * mixed.training);
  EXPECT_DOUBLE_EQ(per_batch.evaluation, mixed.evaluation);
}

// A scheme's step-time factor holds at the measured length; its extra over the base is per
// pair of tokens, so it grows with the length a token is read at.
TEST(SuiteCost, ASchemesFactorHoldsAtItsLengthAndItsExtraGrowsWithLength) {
  EXPECT_DOUBLE_EQ(token_cost(64, 256, 6, 79, 79), 6);
  EXPECT_DOUBLE_EQ(token_cost(64, 256, 1, 158, 79), token_weight(64, 256, 158, 79));
  EXPECT_DOUBLE_EQ(token_cost(64, 256, 6, 158, 79) - token_weight(64, 256, 158, 79), 10);
  const SuiteCost cost = test_cost();
  const RunCost none = estimate_run(cost, copy_run({}));
  const RunCost fire = estimate_run(cost, copy_run({"positional=fire"}));
  EXPECT_TRUE(none.step_time_known);
  EXPECT_TRUE(fire.step_time_known);
  EXPECT_EQ(fire.step_time, 6);
  const RunCost none_long = estimate_run(cost, copy_run({"evaluation.lengths=[64]"}));
  const RunCost fire_long =
      estimate_run(cost, copy_run({"positional=fire", "evaluation.lengths=[64]"}));
  const RunCost fire_short =
      estimate_run(cost, copy_run({"positional=fire", "evaluation.lengths=[4]"}));
  const RunCost none_short = estimate_run(cost, copy_run({"evaluation.lengths=[4]"}));
  EXPECT_GT(fire_long.evaluation / none_long.evaluation,
            fire_short.evaluation / none_short.evaluation);
  EXPECT_GT(fire.core_seconds, 2 * none.core_seconds);
  // A scheme without a factor is counted as the base, and said so.
  const RunCost rotary = estimate_run(cost, copy_run({"positional=rotary"}));
  EXPECT_FALSE(rotary.step_time_known);
  EXPECT_EQ(rotary.scheme, "rotary");
  EXPECT_DOUBLE_EQ(rotary.core_seconds, none.core_seconds);
  EXPECT_DOUBLE_EQ(none.core_seconds, none.training + none.evaluation + none.validation);
}

TEST(SuiteCost, TrainingCountsEveryStepAtTheCap) {
  const SuiteCost cost = test_cost();
  const RunCost a = estimate_run(cost, copy_run({"training.steps=100"}));
  const RunCost b = estimate_run(cost, copy_run({"training.steps=200"}));
  EXPECT_EQ(b.steps, 200);
  EXPECT_NEAR(b.training, 2 * a.training, 1e-9 * b.training);
  EXPECT_DOUBLE_EQ(b.evaluation, a.evaluation);
  EXPECT_NEAR(b.validation, 2 * a.validation, 1e-9 * b.validation);  // a check every 100
  // Without a criterion there are no checks.
  const RunCost off = estimate_run(cost, copy_run({"training.stop_when={}"}));
  EXPECT_EQ(off.validation, 0);
  EXPECT_GT(a.validation, 0);
}

TEST(SuiteCost, EvaluationGrowsFasterThanItsTokensAndGenerationRereadsThePrefix) {
  const SuiteCost cost = test_cost();
  const RunCost at16 = estimate_run(cost, copy_run({"evaluation.lengths=[16]"}));
  const RunCost at64 = estimate_run(cost, copy_run({"evaluation.lengths=[64]"}));
  // Copy's sequences are about 2n long: 4x the tokens, more than 4x the cost (attention).
  EXPECT_GT(at64.evaluation, 4 * at16.evaluation);
  EXPECT_LT(at64.evaluation, 6 * at16.evaluation);
  const RunCost examples =
      estimate_run(cost, copy_run({"evaluation.lengths=[16]", "evaluation.examples=400"}));
  EXPECT_NEAR(examples.evaluation, 2 * at16.evaluation, 1e-9 * examples.evaluation);
  // The lm layout generates the answer greedily, a pass over the prefix per answer token.
  const RunCost lm = estimate_run(cost, copy_run({"evaluation.lengths=[16]", "task.layout=lm"}));
  EXPECT_GT(lm.evaluation, 8 * at16.evaluation);
  // The control: validation is teacher-forced, one pass in either layout.
  EXPECT_DOUBLE_EQ(lm.validation, at16.validation);
  EXPECT_DOUBLE_EQ(lm.training, at16.training);
}

// chomsky's seconds_per_token and at_length are the step of `pelab bench --config deletang
// --scheme none` (its cost.measured): the model on that case gives that step back, 52.47 ms.
TEST(SuiteCost, ChomskysModelGivesBackTheStepItWasMeasuredOn) {
  set_config_search_path({PELAB_SOURCE_DIR "/configs"});
  const Suite chomsky = load_suite(PELAB_SOURCE_DIR "/configs/suites/chomsky.yaml");
  set_config_search_path({});
  // The bench's deletang case: pelab's reverse on a binary alphabet, lengths 1-40 drawn once
  // a batch, batch 32, Delétang et al.'s encoder (d_model 64, d_ff 256).
  const ExperimentConfig bench = load_experiment(
      PELAB_SOURCE_DIR "/configs/tasks/reverse.yaml",
      {"sweep={}", "positional=none", "model.d_model=64", "model.d_ff=256", "model.heads=8",
       "model.layers=5", "task.symbols=2", "task.min_length=1", "task.max_length=40",
       "training.batch_size=32", "training.steps=1000", "training.length_sampling=per_batch"});
  const RunCost cost = estimate_run(chomsky.cost, bench);
  EXPECT_NEAR(cost.training / 1000, 0.05247, 0.05247 * 0.03);
  EXPECT_EQ(chomsky.cost.step_time.base, "none");
  // FIRE's step on the same case: 73.08 ms, and the model above it by at most 12%: it charges
  // a scheme's extra per pair of tokens, and a step's one size varies about the mean 42, so
  // the longer steps weigh more than the shorter save (an upper bound, as the budget wants).
  ExperimentConfig fire = bench;
  fire.model.positional.type = "fire";
  const double fire_step = estimate_run(chomsky.cost, fire).training / 1000;
  EXPECT_GE(fire_step, 0.07308);
  EXPECT_LE(fire_step, 0.07308 * 1.12);
}

}  // namespace
}  // namespace pelab::testing
