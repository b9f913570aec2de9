// The representability precondition (pelab/positional/representable.h, docs/model.md
// "Representability"): a clipped relative scheme at the boundary (k = the offset the answer
// needs) and with untrained rows (k past the longest training distance), T5 with buckets
// evaluation uses and training never reaches; each against the setting just inside, the
// control. Then the same from a run's config (pelab/report/representable.h).
#include "pelab/positional/representable.h"

#include <gtest/gtest.h>

#include <string>

#include "pelab/positional/functions.h"
#include "pelab/report/representable.h"

namespace pelab {
namespace {

PositionalConfig relative(int64_t k) {
  PositionalConfig p;
  p.type = "relative";
  p.keys.set("max_distance", k);
  return p;
}

PositionalConfig t5(int64_t num_buckets, int64_t max_distance) {
  PositionalConfig p;
  p.type = "t5";
  p.keys.set("num_buckets", num_buckets);
  p.keys.set("max_distance", max_distance);
  return p;
}

bool says(const std::string& problem, const std::string& text) {
  return problem.find(text) != std::string::npos;
}

TEST(Representable, RelativeAtTheOffsetCannotSingleItOut) {
  const PositionReach shift2{2, 15, 63};  // shift by 2, trained to 16 tokens, tested to 64
  const std::string at = representability_problem(relative(2), shift2);
  EXPECT_TRUE(says(at, "k = 2 does not exceed the offset the answer needs (2)")) << at;
  EXPECT_EQ(representability_problem(relative(3), shift2), "");  // the control: k = offset + 1
  EXPECT_NE(representability_problem(relative(1), shift2), "");
}

TEST(Representable, RelativeRowsPastTheLongestTrainingDistanceAreUntrained) {
  const PositionReach shift2{2, 15, 63};
  const std::string past = representability_problem(relative(16), shift2);
  EXPECT_TRUE(says(past, "k = 16 exceeds the longest distance training sees (15)")) << past;
  EXPECT_TRUE(says(past, "offsets 16 to 16 are never trained")) << past;
  EXPECT_EQ(representability_problem(relative(15), shift2), "");  // the control: k = L
  // Rows past L are harmless where evaluation never reaches past L either.
  EXPECT_EQ(representability_problem(relative(32), {2, 15, 15}), "");
}

TEST(Representable, RelativeWithoutAFixedOffsetChecksTheRowsOnly) {
  EXPECT_EQ(representability_problem(relative(1), {0, 15, 63}), "");
  EXPECT_NE(representability_problem(relative(32), {0, 15, 63}), "");
}

TEST(Representable, T5BucketsTrainingNeverReaches) {
  // 32 buckets to 128: trained to distance 15 (bucket 9), tested to 63 (bucket 13).
  ASSERT_EQ(t5_bucket(-15, 32, 128), 9);
  ASSERT_EQ(t5_bucket(-63, 32, 128), 13);
  const std::string unreached = representability_problem(t5(32, 128), {2, 15, 63});
  EXPECT_TRUE(says(unreached, "buckets 10 to 13 of each sign are used at evaluation")) << unreached;
  // The control: with max_distance 16 every distance from 15 on shares the last bucket, which
  // training reaches.
  ASSERT_EQ(t5_bucket(-15, 32, 16), t5_bucket(-63, 32, 16));
  EXPECT_EQ(representability_problem(t5(32, 16), {2, 15, 63}), "");
  // And no bucket is unreached when evaluation stays within training's distances.
  EXPECT_EQ(representability_problem(t5(32, 128), {2, 15, 15}), "");
}

TEST(Representable, OtherSchemesHaveNothingClippedOrBucketed) {
  PositionalConfig rotary;
  rotary.type = "rotary";
  EXPECT_EQ(representability_problem(rotary, {2, 15, 1000}), "");
}

ExperimentConfig run_config(const std::string& task, const std::string& positional) {
  return parse_experiment("task: " + task + "\npositional: " + positional +
                              "\nmodel: {causal: true}\nevaluation: {lengths: [8, 16, 64]}\n",
                          "run.yaml", {}, PELAB_SOURCE_DIR "/configs");
}

TEST(Representable, FromARunsConfig) {
  // shift by 2 on sizes 1-16: 16 tokens, longest training distance 15; tested to 64.
  const std::string shift = "{name: shift, shift: 2, min_length: 1, max_length: 16}";
  const PositionReach reach = position_reach(run_config(shift, "rotary"));
  EXPECT_EQ(reach.answer_offset, 2);
  EXPECT_EQ(reach.longest_training_distance, 15);
  EXPECT_EQ(reach.longest_evaluation_distance, 63);
  EXPECT_NE(representability_problem(run_config(shift, "{type: relative, max_distance: 2}")), "");
  EXPECT_EQ(representability_problem(run_config(shift, "{type: relative, max_distance: 3}")), "");
  const ExperimentConfig k16 = run_config(shift, "{type: relative, max_distance: 16}");
  EXPECT_NE(representability_problem(k16), "");
  // In distribution the evaluation stays within training's distances: no untrained row is used.
  EXPECT_EQ(representability_problem_in_distribution(k16), "");
  EXPECT_NE(representability_problem_in_distribution(
                run_config(shift, "{type: relative, max_distance: 2}")),
            "");
  // long_range declares its distance D; the marker adds a token (n + 1 tokens).
  const std::string long_range = "{name: long_range, distance: 8, min_length: 8, max_length: 16}";
  const PositionReach lr = position_reach(run_config(long_range, "rotary"));
  EXPECT_EQ(lr.answer_offset, 8);
  EXPECT_EQ(lr.longest_training_distance, 16);
  EXPECT_NE(representability_problem(run_config(long_range, "{type: relative, max_distance: 8}")),
            "");
  EXPECT_EQ(representability_problem(run_config(long_range, "{type: relative, max_distance: 9}")),
            "");
  // Randomized positions reach M - 1 in training and (by default) in evaluation.
  ExperimentConfig randomized = run_config(shift, "{type: relative, max_distance: 16}");
  randomized.randomize.max_position = 128;
  EXPECT_EQ(position_reach(randomized).longest_training_distance, 127);
  EXPECT_EQ(representability_problem(randomized), "");
}

}  // namespace
}  // namespace pelab
