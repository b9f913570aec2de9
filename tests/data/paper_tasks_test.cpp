// The tasks of other papers: flip_flop (Liu et al. 2023) and decimal_addition (Zhou et al. 2024,
// McLeish et al. 2024): hand-checked examples with their edge cases, the distributions their
// parameters set, malformed inputs refused, and their parameters' checks.
//
// Examples are written as printable symbols and labelled by the task's answer(), the code
// sample() uses after drawing the tokens (tasks::label).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "../../src/data/task_base.h"
#include "data/task_text.h"
#include "error_message.h"
#include "pelab/core/error.h"
#include "pelab/data/lm_layout.h"
#include "pelab/data/task.h"

namespace pelab {
namespace {

using testing::encode;
using testing::targets_of;

using testing::error_message;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- flip_flop --------------------------------------------------------------------------------

TEST(FlipFlop, ReadsScoreTheLastWrittenBit) {
  const auto t = make_task("flip_flop");
  EXPECT_EQ(t->info().input_symbols, (std::vector<std::string>{"w", "r", "i", "0", "1"}));
  EXPECT_TRUE(t->info().causal_only);
  // The target sits on the 'r' token (its next token is the bit); 'i' bits are noise.
  EXPECT_EQ(targets_of(*t, "w 1 i 0 r 1 w 0 i 1 r 0", 6), ". . . . 1 . . . . . 0 .");
  // The shortest sequence: one write, one read.
  EXPECT_EQ(targets_of(*t, "w 0 r 0", 2), ". . 0 .");
  // Reads in a row, and a write of the same bit again.
  EXPECT_EQ(targets_of(*t, "w 1 r 1 r 1 w 1 r 1", 5), ". . 1 . 1 . . . 1 .");
  // A read long after its write, past ignores of the other bit.
  EXPECT_EQ(targets_of(*t, "w 0 i 1 i 1 i 1 i 1 r 0", 6), ". . . . . . . . . . 0 .");
}

TEST(FlipFlop, MalformedSequencesAreRefused) {
  const auto t = make_task("flip_flop");
  EXPECT_TRUE(contains(error_message([&] { tasks::label(*t, encode(*t, "w 1 r 0"), 2); }),
                       "the bit after 'r' at position 2 is 0, but the last written bit is 1"));
  EXPECT_TRUE(contains(error_message([&] { tasks::label(*t, encode(*t, "r 1 w 1"), 2); }),
                       "'r' at position 0 before any 'w'"));
  EXPECT_TRUE(contains(error_message([&] { tasks::label(*t, encode(*t, "w r r 1"), 2); }),
                       "expected a bit at position 1"));
  EXPECT_TRUE(contains(error_message([&] { tasks::label(*t, encode(*t, "1 1 r 1"), 2); }),
                       "expected an instruction at position 0"));
  // One instruction cannot be both the first write and the last read.
  Generator rng(1);
  EXPECT_TRUE(contains(error_message([&] { t->sample(rng, 1); }), "minimum length 2"));
}

// The first instruction is 'w', the last 'r', the others drawn with p_w, p_r, p_i; the bits of
// writes are uniform.
TEST(FlipFlop, InstructionsFollowTheirProbabilities) {
  for (const auto& [pw, pr, pi] : {std::tuple{0.1, 0.1, 0.8}, std::tuple{0.3, 0.5, 0.2}}) {
    const auto t = make_task("flip_flop", {{"p_w", pw}, {"p_r", pr}, {"p_i", pi}});
    Generator rng(2023);
    std::map<int32_t, double> count;
    double interior = 0, written_ones = 0, writes = 0;
    for (int k = 0; k < 400; ++k) {
      const Example e = t->sample(rng, 50);
      ASSERT_EQ(e.tokens.front(), 0);                      // 'w'
      ASSERT_EQ(e.tokens[e.tokens.size() - 2], 1);         // 'r'
      ASSERT_NE(e.targets[e.tokens.size() - 2], kIgnore);  // the last read is scored
      for (size_t i = 0; i < e.tokens.size(); i += 2) {
        if (e.tokens[i] == 0) writes += 1, written_ones += e.tokens[i + 1] == 4;
        if (i == 0 || i + 2 == e.tokens.size()) continue;
        count[e.tokens[i]] += 1;
        interior += 1;
      }
    }
    EXPECT_NEAR(count[0] / interior, pw, 0.01) << "p_w";
    EXPECT_NEAR(count[1] / interior, pr, 0.01) << "p_r";
    EXPECT_NEAR(count[2] / interior, pi, 0.01) << "p_i";
    EXPECT_NEAR(written_ones / writes, 0.5, 0.03);
  }
  // Edge cases: no interior reads (only the last is scored), no interior writes.
  const auto no_reads = make_task("flip_flop", {{"p_w", 0.5}, {"p_r", 0.0}, {"p_i", 0.5}});
  const auto no_writes = make_task("flip_flop", {{"p_w", 0.0}, {"p_r", 0.5}, {"p_i", 0.5}});
  Generator rng(3);
  for (int k = 0; k < 50; ++k) {
    const Example e = no_reads->sample(rng, 20);
    EXPECT_EQ(std::count_if(e.targets.begin(), e.targets.end(), [](int32_t y) { return y >= 0; }),
              1);
    const Example f = no_writes->sample(rng, 20);
    EXPECT_EQ(std::count(f.tokens.begin(), f.tokens.end(), 0), 1);  // the first 'w' alone
  }
}

TEST(FlipFlop, ProbabilitiesAreChecked) {
  EXPECT_TRUE(contains(error_message([] {
                         make_task("flip_flop", {{"p_r", 1.5}});
                       }),
                       "task.p_r: must be in [0, 1], got 1.5"));
  EXPECT_TRUE(contains(error_message([] {
                         make_task("flip_flop", {{"p_i", 0.9}});
                       }),
                       "task.p_w + task.p_r + task.p_i must be 1, got 0.1 + 0.1 + 0.9 = 1"));
  // Control: a sum of 1 in other proportions is valid, within rounding.
  EXPECT_EQ(error_message([] {
              make_task("flip_flop", {{"p_w", 0.7}, {"p_r", 0.2}, {"p_i", 0.1}});
            }),
            testing::kNoError);
}

// ---- decimal_addition ---------------------------------------------------------------------------

TEST(DecimalAddition, SumsAreReversedWithoutAHighZero) {
  const auto t = make_task("decimal_addition");
  // 123 + 45 = 168, all least significant digit first.
  EXPECT_EQ(targets_of(*t, "3 2 1 + 5 4 = ? ? ?", 3), ". . . . . . . 8 6 1");
  // A carry through every digit into a new one: 99 + 1 = 100.
  EXPECT_EQ(targets_of(*t, "9 9 + 1 = ? ? ?", 2), ". . . . . 0 0 1");
  // The shorter operand first: 7 + 95 = 102.
  EXPECT_EQ(targets_of(*t, "7 + 5 9 = ? ? ?", 2), ". . . . . 2 0 1");
  // Single digits, zero included: 0 + 0 = 0 and 5 + 5 = 10.
  EXPECT_EQ(targets_of(*t, "0 + 0 = ?", 1), ". . . . 0");
  EXPECT_EQ(targets_of(*t, "5 + 5 = ? ?", 1), ". . . . 0 1");
}

TEST(DecimalAddition, MalformedExamplesAreRefused) {
  const auto t = make_task("decimal_addition");
  const auto label = [&](const std::string& text, int n) {
    return error_message([&] { tasks::label(*t, encode(*t, text), n); });
  };
  EXPECT_TRUE(contains(label("9 9 + 1 = ? ?", 2), "expected 3 query tokens"));
  EXPECT_TRUE(contains(label("1 0 + 1 = ? ?", 2), "operand a has a leading zero"));
  EXPECT_TRUE(contains(label("1 2 + 3 = ? ?", 3), "size 3 has a longer operand of 2 digits"));
  EXPECT_TRUE(contains(label("+ 3 = ?", 1), "operand a is empty"));
  EXPECT_TRUE(contains(label("1 2 = 3 + ? ?", 2), "expected a '+' b '='"));
  // Control: the same sum well formed.
  EXPECT_EQ(label("9 9 + 1 = ? ? ?", 2), testing::kNoError);
}

// Sampled sums agree with integer arithmetic; the longer operand has n digits; no operand has a
// leading zero.
TEST(DecimalAddition, SampledSumsMatchIntegers) {
  const auto t = make_task("decimal_addition");
  Generator rng(7);
  for (int n = 1; n <= 18; ++n) {
    for (int k = 0; k < 20; ++k) {
      const Example e = t->sample(rng, n);
      const auto plus = std::find(e.tokens.begin(), e.tokens.end(), 10);
      const auto equals = std::find(e.tokens.begin(), e.tokens.end(), 11);
      const auto number = [](auto from, auto to) {
        uint64_t v = 0, scale = 1;
        for (auto it = from; it != to; ++it, scale *= 10) v += static_cast<uint64_t>(*it) * scale;
        return v;
      };
      const int width_a = static_cast<int>(plus - e.tokens.begin());
      const int width_b = static_cast<int>(equals - plus - 1);
      ASSERT_EQ(std::max(width_a, width_b), n);
      // No leading zero: the last digit of a number of two digits or more is not 0.
      EXPECT_TRUE(width_a == 1 || *(plus - 1) != 0);
      EXPECT_TRUE(width_b == 1 || *(equals - 1) != 0);
      const size_t first = static_cast<size_t>(equals - e.tokens.begin()) + 1;
      std::vector<int32_t> sum(e.targets.begin() + first, e.targets.end());
      EXPECT_TRUE(sum.size() == 1 || sum.back() != 0) << "no high zero";
      EXPECT_EQ(number(sum.begin(), sum.end()),
                number(e.tokens.begin(), plus) + number(plus + 1, equals));
    }
  }
}

// At size n the width pairs are uniform over those within the ranges whose larger width is n.
TEST(DecimalAddition, WidthPairsAreUniform) {
  const auto count_pairs = [](const Task& t, int n) {
    Generator rng(11);
    std::map<std::pair<int, int>, double> freq;
    const int draws = 6000;
    for (int k = 0; k < draws; ++k) {
      const Example e = t.sample(rng, n);
      const auto plus = std::find(e.tokens.begin(), e.tokens.end(), 10);
      const auto equals = std::find(e.tokens.begin(), e.tokens.end(), 11);
      freq[{static_cast<int>(plus - e.tokens.begin()), static_cast<int>(equals - plus - 1)}] +=
          1.0 / draws;
    }
    return freq;
  };
  // Defaults, n = 3: (3,1) (3,2) (3,3) (1,3) (2,3).
  const auto freq = count_pairs(*make_task("decimal_addition"), 3);
  ASSERT_EQ(freq.size(), 5u);
  for (const auto& [pair, f] : freq) {
    EXPECT_EQ(std::max(pair.first, pair.second), 3);
    EXPECT_NEAR(f, 0.2, 0.02) << pair.first << "," << pair.second;
  }
  // b fixed at 2 digits, n = 4: only (4, 2); at n = 2: (1,2) and (2,2).
  const auto fixed_b = make_task("decimal_addition", {{"min_digits_b", 2}, {"max_digits_b", 2}});
  EXPECT_EQ(fixed_b->min_length(), 2);
  const auto at4 = count_pairs(*fixed_b, 4);
  ASSERT_EQ(at4.size(), 1u);
  EXPECT_EQ(at4.begin()->first, (std::pair<int, int>{4, 2}));
  const auto at2 = count_pairs(*fixed_b, 2);
  ASSERT_EQ(at2.size(), 2u);
  EXPECT_NEAR(at2.at({1, 2}), 0.5, 0.03);
}

TEST(DecimalAddition, DigitRangesAreChecked) {
  EXPECT_TRUE(contains(error_message([] {
                         make_task("decimal_addition", {{"min_digits_b", 4}, {"max_digits_b", 3}});
                       }),
                       "task.max_digits_b: must be >= task.min_digits_b = 4, got 3"));
  EXPECT_TRUE(contains(error_message([] {
                         make_task("decimal_addition", {{"min_digits_a", 0}});
                       }),
                       "task.min_digits_a: must be in [1, 1000], got 0"));
  // Sizes outside what the ranges allow: below the shortest longer operand, above the longest.
  const auto t = make_task(
      "decimal_addition",
      {{"min_digits_a", 3}, {"max_digits_a", 5}, {"min_digits_b", 2}, {"max_digits_b", 4}});
  EXPECT_EQ(t->min_length(), 3);
  EXPECT_EQ(t->check_evaluation_lengths({3, 5}), "");
  EXPECT_TRUE(contains(t->check_evaluation_lengths({3, 6}), "size 6 is above the longest"));
  Generator rng(1);
  EXPECT_TRUE(contains(error_message([&] { t->sample(rng, 6); }), "size 6 is above the longest"));
}

// In the lm layout the sum follows '=' as input tokens: each target is the next digit of the
// sum, '=' predicts its first, and its last predicts <end>.
TEST(DecimalAddition, LmLayoutFeedsTheSumBack) {
  TaskConfig c;
  c.name = "decimal_addition";
  c.layout = "lm";
  const auto lm = make_task(c);
  const auto native = make_task("decimal_addition");
  const Example e = to_lm_example(tasks::label(*native, encode(*native, "3 2 1 + 5 4 = ? ? ?"), 3),
                                  *lm->lm_vocabulary());
  EXPECT_EQ(e.tokens, encode(*native, "3 2 1 + 5 4 = 8 6 1"));
  std::string targets;
  for (int32_t y : e.targets)
    targets +=
        (targets.empty() ? "" : " ") + (y == kIgnore ? "." : lm->info().output_symbols.at(y));
  EXPECT_EQ(targets, ". . . . . . 8 6 1 <end>");
}

}  // namespace
}  // namespace pelab
