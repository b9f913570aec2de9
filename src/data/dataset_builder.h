// Private to the dataset reader (src/data/dataset_*.cpp): what the JSONL and TSV line readers
// share. A DatasetBuilder collects one file's header and examples and checks each against
// the format (datasets/README.md); the line readers only turn their syntax into its calls.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pelab/data/file_dataset.h"

namespace pelab::dataset {

class DatasetBuilder {
 public:
  DatasetBuilder(std::string source, std::optional<DatasetDefaults> defaults);

  // Every error of a file: "<source>:<line>: <what>".
  [[noreturn]] void fail(int64_t line, const std::string& what) const;

  DatasetFormat format() const { return out_.format; }
  void set_format(DatasetFormat format) { out_.format = format; }
  bool has_header() const { return out_.has_header; }
  bool has_examples() const { return !out_.examples.empty(); }

  // The id of a symbol the examples use (added on first use, checked by symbol_problem).
  int32_t intern(int64_t line, const std::string& symbol, const std::string& where);

  // ---- the header: begin, then any of the setters, then finish before the first example.
  void begin_header(int64_t line);
  void set_layout(int64_t line, const std::string& name);
  void set_unscored(int64_t line, const std::string& symbol);
  // `key` is "input_symbols" or "output_symbols".
  void set_symbols(int64_t line, const std::string& key, const std::vector<std::string>& symbols);
  void finish_header(int64_t line);
  // finish_header unless the header was finished (or an example read) already.
  void finish_header_once(int64_t line);

  // One example: input ids, target ids (RawExample::kNull for a JSON null), whether the
  // target was a string (JSONL) and the length it gives (0: none).
  void add_example(int64_t line, std::vector<int32_t> in, std::vector<int32_t> tg, bool is_string,
                   int64_t length);

  // The dataset, once every line is read (`lines`: how many there were).
  ParsedDataset finish(int64_t lines);

 private:
  void resolve_layout(std::optional<TaskLayout> inferred);
  bool unscored(int32_t id) const;
  void check_target_shape(int64_t line, const std::vector<int32_t>& tg, int64_t n,
                          bool is_string) const;
  void check_declared_symbols(int64_t line, const std::vector<int32_t>& in,
                              const std::vector<int32_t>& tg) const;

  std::optional<DatasetDefaults> defaults_;
  ParsedDataset out_;
  std::unordered_map<std::string, int32_t> index_;
  std::unordered_map<std::string, int32_t> declared_in_, declared_out_;
  bool layout_known_ = false;
  bool header_finished_ = false;
};

// Reads the lines of a JSONL file: a first object without "input" is the header.
class JsonlLineReader {
 public:
  explicit JsonlLineReader(DatasetBuilder& builder) : builder_(builder) {}
  void read(int64_t line, std::string_view text);

 private:
  DatasetBuilder& builder_;
  bool seen_line_ = false;  // a non-blank line was read
};

// Reads the lines of a TSV file: `#key values` lines before the first example are the header.
class TsvLineReader {
 public:
  explicit TsvLineReader(DatasetBuilder& builder) : builder_(builder) {}
  void read(int64_t line, std::string_view text);

 private:
  void directive(int64_t line, std::string_view text);
  DatasetBuilder& builder_;
  std::set<std::string> keys_;  // the header lines given
};

}  // namespace pelab::dataset
