// The toy task generators: registry, parameter validation, per-task invariants over sampled
// examples, and hand-checked exact examples.
//
// The exact examples are written as printable symbols and labelled with the task's own
// answer() (the code sample() uses after drawing the tokens), through the private helper
// tasks::label().
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "../../src/data/task_base.h"
#include "data/task_text.h"
#include "error_message.h"
#include "pelab/core/error.h"
#include "pelab/data/task.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using testing::encode;
using testing::render_targets;
using testing::same;
using testing::targets_of;

using testing::error_message;

// ---- helpers -------------------------------------------------------------------------------

// The targets the task gives for `text` (tokens as printable symbols) at problem size n.
// ---- registry and parameters -----------------------------------------------------------------

// The registry is the one list of tasks, and each task's text lives in its code: docs/tasks.md's
// "Reference" section (its last) is task_reference_markdown() word for word, so a task added to
// the table and not to the docs, or described differently, shows here at once (no survey run
// needed: tools/make_task_docs.sh --reference rewrites the section in seconds).
std::string documented_reference() {
  const std::string docs = testing::read_file(PELAB_SOURCE_DIR "/docs/tasks.md");
  const std::string heading = "\n## Reference\n\n";
  const size_t at = docs.find(heading);
  EXPECT_NE(at, std::string::npos) << "docs/tasks.md has no Reference section";
  return at == std::string::npos ? "" : docs.substr(at + heading.size());
}

TEST(TaskRegistry, ListsEveryTask) {
  const std::vector<std::string> names = task_names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const std::string& name : names) EXPECT_EQ(make_task(name)->info().name, name);
  EXPECT_EQ(documented_reference(), task_reference_markdown())
      << "docs/tasks.md's Reference section differs from the tasks' own descriptions; "
         "tools/make_task_docs.sh --reference rewrites it";
}

TEST(TaskRegistry, UnknownTaskListsValidNames) {
  const std::string message = error_message([] { make_task("nope"); });
  EXPECT_NE(message.find("'nope'"), std::string::npos) << message;
  for (const std::string& name : task_names())
    EXPECT_NE(message.find(name), std::string::npos) << name << " missing from: " << message;
  EXPECT_NE(error_message([] { task_params("nope"); }).find("long_range"), std::string::npos);
}

TEST(TaskRegistry, UnknownParameterListsValidOnes) {
  std::string message = error_message([] { make_task("shift", {{"shfit", 3}}); });
  EXPECT_NE(message.find("'shfit'"), std::string::npos) << message;
  EXPECT_NE(message.find("shift"), std::string::npos) << message;
  EXPECT_NE(message.find("symbols"), std::string::npos) << message;

  message = error_message([] { make_task("parity", {{"symbols", 4}}); });
  EXPECT_NE(message.find("takes no parameters"), std::string::npos) << message;
  EXPECT_NE(message.find("'symbols'"), std::string::npos) << message;
}

TEST(TaskRegistry, OutOfRangeParameterNamesTheRange) {
  EXPECT_EQ(error_message([] {
              make_task("copy", {{"symbols", 1}});
            }),
            "task.symbols: must be in [2, 64], got 1");
  EXPECT_EQ(error_message([] {
              make_task("shift", {{"shift", 0}});
            }),
            "task.shift: must be in [1, 4096], got 0");
  EXPECT_EQ(error_message([] {
              make_task("modular_arithmetic", {{"precedence", 2}});
            }),
            "task.precedence: must be in [0, 1], got 2");
  EXPECT_EQ(error_message([] {
              make_task("associative_recall", {{"values", 65}});
            }),
            "task.values: must be in [2, 64], got 65");
}

// A parameter is typed: a value of another type is refused, not converted.
TEST(TaskRegistry, ParameterOfTheWrongTypeIsRefused) {
  EXPECT_EQ(error_message([] {
              make_task("copy", {{"symbols", 4.0}});
            }),
            "task.symbols: must be an integer");
  EXPECT_EQ(error_message([] {
              make_task("shift", {{"shift", std::string("2")}});
            }),
            "task.shift: must be an integer");
}

TEST(TaskRegistry, ParamsHaveDefaultsInRangeAndHelp) {
  for (const std::string& name : task_names()) {
    for (const TaskParam& p : task_params(name)) {
      ASSERT_TRUE(p.default_value.has_value()) << name << "." << p.name;
      EXPECT_EQ(key_value_problem(p, *p.default_value), "") << name << "." << p.name;
      EXPECT_FALSE(p.help.empty()) << name << "." << p.name;
      ASSERT_NE(p.type, KeySpec::Type::Text) << name << "." << p.name;
      // Both ends of the range are accepted, and one beyond each end is not (flip_flop's
      // probabilities must sum to 1: the others share what an end leaves).
      const auto value = [&](double v) -> KeyValue {
        if (p.type == KeySpec::Type::Number) return v;
        return static_cast<int64_t>(v);
      };
      const auto with = [&](double v) {
        TaskParams params{{p.name, value(v)}};
        if (name == "flip_flop")
          for (const char* other : {"p_w", "p_r", "p_i"})
            if (other != p.name) {
              params.set(other, std::max(0.0, 1.0 - v));
              v = 1.0;  // the second of the others takes nothing
            }
        return params;
      };
      EXPECT_NO_THROW(make_task(name, with(p.min))) << name << "." << p.name;
      EXPECT_NO_THROW(make_task(name, with(p.max))) << name << "." << p.name;
      EXPECT_THROW(make_task(name, {{p.name, value(p.min - 1)}}), Error) << name << "." << p.name;
      EXPECT_THROW(make_task(name, {{p.name, value(p.max + 1)}}), Error) << name << "." << p.name;
    }
  }
  EXPECT_TRUE(task_params("parity").empty());
  ASSERT_EQ(task_params("shift").size(), 2u);
}

TEST(TaskRegistry, LayoutNames) {
  EXPECT_STREQ(to_string(TaskLayout::Tagging), "tagging");
  EXPECT_STREQ(to_string(TaskLayout::AppendedQueries), "appended");
  EXPECT_STREQ(to_string(TaskLayout::Classification), "classification");
}

// ---- every task, sampled -------------------------------------------------------------------

struct TaskCase {
  std::string name;
  TaskParams params;
};

std::string config_label(const TaskCase& c) {
  std::string s = c.name;
  for (const auto& [k, v] : c.params.all()) s += "_" + k + key_value_text(v);
  std::replace(s.begin(), s.end(), '.', 'p');  // a test name is letters, digits and '_'
  return s;
}

// Every task with its defaults, plus non-default settings that change the layout or the rule.
std::vector<TaskCase> all_configs() {
  std::vector<TaskCase> configs;
  for (const std::string& name : task_names()) configs.push_back({name, {}});
  configs.push_back({"copy", {{"symbols", 2}}});
  configs.push_back({"shift", {{"shift", 5}}});
  configs.push_back({"local_sum", {{"window", 3}, {"symbols", 64}}});
  configs.push_back({"modular_arithmetic", {{"precedence", 0}}});
  configs.push_back({"associative_recall", {{"keys", 2}, {"values", 3}}});
  configs.push_back({"long_range", {{"distance", 4}}});
  configs.push_back({"flip_flop", {{"p_w", 0.45}, {"p_r", 0.45}, {"p_i", 0.1}}});
  configs.push_back({"decimal_addition", {{"min_digits_b", 3}, {"max_digits_b", 3}}});
  return configs;
}

// The expected sequence length for problem size n, written independently of the tasks.
int expected_sequence_length(const TaskCase& c, int n) {
  const std::string& t = c.name;
  if (t == "copy" || t == "reverse" || t == "odds_first" || t == "sort") return 2 * n + 1;
  if (t == "duplicate") return 3 * n + 1;
  if (t == "shift" || t == "local_sum") return n;
  if (t == "missing_duplicate") return 2 * n + 1;
  if (t == "parity" || t == "even_pairs" || t == "cycle_navigation") return n + 1;
  if (t == "modular_arithmetic") return 2 * n;
  if (t == "binary_addition") return 3 * n + 3;
  if (t == "associative_recall") return 2 * n + 2;
  if (t == "long_range") return c.params.has("distance") ? n + 1 : 2 * n + 1;
  // Delétang et al.'s tasks: their input (n tokens, but for modular_arithmetic_deletang, whose
  // size is made odd), then the blanks, as many as their output_length.
  if (t == "even_pairs_deletang" || t == "modular_arithmetic_brackets" || t == "solve_equation" ||
      t == "missing_duplicate_string")
    return n + 1;
  if (t == "modular_arithmetic_deletang") return (n % 2 == 1 ? n : n - 1) + 1;
  if (t == "reverse_string" || t == "odds_first_deletang" || t == "bucket_sort" ||
      t == "binary_multiplication")
    return 2 * n;
  if (t == "stack_manipulation" || t == "binary_addition_deletang") return 2 * n + 1;
  if (t == "duplicate_string") return 3 * n;
  if (t == "compute_sqrt") return n + (n + 1) / 2;
  if (t == "flip_flop") return 2 * n;  // n instructions, each with its bit
  // The longest: a '+' b '=' with |a| = |b| = n, then n+1 answer digits (examples differ).
  if (t == "decimal_addition") return 3 * n + 3;
  return -1;  // a new task: add its formula here
}

// Whether the examples of one size differ in length (sequence_length is then the longest).
bool varies_in_length(const std::string& name) {
  return name == "decimal_addition";
}

// The sizes at which a task has one example only: Delétang's generators, where their task
// has no room, fix the example (missing_duplicate_string at 1, solve_equation at 1 and 2) or
// draw from a single value (at 1, binary_addition_deletang and binary_multiplication draw a
// number in [0, 2^1 - 2], compute_sqrt one in [1, 2^1 - 1]).
bool single_example_at(const std::string& name, int n) {
  if (name == "solve_equation") return n <= 2;
  return n == 1 && (name == "missing_duplicate_string" || name == "binary_addition_deletang" ||
                    name == "binary_multiplication" || name == "compute_sqrt");
}

class AllTasks : public ::testing::TestWithParam<TaskCase> {
 protected:
  void SetUp() override { task_ = make_task(GetParam().name, GetParam().params); }
  std::unique_ptr<Task> task_;
};

TEST_P(AllTasks, InfoIsComplete) {
  const TaskInfo& info = task_->info();
  EXPECT_EQ(info.name, GetParam().name);
  EXPECT_GE(info.vocab_in(), 2);
  EXPECT_GE(info.vocab_out(), 2);
  EXPECT_FALSE(info.description.empty());
  EXPECT_FALSE(info.position_need.empty());
  EXPECT_FALSE(info.source.empty()) << "every task says where it comes from";
  EXPECT_EQ(info.description.find("Source:"), std::string::npos) << "the source is its own field";
  // The description opens with the layout and says what is scored.
  const std::string layout = info.layout == TaskLayout::Tagging           ? "Tagging."
                             : info.layout == TaskLayout::AppendedQueries ? "Appended."
                                                                          : "Classification.";
  EXPECT_EQ(info.description.rfind(layout, 0), 0u) << info.description;
  EXPECT_NE(info.description.find("Scored:"), std::string::npos) << info.description;
  for (const auto* symbols : {&info.input_symbols, &info.output_symbols}) {
    const std::set<std::string> unique(symbols->begin(), symbols->end());
    EXPECT_EQ(unique.size(), symbols->size()) << "symbol names must be distinct";
    for (const std::string& s : *symbols) {
      EXPECT_FALSE(s.empty());
      EXPECT_EQ(s.find(' '), std::string::npos) << "'" << s << "'";
    }
  }
  // Tasks with separators or query tokens name them in the input vocabulary.
  const std::set<std::string> in(info.input_symbols.begin(), info.input_symbols.end());
  if (info.layout == TaskLayout::Classification) {
    EXPECT_TRUE(in.count("?") || in.count("#")) << "no query or marker symbol";
  }
  if (info.layout == TaskLayout::AppendedQueries) {
    EXPECT_TRUE(in.count("?"));
  }
}

TEST_P(AllTasks, SameSeedSameExamplesOtherSeedOthers) {
  const int lo = task_->min_length();
  for (int n : {lo, lo + 1, lo + 7, lo + 30}) {
    Generator a(42), b(42), c(43);
    bool any_differs = false;
    for (int k = 0; k < 8; ++k) {
      const Example ea = task_->sample(a, n), eb = task_->sample(b, n), ec = task_->sample(c, n);
      EXPECT_TRUE(same(ea, eb)) << "n=" << n << " k=" << k;
      any_differs |= !same(ea, ec);
    }
    if (!single_example_at(GetParam().name, n)) {
      EXPECT_TRUE(any_differs) << "seeds 42 and 43 gave the same 8 examples at n=" << n;
    }
  }
}

TEST_P(AllTasks, ExamplesAreWellFormed) {
  const TaskInfo& info = task_->info();
  const int lo = task_->min_length();
  Generator rng(7);
  for (int n = lo; n <= lo + 40; ++n) {
    for (int k = 0; k < 5; ++k) {
      const Example e = task_->sample(rng, n);
      ASSERT_EQ(e.length, n);
      if (varies_in_length(GetParam().name))
        ASSERT_LE(static_cast<int>(e.tokens.size()), task_->sequence_length(n));
      else
        ASSERT_EQ(static_cast<int>(e.tokens.size()), task_->sequence_length(n));
      ASSERT_EQ(e.targets.size(), e.tokens.size());
      int scored = 0;
      for (size_t i = 0; i < e.tokens.size(); ++i) {
        ASSERT_GE(e.tokens[i], 0);
        ASSERT_LT(e.tokens[i], info.vocab_in());
        if (e.targets[i] == kIgnore) continue;
        ++scored;
        ASSERT_GE(e.targets[i], 0);
        ASSERT_LT(e.targets[i], info.vocab_out());
      }
      switch (info.layout) {
        case TaskLayout::Tagging:
          // Every token, but for a language model's task, which scores the tokens whose next
          // token is determined (flip_flop: the reads).
          if (info.causal_only)
            ASSERT_GE(scored, 1);
          else
            ASSERT_EQ(scored, static_cast<int>(e.tokens.size()));
          break;
        case TaskLayout::Classification:
          ASSERT_EQ(scored, 1);
          break;
        case TaskLayout::AppendedQueries: {
          ASSERT_GE(scored, 1);
          ASSERT_EQ(e.targets.front(), kIgnore);  // never on the input
          // The queries run to the end, or to a terminator after which nothing is scored.
          const auto last = std::find_if(e.targets.rbegin(), e.targets.rend(),
                                         [](int32_t y) { return y != kIgnore; });
          if (last != e.targets.rbegin()) {
            ASSERT_EQ(info.output_symbols[*last], tasks::kTerminatorSymbol);
          }
          break;
        }
      }
      // answer() relabels the sampled tokens identically.
      ASSERT_EQ(tasks::label(*task_, e.tokens, n).targets, e.targets);
    }
  }
}

TEST_P(AllTasks, SequenceLengthFollowsTheFormula) {
  const int lo = task_->min_length();
  ASSERT_GE(lo, 1);
  Generator rng(11);
  for (int n = lo; n <= lo + 64; n += 3) {
    const int expected = expected_sequence_length(GetParam(), n);
    ASSERT_NE(expected, -1) << "add " << GetParam().name << " to expected_sequence_length";
    EXPECT_EQ(task_->sequence_length(n), expected) << "n=" << n;
    const int drawn = static_cast<int>(task_->sample(rng, n).tokens.size());
    if (varies_in_length(GetParam().name))
      EXPECT_LE(drawn, expected) << "n=" << n;
    else
      EXPECT_EQ(drawn, expected) << "n=" << n;
  }
  // Long sequences, too.
  const int long_one = static_cast<int>(task_->sample(rng, 500).tokens.size());
  if (varies_in_length(GetParam().name))
    EXPECT_LE(long_one, expected_sequence_length(GetParam(), 500));
  else
    EXPECT_EQ(long_one, expected_sequence_length(GetParam(), 500));
}

TEST_P(AllTasks, LengthBelowMinimumIsAnError) {
  Generator rng(1);
  const int below = task_->min_length() - 1;
  const std::string message = error_message([&] { task_->sample(rng, below); });
  EXPECT_NE(message.find("minimum length"), std::string::npos) << message;
}

TEST_P(AllTasks, VocabularyDoesNotDependOnTheLength) {
  // The vocabulary is fixed at construction; a second task built the same way agrees.
  const auto other = make_task(GetParam().name, GetParam().params);
  EXPECT_EQ(other->info().input_symbols, task_->info().input_symbols);
  EXPECT_EQ(other->info().output_symbols, task_->info().output_symbols);
}

INSTANTIATE_TEST_SUITE_P(Registry, AllTasks, ::testing::ValuesIn(all_configs()),
                         [](const ::testing::TestParamInfo<TaskCase>& p) {
                           return config_label(p.param);
                         });

// ---- randomized checks against independent oracles -------------------------------------------

// The data symbols before the separator / query, for AppendedQueries tasks.
std::vector<int32_t> input_part(const Example& e) {
  return std::vector<int32_t>(e.tokens.begin(), e.tokens.begin() + e.length);
}
std::vector<int32_t> query_part(const Example& e, int answer_length) {
  return std::vector<int32_t>(e.targets.end() - answer_length, e.targets.end());
}

TEST(TaskOracles, SequenceToSequenceTasks) {
  const auto copy = make_task("copy"), reverse = make_task("reverse"),
             duplicate = make_task("duplicate"), sort = make_task("sort"),
             odds = make_task("odds_first");
  Generator rng(3);
  for (int n = 1; n <= 25; ++n) {
    Example e = copy->sample(rng, n);
    EXPECT_EQ(query_part(e, n), input_part(e));
    e = reverse->sample(rng, n);
    std::vector<int32_t> x = input_part(e);
    std::reverse(x.begin(), x.end());
    EXPECT_EQ(query_part(e, n), x);
    e = duplicate->sample(rng, n);
    x = input_part(e);
    x.insert(x.end(), e.tokens.begin(), e.tokens.begin() + n);
    EXPECT_EQ(query_part(e, 2 * n), x);
    e = sort->sample(rng, n);
    x = input_part(e);
    std::sort(x.begin(), x.end());
    EXPECT_EQ(query_part(e, n), x);
    e = odds->sample(rng, n);
    const std::vector<int32_t> y = query_part(e, n);
    for (int i = 1; i <= n; ++i) {  // 1-based: x_i lands at (i+1)/2 if odd, ceil(n/2)+i/2 if even
      const int at = i % 2 == 1 ? (i + 1) / 2 : (n + 1) / 2 + i / 2;
      EXPECT_EQ(y[at - 1], e.tokens[i - 1]) << "n=" << n << " i=" << i;
    }
  }
}

TEST(TaskOracles, BinaryAdditionMatchesIntegers) {
  const auto task = make_task("binary_addition");
  Generator rng(5);
  for (int n = 1; n <= 30; ++n) {
    const Example e = task->sample(rng, n);
    uint64_t a = 0, b = 0, sum = 0;
    for (int i = 0; i < n; ++i) {
      a |= static_cast<uint64_t>(e.tokens[i]) << i;
      b |= static_cast<uint64_t>(e.tokens[n + 1 + i]) << i;
    }
    for (int j = 0; j <= n; ++j) sum |= static_cast<uint64_t>(e.targets[2 * n + 2 + j]) << j;
    EXPECT_EQ(sum, a + b) << "n=" << n;
  }
}

TEST(TaskOracles, LongRangeAnswerIsDTokensBeforeTheMarker) {
  for (int distance : {0, 1, 6}) {
    const auto task = make_task("long_range", {{"distance", distance}});
    const int32_t marker = 8;  // after the default 8 symbols
    ASSERT_EQ(task->info().input_symbols[marker], "#");
    Generator rng(9);
    std::set<int> marker_positions;
    for (int n = task->min_length(); n <= 40; ++n) {
      const Example e = task->sample(rng, n);
      const int d = distance > 0 ? distance : n;
      const int p =
          static_cast<int>(std::find(e.tokens.begin(), e.tokens.end(), marker) - e.tokens.begin());
      ASSERT_EQ(std::count(e.tokens.begin(), e.tokens.end(), marker), 1);
      ASSERT_GE(p, d);
      EXPECT_EQ(e.targets[p], e.tokens[p - d]);
    }
    for (int k = 0; k < 30; ++k) {
      const std::vector<int32_t> tokens = task->sample(rng, 20).tokens;
      marker_positions.insert(
          static_cast<int>(std::find(tokens.begin(), tokens.end(), marker) - tokens.begin()));
    }
    EXPECT_GT(marker_positions.size(), 3u) << "the marker should move between examples";
  }
}

TEST(TaskOracles, ClassificationLabelsAreBalancedEnough) {
  // Every label of the small-output classification tasks shows up.
  for (const std::string name :
       {"parity", "even_pairs", "cycle_navigation", "modular_arithmetic", "missing_duplicate"}) {
    const auto task = make_task(name);
    Generator rng(17);
    std::set<int32_t> seen;
    for (int k = 0; k < 400; ++k) seen.insert(task->sample(rng, 12).targets.back());
    EXPECT_EQ(static_cast<int>(seen.size()), task->info().vocab_out()) << name;
  }
}

// ---- hand-checked exact examples ---------------------------------------------------------------

TEST(TaskExamples, Copy) {
  const auto t = make_task("copy");
  EXPECT_EQ(targets_of(*t, "3 1 4 1 5 | ? ? ? ? ?", 5), ". . . . . . 3 1 4 1 5");
  EXPECT_EQ(targets_of(*t, "7 | ?", 1), ". . 7");
}

TEST(TaskExamples, Reverse) {
  const auto t = make_task("reverse");
  EXPECT_EQ(targets_of(*t, "3 1 4 1 5 | ? ? ? ? ?", 5), ". . . . . . 5 1 4 1 3");
}

TEST(TaskExamples, Duplicate) {
  const auto t = make_task("duplicate");
  EXPECT_EQ(targets_of(*t, "3 1 4 | ? ? ? ? ? ?", 3), ". . . . 3 1 4 3 1 4");
}

TEST(TaskExamples, OddsFirst) {
  const auto t = make_task("odds_first");
  EXPECT_EQ(targets_of(*t, "3 1 4 1 5 | ? ? ? ? ?", 5), ". . . . . . 3 4 5 1 1");
  EXPECT_EQ(targets_of(*t, "1 2 3 4 | ? ? ? ?", 4), ". . . . . 1 3 2 4");
}

TEST(TaskExamples, Sort) {
  const auto t = make_task("sort");
  EXPECT_EQ(targets_of(*t, "3 1 4 1 5 | ? ? ? ? ?", 5), ". . . . . . 1 1 3 4 5");
}

TEST(TaskExamples, Shift) {
  const auto by2 = make_task("shift", {{"shift", 2}});
  EXPECT_EQ(targets_of(*by2, "3 1 4 1 5", 5), "_ _ 3 1 4");
  EXPECT_EQ(targets_of(*by2, "3", 1), "_");
  const auto by1 = make_task("shift", {{"shift", 1}});
  EXPECT_EQ(targets_of(*by1, "3 1 4 1 5", 5), "_ 3 1 4 1");
}

TEST(TaskExamples, LocalSum) {
  // w = 1, weights (1, 2, 1), mod 8: 2·3+1 = 7, 3+2+4 = 9, 1+8+1 = 10, 4+2+5 = 11, 1+10 = 11.
  const auto w1 = make_task("local_sum", {{"window", 1}, {"symbols", 8}});
  EXPECT_EQ(targets_of(*w1, "3 1 4 1 5", 5), "7 1 2 3 3");
  // w = 2, weights (1, 4, 6, 4, 1), mod 10: an impulse at 0 gives the weights back, clipped.
  const auto w2 = make_task("local_sum", {{"window", 2}, {"symbols", 10}});
  EXPECT_EQ(targets_of(*w2, "1 0 0 0 0 0 0", 7), "6 4 1 0 0 0 0");
  EXPECT_EQ(targets_of(*w2, "0 0 0 1 0 0 0", 7), "0 1 4 6 4 1 0");
}

TEST(TaskExamples, MissingDuplicate) {
  const auto t = make_task("missing_duplicate");
  EXPECT_EQ(targets_of(*t, "3 1 _ 3 1 4 ?", 3), ". . . . . . 4");
  EXPECT_EQ(targets_of(*t, "3 1 4 3 _ 4 ?", 3), ". . . . . . 1");
  EXPECT_NE(error_message([&] { targets_of(*t, "3 1 _ 3 2 4 ?", 3); }).find("copies differ"),
            std::string::npos);
}

TEST(TaskExamples, Parity) {
  const auto t = make_task("parity");
  EXPECT_EQ(targets_of(*t, "1 0 1 1 ?", 4), ". . . . odd");
  EXPECT_EQ(targets_of(*t, "1 0 0 1 ?", 4), ". . . . even");
  EXPECT_EQ(targets_of(*t, "0 ?", 1), ". even");
}

TEST(TaskExamples, EvenPairs) {
  const auto t = make_task("even_pairs");
  EXPECT_EQ(targets_of(*t, "a b b a ?", 4), ". . . . true");  // ab, ba
  EXPECT_EQ(targets_of(*t, "a b b ?", 3), ". . . false");     // ab
  EXPECT_EQ(targets_of(*t, "b a b ?", 3), ". . . true");      // ba, ab
  EXPECT_EQ(targets_of(*t, "b a a a ?", 4), ". . . . false");
}

TEST(TaskExamples, CycleNavigation) {
  const auto t = make_task("cycle_navigation");
  EXPECT_EQ(targets_of(*t, "+1 +1 -1 0 +1 ?", 5), ". . . . . 2");
  EXPECT_EQ(targets_of(*t, "-1 -1 ?", 2), ". . 3");
  EXPECT_EQ(targets_of(*t, "+1 +1 +1 +1 +1 ?", 5), ". . . . . 0");
}

TEST(TaskExamples, ModularArithmetic) {
  const auto prec = make_task("modular_arithmetic");  // precedence by default
  const auto ltr = make_task("modular_arithmetic", {{"precedence", 0}});
  EXPECT_EQ(targets_of(*prec, "2 + 3 * 4 ?", 3), ". . . . . 4");          // 2 + 12 = 14
  EXPECT_EQ(targets_of(*ltr, "2 + 3 * 4 ?", 3), ". . . . . 0");           // 5 · 4 = 20
  EXPECT_EQ(targets_of(*prec, "1 - 2 * 2 - 4 ?", 4), ". . . . . . . 3");  // 1 - 4 - 4 = -7
  EXPECT_EQ(targets_of(*ltr, "1 - 2 * 2 - 4 ?", 4), ". . . . . . . 4");   // -1 · 2 - 4 = -6
  EXPECT_EQ(targets_of(*prec, "3 * 4 * 2 + 1 ?", 4), ". . . . . . . 0");  // 24 + 1 = 25
  EXPECT_EQ(targets_of(*prec, "3 ?", 1), ". 3");
}

TEST(TaskExamples, BinaryAddition) {
  const auto t = make_task("binary_addition");
  // Least significant bit first: 3 + 5 = 8 = 0001.
  EXPECT_EQ(targets_of(*t, "1 1 0 + 1 0 1 = ? ? ? ?", 3), ". . . . . . . . 0 0 0 1");
  // 2 + 0 = 2 = 010.
  EXPECT_EQ(targets_of(*t, "0 1 + 0 0 = ? ? ?", 2), ". . . . . . 0 1 0");
}

TEST(TaskExamples, AssociativeRecall) {
  const auto t = make_task("associative_recall");
  EXPECT_EQ(targets_of(*t, "k1 v2 k3 v4 k1 v5 k3 ?", 3), ". . . . . . . v4");
  EXPECT_EQ(targets_of(*t, "k1 v2 k3 v4 k1 v5 k1 ?", 3), ". . . . . . . v5");  // last wins
  EXPECT_EQ(targets_of(*t, "k0 v0 k0 ?", 1), ". . . v0");
  EXPECT_NE(error_message([&] { targets_of(*t, "k0 v0 k1 ?", 1); }).find("in no pair"),
            std::string::npos);
}

TEST(TaskExamples, LongRange) {
  const auto d2 = make_task("long_range", {{"distance", 2}});
  EXPECT_EQ(d2->min_length(), 2);
  EXPECT_EQ(targets_of(*d2, "3 1 4 # 1 5", 5), ". . . 1 . .");
  EXPECT_EQ(targets_of(*d2, "3 1 4 1 5 #", 5), ". . . . . 1");
  EXPECT_NE(error_message([&] { targets_of(*d2, "3 # 1 4 1 5", 5); }).find("fewer than 2"),
            std::string::npos);
  // distance 0: D = n; 2n symbols with the marker after at least n of them.
  const auto dn = make_task("long_range");
  EXPECT_EQ(targets_of(*dn, "3 1 4 1 # 5 6", 3), ". . . . 1 . .");
  EXPECT_EQ(targets_of(*dn, "3 1 4 # 1 5 6", 3), ". . . 3 . . .");
}

TEST(TaskExamples, MalformedSequencesAreErrors) {
  const auto copy = make_task("copy");
  EXPECT_NE(error_message([&] { targets_of(*copy, "3 1 4 ? ? ? ?", 3); }).find("expected '|'"),
            std::string::npos);
  EXPECT_NE(error_message([&] { targets_of(*copy, "3 1 | ? ?", 3); }).find("has 7 tokens"),
            std::string::npos);
}

}  // namespace
}  // namespace pelab
