// The file task: a training and an evaluation dataset file as a Task, and its binding to
// make_task(TaskConfig) for task.name: file.
#include <algorithm>
#include <cmath>
#include <map>

#include "data/dataset_checks.h"
#include "data/dataset_vocabulary.h"
#include "pelab/core/error.h"
#include "pelab/data/file_dataset.h"

namespace pelab {

std::shared_ptr<const FileTaskData> build_file_task_data(const ParsedDataset& train,
                                                         const ParsedDataset& eval) {
  if (eval.layout != train.layout)
    throw Error(
        fmt::format("{}:{}: the layout is {} but the training file {} is {}; both files "
                    "need the same layout",
                    eval.source, std::max<int64_t>(eval.header_line, 1), to_string(eval.layout),
                    train.source, to_string(train.layout)));
  const dataset::Vocabulary v = dataset::training_vocabulary(train);
  if (eval.vocabulary_declared) {
    std::vector<std::string> in = eval.input_symbols;
    dataset::add_specials(in, eval.layout);
    if (in != v.input || eval.output_symbols != v.output)
      throw Error(
          fmt::format("{}:{}: the header's {} differ from the training vocabulary of {}; "
                      "give the same lists or leave them out",
                      eval.source, eval.header_line,
                      in != v.input ? "input_symbols" : "output_symbols", train.source));
  }
  auto data = std::make_shared<FileTaskData>();
  data->train_source = train.source;
  data->eval_source = eval.source;
  dataset::encode(train, v, train.source, data->train, data->train_lines);
  dataset::encode(eval, v, train.source, data->eval, data->eval_lines);
  TaskInfo& info = data->info;
  info.name = kFileTaskName;
  info.layout = train.layout;
  info.input_symbols = v.input;
  info.output_symbols = v.output;
  std::string form;
  switch (train.layout) {
    case TaskLayout::Tagging:
      form =
          "Tagging. Tokens: the input symbols. Target: one per input symbol; scored where the "
          "file gives a symbol (not the unscored marker).";
      break;
    case TaskLayout::AppendedQueries:
      form =
          "Appended. Tokens: the input symbols, the separator '|', then one query "
          "token '?' per answer symbol. Target: the answer on the query tokens; scored: the "
          "query tokens only.";
      break;
    case TaskLayout::Classification:
      form =
          "Classification. Tokens: the input symbols, then one query token '?'. Target: the "
          "label at the query token; scored: the query token only.";
      break;
  }
  info.description = fmt::format(
      "{} Examples from files: training {} ({} examples), evaluation {} ({} examples). "
      "Problem size n: the number of input symbols or the example's length. Vocabulary: {} "
      "input and {} output symbols.",
      form, train.source, data->train.size(), eval.source, data->eval.size(), v.input.size(),
      v.output.size());
  info.position_need =
      "Unknown: the examples come from a file, so what position must carry depends on the data.";
  info.source = "the dataset files task.train_file and task.eval_file";
  return data;
}

namespace {
std::vector<std::pair<int, std::vector<int32_t>>> by_size(const std::vector<Example>& examples) {
  std::map<int, std::vector<int32_t>> m;
  for (size_t i = 0; i < examples.size(); ++i)
    m[examples[i].length].push_back(static_cast<int32_t>(i));
  return {m.begin(), m.end()};
}

const std::vector<int32_t>* find_size(const std::vector<std::pair<int, std::vector<int32_t>>>& v,
                                      int64_t size) {
  const auto it = std::lower_bound(v.begin(), v.end(), size,
                                   [](const auto& entry, int64_t s) { return entry.first < s; });
  return it != v.end() && it->first == size ? &it->second : nullptr;
}

std::vector<int> sizes_of(const std::vector<std::pair<int, std::vector<int32_t>>>& v) {
  std::vector<int> out;
  for (const auto& entry : v) out.push_back(entry.first);
  return out;
}
}  // namespace

FileTask::FileTask(std::shared_ptr<const FileTaskData> data, const std::string& sampling)
    : data_(std::move(data)), over_examples_(sampling == "examples") {
  PELAB_ASSERT(data_ && !data_->train.empty() && !data_->eval.empty());
  PELAB_CHECK(sampling == "sizes" || sampling == "examples",
              "task.sampling: '{}' is not valid (valid: {})", sampling, join(kSizeSamplings));
  train_by_size_ = by_size(data_->train);
  eval_by_size_ = by_size(data_->eval);
  int64_t before = 0;
  for (const auto& entry : train_by_size_) {
    train_before_.push_back(before);
    before += static_cast<int64_t>(entry.second.size());
  }
  train_before_.push_back(before);
  std::map<int, int> longest;
  for (const auto* set : {&data_->train, &data_->eval})
    for (const Example& e : *set) {
      int& l = longest[e.length];
      l = std::max(l, static_cast<int>(e.tokens.size()));
      tokens_per_size_ =
          std::max(tokens_per_size_, static_cast<double>(e.tokens.size()) / e.length);
    }
  int running = 0;
  for (const auto& [size, tokens] : longest) {
    running = std::max(running, tokens);
    longest_.emplace_back(size, running);
  }
}

int FileTask::sequence_length(int n) const {
  const auto it =
      std::upper_bound(longest_.begin(), longest_.end(), n,
                       [](int s, const std::pair<int, int>& entry) { return s < entry.first; });
  // Outside the files' sizes: grows like the steepest example, capped far above any real use.
  const int estimate =
      static_cast<int>(std::min(std::ceil(tokens_per_size_ * std::max(n, 1)), 1e8));
  if (it == longest_.begin()) return std::max(1, estimate);
  const int known = std::prev(it)->second;
  return n <= longest_.back().first ? known : std::max(known, estimate);
}

Example FileTask::sample(Generator& rng, int length) const {
  const std::vector<int32_t>* ids = find_size(train_by_size_, length);
  PELAB_CHECK(ids != nullptr, "task 'file': {} has no training example of size {} (its sizes: {})",
              data_->train_source, length, describe_sizes(train_sizes()));
  const int64_t pick = rng.uniform_int(0, static_cast<int64_t>(ids->size()) - 1);
  return data_->train[static_cast<size_t>((*ids)[static_cast<size_t>(pick)])];
}

Example FileTask::sample_training(Generator& rng, int64_t min_size, int64_t max_size) const {
  const auto size_below = [](const auto& entry, int64_t s) { return entry.first < s; };
  const auto first =
      std::lower_bound(train_by_size_.begin(), train_by_size_.end(), min_size, size_below);
  const auto last = std::lower_bound(first, train_by_size_.end(), max_size + 1, size_below);
  const int64_t lo = first - train_by_size_.begin(), hi = last - train_by_size_.begin();
  PELAB_CHECK(lo < hi,
              "task 'file': {} has no training example of size in [{}, {}] (its sizes: {})",
              data_->train_source, min_size, max_size, describe_sizes(train_sizes()));
  if (!over_examples_) {
    // One of the sizes present, uniformly: with every size of the range present this is the
    // same draw as a generated task's uniform_int(min_size, max_size).
    const int64_t entry = lo + rng.uniform_int(0, hi - lo - 1);
    return sample(rng, train_by_size_[static_cast<size_t>(entry)].first);
  }
  // Uniformly among the examples of all sizes in range: train_before_ counts them by entry.
  const int64_t pick =
      train_before_[lo] + rng.uniform_int(0, train_before_[hi] - train_before_[lo] - 1);
  const auto in =
      std::upper_bound(train_before_.begin() + lo, train_before_.begin() + hi, pick) - 1;
  const auto& ids = train_by_size_[static_cast<size_t>(in - train_before_.begin())].second;
  return data_->train[static_cast<size_t>(ids[static_cast<size_t>(pick - *in)])];
}

std::vector<Example> FileTask::evaluation_set(int64_t length, int64_t count, uint64_t seed) const {
  const std::vector<int32_t>* found = find_size(eval_by_size_, length);
  PELAB_CHECK(found != nullptr,
              "task 'file': {} has no evaluation example of size {} (its sizes: {})",
              data_->eval_source, length, describe_sizes(eval_sizes()));
  PELAB_CHECK(count >= 1, "task 'file': an evaluation set needs at least one example");
  std::vector<int32_t> ids = *found;
  if (static_cast<int64_t>(ids.size()) > count) {
    // A partial Fisher-Yates shuffle fixed by (seed, length), then back to file order.
    Generator rng(derive_seed(seed ^ mix64(static_cast<uint64_t>(length)), "file-evaluation"));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t j = rng.uniform_int(i, static_cast<int64_t>(ids.size()) - 1);
      std::swap(ids[static_cast<size_t>(i)], ids[static_cast<size_t>(j)]);
    }
    ids.resize(static_cast<size_t>(count));
    std::sort(ids.begin(), ids.end());
  }
  std::vector<Example> out;
  out.reserve(ids.size());
  for (int32_t id : ids) out.push_back(data_->eval[static_cast<size_t>(id)]);
  return out;
}

std::vector<int> FileTask::train_sizes() const {
  return sizes_of(train_by_size_);
}

std::vector<int> FileTask::eval_sizes() const {
  return sizes_of(eval_by_size_);
}

std::string FileTask::describe_sizes(const std::vector<int>& sizes) {
  if (sizes.empty()) return "none";
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < sizes.size()) {
    size_t j = i;
    while (j + 1 < sizes.size() && sizes[j + 1] == sizes[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(sizes[i])
                           : fmt::format("{}{}{}", sizes[i], j == i + 1 ? ", " : "-", sizes[j]));
    i = j + 1;
  }
  return join(parts);
}

std::string FileTask::check_training_range(int64_t min_length, int64_t max_length) const {
  for (const auto& entry : train_by_size_)
    if (entry.first >= min_length && entry.first <= max_length) return "";
  return fmt::format(
      "the training file {} has no examples of size in [task.min_length, task.max_length] = "
      "[{}, {}] (its sizes: {})",
      data_->train_source, min_length, max_length, describe_sizes(train_sizes()));
}

std::string FileTask::check_evaluation_lengths(const std::vector<int64_t>& lengths) const {
  for (int64_t n : lengths)
    if (!find_size(eval_by_size_, n))
      return fmt::format("the evaluation file {} has no examples of size {} (its sizes: {})",
                         data_->eval_source, n, describe_sizes(eval_sizes()));
  return "";
}

std::unique_ptr<FileTask> make_file_task(const std::string& train_path,
                                         const std::string& eval_path,
                                         const std::string& sampling) {
  const ParsedDataset train = read_dataset_file(train_path);
  const ParsedDataset eval =
      read_dataset_file(eval_path, DatasetDefaults{train.layout, train.unscored});
  return std::make_unique<FileTask>(build_file_task_data(train, eval), sampling);
}

// ---- loading, with errors at the config line that names each file -----------------------

std::unique_ptr<FileTask> load_file_task(const std::string& train_path,
                                         const std::string& eval_path,
                                         const std::string& train_where,
                                         const std::string& eval_where,
                                         const std::string& sampling) {
  ParsedDataset train;
  try {
    train = read_dataset_file(train_path);
  } catch (const Error& e) {
    throw Error(train_where + ": " + e.what());
  }
  try {
    const ParsedDataset eval =
        read_dataset_file(eval_path, DatasetDefaults{train.layout, train.unscored});
    return std::make_unique<FileTask>(build_file_task_data(train, eval), sampling);
  } catch (const Error& e) {
    throw Error(eval_where + ": " + e.what());
  }
}

}  // namespace pelab
