// Private helpers shared by the task generators (src/data/tasks/*.cpp) and the registry
// (src/data/task_registry.cpp).
//
// Every task derives from TaskBase, which splits sampling in two: draw() makes the tokens
// (the only place randomness is used) and answer() computes the targets from the tokens
// alone. Tests label hand-written token sequences with answer() (see label()), so the exact
// examples they check run the same code as sample().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pelab/core/error.h"
#include "pelab/core/rng.h"
#include "pelab/data/task.h"

namespace pelab::tasks {

// What a task file provides to the registry: the task's name, its parameters (defaults and
// ranges) and a factory. The factory receives every declared parameter, already checked to
// be within its range.
struct TaskDef {
  std::string name;
  std::vector<TaskParam> params;
  std::function<std::unique_ptr<Task>(const TaskParams&)> make;
  // What is wrong across the parameters (each already within its range), or no keys; null for
  // a task whose ranges say everything.
  std::function<TaskParamProblem(const TaskParams&)> check = nullptr;
};

// A declared parameter's value as an int (the registry has checked the range).
int param_int(const TaskParams& params, const std::string& name);

class TaskBase : public Task {
 public:
  const TaskInfo& info() const final { return info_; }
  Example sample(Generator& rng, int length) const final;

  // The targets for `tokens`, a sequence of problem size `length` laid out as sample() lays
  // it out. Throws pelab::Error naming the problem when the sequence is malformed.
  virtual std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const = 0;

 protected:
  // Draws the tokens of one example; sequence_length(length) of them.
  virtual std::vector<int32_t> draw(Generator& rng, int length) const = 0;

  // False for a task whose examples of one size differ in length (operands of different
  // widths): sequence_length(n) is then their longest, not every example's length.
  virtual bool fixed_length() const { return true; }
  // Throws unless min_length() ≤ length.
  void check_length(int length) const;
  // Throws unless tokens has sequence_length(length) ids (at most that many, and at least one,
  // without fixed_length()), all in [0, vocab_in).
  void check_tokens(const std::vector<int32_t>& tokens, int length) const;
  // Throws unless tokens[pos] == id (a separator or query token where the layout has one).
  void expect_token(const std::vector<int32_t>& tokens, int pos, int32_t id) const;
  // Throws unless tokens[pos] < limit (a data symbol, not a special token).
  void expect_below(const std::vector<int32_t>& tokens, int pos, int32_t limit) const;

  TaskInfo info_;
};

// Builds the example a task would give for these tokens (targets from answer()).
Example label(const Task& task, std::vector<int32_t> tokens, int length);

// {"0", "1", ..., count-1} with an optional prefix ("k0", "k1", ...).
std::vector<std::string> numbered_symbols(int count, const std::string& prefix = "");
// `count` ids drawn uniformly from [0, vocab).
std::vector<int32_t> random_ids(Generator& rng, int count, int vocab);
// Classification targets: kIgnore everywhere except `label` at `pos`.
std::vector<int32_t> label_at(int size, int pos, int32_t label);

// The AppendedQueries layout over an alphabet of `symbols` data symbols "0".."k-1":
// tokens = x_1..x_n, "|", then answer_length(n) "?" tokens; targets are kIgnore on the
// input and the separator and the answer (ids 0..k-1) on the query tokens.
class AppendedQueriesTask : public TaskBase {
 public:
  using AnswerLength = std::function<int(int n)>;
  using Transform = std::function<std::vector<int32_t>(const std::vector<int32_t>& x)>;

  // `queries` spells answer_length(n) for the description ("n", "2n"); `what` says what the
  // answer is.
  AppendedQueriesTask(std::string name, int symbols, AnswerLength answer_length,
                      std::string queries, Transform transform, std::string what,
                      std::string position_need, std::string source);

  int sequence_length(int n) const override { return n + 1 + answer_length_(n); }
  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override;

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override;

 private:
  int symbols_;
  AnswerLength answer_length_;
  Transform transform_;
};

// Classification over a random string: tokens = n symbols drawn uniformly from `alphabet`
// (ids 0..|alphabet|-1), then one query token '?'; the target at the query is
// label_of(x), every other target kIgnore.
class StringClassificationTask : public TaskBase {
 public:
  using LabelOf = std::function<int32_t(const std::vector<int32_t>& x)>;

  // `what` says what the label is; `min_length` is the shortest string.
  StringClassificationTask(std::string name, std::vector<std::string> alphabet,
                           std::vector<std::string> labels, LabelOf label_of, std::string what,
                           std::string position_need, std::string source, int min_length = 1);

  int min_length() const override { return min_length_; }
  int sequence_length(int n) const override { return n + 1; }
  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override;

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override;

 private:
  int alphabet_;
  LabelOf label_of_;
  int min_length_;
};

// The layout of Delétang et al. 2023 ("Neural Networks and the Chomsky Hierarchy"; their
// experiments/utils.py, make_model_with_empty_targets): the input tokens, then one blank token
// '?' per answer token, with no separator; the encoder reads the blanks and the answer is read
// at them. Their blank is the one-hot vector of id input_size, one past their input symbols,
// and their transformer embeds its one-hot input with a bias-free linear map: a lookup of
// that id. So the blank here is a token of its own, the id after the task's input symbols.
//
// Targets are kIgnore on the input and the answer on the blanks; an answer that ends with
// their terminator marks the blanks after it kIgnore (their accuracy_mask).
class BlankAnswerTask : public TaskBase {
 public:
  int sequence_length(int n) const final { return input_length(n) + output_length(n); }
  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const final;

 protected:
  // `input_symbols` are the task's own; the constructor appends the blank '?'. `layout` is
  // Classification when the answer is one token, else AppendedQueries.
  BlankAnswerTask(std::string name, TaskLayout layout, std::vector<std::string> input_symbols,
                  std::vector<std::string> output_symbols, std::string description,
                  std::string position_need);

  // Input tokens at problem size n, their `length`: n, unless their generator changes it.
  virtual int input_length(int n) const { return n; }
  // Blank tokens at problem size n (their `output_length`).
  virtual int output_length(int n) const = 0;
  // The input_length(n) tokens, drawn as their generator draws them.
  virtual std::vector<int32_t> draw_input(Generator& rng, int n) const = 0;
  // The output_length(n) targets of the blanks for this input (a class or kIgnore each).
  // Throws pelab::Error naming the problem when the input is not one of the task's.
  virtual std::vector<int32_t> solve(const std::vector<int32_t>& input, int n) const = 0;

  std::vector<int32_t> draw(Generator& rng, int length) const final;

 private:
  int32_t blank_;
};

// Delétang's string transductions in their layout: n symbols drawn uniformly from {0..k-1},
// then answer_length(n) blanks; the targets at the blanks are transform(x).
class BlankStringTask : public BlankAnswerTask {
 public:
  using AnswerLength = std::function<int(int n)>;
  using Transform = std::function<std::vector<int32_t>(const std::vector<int32_t>& x)>;

  // `blanks` spells answer_length(n) for the description ("n", "2n"); `what` says what the
  // answer is; `source` names their generator's file.
  BlankStringTask(std::string name, int symbols, AnswerLength answer_length, std::string blanks,
                  Transform transform, std::string what, const std::string& source,
                  std::string position_need);

 protected:
  int output_length(int n) const override { return answer_length_(n); }
  std::vector<int32_t> draw_input(Generator& rng, int n) const override;
  std::vector<int32_t> solve(const std::vector<int32_t>& input, int n) const override;

 private:
  int symbols_;
  AnswerLength answer_length_;
  Transform transform_;
};

// The output symbol of Delétang's terminator ('$', their class 2 in binary_addition,
// binary_multiplication and stack_manipulation).
inline constexpr const char* kTerminatorSymbol = "$";
// `slots` targets: `answer`, the terminator, then kIgnore. Their targets there are padding
// zeros, which their accuracy_mask leaves out but their loss (unmasked) trains on; a pelab
// target is scored for both or for neither, and kIgnore keeps their accuracy exact. Asserts
// that the answer and the terminator fit.
std::vector<int32_t> terminated(std::vector<int32_t> answer, int32_t terminator, int slots);

// The source of a task that follows one of Delétang et al. 2023's generators: the paper, the
// generator's file, then `how` (", as their generator draws it" by default).
std::string deletang_source(const std::string& file,
                            const std::string& how = ", as their generator draws it");

// The `symbols` parameter of the tasks over an alphabet "0".."k-1".
TaskParam symbols_param(int64_t default_value = 8);

}  // namespace pelab::tasks
