// Writing a task's examples as a dataset file (format_dataset): the header gives the layout
// and the task's vocabulary, so that reading the file back gives the same token ids, targets
// and problem sizes.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "data/dataset_checks.h"
#include "pelab/core/error.h"
#include "pelab/data/file_dataset.h"

namespace pelab {

namespace {

using json = nlohmann::json;
using dataset::kQuery;
using dataset::kSeparator;

// How format_dataset writes one example.
struct Written {
  std::vector<int32_t> input;   // input ids
  std::vector<int32_t> target;  // output ids or kIgnore
  int32_t length = 0;
  bool write_length = false;
};

std::optional<Written> as_appended(const Example& e, int32_t sep, int32_t query) {
  const int64_t T = static_cast<int64_t>(e.tokens.size());
  int64_t first = T;  // the first scored position; everything after it must be scored
  while (first > 0 && e.targets[first - 1] != kIgnore && e.tokens[first - 1] == query) --first;
  const int64_t m = T - first, k = first - 1;
  if (m < 1 || k < 1 || e.tokens[k] != sep || e.length > k) return std::nullopt;
  for (int64_t t = 0; t <= k; ++t)
    if (e.targets[t] != kIgnore) return std::nullopt;
  Written w;
  w.input.assign(e.tokens.begin(), e.tokens.begin() + k);
  w.target.assign(e.targets.begin() + first, e.targets.end());
  w.length = e.length;
  w.write_length = e.length != k;
  return w;
}

std::optional<Written> as_classification(const Example& e, int32_t query) {
  const int64_t T = static_cast<int64_t>(e.tokens.size());
  if (T < 2 || e.tokens[T - 1] != query || e.targets[T - 1] == kIgnore || e.length > T - 1)
    return std::nullopt;
  for (int64_t t = 0; t + 1 < T; ++t)
    if (e.targets[t] != kIgnore) return std::nullopt;
  Written w;
  w.input.assign(e.tokens.begin(), e.tokens.end() - 1);
  w.target = {e.targets[T - 1]};
  w.length = e.length;
  w.write_length = e.length != T - 1;
  return w;
}

Written as_tagging(const Example& e) {
  Written w;
  w.input = e.tokens;
  w.target = e.targets;
  w.length = e.length;
  w.write_length = e.length != static_cast<int32_t>(e.tokens.size());
  return w;
}

// The reader's line limit, checked by the writer so that what it writes reads back.
void check_line_length(const TaskInfo& info, const Written& w, size_t bytes) {
  PELAB_CHECK(static_cast<int64_t>(bytes) <= kDatasetMaxLineBytes,
              "task '{}': an example of size {} takes a line of {} bytes, over the {} MiB limit "
              "of a dataset line; use smaller sizes",
              info.name, w.length, bytes, kDatasetMaxLineBytes >> 20);
}

int32_t index_of(const std::vector<std::string>& symbols, const char* s) {
  const auto it = std::find(symbols.begin(), symbols.end(), s);
  return it == symbols.end() ? -1 : static_cast<int32_t>(it - symbols.begin());
}

// Each example as written: in the task's layout if every example fits it, else as tagging
// over all its tokens. `layout` receives the layout chosen.
std::vector<Written> as_written(const TaskInfo& info, const std::vector<Example>& examples,
                                TaskLayout& layout) {
  std::vector<Written> written;
  written.reserve(examples.size());
  layout = info.layout;
  const int32_t sep = index_of(info.input_symbols, kSeparator);
  const int32_t query = index_of(info.input_symbols, kQuery);
  if (layout == TaskLayout::AppendedQueries || layout == TaskLayout::Classification) {
    for (const Example& e : examples) {
      PELAB_ASSERT(e.tokens.size() == e.targets.size());
      std::optional<Written> w;
      if (layout == TaskLayout::AppendedQueries && sep >= 0 && query >= 0)
        w = as_appended(e, sep, query);
      if (layout == TaskLayout::Classification && query >= 0) w = as_classification(e, query);
      if (!w) {
        written.clear();
        layout = TaskLayout::Tagging;
        break;
      }
      written.push_back(std::move(*w));
    }
  } else {
    layout = TaskLayout::Tagging;
  }
  if (layout == TaskLayout::Tagging)
    for (const Example& e : examples) written.push_back(as_tagging(e));
  for (const Written& w : written)
    PELAB_CHECK(
        std::any_of(w.target.begin(), w.target.end(), [](int32_t t) { return t != kIgnore; }),
        "task '{}': an example has no scored target", info.name);
  return written;
}

// The unscored marker: "_" unless that is an output symbol.
std::string unscored_marker(const TaskInfo& info) {
  std::string marker = "_";
  for (const char* candidate : {"_", ".", "-", "~", "__", "<unscored>"}) {
    marker = candidate;
    if (index_of(info.output_symbols, candidate) < 0) break;
  }
  PELAB_CHECK(index_of(info.output_symbols, marker.c_str()) < 0,
              "task '{}': no unscored marker is free", info.name);
  return marker;
}

std::string jsonl_text(const TaskInfo& info, const std::vector<Written>& written, TaskLayout layout,
                       const std::string& marker) {
  std::string out;
  nlohmann::ordered_json header;
  header["layout"] = to_string(layout);
  header["input_symbols"] = info.input_symbols;
  header["output_symbols"] = info.output_symbols;
  if (marker != "_") header["unscored"] = marker;
  out += header.dump() + "\n";
  for (const Written& w : written) {
    nlohmann::ordered_json line;
    json input = json::array(), target = json::array();
    for (int32_t id : w.input) input.push_back(info.input_symbols.at(id));
    if (layout == TaskLayout::Classification) {
      target = info.output_symbols.at(w.target.at(0));
    } else {
      for (int32_t id : w.target) {
        if (id == kIgnore)
          target.push_back(nullptr);
        else
          target.push_back(info.output_symbols.at(id));
      }
    }
    line["input"] = input;
    line["target"] = target;
    if (w.write_length) line["length"] = w.length;
    const std::string text = line.dump();
    check_line_length(info, w, text.size());
    out += text + "\n";
  }
  return out;
}

std::string tsv_text(const TaskInfo& info, const std::vector<Written>& written, TaskLayout layout,
                     const std::string& marker) {
  std::string out;
  out += fmt::format("#layout {}\n", to_string(layout));
  out += "#input_symbols " + join(info.input_symbols, " ") + "\n";
  out += "#output_symbols " + join(info.output_symbols, " ") + "\n";
  if (marker != "_") out += "#unscored " + marker + "\n";
  for (const Written& w : written) {
    std::string line;
    for (size_t i = 0; i < w.input.size(); ++i)
      line += (i ? " " : "") + info.input_symbols.at(w.input[i]);
    line += '\t';
    for (size_t i = 0; i < w.target.size(); ++i)
      line +=
          (i ? " " : "") + (w.target[i] == kIgnore ? marker : info.output_symbols.at(w.target[i]));
    if (w.write_length) line += fmt::format("\t{}", w.length);
    check_line_length(info, w, line.size());
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string format_dataset(const TaskInfo& info, const std::vector<Example>& examples,
                           DatasetFormat format, TaskLayout* layout_written) {
  PELAB_CHECK(!examples.empty(), "no examples to write");
  for (const auto* list : {&info.input_symbols, &info.output_symbols})
    for (const std::string& s : *list) {
      const std::string problem = dataset::symbol_problem(s);
      PELAB_CHECK(problem.empty(), "task '{}' cannot be written as a dataset: {}", info.name,
                  problem);
    }
  TaskLayout layout = info.layout;
  const std::vector<Written> written = as_written(info, examples, layout);
  if (layout_written) *layout_written = layout;
  const std::string marker = unscored_marker(info);
  return format == DatasetFormat::Jsonl ? jsonl_text(info, written, layout, marker)
                                        : tsv_text(info, written, layout, marker);
}

}  // namespace pelab
