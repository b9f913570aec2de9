// The vocabulary of a pair of dataset files and the encoding of their examples.
#include "data/dataset_vocabulary.h"

#include <algorithm>

#include "data/dataset_checks.h"
#include "pelab/core/error.h"

namespace pelab::dataset {

namespace {

bool is_unscored(const ParsedDataset& d, int32_t id) {
  return id == RawExample::kNull || d.symbols[id] == d.unscored;
}

}  // namespace

void Vocabulary::index() {
  for (size_t i = 0; i < input.size(); ++i) input_id.emplace(input[i], static_cast<int32_t>(i));
  for (size_t i = 0; i < output.size(); ++i) output_id.emplace(output[i], static_cast<int32_t>(i));
}

Vocabulary training_vocabulary(const ParsedDataset& train) {
  Vocabulary v;
  if (train.vocabulary_declared) {
    v.input = train.input_symbols;
    v.output = train.output_symbols;
  } else {
    std::vector<char> in_used(train.symbols.size(), 0), out_used(train.symbols.size(), 0);
    for (const RawExample& e : train.examples) {
      for (int32_t id : e.input) in_used[id] = 1;
      for (int32_t id : e.target)
        if (!is_unscored(train, id)) out_used[id] = 1;
    }
    for (size_t i = 0; i < train.symbols.size(); ++i) {
      if (in_used[i]) v.input.push_back(train.symbols[i]);
      if (out_used[i]) v.output.push_back(train.symbols[i]);
    }
    std::sort(v.input.begin(), v.input.end());
    std::sort(v.output.begin(), v.output.end());
    PELAB_CHECK(static_cast<int64_t>(v.input.size()) <= kDatasetMaxVocabulary,
                "{}: {} distinct input symbols; the limit is {}", train.source, v.input.size(),
                kDatasetMaxVocabulary);
    PELAB_CHECK(static_cast<int64_t>(v.output.size()) <= kDatasetMaxVocabulary,
                "{}: {} distinct output symbols; the limit is {}", train.source, v.output.size(),
                kDatasetMaxVocabulary);
  }
  add_specials(v.input, train.layout);
  v.index();
  return v;
}

void encode(const ParsedDataset& d, const Vocabulary& v, const std::string& vocab_source,
            std::vector<Example>& examples, std::vector<int64_t>& lines) {
  std::vector<int32_t> in_id(d.symbols.size(), -1), out_id(d.symbols.size(), -1);
  for (size_t i = 0; i < d.symbols.size(); ++i) {
    const auto a = v.input_id.find(d.symbols[i]);
    if (a != v.input_id.end()) in_id[i] = a->second;
    const auto b = v.output_id.find(d.symbols[i]);
    if (b != v.output_id.end()) out_id[i] = b->second;
  }
  const int32_t sep = d.layout == TaskLayout::AppendedQueries ? v.input_id.at(kSeparator) : -1;
  const int32_t query = d.layout != TaskLayout::Tagging ? v.input_id.at(kQuery) : -1;
  examples.reserve(d.examples.size());
  lines.reserve(d.examples.size());
  for (const RawExample& r : d.examples) {
    Example e;
    e.length = r.length;
    const size_t n = r.input.size();
    e.tokens.reserve(static_cast<size_t>(
        tokens_for(d.layout, static_cast<int64_t>(n), static_cast<int64_t>(r.target.size()))));
    for (size_t i = 0; i < n; ++i) {
      const int32_t id = in_id[r.input[i]];
      if (id < 0)
        throw Error(fmt::format(
            "{}:{}: unknown input symbol {} (input symbol {}; the vocabulary "
            "of {} has {} input symbols)",
            d.source, r.line, quote(d.symbols[r.input[i]]), i + 1, vocab_source, v.input.size()));
      e.tokens.push_back(id);
    }
    std::vector<int32_t> answer;
    for (size_t i = 0; i < r.target.size(); ++i) {
      if (is_unscored(d, r.target[i])) {
        answer.push_back(kIgnore);
        continue;
      }
      const int32_t id = out_id[r.target[i]];
      if (id < 0)
        throw Error(fmt::format(
            "{}:{}: unknown output symbol {} (target {}; the vocabulary of "
            "{} has {} output symbols)",
            d.source, r.line, quote(d.symbols[r.target[i]]), i + 1, vocab_source, v.output.size()));
      answer.push_back(id);
    }
    switch (d.layout) {
      case TaskLayout::Tagging:
        e.targets = std::move(answer);
        break;
      case TaskLayout::AppendedQueries:
        e.tokens.push_back(sep);
        e.tokens.insert(e.tokens.end(), answer.size(), query);
        e.targets.assign(n + 1, kIgnore);
        e.targets.insert(e.targets.end(), answer.begin(), answer.end());
        break;
      case TaskLayout::Classification:
        e.tokens.push_back(query);
        e.targets.assign(n, kIgnore);
        e.targets.push_back(answer.at(0));
        break;
    }
    PELAB_ASSERT(e.tokens.size() == e.targets.size());
    examples.push_back(std::move(e));
    lines.push_back(r.line);
  }
}

}  // namespace pelab::dataset
