// Shared pieces of the task generators (see src/data/task_base.h). Not a task itself.
#include <algorithm>
#include <limits>

#include "data/task_base.h"
#include "pelab/core/strings.h"

namespace pelab::tasks {

int param_int(const TaskParams& params, const std::string& name) {
  const int64_t value = params.integer(name);
  PELAB_ASSERT(value >= std::numeric_limits<int>::min() &&
               value <= std::numeric_limits<int>::max());
  return static_cast<int>(value);
}

Example TaskBase::sample(Generator& rng, int length) const {
  check_length(length);
  Example example;
  example.length = length;
  example.tokens = draw(rng, length);
  const auto size = static_cast<int64_t>(example.tokens.size());
  PELAB_ASSERT(fixed_length() ? size == sequence_length(length) : size <= sequence_length(length));
  example.targets = answer(example.tokens, length);
  return example;
}

void TaskBase::check_length(int length) const {
  PELAB_CHECK(length >= min_length(), "task '{}': length {} is below the minimum length {}",
              info_.name, length, min_length());
}

void TaskBase::check_tokens(const std::vector<int32_t>& tokens, int length) const {
  check_length(length);
  const auto size = static_cast<int64_t>(tokens.size());
  if (fixed_length())
    PELAB_CHECK(size == sequence_length(length),
                "task '{}': an example of length {} has {} tokens, got {}", info_.name, length,
                sequence_length(length), size);
  else
    PELAB_CHECK(size >= 1 && size <= sequence_length(length),
                "task '{}': an example of length {} has 1 to {} tokens, got {}", info_.name, length,
                sequence_length(length), size);
  for (size_t i = 0; i < tokens.size(); ++i)
    PELAB_CHECK(tokens[i] >= 0 && tokens[i] < info_.vocab_in(),
                "task '{}': token {} at position {} is outside the input vocabulary [0, {})",
                info_.name, tokens[i], i, info_.vocab_in());
}

void TaskBase::expect_token(const std::vector<int32_t>& tokens, int pos, int32_t id) const {
  PELAB_CHECK(tokens[pos] == id, "task '{}': expected '{}' at position {}, got '{}'", info_.name,
              info_.input_symbols[id], pos, info_.input_symbols[tokens[pos]]);
}

void TaskBase::expect_below(const std::vector<int32_t>& tokens, int pos, int32_t limit) const {
  PELAB_CHECK(tokens[pos] < limit, "task '{}': expected a data symbol at position {}, got '{}'",
              info_.name, pos, info_.input_symbols[tokens[pos]]);
}

Example label(const Task& task, std::vector<int32_t> tokens, int length) {
  const auto* base = dynamic_cast<const TaskBase*>(&task);
  PELAB_ASSERT(base != nullptr);
  Example example;
  example.length = length;
  example.targets = base->answer(tokens, length);
  example.tokens = std::move(tokens);
  return example;
}

std::vector<std::string> numbered_symbols(int count, const std::string& prefix) {
  std::vector<std::string> names;
  names.reserve(count);
  for (int i = 0; i < count; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

std::vector<int32_t> random_ids(Generator& rng, int count, int vocab) {
  std::vector<int32_t> ids(count);
  for (int32_t& id : ids) id = static_cast<int32_t>(rng.uniform_int(0, vocab - 1));
  return ids;
}

std::vector<int32_t> label_at(int size, int pos, int32_t label) {
  std::vector<int32_t> targets(size, kIgnore);
  targets[pos] = label;
  return targets;
}

std::string deletang_source(const std::string& file, const std::string& how) {
  return "Delétang et al. 2023 (Neural Networks and the Chomsky Hierarchy), " + file + how;
}

TaskParam symbols_param(int64_t default_value) {
  return integer_key("symbols", default_value, 2, 64,
                     "alphabet size: the input symbols are 0..symbols-1");
}

AppendedQueriesTask::AppendedQueriesTask(std::string name, int symbols, AnswerLength answer_length,
                                         std::string queries, Transform transform, std::string what,
                                         std::string position_need, std::string source)
    : symbols_(symbols),
      answer_length_(std::move(answer_length)),
      transform_(std::move(transform)) {
  info_.name = std::move(name);
  info_.layout = TaskLayout::AppendedQueries;
  info_.input_symbols = numbered_symbols(symbols);
  info_.input_symbols.push_back("|");  // separator, id symbols
  info_.input_symbols.push_back("?");  // query, id symbols + 1
  info_.output_symbols = numbered_symbols(symbols);
  info_.description = fmt::format(
      "Appended. Input: n symbols x_1..x_n from {{0..{}}}, the separator '|', then {} "
      "query tokens '?'. Target: {}, one symbol per query token. Scored: the query tokens "
      "only (kIgnore on the input and the separator).",
      symbols - 1, queries, what);
  info_.position_need = std::move(position_need);
  info_.source = std::move(source);
}

std::vector<int32_t> AppendedQueriesTask::draw(Generator& rng, int length) const {
  std::vector<int32_t> tokens = random_ids(rng, length, symbols_);
  tokens.push_back(symbols_);
  tokens.resize(sequence_length(length), symbols_ + 1);
  return tokens;
}

std::vector<int32_t> AppendedQueriesTask::answer(const std::vector<int32_t>& tokens,
                                                 int length) const {
  check_tokens(tokens, length);
  for (int i = 0; i < length; ++i) expect_below(tokens, i, symbols_);
  expect_token(tokens, length, symbols_);
  for (int i = length + 1; i < static_cast<int>(tokens.size()); ++i)
    expect_token(tokens, i, symbols_ + 1);
  const std::vector<int32_t> x(tokens.begin(), tokens.begin() + length);
  const std::vector<int32_t> y = transform_(x);
  PELAB_ASSERT(static_cast<int>(y.size()) == answer_length_(length));
  std::vector<int32_t> targets(tokens.size(), kIgnore);
  std::copy(y.begin(), y.end(), targets.begin() + length + 1);
  return targets;
}

StringClassificationTask::StringClassificationTask(std::string name,
                                                   std::vector<std::string> alphabet,
                                                   std::vector<std::string> labels,
                                                   LabelOf label_of, std::string what,
                                                   std::string position_need, std::string source,
                                                   int min_length)
    : alphabet_(static_cast<int>(alphabet.size())),
      label_of_(std::move(label_of)),
      min_length_(min_length) {
  info_.name = std::move(name);
  info_.layout = TaskLayout::Classification;
  const std::string letters = join(alphabet);
  info_.input_symbols = std::move(alphabet);
  info_.input_symbols.push_back("?");  // the query, id |alphabet|
  info_.output_symbols = std::move(labels);
  info_.description = fmt::format(
      "Classification. Input: n symbols drawn uniformly from {{{}}}, then one query token '?'. "
      "Target: {}. Scored: the query token only (the last token); every other target is kIgnore.",
      letters, what);
  info_.position_need = std::move(position_need);
  info_.source = std::move(source);
}

std::vector<int32_t> StringClassificationTask::draw(Generator& rng, int length) const {
  std::vector<int32_t> tokens = random_ids(rng, length, alphabet_);
  tokens.push_back(alphabet_);
  return tokens;
}

std::vector<int32_t> StringClassificationTask::answer(const std::vector<int32_t>& tokens,
                                                      int length) const {
  check_tokens(tokens, length);
  for (int i = 0; i < length; ++i) expect_below(tokens, i, alphabet_);
  expect_token(tokens, length, alphabet_);
  const int32_t label = label_of_(std::vector<int32_t>(tokens.begin(), tokens.begin() + length));
  PELAB_ASSERT(label >= 0 && label < info_.vocab_out());
  return label_at(length + 1, length, label);
}

BlankAnswerTask::BlankAnswerTask(std::string name, TaskLayout layout,
                                 std::vector<std::string> input_symbols,
                                 std::vector<std::string> output_symbols, std::string description,
                                 std::string position_need)
    : blank_(static_cast<int32_t>(input_symbols.size())) {
  info_.name = std::move(name);
  info_.layout = layout;
  info_.input_symbols = std::move(input_symbols);
  info_.input_symbols.push_back("?");  // the blank, id blank_
  info_.output_symbols = std::move(output_symbols);
  info_.description = std::move(description);
  info_.position_need = std::move(position_need);
}

std::vector<int32_t> BlankAnswerTask::draw(Generator& rng, int length) const {
  std::vector<int32_t> tokens = draw_input(rng, length);
  PELAB_ASSERT(static_cast<int>(tokens.size()) == input_length(length));
  tokens.resize(sequence_length(length), blank_);
  return tokens;
}

std::vector<int32_t> BlankAnswerTask::answer(const std::vector<int32_t>& tokens, int length) const {
  check_tokens(tokens, length);
  const int k = input_length(length);
  for (int i = 0; i < k; ++i) expect_below(tokens, i, blank_);
  for (int i = k; i < static_cast<int>(tokens.size()); ++i) expect_token(tokens, i, blank_);
  const std::vector<int32_t> y = solve({tokens.begin(), tokens.begin() + k}, length);
  PELAB_ASSERT(static_cast<int>(y.size()) == output_length(length));
  std::vector<int32_t> targets(k, kIgnore);
  targets.insert(targets.end(), y.begin(), y.end());
  return targets;
}

std::vector<int32_t> terminated(std::vector<int32_t> answer, int32_t terminator, int slots) {
  PELAB_ASSERT(static_cast<int>(answer.size()) < slots);
  answer.push_back(terminator);
  answer.resize(slots, kIgnore);
  return answer;
}

BlankStringTask::BlankStringTask(std::string name, int symbols, AnswerLength answer_length,
                                 std::string blanks, Transform transform, std::string what,
                                 const std::string& source, std::string position_need)
    : BlankAnswerTask(std::move(name), TaskLayout::AppendedQueries, numbered_symbols(symbols),
                      numbered_symbols(symbols),
                      fmt::format("Appended. Input: n symbols x_1..x_n drawn uniformly from "
                                  "{{0..{}}}, then {} blank tokens '?' (no separator). Target: "
                                  "{}, one symbol per blank. Scored: the blanks only (kIgnore on "
                                  "the input).",
                                  symbols - 1, blanks, what),
                      std::move(position_need)),
      symbols_(symbols),
      answer_length_(std::move(answer_length)),
      transform_(std::move(transform)) {
  info_.source = deletang_source(source);
}

std::vector<int32_t> BlankStringTask::draw_input(Generator& rng, int n) const {
  return random_ids(rng, n, symbols_);
}

std::vector<int32_t> BlankStringTask::solve(const std::vector<int32_t>& input, int n) const {
  std::vector<int32_t> y = transform_(input);
  PELAB_ASSERT(static_cast<int>(y.size()) == answer_length_(n));
  return y;
}

}  // namespace pelab::tasks
