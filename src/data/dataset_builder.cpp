// The checks every dataset file passes whatever its syntax: the header's values, and each
// example against the layout, the limits and the header's vocabulary.
#include "data/dataset_builder.h"

#include <algorithm>

#include "data/dataset_checks.h"
#include "pelab/core/error.h"

namespace pelab::dataset {

DatasetBuilder::DatasetBuilder(std::string source, std::optional<DatasetDefaults> defaults)
    : defaults_(std::move(defaults)) {
  out_.source = std::move(source);
  if (defaults_) out_.unscored = defaults_->unscored;  // until the header says otherwise
}

void DatasetBuilder::fail(int64_t line, const std::string& what) const {
  throw Error(fmt::format("{}:{}: {}", out_.source, line, what));
}

int32_t DatasetBuilder::intern(int64_t line, const std::string& symbol, const std::string& where) {
  const auto it = index_.find(symbol);
  if (it != index_.end()) return it->second;
  const std::string problem = symbol_problem(symbol);
  if (!problem.empty()) fail(line, fmt::format("{}: {}", where, problem));
  const int32_t id = static_cast<int32_t>(out_.symbols.size());
  out_.symbols.push_back(symbol);
  index_.emplace(symbol, id);
  return id;
}

// ---- the header --------------------------------------------------------------------------------

void DatasetBuilder::begin_header(int64_t line) {
  if (out_.has_header) return;
  out_.has_header = true;
  out_.header_line = line;
}

void DatasetBuilder::set_layout(int64_t line, const std::string& name) {
  const std::optional<TaskLayout> layout = layout_named(name);
  if (!layout)
    fail(line,
         fmt::format("unknown layout {} (valid: tagging, appended, classification)", quote(name)));
  out_.layout = *layout;
  out_.layout_declared = true;
}

void DatasetBuilder::set_unscored(int64_t line, const std::string& symbol) {
  const std::string problem = symbol_problem(symbol);
  if (!problem.empty()) fail(line, "unscored: " + problem);
  out_.unscored = symbol;
}

void DatasetBuilder::set_symbols(int64_t line, const std::string& key,
                                 const std::vector<std::string>& symbols) {
  if (symbols.empty()) fail(line, key + ": the list is empty");
  if (static_cast<int64_t>(symbols.size()) > kDatasetMaxVocabulary)
    fail(line, fmt::format("{}: {} symbols; the limit is {}", key, symbols.size(),
                           kDatasetMaxVocabulary));
  std::set<std::string> seen;
  for (const std::string& s : symbols) {
    const std::string problem = symbol_problem(s);
    if (!problem.empty()) fail(line, key + ": " + problem);
    if (!seen.insert(s).second) fail(line, fmt::format("{}: {} is listed twice", key, quote(s)));
  }
  (key == "input_symbols" ? out_.input_symbols : out_.output_symbols) = symbols;
}

void DatasetBuilder::finish_header(int64_t line) {
  if (!out_.has_header) return;
  if (out_.input_symbols.empty() != out_.output_symbols.empty())
    fail(line,
         "the header gives only one of input_symbols and output_symbols; give both or "
         "neither (then they are inferred)");
  out_.vocabulary_declared = !out_.input_symbols.empty();
  if (!out_.vocabulary_declared) return;
  for (size_t i = 0; i < out_.input_symbols.size(); ++i)
    declared_in_.emplace(out_.input_symbols[i], static_cast<int32_t>(i));
  for (size_t i = 0; i < out_.output_symbols.size(); ++i)
    declared_out_.emplace(out_.output_symbols[i], static_cast<int32_t>(i));
  if (out_.layout == TaskLayout::Tagging && declared_out_.count(out_.unscored))
    fail(out_.header_line,
         fmt::format("the unscored marker {} is also an output symbol; choose another "
                     "marker with 'unscored'",
                     quote(out_.unscored)));
}

void DatasetBuilder::finish_header_once(int64_t line) {
  if (header_finished_) return;
  header_finished_ = true;
  finish_header(line);
}

// The layout examples are read with: the header's, else the defaults', else (first example)
// inferred.
void DatasetBuilder::resolve_layout(std::optional<TaskLayout> inferred) {
  layout_known_ = true;
  if (out_.layout_declared) return;
  if (defaults_)
    out_.layout = defaults_->layout;
  else if (inferred)
    out_.layout = *inferred;
  else
    out_.layout = TaskLayout::Tagging;
}

// ---- one example -------------------------------------------------------------------------------

bool DatasetBuilder::unscored(int32_t id) const {
  return id == RawExample::kNull || out_.symbols[id] == out_.unscored;
}

void DatasetBuilder::check_target_shape(int64_t line, const std::vector<int32_t>& tg, int64_t n,
                                        bool is_string) const {
  switch (out_.layout) {
    case TaskLayout::Tagging: {
      if (is_string)
        fail(line,
             "the target is a string, but the layout is tagging: give a list with one "
             "entry per input symbol (a file of labels needs the classification layout)");
      if (static_cast<int64_t>(tg.size()) != n)
        fail(line, fmt::format("the target has {} entries but the input has {} symbols; the "
                               "tagging layout needs one per input symbol ({}{} where not "
                               "scored)",
                               tg.size(), n, quote(out_.unscored),
                               out_.format == DatasetFormat::Jsonl ? " or null" : ""));
      if (std::all_of(tg.begin(), tg.end(), [&](int32_t id) { return unscored(id); }))
        fail(line, "no target is scored (every entry is the unscored marker)");
      break;
    }
    case TaskLayout::AppendedQueries: {
      if (is_string)
        fail(line,
             "the target is a string, but the layout is appended: give the answer as a "
             "list of symbols");
      if (tg.empty())
        fail(line, "the answer (target) is empty; the appended layout needs at least one symbol");
      break;
    }
    case TaskLayout::Classification: {
      if (out_.format == DatasetFormat::Jsonl && !is_string)
        fail(line,
             "the target is a list, but the layout is classification: give one label as "
             "a string");
      if (tg.size() != 1)
        fail(line, fmt::format("the target has {} symbols; the classification layout needs "
                               "exactly one label",
                               tg.size()));
      break;
    }
  }
  if (out_.layout != TaskLayout::Tagging)
    for (size_t i = 0; i < tg.size(); ++i)
      if (unscored(tg[i]))
        fail(line, fmt::format("target {}: {} is the unscored marker; in the {} layout every "
                               "target symbol is scored",
                               i + 1, tg[i] == RawExample::kNull ? "null" : quote(out_.unscored),
                               to_string(out_.layout)));
}

void DatasetBuilder::check_declared_symbols(int64_t line, const std::vector<int32_t>& in,
                                            const std::vector<int32_t>& tg) const {
  for (size_t i = 0; i < in.size(); ++i)
    if (!declared_in_.count(out_.symbols[in[i]]))
      fail(line, fmt::format("unknown input symbol {} (input symbol {}; not in the header's "
                             "input_symbols)",
                             quote(out_.symbols[in[i]]), i + 1));
  for (size_t i = 0; i < tg.size(); ++i)
    if (!unscored(tg[i]) && !declared_out_.count(out_.symbols[tg[i]]))
      fail(line, fmt::format("unknown output symbol {} (target {}; not in the header's "
                             "output_symbols)",
                             quote(out_.symbols[tg[i]]), i + 1));
}

void DatasetBuilder::add_example(int64_t line, std::vector<int32_t> in, std::vector<int32_t> tg,
                                 bool is_string, int64_t length) {
  header_finished_ = true;
  if (!layout_known_) resolve_layout(is_string ? TaskLayout::Classification : TaskLayout::Tagging);
  if (static_cast<int64_t>(out_.examples.size()) >= kDatasetMaxExamples)
    fail(line, fmt::format("more than {} examples; split or sample the file", kDatasetMaxExamples));
  const int64_t n = static_cast<int64_t>(in.size());
  if (n == 0) fail(line, "the input is empty");
  check_target_shape(line, tg, n, is_string);
  const int64_t tokens = tokens_for(out_.layout, n, static_cast<int64_t>(tg.size()));
  if (tokens > kDatasetMaxTokens)
    fail(line, fmt::format("the example has {} tokens as laid out ({}); the limit is {}", tokens,
                           to_string(out_.layout), kDatasetMaxTokens));
  if (length > n) fail(line, fmt::format("length {} is more than the {} input symbols", length, n));
  if (out_.vocabulary_declared) check_declared_symbols(line, in, tg);
  RawExample e;
  e.input = std::move(in);
  e.target = std::move(tg);
  e.length = static_cast<int32_t>(length > 0 ? length : n);
  e.line = line;
  out_.examples.push_back(std::move(e));
}

ParsedDataset DatasetBuilder::finish(int64_t lines) {
  if (out_.examples.empty()) {
    if (lines == 0 || !out_.has_header)
      throw Error(fmt::format("{}: the file is empty (no examples)", out_.source));
    throw Error(fmt::format("{}: the file has a header but no examples", out_.source));
  }
  if (!layout_known_) resolve_layout(std::nullopt);
  return std::move(out_);
}

}  // namespace pelab::dataset
