// User datasets: JSONL and TSV files of examples, and the `file` task that trains and
// evaluates on them (task.name: file, task.train_file, task.eval_file).
//
// The format is specified in datasets/README.md. In brief: one example per line, the input
// as a list of symbols and the target in one of three layouts, fixed per file by an optional
// header line (JSONL: a first object with "layout"; TSV: `#layout ...` lines):
//
//   tagging         target = one entry per input symbol ("_" or null = not scored)
//                   tokens = input
//   appended        target = the answer, m >= 1 symbols
//                   tokens = input, "|", m × "?"; scored: the m query tokens
//   classification  target = one label
//                   tokens = input, "?"; scored: the query token
//
// The problem size n of an example (what evaluation buckets by) is the number of input
// symbols, or its optional `length` field. The vocabulary (input and output symbol lists) is
// the training file's header lists, or else inferred from the training file; the evaluation
// file must use it (an unknown symbol is an error naming file, line and symbol).
//
// Every error is a pelab::Error of one line naming the file and, where there is one, the line.
// The reader never trusts its input: parse_dataset_text is the libFuzzer entry point.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pelab/core/rng.h"
#include "pelab/data/task.h"

namespace pelab {

// ---- limits --------------------------------------------------------------------------------

inline constexpr int64_t kDatasetMaxFileBytes = int64_t{64} << 20;  // 64 MiB
inline constexpr int64_t kDatasetMaxLineBytes = int64_t{1} << 20;   // 1 MiB
inline constexpr int64_t kDatasetMaxExamples = 1000000;
inline constexpr int64_t kDatasetMaxTokens = 100000;     // tokens of one example, as laid out
inline constexpr int64_t kDatasetMaxSymbolBytes = 256;   // bytes of one symbol
inline constexpr int64_t kDatasetMaxVocabulary = 65536;  // symbols per vocabulary

// ---- the file format ---------------------------------------------------------------------------

enum class DatasetFormat { Jsonl, Tsv };
const char* to_string(DatasetFormat format);
// "jsonl" or "tsv"; anything else is an error listing both.
DatasetFormat parse_dataset_format(const std::string& name);
// The format a path's extension names (.jsonl/.ndjson/.json → JSONL, .tsv → TSV), if any.
std::optional<DatasetFormat> dataset_format_of_path(const std::string& path);

// One example as written. Symbols are indices into ParsedDataset::symbols.
struct RawExample {
  static constexpr int32_t kNull = -1;  // a JSON null in a tagging target
  std::vector<int32_t> input;
  std::vector<int32_t> target;  // tagging: one per input symbol; appended: the answer;
                                // classification: the label
  int32_t length = 0;           // the problem size n
  int64_t line = 0;             // 1-based line in the file
};

// What a layout and header leave for a file without a header of its own (an evaluation file
// inherits the training file's).
struct DatasetDefaults {
  TaskLayout layout = TaskLayout::Tagging;
  std::string unscored = "_";
};

struct ParsedDataset {
  std::string source;  // the file name used in messages
  DatasetFormat format = DatasetFormat::Jsonl;
  TaskLayout layout = TaskLayout::Tagging;
  bool has_header = false;
  int64_t header_line = 0;
  bool layout_declared = false;  // by the header (else the default, or inferred)
  std::string unscored = "_";    // the symbol that marks an unscored tagging target
  bool vocabulary_declared = false;
  std::vector<std::string> input_symbols;  // the header's lists, if declared
  std::vector<std::string> output_symbols;
  std::vector<std::string> symbols;  // every distinct symbol the examples use
  std::vector<RawExample> examples;
};

// Parses a dataset (the libFuzzer entry point: never crashes, throws only pelab::Error). The
// format is the one `source`'s extension names, else JSONL when the first non-blank line
// starts with '{', else TSV. Without a header the layout is tagging (JSONL: classification
// when the first target is a string). The second form gives what a file without a header
// inherits instead.
ParsedDataset parse_dataset_text(const std::string& text, const std::string& source);
ParsedDataset parse_dataset_text(const std::string& text, const std::string& source,
                                 const DatasetDefaults& defaults);
// Reads and parses a file (errors for a missing, unreadable or too large file).
ParsedDataset read_dataset_file(const std::string& path,
                                const std::optional<DatasetDefaults>& defaults = std::nullopt);

// Writes examples of a task (e.g. a generated one) as a dataset file with a header giving the
// layout and the task's vocabulary, so that reading it back gives the same token ids,
// targets and problem sizes. Each example is written in the task's layout when every
// example fits it (appended: input, '|', queries '?'; classification: input, then '?' last,
// the only scored position); otherwise every example is written as tagging over all its
// tokens, with its `length`. `layout_written`, if given, receives the layout chosen.
std::string format_dataset(const TaskInfo& info, const std::vector<Example>& examples,
                           DatasetFormat format, TaskLayout* layout_written = nullptr);

// ---- the file task -----------------------------------------------------------------------------

inline constexpr const char* kFileTaskName = "file";

// Both files of a file task, encoded with the training file's vocabulary.
struct FileTaskData {
  TaskInfo info;
  std::string train_source, eval_source;
  std::vector<Example> train, eval;
  std::vector<int64_t> train_lines, eval_lines;  // the line of each example
};

// Checks that the evaluation file fits the training file (same layout, same declared
// vocabulary, only known symbols) and encodes both.
std::shared_ptr<const FileTaskData> build_file_task_data(const ParsedDataset& train,
                                                         const ParsedDataset& eval);

class FileTask final : public Task {
 public:
  // `sampling`: "sizes" or "examples" (TaskConfig::sampling).
  explicit FileTask(std::shared_ptr<const FileTaskData> data,
                    const std::string& sampling = "sizes");

  const TaskInfo& info() const override { return data_->info; }
  // A training example of problem size `length`, uniformly among the training file's
  // examples of that size; an error naming the size when there are none.
  Example sample(Generator& rng, int length) const override;
  // A training example with size in [min_size, max_size]: "sizes" draws one of the sizes the
  // training file has there, then an example of it; "examples" draws among all of them.
  // (When every size in the range is present, "sizes" draws as a generated task does.)
  Example sample_training(Generator& rng, int64_t min_size, int64_t max_size) const override;
  // The longest sequence (tokens) among the examples of problem size at most n in either
  // file; beyond the largest size, an estimate that grows with n. (Examples of one size may
  // differ in length, and the bound is what the positional tables must cover.)
  int sequence_length(int n) const override;

  // The evaluation set of problem size `length`: every evaluation example of that size in
  // file order, or when there are more than `count`, a sample of `count` of them (without
  // replacement, in file order) fixed by (length, seed). An error naming the size when the
  // evaluation file has none.
  std::vector<Example> evaluation_set(int64_t length, int64_t count, uint64_t seed) const override;

  // The problem sizes present, ascending.
  std::vector<int> train_sizes() const override;
  std::vector<int> eval_sizes() const override;
  // "" when the training file has some example in [min_length, max_length] (the range
  // filters the file; it need not hold every size), and the evaluation file's missing
  // lengths, as messages for the config loader.
  std::string check_training_range(int64_t min_length, int64_t max_length) const override;
  std::string check_evaluation_lengths(const std::vector<int64_t>& lengths) const override;
  // "1-8, 10, 12" for messages.
  static std::string describe_sizes(const std::vector<int>& sizes);
  const FileTaskData& data() const { return *data_; }

 private:
  std::shared_ptr<const FileTaskData> data_;
  std::vector<std::pair<int, std::vector<int32_t>>> train_by_size_, eval_by_size_;
  std::vector<int64_t> train_before_;         // [i]: training examples of the sizes before entry i
  bool over_examples_ = false;                // sampling "examples"
  std::vector<std::pair<int, int>> longest_;  // (size, longest tokens at sizes <= it)
  double tokens_per_size_ = 1;                // the largest tokens/size ratio
};

// Loads both files (absolute paths, or relative to the working directory) as a FileTask.
std::unique_ptr<FileTask> make_file_task(const std::string& train_path,
                                         const std::string& eval_path,
                                         const std::string& sampling = "sizes");

// Reads both files (the evaluation file inheriting the training file's layout) as a
// FileTask. An error about either file is prefixed with `train_where` or `eval_where` (the
// config line that names it).
std::unique_ptr<FileTask> load_file_task(const std::string& train_path,
                                         const std::string& eval_path,
                                         const std::string& train_where,
                                         const std::string& eval_where,
                                         const std::string& sampling = "sizes");

}  // namespace pelab
