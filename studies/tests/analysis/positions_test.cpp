// Training counts per position (an exact replay of the training stream) and the subspace
// overlap of C16.
#include "pelab/analysis/positions.h"

#include <gtest/gtest.h>

#include "nn/model_util.h"
#include "pelab/analysis/encoding.h"
#include "pelab/positional/scheme.h"
#include "pelab/run/trainer.h"

namespace pelab {
namespace {

using testing::tiny_config;

ExperimentConfig small_experiment() {
  ExperimentConfig c = parse_experiment(
      "name: t\nseed: 3\nmodel: {d_model: 16, heads: 2, layers: 1}\npositional: {type: "
      "sinusoidal}\ntask: {name: shift, min_length: 2, max_length: 6}\ntraining: {steps: 5, "
      "warmup: 1, "
      "batch_size: 4}\nevaluation: {lengths: [4, 8], examples: 5}\n",
      "test.yaml", {}, "configs");
  return c;
}

TEST(TrainingPositionCounts, ReplayTheTrainingStream) {
  const ExperimentConfig c = small_experiment();
  const std::unique_ptr<Task> task = make_task(c.task);
  const std::vector<PositionCount> counts = training_position_counts(c, *task, c.training.steps);
  // The same stream drawn again by hand.
  TrainingStream stream(c, *task);
  std::vector<int64_t> present(8, 0);
  for (int64_t s = 0; s < c.training.steps; ++s) {
    std::vector<Example> examples;
    stream.next(&examples);
    for (const Example& e : examples)
      for (size_t p = 0; p < e.tokens.size(); ++p) ++present[p];
  }
  ASSERT_EQ(counts.size(), 6u);  // lengths 2..6 reach positions 0..5
  for (const PositionCount& pc : counts) {
    EXPECT_EQ(pc.present, present[static_cast<size_t>(pc.position)]) << pc.position;
    EXPECT_EQ(pc.scored, pc.present);  // shift scores every position
  }
  EXPECT_EQ(counts[0].present, 5 * 4);  // every sequence has a position 0
  EXPECT_EQ(counts[1].present, 5 * 4);  // and 1 (lengths ≥ 2)
  EXPECT_LT(counts[5].present, counts[0].present);
  // A run that training.stop_when ended after 2 steps saw only their batches.
  const std::vector<PositionCount> stopped = training_position_counts(c, *task, 2);
  EXPECT_EQ(stopped[0].present, 2 * 4);
}

TEST(SubspaceOverlap, TokensInsideTheEncodingSpanAndRandomTokens) {
  ModelConfig c = tiny_config("sinusoidal", 32, 2, 1);
  Encoder model(c, make_scheme, 1);
  // Random N(0, 0.02²)-initialised token rows: about `chance` of the encoding's energy.
  const std::optional<SubspaceOverlap> random = subspace_overlap(model, 64);
  ASSERT_TRUE(random.has_value());
  EXPECT_EQ(random->token_rank, 9);  // vocab_in rows in general position
  EXPECT_NEAR(random->position_in_tokens_chance, 9.0 / 32.0, 1e-12);
  EXPECT_NEAR(random->position_in_tokens, random->position_in_tokens_chance, 0.12);
  // Token rows made of the encoding's own rows: all of their energy is in P's span.
  const Matrix P = absolute_encoding(model, 64);
  Tensor embed = model.params().get("embed.weight");
  for (int64_t v = 0; v < 9; ++v)
    for (int64_t col = 0; col < 32; ++col)
      embed.data()[v * 32 + col] = static_cast<float>(P.at(3 * v, col));
  const std::optional<SubspaceOverlap> inside = subspace_overlap(model, 64, 1.0);
  ASSERT_TRUE(inside.has_value());
  EXPECT_GT(inside->tokens_in_position, 0.999);
}

TEST(SubspaceOverlap, NotDefinedWhenConcatenatingOrWithoutAnEncoding) {
  ModelConfig c = tiny_config("sinusoidal", 16);
  c.positional.keys.set("combine", "concat");
  c.positional.keys.set("dim", int64_t{4});
  EXPECT_FALSE(subspace_overlap(Encoder(c, make_scheme, 1), 8).has_value());
  EXPECT_FALSE(subspace_overlap(Encoder(tiny_config("rotary", 16), make_scheme, 1), 8).has_value());
}

}  // namespace
}  // namespace pelab
