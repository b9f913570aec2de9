// Positions from the task (task.position_ids: digit_runs, McLeish et al. 2024's Abacus): the
// exact positions of hand-checked examples, the training offset's range and reproducibility,
// evaluation without an offset, and what the config resolves from them.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "../../src/data/task_base.h"
#include "data/task_text.h"
#include "pelab/autograd/autograd.h"
#include "pelab/config/experiment.h"
#include "pelab/data/batching.h"
#include "pelab/data/position_ids.h"
#include "pelab/run/evaluate.h"
#include "pelab/run/trainer.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using testing::encode;

std::vector<int32_t> positions_of(const Task& task, const std::string& text, int64_t offset = 0) {
  return digit_run_positions(encode(task, text), digit_runs_of(task.info(), 0).is_digit, offset);
}

using Positions = std::vector<int32_t>;

TEST(DigitRuns, HandCheckedPositions) {
  const auto add = make_task("decimal_addition");
  // Each number's digits are numbered from 1 by significance; '+', '=' and '?' are 0.
  EXPECT_EQ(positions_of(*add, "3 2 1 + 5 4 = 8 6 1"), (Positions{1, 2, 3, 0, 1, 2, 0, 1, 2, 3}));
  EXPECT_EQ(positions_of(*add, "3 2 1 + 5 4 = ? ? ?"), (Positions{1, 2, 3, 0, 1, 2, 0, 0, 0, 0}));
  // An offset moves every digit's position, never a 0.
  EXPECT_EQ(positions_of(*add, "3 2 1 + 5 4 = 8 6 1", 5),
            (Positions{6, 7, 8, 0, 6, 7, 0, 6, 7, 8}));
  // Edge cases: a one-digit number, a sequence that is all digits, and one with none.
  EXPECT_EQ(positions_of(*add, "0 + 0 = 0"), (Positions{1, 0, 1, 0, 1}));
  EXPECT_EQ(positions_of(*add, "9 9 9 9"), (Positions{1, 2, 3, 4}));
  EXPECT_EQ(positions_of(*add, "+ = ? ?"), (Positions{0, 0, 0, 0}));
  // Only the single decimal digits count: flip_flop's bits do, its instructions do not.
  const auto ff = make_task("flip_flop");
  EXPECT_EQ(positions_of(*ff, "w 1 i 0 r 1"), (Positions{0, 1, 0, 1, 0, 1}));
  // Control: numbered by index, the same tokens would be 0..T-1.
  const Batch plain = collate({tasks::label(*add, encode(*add, "3 2 1 + 5 4 = ? ? ?"), 3)});
  EXPECT_EQ(plain.positions.values, (Positions{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

// collate numbers each example by its runs; the padding keeps its index.
TEST(DigitRuns, CollateNumbersEachExample) {
  const auto add = make_task("decimal_addition");
  const std::vector<Example> examples = {tasks::label(*add, encode(*add, "3 2 1 + 5 4 = ? ? ?"), 3),
                                         tasks::label(*add, encode(*add, "7 + 5 9 = ? ? ?"), 2)};
  const DigitRuns runs = digit_runs_of(add->info(), 0);
  const Batch batch = collate(examples, nullptr, nullptr, &runs);
  EXPECT_EQ(batch.positions.values, (Positions{1, 2, 3, 0, 1, 2, 0, 0, 0, 0,  //
                                               1, 0, 1, 2, 0, 0, 0, 0, 8, 9}));
}

// In training each example draws one offset in [0, offset_max] from the run's data stream:
// every value comes up, none outside, the same for a seed, and all of an example's digits
// move together.
TEST(DigitRuns, TrainingOffsetRangeAndReproducibility) {
  const auto add = make_task("decimal_addition");
  const Example e = tasks::label(*add, encode(*add, "3 2 1 + 5 4 = ? ? ?"), 3);
  const Positions base = positions_of(*add, "3 2 1 + 5 4 = ? ? ?");
  const DigitRuns runs = digit_runs_of(add->info(), 3);
  const auto offsets = [&](uint64_t seed) {
    Generator rng(seed);
    std::vector<int> drawn;
    for (int k = 0; k < 50; ++k) {
      const Batch b = collate({e, e}, nullptr, &rng, &runs);
      for (int row = 0; row < 2; ++row) {
        const int32_t* p = b.positions.values.data() + row * 10;
        const int offset = p[0] - base[0];
        for (int t = 0; t < 10; ++t)
          EXPECT_EQ(p[t], base[t] == 0 ? 0 : base[t] + offset) << "one offset per example";
        drawn.push_back(offset);
      }
    }
    return drawn;
  };
  const std::vector<int> a = offsets(5);
  EXPECT_EQ(std::set<int>(a.begin(), a.end()), (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(offsets(5), a);  // reproducible
  EXPECT_NE(offsets(6), a);  // control: another seed draws others
}

ExperimentConfig parse(const std::string& task_keys, const std::string& positional = "rotary",
                       int64_t offset_max = 0) {
  std::string text = testing::tiny_config("abacus", R"(training:
  steps: 4
  batch_size: 8
  warmup: 1
evaluation:
  lengths: [4, 8]
  examples: 8
)");
  const auto replace = [&](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("  name: shift\n  shift: 1\n", task_keys);
  replace("  type: rotary", "  type: " + positional);
  if (offset_max > 0)
    replace("  min_length: 1",
            fmt::format("  position_offset_max: {}\n  min_length: 1", offset_max));
  return parse_experiment(text, "x.yaml", {}, PELAB_SOURCE_DIR "/configs");
}

// The training stream numbers its batches by digit runs, with the offset drawn from the run's
// data stream (the same for a seed); evaluation takes the positions without it.
TEST(DigitRuns, TrainingStreamAndEvaluationSettings) {
  const ExperimentConfig c =
      parse("  name: decimal_addition\n  position_ids: digit_runs\n", "rotary", 20);
  const auto task = make_task(c.task);
  TrainingStream a(c, *task), b(c, *task);
  std::vector<Example> examples;
  const Batch batch = a.next(&examples);
  EXPECT_EQ(batch.positions.values, b.next().positions.values);
  const int64_t T = batch.length();
  bool offset_seen = false;
  for (size_t row = 0; row < examples.size(); ++row) {
    const DigitRuns runs = digit_runs_of(task->info(), 0);
    const Positions base = digit_run_positions(examples[row].tokens, runs.is_digit, 0);
    const int32_t offset = batch.positions.values[row * T] - base[0];
    EXPECT_GE(offset, 0);
    EXPECT_LE(offset, 20);
    offset_seen |= offset > 0;
    for (size_t t = 0; t < base.size(); ++t)
      EXPECT_EQ(batch.positions.values[row * T + t], base[t] == 0 ? 0 : base[t] + offset);
  }
  EXPECT_TRUE(offset_seen);
  EXPECT_EQ(evaluation_settings(c).position_ids, "digit_runs");
  EXPECT_EQ(c.task.position_offset_max, 20);
}

// Evaluation numbers the digit runs without the training offset: its loss is the model's on a
// batch numbered with offset 0, and (the control) not the loss of one numbered with an offset.
TEST(DigitRuns, EvaluationHasNoOffset) {
  const ExperimentConfig c =
      parse("  name: decimal_addition\n  position_ids: digit_runs\n", "learned", 20);
  const auto task = make_task(c.task);
  const std::unique_ptr<Encoder> model = initial_model(c);
  // Every parameter far from its small initial values, so that positions move the loss (at
  // initialisation the output is near uniform whatever the input).
  Generator fill(9);
  for (Tensor p : model->params().all())
    for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] = static_cast<float>(fill.normal());
  EvalSettings settings = evaluation_settings(c, {4});
  settings.examples = 8;
  settings.batch_size = 8;  // one batch: its mean loss is the evaluation's
  const Evaluation e = evaluate(*model, *task, settings);
  ASSERT_EQ(e.by_length.size(), 1u);
  const std::vector<Example> examples = evaluation_examples(*task, 4, 8, settings.seed);
  NoGradGuard no_grad;
  const DigitRuns plain = digit_runs_of(task->info(), 0), shifted = digit_runs_of(task->info(), 5);
  const double loss = model->forward(collate(examples, nullptr, nullptr, &plain)).loss.item();
  EXPECT_NEAR(e.by_length[0].loss, loss, 1e-5);
  Generator rng(1);
  const double moved = model->forward(collate(examples, nullptr, &rng, &shifted)).loss.item();
  EXPECT_GT(std::abs(moved - loss), 1e-3);
}

// A learned table must hold every position a run uses: with digit runs, up to the longest
// training sequence plus the offset.
TEST(DigitRuns, LearnedTableCoversTheOffset) {
  // Evaluated at 8: up to 27 tokens; trained to 8 digits (27 tokens) plus an offset of 100.
  const ExperimentConfig with =
      parse("  name: decimal_addition\n  position_ids: digit_runs\n", "learned", 100);
  EXPECT_EQ(with.model.positional.keys.integer("max_len"), 27 + 100 + 1);
  // Control: by index, the longest sequence.
  const ExperimentConfig without = parse("  name: decimal_addition\n", "learned");
  EXPECT_EQ(without.model.positional.keys.integer("max_len"), 27);
}

// config.yaml keeps the keys when they are chosen, and leaves them out at their default so
// that every earlier run's config keeps its text.
TEST(DigitRuns, ConfigYamlWritesTheKeysOnlyWhenChosen) {
  const std::string with =
      to_yaml(parse("  name: decimal_addition\n  position_ids: digit_runs\n", "rotary", 7));
  EXPECT_NE(with.find("position_ids: digit_runs"), std::string::npos) << with;
  EXPECT_NE(with.find("position_offset_max: 7"), std::string::npos) << with;
  const std::string without = to_yaml(parse("  name: decimal_addition\n"));
  EXPECT_EQ(without.find("position_ids"), std::string::npos) << without;
}

}  // namespace
}  // namespace pelab
