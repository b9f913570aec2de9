// Randomized positions at evaluation (positional.randomize): evaluated in the distribution of
// positions the model trained on, by default, averaged over several draws whose scores are
// kept; contiguous positions only with at_eval: false.
#include <gtest/gtest.h>

#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/nn/encoder.h"
#include "pelab/positional/scheme.h"
#include "pelab/run/evaluate.h"

namespace pelab {
namespace {

const char* kRandomizedConfig = R"(name: rnd
seed: 1
model: {d_model: 16, heads: 2, layers: 1}
positional:
  type: learned
  randomize: {max_position: 64}
task: {name: reverse, min_length: 2, max_length: 6}
training: {steps: 10, batch_size: 4, warmup: 1}
evaluation: {lengths: [3, 6], examples: 16}
)";

ExperimentConfig randomized_config(const std::vector<std::string>& overrides = {}) {
  return parse_experiment(kRandomizedConfig, "rnd.yaml", overrides, PELAB_SOURCE_DIR "/configs");
}

TEST(RandomizedEval, SampledPositionsAndFiveDrawsAreTheDefault) {
  const ExperimentConfig c = randomized_config();
  EXPECT_TRUE(c.randomize.at_eval);
  EXPECT_EQ(c.randomize.eval_draws, 5);
  const std::string yaml = to_yaml(c);
  EXPECT_NE(yaml.find("at_eval: true"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("eval_draws: 5"), std::string::npos) << yaml;
  // Without randomized positions, config.yaml says nothing of them (configs keep their text).
  EXPECT_EQ(to_yaml(randomized_config({"positional.randomize.max_position=0"})).find("eval_draws"),
            std::string::npos);
  EXPECT_THROW(randomized_config({"positional.randomize.eval_draws=0"}), Error);
}

TEST(RandomizedEval, ReportedScoresAreTheMeansOfTheDraws) {
  const ExperimentConfig c = randomized_config({"positional.randomize.eval_draws=3"});
  const Encoder model(c.model, make_scheme, c.seed);
  const auto task = make_task(c.task);
  const Evaluation e = evaluate(model, *task, c);
  ASSERT_EQ(e.by_length.size(), 2u);
  for (const LengthResult& r : e.by_length) {
    ASSERT_EQ(r.token_accuracy_draws.size(), 3u);
    ASSERT_EQ(r.sequence_accuracy_draws.size(), 3u);
    double token = 0, sequence = 0;
    for (int d = 0; d < 3; ++d) {
      token += r.token_accuracy_draws[d] / 3.0;
      sequence += r.sequence_accuracy_draws[d] / 3.0;
    }
    EXPECT_EQ(r.token_accuracy, token);
    EXPECT_EQ(r.sequence_accuracy, sequence);
  }
  // The same again: the draws are fixed by the evaluation seed and the length.
  const Evaluation again = evaluate(model, *task, c);
  EXPECT_EQ(again.by_length[1].token_accuracy_draws, e.by_length[1].token_accuracy_draws);
}

// With M equal to the sequence's length, the only sorted sample of n positions from [0, n) is
// 0..n-1: every draw is the contiguous evaluation, exactly.
TEST(RandomizedEval, DrawsOfTheWholeRangeAreTheContiguousEvaluation) {
  // Length 6 of reverse is 13 tokens; evaluate only it, with M = 13.
  const ExperimentConfig sampled =
      randomized_config({"evaluation.lengths=[6]", "positional.randomize.max_position=13"});
  const ExperimentConfig contiguous =
      randomized_config({"evaluation.lengths=[6]", "positional.randomize.max_position=13",
                         "positional.randomize.at_eval=false"});
  const Encoder model(sampled.model, make_scheme, sampled.seed);
  const auto task = make_task(sampled.task);
  const Evaluation a = evaluate(model, *task, sampled);
  const Evaluation b = evaluate(model, *task, contiguous);
  EXPECT_TRUE(b.by_length[0].token_accuracy_draws.empty());
  for (double draw : a.by_length[0].token_accuracy_draws)
    EXPECT_EQ(draw, b.by_length[0].token_accuracy);
  EXPECT_EQ(a.by_length[0].loss, b.by_length[0].loss);
}

// A model that reads positions scores differently at sampled positions than at 0..n-1, and
// differently from one draw to the next (an untrained learned table: every row differs).
TEST(RandomizedEval, SampledPositionsAreNotTheContiguousOnes) {
  const ExperimentConfig sampled = randomized_config({"evaluation.examples=64"});
  const ExperimentConfig contiguous =
      randomized_config({"evaluation.examples=64", "positional.randomize.at_eval=false"});
  const Encoder model(sampled.model, make_scheme, sampled.seed);
  const auto task = make_task(sampled.task);
  const Evaluation a = evaluate(model, *task, sampled);
  const Evaluation b = evaluate(model, *task, contiguous);
  EXPECT_NE(a.by_length[1].loss, b.by_length[1].loss);
}

}  // namespace
}  // namespace pelab
