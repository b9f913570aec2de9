// The lm layout: a native AppendedQueries example re-laid out for a decoder, and the task
// decorator that draws such examples.
#include "pelab/data/lm_layout.h"

#include <fmt/format.h>

#include <algorithm>

#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/data/file_dataset.h"

namespace pelab {

namespace {

// The generated tasks the lm layout takes, for messages: laid out appended, with every output
// symbol an input symbol. (Not every appended task: Delétang's terminator '$' is not an input.)
// lm_layout_problem asks for this list only about a task that is not appended, and asks
// nothing further about one that is, so the two do not recurse.
std::vector<std::string> lm_task_names() {
  std::vector<std::string> names;
  for (const std::string& name : task_names()) {
    const std::unique_ptr<Task> task = make_task(name);
    const TaskInfo& info = task->info();
    if (info.layout == TaskLayout::AppendedQueries && lm_layout_problem(info).empty())
      names.push_back(name);
  }
  return names;
}

class LmTask : public Task {
 public:
  explicit LmTask(std::unique_ptr<Task> native)
      : native_(std::move(native)), vocabulary_(pelab::lm_vocabulary(native_->info())) {
    info_ = native_->info();
    info_.output_symbols.push_back(kEndSymbol);
    info_.description +=
        " Layout lm: the answer follows the separator as input tokens, each target is the "
        "next answer token, and the last is <end>; scored: the separator and the answer.";
  }

  const TaskInfo& info() const override { return info_; }
  const LmVocabulary* lm_vocabulary() const override { return &vocabulary_; }

  Example sample(Generator& rng, int length) const override {
    return to_lm_example(native_->sample(rng, length), vocabulary_);
  }
  Example sample_training(Generator& rng, int64_t min_size, int64_t max_size) const override {
    return to_lm_example(native_->sample_training(rng, min_size, max_size), vocabulary_);
  }
  std::vector<Example> evaluation_set(int64_t length, int64_t count,
                                      uint64_t eval_seed) const override {
    std::vector<Example> examples = native_->evaluation_set(length, count, eval_seed);
    for (Example& e : examples) e = to_lm_example(e, vocabulary_);
    return examples;
  }

  int min_length() const override { return native_->min_length(); }
  int sequence_length(int n) const override { return native_->sequence_length(n); }
  std::vector<int> train_sizes() const override { return native_->train_sizes(); }
  std::vector<int> eval_sizes() const override { return native_->eval_sizes(); }
  std::string check_training_range(int64_t min_length, int64_t max_length) const override {
    return native_->check_training_range(min_length, max_length);
  }
  std::string check_evaluation_lengths(const std::vector<int64_t>& lengths) const override {
    return native_->check_evaluation_lengths(lengths);
  }

 private:
  std::unique_ptr<Task> native_;
  LmVocabulary vocabulary_;
  TaskInfo info_;
};

}  // namespace

std::string lm_layout_problem(const TaskInfo& native) {
  if (native.layout != TaskLayout::AppendedQueries)
    return fmt::format(
        "'lm' is only for tasks whose examples are laid out appended ({}, or task 'file' with "
        "appended examples); task '{}' is {} (valid for it: native)",
        join(lm_task_names()), native.name, to_string(native.layout));
  for (const std::string& symbol : native.output_symbols) {
    if (symbol == kEndSymbol)
      return fmt::format(
          "'lm' adds the output symbol '{}', which task '{}' has already (valid for it: native)",
          kEndSymbol, native.name);
    if (std::find(native.input_symbols.begin(), native.input_symbols.end(), symbol) ==
        native.input_symbols.end())
      return fmt::format(
          "'lm' feeds the answer back as input, but the output symbol '{}' of task '{}' is "
          "not one of its input symbols (valid for it: native)",
          symbol, native.name);
  }
  return "";
}

LmVocabulary lm_vocabulary(const TaskInfo& native) {
  const std::string problem = lm_layout_problem(native);
  PELAB_CHECK(problem.empty(), "task.layout: {}", problem);
  LmVocabulary v;
  for (const std::string& symbol : native.output_symbols) {
    const auto it = std::find(native.input_symbols.begin(), native.input_symbols.end(), symbol);
    v.input_of_output.push_back(static_cast<int32_t>(it - native.input_symbols.begin()));
  }
  v.end = native.vocab_out();
  return v;
}

Example to_lm_example(const Example& native, const LmVocabulary& vocabulary) {
  PELAB_ASSERT(native.tokens.size() == native.targets.size());
  const int64_t T = static_cast<int64_t>(native.tokens.size());
  int64_t first = T;  // the first answer position: the scored ones are the last m
  while (first > 0 && native.targets[first - 1] != kIgnore) --first;
  const bool appended = first < T && first > 0 &&
                        std::all_of(native.targets.begin(), native.targets.begin() + first,
                                    [](int32_t y) { return y == kIgnore; });
  PELAB_CHECK(appended,
              "the lm layout needs an appended-queries example: a prompt, then the scored answer "
              "positions last (an example of size {} is not one)",
              native.length);
  Example lm = native;
  for (int64_t j = first; j < T; ++j) {
    const int32_t y = native.targets[j];
    PELAB_ASSERT(y >= 0 && y < static_cast<int32_t>(vocabulary.input_of_output.size()));
    lm.tokens[j] = vocabulary.input_of_output[y];
    lm.targets[j - 1] = y;
  }
  lm.targets[T - 1] = vocabulary.end;
  return lm;
}

std::unique_ptr<Task> make_lm_task(std::unique_ptr<Task> native) {
  PELAB_ASSERT(native != nullptr);
  return std::make_unique<LmTask>(std::move(native));
}

}  // namespace pelab
