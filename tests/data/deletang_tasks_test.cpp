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
#include "../../src/data/tasks/binary_numbers.h"
#include "../../src/data/tasks/bracket_expressions.h"
#include "data/task_text.h"
#include "error_message.h"
#include "pelab/core/error.h"
#include "pelab/data/task.h"

namespace pelab {
namespace {

using testing::encode;
using testing::targets_of;

using testing::error_message;

// ---- helpers -------------------------------------------------------------------------------

// The tokens of an example as printable symbols.
std::string render(const Task& task, const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : " ") + task.info().input_symbols.at(id);
  return out;
}

// How often each value of f(example) comes up in `count` examples of size n.
std::map<int, double> frequencies(const Task& task, int n, int count,
                                  const std::function<int(const Example&)>& f) {
  Generator rng(2023);
  std::map<int, double> freq;
  for (int k = 0; k < count; ++k) freq[f(task.sample(rng, n))] += 1.0 / count;
  return freq;
}

// The index of the first token with id `id`, or -1.
int index_of(const Example& e, int32_t id) {
  const auto it = std::find(e.tokens.begin(), e.tokens.end(), id);
  return it == e.tokens.end() ? -1 : static_cast<int>(it - e.tokens.begin());
}

const std::vector<std::string> kDeletangTasks = {"even_pairs_deletang",
                                                 "modular_arithmetic_deletang",
                                                 "modular_arithmetic_brackets",
                                                 "reverse_string",
                                                 "solve_equation",
                                                 "stack_manipulation",
                                                 "binary_addition_deletang",
                                                 "binary_multiplication",
                                                 "bucket_sort",
                                                 "compute_sqrt",
                                                 "duplicate_string",
                                                 "missing_duplicate_string",
                                                 "odds_first_deletang"};

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
      {"modular_arithmetic_brackets", {11, 5}},
      {"reverse_string", {2, 2}},
      {"solve_equation", {11, 5}},
      {"stack_manipulation", {5, 3}},
      {"binary_addition_deletang", {3, 3}},
      {"binary_multiplication", {3, 3}},
      {"bucket_sort", {5, 5}},
      {"compute_sqrt", {2, 2}},
      {"duplicate_string", {2, 2}},
      {"missing_duplicate_string", {4, 2}},
      {"odds_first_deletang", {2, 2}},
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
      {"reverse_string", [](int n) { return n; }},
      {"stack_manipulation", [](int n) { return n + 1; }},
      {"binary_addition_deletang", [](int n) { return n + 1; }},
      {"binary_multiplication", [](int n) { return n; }},
      {"compute_sqrt", [](int n) { return (n + 1) / 2; }},
      {"duplicate_string", [](int n) { return 2 * n; }},
      {"solve_equation", [](int) { return 1; }},
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

// The terminator closes the scored answer; the blanks after it are unscored (their accuracy
// mask), whatever their padding.
TEST(DeletangLayout, NothingIsScoredAfterTheTerminator) {
  for (const std::string name :
       {"stack_manipulation", "binary_addition_deletang", "binary_multiplication"}) {
    const auto task = make_task(name);
    const int32_t terminator = 2;
    ASSERT_EQ(task->info().output_symbols[terminator], tasks::kTerminatorSymbol);
    Generator rng(8);
    for (int n = 1; n <= 30; ++n) {
      const Example e = task->sample(rng, n);
      const auto end = std::find(e.targets.begin() + n, e.targets.end(), terminator);
      ASSERT_NE(end, e.targets.end()) << name << " n=" << n;
      EXPECT_TRUE(std::none_of(e.targets.begin() + n, end, [](int32_t y) { return y < 0; }));
      EXPECT_TRUE(std::all_of(end + 1, e.targets.end(), [](int32_t y) { return y == kIgnore; }));
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
  EXPECT_NE(error_message([&] { targets_of(*t, "1 _ 2 ?", 3); }).find("expected an operator"),
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

// ---- deterministic context-free ----------------------------------------------------------------

TEST(DeletangContextFree, StackManipulation) {
  const auto t = make_task("stack_manipulation");
  // Their docstring examples: the stack bottom to top, then the actions; the final stack top
  // to bottom, the terminator, and unscored padding to n+1 slots.
  EXPECT_EQ(targets_of(*t, "0 1 1 0 push1 pop pop ? ? ? ? ? ? ? ?", 7),
            ". . . . . . . 1 1 0 $ . . . .");
  EXPECT_EQ(targets_of(*t, "1 1 0 pop pop pop ? ? ? ? ? ? ?", 6), ". . . . . . $ . . . . . .");
  // A pop on an empty stack does nothing.
  EXPECT_EQ(targets_of(*t, "1 pop pop push0 ? ? ? ? ?", 4), ". . . . 0 $ . . .");
  // Size 1: one bit, no action; the stack is that bit.
  EXPECT_EQ(targets_of(*t, "1 ? ?", 1), ". 1 $");
  EXPECT_EQ(targets_of(*t, "0 ? ?", 1), ". 0 $");
  // The longest answer: every action pushes, and the terminator takes the last slot.
  EXPECT_EQ(targets_of(*t, "1 push0 push1 ? ? ? ?", 3), ". . . 1 0 1 $");
  EXPECT_NE(error_message([&] { targets_of(*t, "pop 1 ? ? ?", 2); }).find("starts with an action"),
            std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*t, "1 pop 1 ? ? ? ?", 3); }).find("after an action"),
            std::string::npos);
}

// Their size n splits at random: k stack bits, k uniform in [1, n-1], then n-k actions each
// uniform over pop, push0, push1.
TEST(DeletangContextFree, StackSizeIsUniform) {
  const auto t = make_task("stack_manipulation");
  const std::map<int, double> k = frequencies(*t, 6, 6000, [](const Example& e) {
    int bits = 0;  // the stack: the leading bits, before the first action
    while (e.tokens[bits] < 2) ++bits;
    return bits;
  });
  ASSERT_EQ(k.size(), 5u);
  for (int size = 1; size <= 5; ++size) EXPECT_NEAR(k.at(size), 0.2, 0.02) << size;
}

TEST(DeletangContextFree, ModularArithmeticBrackets) {
  const auto t = make_task("modular_arithmetic_brackets");
  // Sizes 1-4 are d, -d, (d), (-d).
  EXPECT_EQ(targets_of(*t, "3 ?", 1), ". 3");
  EXPECT_EQ(targets_of(*t, "- 3 ?", 2), ". . 2");
  EXPECT_EQ(targets_of(*t, "( 3 ) ?", 3), ". . . 3");
  EXPECT_EQ(targets_of(*t, "( - 3 ) ?", 4), ". . . . 2");
  EXPECT_EQ(targets_of(*t, "( 4 * 3 ) ?", 5), ". . . . . 2");
  // Nesting: ((1 - 4) * (-2)) = (-3)(-2) = 6.
  EXPECT_EQ(targets_of(*t, "( ( 1 - 4 ) * ( - 2 ) ) ?", 12), ". . . . . . . . . . . . 1");
  // A size-2 operand: (-3 + (4)) = 1.
  EXPECT_EQ(targets_of(*t, "( - 3 + ( 4 ) ) ?", 8), ". . . . . . . . 1");
  EXPECT_NE(error_message([&] { targets_of(*t, "( 1 + 2 2 ?", 5); }).find("expected ')'"),
            std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*t, "1 + 2 ?", 3); }).find("after a whole expression"),
            std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*t, "( x ) ?", 3); }).find("unexpected token"),
            std::string::npos);
}

// The size of the left operand of (L op R) is uniform in [1, n-4]; the operator uniform over
// +, -, * (their task table sets mult=True).
TEST(DeletangContextFree, BracketSplitAndOperatorsAreUniform) {
  const auto t = make_task("modular_arithmetic_brackets");
  const int32_t open = 8, close = 9;
  auto left_size = [&](const Example& e) {
    if (e.tokens[1] < 5) return 1;   // a digit
    if (e.tokens[1] == 6) return 2;  // -d
    int depth = 0, i = 1;            // a bracketed operand: find its ')'
    do {
      depth += e.tokens[i] == open ? 1 : e.tokens[i] == close ? -1 : 0;
      ++i;
    } while (depth > 0);
    return i - 1;
  };
  const std::map<int, double> left = frequencies(*t, 9, 5000, left_size);
  ASSERT_EQ(left.size(), 5u);
  for (int size = 1; size <= 5; ++size) EXPECT_NEAR(left.at(size), 0.2, 0.02) << size;
  const std::map<int, double> op =
      frequencies(*t, 9, 3000, [&](const Example& e) { return e.tokens[1 + left_size(e)]; });
  ASSERT_EQ(op.size(), 3u);
  for (const auto& [id, f] : op) EXPECT_NEAR(f, 1.0 / 3, 0.03) << id;
}

TEST(DeletangContextFree, SolveEquation) {
  const auto t = make_task("solve_equation");
  // Sizes 1 and 2: their fixed input of 0s, label 0.
  EXPECT_EQ(targets_of(*t, "0 ?", 1), ". 0");
  EXPECT_EQ(targets_of(*t, "0 0 ?", 2), ". . 0");
  EXPECT_NE(error_message([&] { targets_of(*t, "1 0 ?", 2); }).find("input of 0s"),
            std::string::npos);
  EXPECT_EQ(targets_of(*t, "x = 3 ?", 3), ". . . 3");
  EXPECT_EQ(targets_of(*t, "- x = 2 ?", 4), ". . . . 3");  // -x = 2
  EXPECT_EQ(targets_of(*t, "( - x ) = 4 ?", 6), ". . . . . . 1");
  // x under two minus signs counts with +: 1 - (2 - x) = 0 gives x = 1.
  EXPECT_EQ(targets_of(*t, "( 1 - ( 2 - x ) ) = 0 ?", 11), ". . . . . . . . . . . 1");
  // Under one: (3 - (x + 4)) = 2 gives x = 2.
  EXPECT_EQ(targets_of(*t, "( 3 - ( x + 4 ) ) = 2 ?", 11), ". . . . . . . . . . . 2");
  EXPECT_NE(error_message([&] { targets_of(*t, "( x + x ) = 2 ?", 7); }).find("one 'x'"),
            std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*t, "( x + 1 ) 2 2 ?", 7); }).find("'='"),
            std::string::npos);
  // The sampled equations hold for the label.
  const tasks::BracketAlphabet alphabet = {
      .plus = 5, .minus = 6, .times = -1, .open = 7, .close = 8, .unknown = 9};
  Generator rng(4);
  for (int n = 3; n <= 30; ++n) {
    const Example e = t->sample(rng, n);
    ASSERT_EQ(std::count(e.tokens.begin(), e.tokens.end(), 9), 1);
    ASSERT_EQ(e.tokens[n - 2], 10);  // '='
    const std::vector<int32_t> expression(e.tokens.begin(), e.tokens.begin() + n - 2);
    EXPECT_EQ(tasks::bracket_value(expression, alphabet, e.targets.back(), "test"), e.tokens[n - 1])
        << render(*t, e.tokens);
  }
}

// Their replaced digit: a uniform position, moved right (wrapping) to the next digit. At
// n = 7 every expression is (d op d), positions 0-4: positions 0, 1 and 4 give the first
// digit, 2 and 3 the second.
TEST(DeletangContextFree, SolveEquationFavoursDigitsAfterNonDigits) {
  const auto t = make_task("solve_equation");
  const std::map<int, double> at =
      frequencies(*t, 7, 6000, [](const Example& e) { return index_of(e, 9); });
  ASSERT_EQ(at.size(), 2u);
  EXPECT_NEAR(at.at(1), 0.6, 0.02);
  EXPECT_NEAR(at.at(3), 0.4, 0.02);
}

TEST(DeletangContextFree, ReverseString) {
  const auto t = make_task("reverse_string");
  EXPECT_EQ(targets_of(*t, "0 1 1 0 1 0 ? ? ? ? ? ?", 6), ". . . . . . 0 1 0 1 1 0");
  EXPECT_EQ(targets_of(*t, "1 ?", 1), ". 1");
  EXPECT_EQ(make_task("reverse_string", {{"symbols", 4}})->info().vocab_in(), 5);
}

// ---- context-sensitive -------------------------------------------------------------------------

TEST(DeletangContextSensitive, BinaryAddition) {
  const auto t = make_task("binary_addition_deletang");
  // Their docstring examples, least significant bit first: 4 + 22 = 26, 9 + 32 = 41.
  EXPECT_EQ(targets_of(*t, "0 0 1 + 0 1 1 0 1 ? ? ? ? ? ? ? ? ? ?", 9),
            ". . . . . . . . . 0 1 0 1 1 $ . . . .");
  EXPECT_EQ(targets_of(*t, "1 0 0 1 + 0 0 0 0 0 1 ? ? ? ? ? ? ? ? ? ? ? ?", 11),
            ". . . . . . . . . . . 1 0 0 1 0 1 $ . . . . .");
  // High zeros in the operands are not in the sum: 1 + 1 = 2.
  EXPECT_EQ(targets_of(*t, "1 0 + 1 0 ? ? ? ? ? ?", 5), ". . . . . 0 1 $ . . .");
  // A carry out of the top bit: 3 + 1 = 4.
  EXPECT_EQ(targets_of(*t, "1 1 + 1 ? ? ? ? ?", 4), ". . . . 0 0 1 $ .");
  // Sizes 1 and 2: a number and no '+'; zero is '0'.
  EXPECT_EQ(targets_of(*t, "0 ? ?", 1), ". 0 $");
  EXPECT_EQ(targets_of(*t, "0 1 ? ? ?", 2), ". . 0 1 $");
  EXPECT_EQ(targets_of(*t, "0 0 ? ? ?", 2), ". . 0 $ .");
  EXPECT_NE(error_message([&] { targets_of(*t, "1 + ? ? ?", 2); }).find("no '+'"),
            std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*t, "+ 1 1 ? ? ? ?", 3); }).find("lacks an operand"),
            std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*t, "1 1 1 ? ? ? ?", 3); }).find("no operator"),
            std::string::npos);
  // Size 1 draws from [0, 2^1 - 2]: always 0. Size 2 from [0, 2]: never 3.
  const std::map<int, double> two =
      frequencies(*t, 2, 3000, [](const Example& e) { return e.tokens[0] + 2 * e.tokens[1]; });
  ASSERT_EQ(two.size(), 3u);
  for (const auto& [v, f] : two) EXPECT_NEAR(f, 1.0 / 3, 0.03) << v;
  EXPECT_EQ(frequencies(*t, 1, 50, [](const Example& e) { return e.tokens[0]; }).size(), 1u);
}

// Their operand split: |a| uniform in [1, n-2]; each operand uniform in [1, 2^|x| - 1], so
// never zero, and its top bit is 0 half the time.
TEST(DeletangContextSensitive, BinaryOperandsAreSplitUniformly) {
  for (const std::string name : {"binary_addition_deletang", "binary_multiplication"}) {
    const auto t = make_task(name);
    const std::map<int, double> at =
        frequencies(*t, 6, 6000, [](const Example& e) { return index_of(e, 2); });
    ASSERT_EQ(at.size(), 4u) << name;
    for (int p = 1; p <= 4; ++p) EXPECT_NEAR(at.at(p), 0.25, 0.02) << name << " " << p;
    Generator rng(6);
    double top_zero = 0;
    for (int k = 0; k < 2000; ++k) {
      const Example e = t->sample(rng, 12);
      const int op = index_of(e, 2);
      EXPECT_NE(std::count(e.tokens.begin(), e.tokens.begin() + op, 1), 0);
      EXPECT_NE(std::count(e.tokens.begin() + op + 1, e.tokens.begin() + 12, 1), 0);
      top_zero += (e.tokens[11] == 0) / 2000.0;
    }
    // b has w = 11 - |a| bits, w uniform in [1, 10]; uniform over [1, 2^w - 1], its top bit
    // is 0 for 2^(w-1) - 1 of the 2^w - 1 values.
    double expected = 0;
    for (int w = 1; w <= 10; ++w)
      expected += (std::ldexp(1.0, w - 1) - 1) / (std::ldexp(1.0, w) - 1) / 10;
    EXPECT_NEAR(top_zero, expected, 0.03) << name;
  }
}

TEST(DeletangContextSensitive, BinaryMultiplication) {
  const auto t = make_task("binary_multiplication");
  // Their docstring examples: 4 * 22 = 88, 9 * 32 = 288; n slots.
  EXPECT_EQ(targets_of(*t, "0 0 1 * 0 1 1 0 1 ? ? ? ? ? ? ? ? ?", 9),
            ". . . . . . . . . 0 0 0 1 1 0 1 $ .");
  EXPECT_EQ(targets_of(*t, "1 0 0 1 * 0 0 0 0 0 1 ? ? ? ? ? ? ? ? ? ? ?", 11),
            ". . . . . . . . . . . 0 0 0 0 0 1 0 0 1 $ .");
  // The longest product fills every slot before the terminator: 3 * 3 = 9 = 1001.
  EXPECT_EQ(targets_of(*t, "1 1 * 1 1 ? ? ? ? ?", 5), ". . . . . 1 0 0 1 $");
  // Sizes 1 and 2: the answer is n-1 zeros whatever the bits.
  EXPECT_EQ(targets_of(*t, "0 ?", 1), ". $");
  EXPECT_EQ(targets_of(*t, "1 0 ? ?", 2), ". . 0 $");
  EXPECT_EQ(targets_of(*t, "0 1 ? ?", 2), ". . 0 $");
}

TEST(DeletangContextSensitive, BinaryArithmeticMatchesIntegers) {
  const auto add = make_task("binary_addition_deletang");
  const auto mul = make_task("binary_multiplication");
  Generator rng(12);
  for (int n = 3; n <= 33; ++n) {
    for (const Task* t : {add.get(), mul.get()}) {
      const Example e = t->sample(rng, n);
      const int op = index_of(e, 2);
      uint64_t a = 0, b = 0, r = 0;
      for (int i = op - 1; i >= 0; --i) a = 2 * a + e.tokens[i];
      for (int i = n - 1; i > op; --i) b = 2 * b + e.tokens[i];
      int bits = 0;  // the answer, up to the terminator
      while (e.targets[n + bits] != 2) ++bits;
      for (int i = bits - 1; i >= 0; --i) r = 2 * r + e.targets[n + i];
      EXPECT_EQ(r, t == add.get() ? a + b : a * b) << t->info().name << " n=" << n;
      EXPECT_TRUE(bits == 1 || e.targets[n + bits - 1] == 1) << "no high zeros";
    }
  }
}

TEST(DeletangContextSensitive, ComputeSqrt) {
  const auto t = make_task("compute_sqrt");
  // Their docstring: 100101 = 37 → 6 (their docstring writes 101; 6 is 110), 111 = 7 → 2.
  EXPECT_EQ(targets_of(*t, "1 0 0 1 0 1 ? ? ?", 6), ". . . . . . 1 1 0");
  EXPECT_EQ(targets_of(*t, "1 1 1 ? ?", 3), ". . . 1 0");
  // Small numbers, and leading zeros in and out: ceil(n/2) bits always.
  EXPECT_EQ(targets_of(*t, "1 ?", 1), ". 1");
  EXPECT_EQ(targets_of(*t, "0 1 ?", 2), ". . 1");
  EXPECT_EQ(targets_of(*t, "1 1 ?", 2), ". . 1");
  EXPECT_EQ(targets_of(*t, "0 1 1 ? ?", 3), ". . . 0 1");
  EXPECT_EQ(targets_of(*t, "1 0 0 ? ?", 3), ". . . 1 0");
  EXPECT_EQ(targets_of(*t, "0 0 0 0 1 ? ? ?", 5), ". . . . . 0 0 1");
  // Around a square: 8 → 2, 9 → 3.
  EXPECT_EQ(targets_of(*t, "1 0 0 0 ? ?", 4), ". . . . 1 0");
  EXPECT_EQ(targets_of(*t, "1 0 0 1 ? ?", 4), ". . . . 1 1");
  // Against a 64-bit root, most significant bit first.
  Generator rng(13);
  for (int n = 1; n <= 62; ++n) {
    const Example e = t->sample(rng, n);
    uint64_t x = 0, r = 0;
    for (int i = 0; i < n; ++i) x = 2 * x + e.tokens[i];
    for (int i = n; i < static_cast<int>(e.tokens.size()); ++i) r = 2 * r + e.targets[i];
    EXPECT_GE(x, 1u);
    EXPECT_LE(r * r, x) << "n=" << n;
    EXPECT_GT((r + 1) * (r + 1), x) << "n=" << n;
  }
}

TEST(DeletangContextSensitive, DuplicateString) {
  const auto t = make_task("duplicate_string");
  EXPECT_EQ(targets_of(*t, "1 0 1 ? ? ? ? ? ?", 3), ". . . 1 0 1 1 0 1");  // their 101 -> 101101
  EXPECT_EQ(targets_of(*t, "0 ? ?", 1), ". 0 0");
}

// Their code puts x[1::2] first (0-based odd indices), not what their docstring says.
TEST(DeletangContextSensitive, OddsFirstFollowsTheirCode) {
  const auto t = make_task("odds_first_deletang");
  // Their docstring: 00110101 -> 0100 0111; their code gives 0111 0100.
  EXPECT_EQ(targets_of(*t, "0 0 1 1 0 1 0 1 ? ? ? ? ? ? ? ?", 8),
            ". . . . . . . . 0 1 1 1 0 1 0 0");
  // Their docstring: 110 -> 10 1; their code gives 1 10.
  EXPECT_EQ(targets_of(*t, "1 1 0 ? ? ?", 3), ". . . 1 1 0");
  EXPECT_EQ(targets_of(*t, "1 ?", 1), ". 1");
}

TEST(DeletangContextSensitive, BucketSort) {
  const auto t = make_task("bucket_sort");
  EXPECT_EQ(targets_of(*t, "1 0 2 0 4 1 1 2 ? ? ? ? ? ? ? ?", 8),
            ". . . . . . . . 0 0 1 1 1 2 2 4");  // their docstring example
  EXPECT_EQ(t->info().vocab_out(), 5);
}

TEST(DeletangContextSensitive, MissingDuplicateString) {
  const auto t = make_task("missing_duplicate_string");
  // Their docstring examples: 0110 twice, 101 twice then the padding token.
  EXPECT_EQ(targets_of(*t, "0 1 1 0 0 _ 1 0 ?", 8), ". . . . . . . . 1");
  EXPECT_EQ(targets_of(*t, "1 0 1 1 _ 1 pad ?", 7), ". . . . . . . 0");
  // The placeholder in the first copy; the smallest sizes.
  EXPECT_EQ(targets_of(*t, "_ 1 0 1 ?", 4), ". . . . 0");
  EXPECT_EQ(targets_of(*t, "1 _ ?", 2), ". . 1");
  EXPECT_EQ(targets_of(*t, "_ 0 pad ?", 3), ". . . 0");
  // Size 1: their fixed input '1', label 1.
  EXPECT_EQ(targets_of(*t, "1 ?", 1), ". 1");
  EXPECT_NE(error_message([&] { targets_of(*t, "0 ?", 1); }).find("input '1'"), std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*t, "1 0 _ 1 0 ?", 5); }).find("odd size"),
            std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*t, "_ 1 _ 1 ?", 4); }).find("expected one"),
            std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*t, "1 0 _ 1 ?", 4); }).find("copies differ"),
            std::string::npos);
}

// The placeholder is uniform over the 2 floor(n/2) tokens of the two copies.
TEST(DeletangContextSensitive, MissingDuplicatePlaceholderIsUniform) {
  const auto t = make_task("missing_duplicate_string");
  const std::map<int, double> at =
      frequencies(*t, 7, 6000, [](const Example& e) { return index_of(e, 2); });
  ASSERT_EQ(at.size(), 6u);
  for (int p = 0; p < 6; ++p) EXPECT_NEAR(at.at(p), 1.0 / 6, 0.02) << p;
}

// ---- the bit arithmetic behind the binary tasks ------------------------------------------------

TEST(DeletangBits, ArithmeticMatchesIntegers) {
  using tasks::Bits;
  Generator rng(21);
  auto value = [](const Bits& b) {
    uint64_t v = 0;
    for (size_t i = b.size(); i-- > 0;) v = 2 * v + b[i];
    return v;
  };
  for (int k = 0; k < 300; ++k) {
    const int wa = static_cast<int>(rng.uniform_int(1, 31)),
              wb = static_cast<int>(rng.uniform_int(1, 31));
    const Bits a = tasks::random_positive(rng, wa), b = tasks::random_positive(rng, wb);
    EXPECT_EQ(value(tasks::add(a, b)), value(a) + value(b));
    EXPECT_EQ(value(tasks::multiply(a, b)), value(a) * value(b));
    const uint64_t r = value(tasks::integer_sqrt(tasks::multiply(a, b)));
    EXPECT_LE(r * r, value(a) * value(b));
    EXPECT_GT((r + 1) * (r + 1), value(a) * value(b));
  }
  EXPECT_EQ(tasks::minimal({0, 0, 0}), (Bits{0}));
  EXPECT_EQ(tasks::minimal({1, 0, 1, 0}), (Bits{1, 0, 1}));
  EXPECT_EQ(tasks::big_endian({1, 1, 0}, 4), (Bits{0, 0, 1, 1}));
  // Beyond 64 bits: (2^100 - 1)^2 = 2^200 - 2^101 + 1, and its root is 2^100 - 1.
  const Bits ones(100, 1);
  const Bits square = tasks::minimal(tasks::multiply(ones, ones));
  ASSERT_EQ(square.size(), 200u);
  EXPECT_EQ(square[0], 1);
  EXPECT_EQ(std::count(square.begin(), square.end(), 1), 100);
  EXPECT_EQ(tasks::minimal(tasks::integer_sqrt(square)), ones);
}

}  // namespace
}  // namespace pelab
