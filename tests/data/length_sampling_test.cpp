// training.length_sampling: per_batch draws one size for a whole batch (Delétang et al.'s
// training loop), per_example (the default) one per example; both from the seeded stream.
#include <gtest/gtest.h>

#include <set>

#include "pelab/config/experiment.h"
#include "pelab/data/batching.h"
#include "pelab/data/task.h"
#include "pelab/run/trainer.h"
#include "pelab_process.h"

namespace pelab {
namespace {

ExperimentConfig config_with(const std::string& sampling) {
  std::string training = "training:\n  steps: 4\n  batch_size: 16\n  warmup: 1\n";
  if (!sampling.empty()) training += "  length_sampling: " + sampling + "\n";
  return parse_experiment(testing::tiny_config("sizes", training), "x.yaml", {},
                          PELAB_SOURCE_DIR "/configs");
}

// Every example of a per_batch batch has one length; over 40 batches the sizes cover the
// range (1..8 here). The control: per_example batches mix lengths.
TEST(LengthSampling, PerBatchGivesOneSizePerBatchAndCoversTheRange) {
  const ExperimentConfig c = config_with("per_batch");
  ASSERT_EQ(c.training.length_sampling, "per_batch");
  const auto task = make_task(c.task);
  TrainingStream stream(c, *task), again(c, *task);
  std::set<size_t> sizes;
  for (int step = 0; step < 40; ++step) {
    std::vector<Example> examples;
    const Batch batch = stream.next(&examples);
    EXPECT_EQ(batch.tokens.values, again.next().tokens.values);  // the seed decides it all
    for (const Example& e : examples) EXPECT_EQ(e.tokens.size(), examples[0].tokens.size());
    sizes.insert(examples[0].tokens.size());
  }
  EXPECT_GE(sizes.size(), 6u);

  const ExperimentConfig mixed = config_with("");
  EXPECT_EQ(mixed.training.length_sampling, "per_example");
  TrainingStream per_example(mixed, *task);
  std::vector<Example> examples;
  per_example.next(&examples);
  std::set<size_t> lengths;
  for (const Example& e : examples) lengths.insert(e.tokens.size());
  EXPECT_GT(lengths.size(), 1u);
}

// The key is written into a run's config only when chosen, so configs without it keep their
// text (and their run names).
TEST(LengthSampling, ConfigYamlWritesTheKeyOnlyWhenChosen) {
  EXPECT_NE(to_yaml(config_with("per_batch")).find("length_sampling: per_batch"),
            std::string::npos);
  EXPECT_EQ(to_yaml(config_with("")).find("length_sampling"), std::string::npos);
}

}  // namespace
}  // namespace pelab
