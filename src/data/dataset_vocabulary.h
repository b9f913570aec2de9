// Private to the file task (src/data/file_task.cpp): the vocabulary of a pair of dataset
// files and the encoding of parsed examples into token and target ids.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "pelab/data/file_dataset.h"

namespace pelab::dataset {

struct Vocabulary {
  std::vector<std::string> input, output;
  std::unordered_map<std::string, int32_t> input_id, output_id;
  void index();
};

// The training file's vocabulary: its header's lists, else the symbols its examples use
// (sorted), then the layout's special tokens.
Vocabulary training_vocabulary(const ParsedDataset& train);

// Encodes a parsed file with the vocabulary; unknown symbols are errors naming file and line.
void encode(const ParsedDataset& d, const Vocabulary& v, const std::string& vocab_source,
            std::vector<Example>& examples, std::vector<int64_t>& lines);

}  // namespace pelab::dataset
