// Delétang et al. 2023's tasks ("Neural Networks and the Chomsky Hierarchy"), as their
// generators draw them: their layout (input, then blanks), hand-checked examples (their own
// docstring examples where they have them, and the edge cases their code handles), the sampled
// distributions that their code fixes, and determinism for a seed.
//
// The examples are written as printable symbols and labelled by the task's answer(), the code
// sample() uses after drawing the tokens (tasks::label).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "../../src/data/task_base.h"
#include "data/symbols.h"
#include "pelab/core/error.h"
#include "pelab/data/task.h"

namespace pelab {
namespace {

// ---- helpers -------------------------------------------------------------------------------

std::vector<int32_t> encode(const Task& task, const std::string& text) {
  return testing::ids_of(task.info().input_symbols, text);
}

// The targets the task gives for `text` at problem size n, as printable output symbols, '.'
// for kIgnore.
std::string targets_of(const Task& task, const std::string& text, int n) {
  const Example e = tasks::label(task, encode(task, text), n);
  std::string out;
  for (int32_t t : e.targets) {
    if (!out.empty()) out += ' ';
    out += t == kIgnore ? "." : task.info().output_symbols.at(t);
  }
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::vector<std::string> kDeletangTasks = {"even_pairs_deletang",
                                                 "modular_arithmetic_deletang"};

// ---- their layout ----------------------------------------------------------------------------

// Their model input (experiments/utils.py, make_model_with_empty_targets, with no computation
// steps): one-hot inputs of width input_size, then output_length blanks, each the one-hot of
// id input_size. So the blank is the last input id, the input ids are theirs below it, and
// the output classes are theirs: the widths are their input_size and output_size.
TEST(DeletangLayout, VocabulariesAreTheirsWithTheBlankLast) {
  const std::map<std::string, std::pair<int, int>> theirs = {
      // name: {input_size, output_size}
      {"parity", {2, 2}},  // their parity_check
      {"cycle_navigation", {3, 5}},
      {"even_pairs_deletang", {2, 2}},
      {"modular_arithmetic_deletang", {9, 5}},
  };
  for (const auto& [name, sizes] : theirs) {
    const auto task = make_task(name);
    EXPECT_EQ(task->info().vocab_in(), sizes.first + 1) << name;
    EXPECT_EQ(task->info().input_symbols.back(), "?") << name;
    EXPECT_EQ(task->info().vocab_out(), sizes.second) << name;
  }
}

// The blanks follow the input directly (no separator), as many as their output_length, and
// only they are scored.
TEST(DeletangLayout, BlanksFollowTheInputWithNoSeparator) {
  const std::map<std::string, std::function<int(int)>> output_length = {
      {"even_pairs_deletang", [](int) { return 1; }},
  };
  for (const auto& [name, blanks] : output_length) {
    const auto task = make_task(name);
    const int32_t blank = task->info().vocab_in() - 1;
    Generator rng(5);
    for (int n = 1; n <= 20; ++n) {
      const Example e = task->sample(rng, n);
      ASSERT_EQ(static_cast<int>(e.tokens.size()), n + blanks(n)) << name << " n=" << n;
      for (int i = 0; i < n; ++i) {
        EXPECT_LT(e.tokens[i], blank) << name;
        EXPECT_EQ(e.targets[i], kIgnore) << name;
      }
      for (int i = n; i < n + blanks(n); ++i) EXPECT_EQ(e.tokens[i], blank) << name;
      EXPECT_NE(e.targets[n], kIgnore) << name << ": the first blank is always scored";
    }
  }
}

TEST(DeletangLayout, SameSeedSameExamples) {
  for (const std::string& name : kDeletangTasks) {
    const auto task = make_task(name);
    Generator a(77), b(77);
    for (int n = 1; n <= 24; ++n) {
      const Example x = task->sample(a, n), y = task->sample(b, n);
      EXPECT_EQ(x.tokens, y.tokens) << name << " n=" << n;
      EXPECT_EQ(x.targets, y.targets) << name << " n=" << n;
    }
  }
}

// ---- regular -----------------------------------------------------------------------------------

// Their parity_check and cycle_navigation are pelab's parity and cycle_navigation: the same
// alphabets and ids, one blank ('?') read for the label, the same classes. Their docstring
// examples:
TEST(DeletangRegular, ParityCheckIsPelabsParity) {
  const auto t = make_task("parity");
  EXPECT_EQ(targets_of(*t, "1 0 1 0 1 0 0 ?", 7), ". . . . . . . odd");  // three 1s: class 1
  EXPECT_EQ(targets_of(*t, "0 1 1 1 1 ?", 5), ". . . . . even");         // four 1s: class 0
  EXPECT_EQ(t->info().output_symbols, (std::vector<std::string>{"even", "odd"}));
}

TEST(DeletangRegular, CycleNavigationIsPelabs) {
  const auto t = make_task("cycle_navigation");
  // Their ids 0, 1, 2 are the moves -1, 0, +1 (their code sums action - 1).
  EXPECT_EQ(t->info().input_symbols, (std::vector<std::string>{"-1", "0", "+1", "?"}));
  EXPECT_EQ(targets_of(*t, "+1 -1 0 -1 -1 ?", 5), ". . . . . 3");  // -2 = class 3
  EXPECT_EQ(targets_of(*t, "+1 +1 +1 -1 ?", 4), ". . . . 2");
}

TEST(DeletangRegular, EvenPairs) {
  const auto t = make_task("even_pairs_deletang");
  EXPECT_EQ(targets_of(*t, "0 0 1 1 1 0 ?", 6), ". . . . . . even");     // one 01, one 10
  EXPECT_EQ(targets_of(*t, "0 1 0 1 0 0 1 ?", 7), ". . . . . . . odd");  // their "class 1"
  EXPECT_EQ(targets_of(*t, "1 ?", 1), ". even");  // size 1: no pairs, class 0
  EXPECT_EQ(t->min_length(), 1);
  // pelab's even_pairs labels the same string the other way round ('true' is class 1).
  const auto pelabs = make_task("even_pairs");
  EXPECT_EQ(tasks::label(*pelabs, encode(*pelabs, "a a b b b a ?"), 6).targets.back(), 1);
  EXPECT_EQ(tasks::label(*t, encode(*t, "0 0 1 1 1 0 ?"), 6).targets.back(), 0);
}

TEST(DeletangRegular, ModularArithmetic) {
  const auto t = make_task("modular_arithmetic_deletang");
  // Their docstring examples, mod 5.
  EXPECT_EQ(targets_of(*t, "1 + 2 * 3 ?", 5), ". . . . . 2");                  // 7
  EXPECT_EQ(targets_of(*t, "1 - 1 - 1 ?", 5), ". . . . . 4");                  // -1
  EXPECT_EQ(targets_of(*t, "0 * 1 + 4 * 3 - 2 ?", 9), ". . . . . . . . . 0");  // 10
  EXPECT_EQ(targets_of(*t, "2 - 3 * 4 ?", 5), ". . . . . 0");                  // 2 - 12
  EXPECT_EQ(targets_of(*t, "3 ?", 1), ". 3");
  // An even size is lowered to the odd size below it.
  EXPECT_EQ(t->sequence_length(4), 4);
  EXPECT_EQ(t->sequence_length(3), 4);
  EXPECT_EQ(targets_of(*t, "4 * 4 ?", 4), ". . . 1");
  EXPECT_EQ(targets_of(*t, "3 ?", 2), ". 3");
  // '_' is in their vocabulary but never drawn, and not an operator here.
  EXPECT_NE(error_of([&] { targets_of(*t, "1 _ 2 ?", 3); }).find("expected an operator"),
            std::string::npos);
  Generator rng(2);
  for (int k = 0; k < 500; ++k) {
    const Example e = t->sample(rng, 41);
    EXPECT_EQ(std::count(e.tokens.begin(), e.tokens.end(), 8), 0);
  }
}

TEST(DeletangRegular, ModularArithmeticOperatorsAreUniform) {
  const auto t = make_task("modular_arithmetic_deletang");
  std::map<int32_t, double> seen;
  Generator rng(3);
  for (int k = 0; k < 1000; ++k) {
    const Example e = t->sample(rng, 21);
    for (int i = 1; i < 21; i += 2) seen[e.tokens[i]] += 1.0 / 10000;
  }
  ASSERT_EQ(seen.size(), 3u);  // '+', '-', '*'
  for (const auto& [op, f] : seen) EXPECT_NEAR(f, 1.0 / 3, 0.02) << op;
}

}  // namespace
}  // namespace pelab
