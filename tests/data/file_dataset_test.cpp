// User datasets (datasets/README.md): round trips of generated tasks through both formats,
// every malformed-file error (naming file and line), the evaluation file's vocabulary, the
// FileTask's sampling and evaluation sets, and `task.name: file` in experiment configs.
#include "pelab/data/file_dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "data/task_text.h"
#include "error_message.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/data/batching.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using testing::error_message;
using testing::same;
using testing::TempDir;

namespace fs = std::filesystem;

std::vector<Example> generate(const Task& task, const std::vector<int>& lengths, int count,
                              uint64_t seed) {
  Generator rng(seed);
  std::vector<Example> out;
  for (int n : lengths)
    for (int i = 0; i < count; ++i) out.push_back(task.sample(rng, n));
  return out;
}

// Restores the working directory.
struct CwdGuard {
  fs::path saved = fs::current_path();
  ~CwdGuard() { fs::current_path(saved); }
};

// ---- round trips: generated task → file text → parsed → the same examples
// ------------------------

// The parameters a task is tried with where not its defaults; every other task, a new one
// too, runs with its defaults.
const std::map<std::string, TaskParams> kRoundTripParams = {
    {"reverse", {{"symbols", 3}}},
    {"long_range", {{"distance", 2}}},
};

// The layout format_dataset writes a task in: its own, unless some example does not fit
// that layout's file form (binary_addition's queries are not `input | ?..`, nor are those of
// Delétang's appended tasks, which have no separator; long_range's scored token is not the
// last; modular_arithmetic_deletang's even sizes have one input token fewer than their size),
// when it writes tagging over all tokens.
TaskLayout written_layout(const Task& task) {
  const TaskInfo& info = task.info();
  const std::string& name = info.name;
  if (name == "binary_addition" || name == "long_range" || name == "modular_arithmetic_deletang")
    return TaskLayout::Tagging;
  const bool separator = std::find(info.input_symbols.begin(), info.input_symbols.end(), "|") !=
                         info.input_symbols.end();
  if (info.layout == TaskLayout::AppendedQueries && !separator) return TaskLayout::Tagging;
  return info.layout;
}

// Every task the registry makes by name: a new task is covered without a line here.
class RoundTrip : public ::testing::TestWithParam<std::tuple<std::string, DatasetFormat>> {};

TEST_P(RoundTrip, ReproducesTheTask) {
  const auto& [name, format] = GetParam();
  const auto params = kRoundTripParams.find(name);
  const std::unique_ptr<Task> task =
      make_task(name, params == kRoundTripParams.end() ? TaskParams{} : params->second);
  const TaskLayout written = written_layout(*task);
  std::vector<int> lengths;
  for (int n = task->min_length(); n < task->min_length() + 6; ++n) lengths.push_back(n);
  const std::vector<Example> examples = generate(*task, lengths, 4, 7);
  TaskLayout layout = TaskLayout::Tagging;
  const std::string source = format == DatasetFormat::Jsonl ? "gen.jsonl" : "gen.tsv";
  const std::string text = format_dataset(task->info(), examples, format, &layout);
  EXPECT_EQ(layout, written);

  const ParsedDataset parsed = parse_dataset_text(text, source);
  EXPECT_EQ(parsed.format, format);
  EXPECT_EQ(parsed.layout, written);
  EXPECT_TRUE(parsed.vocabulary_declared);
  ASSERT_EQ(parsed.examples.size(), examples.size());
  const auto data = build_file_task_data(parsed, parsed);
  EXPECT_EQ(data->info.input_symbols, task->info().input_symbols);
  EXPECT_EQ(data->info.output_symbols, task->info().output_symbols);
  ASSERT_EQ(data->train.size(), examples.size());
  for (size_t i = 0; i < examples.size(); ++i)
    EXPECT_TRUE(same(data->train[i], examples[i])) << name << " example " << i;

  // As a task: the sizes, sequence lengths and every sample are the generator's.
  const FileTask file(data);
  EXPECT_EQ(file.info().vocab_in(), task->info().vocab_in());
  EXPECT_EQ(file.info().vocab_out(), task->info().vocab_out());
  EXPECT_EQ(file.train_sizes(), lengths);
  for (int n : lengths) {
    // The longest example of size at most n: the task's sequence_length(n), or at most that
    // for a task whose examples of one size differ in length (decimal_addition).
    size_t longest = 0;
    for (const Example& x : examples)
      if (x.length <= n) longest = std::max(longest, x.tokens.size());
    EXPECT_EQ(file.sequence_length(n), static_cast<int>(longest)) << n;
    EXPECT_LE(file.sequence_length(n), task->sequence_length(n)) << n;
  }
  Generator rng(3);
  for (int n : lengths) {
    const Example e = file.sample(rng, n);
    EXPECT_EQ(e.length, n);
    EXPECT_TRUE(std::any_of(examples.begin(), examples.end(),
                            [&](const Example& x) { return same(x, e); }));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Tasks, RoundTrip,
    ::testing::Combine(::testing::ValuesIn(task_names()),
                       ::testing::Values(DatasetFormat::Jsonl, DatasetFormat::Tsv)),
    [](const auto& p) { return std::get<0>(p.param) + "_" + to_string(std::get<1>(p.param)); });

TEST(DatasetFormatTest, WritesTheDocumentedForms) {
  const auto copy = make_task("copy", {{"symbols", 4}});
  Generator rng(1);
  const std::vector<Example> one = {copy->sample(rng, 3)};
  const std::string jsonl = format_dataset(copy->info(), one, DatasetFormat::Jsonl);
  EXPECT_EQ(
      jsonl.substr(0, jsonl.find('\n')),
      R"({"layout":"appended","input_symbols":["0","1","2","3","|","?"],"output_symbols":["0","1","2","3"]})");
  const std::string tsv = format_dataset(copy->info(), one, DatasetFormat::Tsv);
  EXPECT_EQ(tsv.substr(0, tsv.find("\n", tsv.find("#output"))),
            "#layout appended\n#input_symbols 0 1 2 3 | ?\n#output_symbols 0 1 2 3");
  // shift's blank class is the symbol "_", so the unscored marker is another one.
  const auto shift = make_task("shift");
  const std::string shifted =
      format_dataset(shift->info(), {shift->sample(rng, 3)}, DatasetFormat::Tsv);
  EXPECT_HAS(shifted, "#unscored .\n");
  EXPECT_HAS(shifted, "\t_ _ ");
}

// ---- the forms, read
// ------------------------------------------------------------------------------

TEST(DatasetReadTest, TaggingWithUnscoredPositions) {
  const ParsedDataset d = parse_dataset_text(
      "{\"input\": [\"the\", \"cat\", \".\"], \"target\": [\"DET\", \"NOUN\", null]}\n"
      "\n"
      "{\"input\": [\"a\", \"dog\", \"!\"], \"target\": [\"DET\", \"NOUN\", \"_\"], \"length\": "
      "2}\n",
      "pos.jsonl");
  EXPECT_EQ(d.layout, TaskLayout::Tagging);
  EXPECT_FALSE(d.has_header);
  const FileTask task(build_file_task_data(d, d));
  // Inferred vocabularies, sorted.
  EXPECT_EQ(task.info().input_symbols,
            (std::vector<std::string>{"!", ".", "a", "cat", "dog", "the"}));
  EXPECT_EQ(task.info().output_symbols, (std::vector<std::string>{"DET", "NOUN"}));
  EXPECT_EQ(task.data().train[0].tokens, (std::vector<int32_t>{5, 3, 1}));
  EXPECT_EQ(task.data().train[0].targets, (std::vector<int32_t>{0, 1, kIgnore}));
  EXPECT_EQ(task.data().train[0].length, 3);
  EXPECT_EQ(task.data().train[1].length, 2);
  EXPECT_EQ(task.data().train_lines, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(task.train_sizes(), (std::vector<int>{2, 3}));
}

TEST(DatasetReadTest, AppendedAndClassificationLayouts) {
  const ParsedDataset appended = parse_dataset_text(
      "#layout appended\n"
      "# a comment\n"
      "b a c\ta b c\n"
      "c a\ta c\n",
      "sort.tsv");
  EXPECT_EQ(appended.layout, TaskLayout::AppendedQueries);
  const FileTask sort(build_file_task_data(appended, appended));
  EXPECT_EQ(sort.info().input_symbols, (std::vector<std::string>{"a", "b", "c", "|", "?"}));
  EXPECT_EQ(sort.info().output_symbols, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(sort.data().train[1].tokens, (std::vector<int32_t>{2, 0, 3, 4, 4}));
  EXPECT_EQ(sort.data().train[1].targets, (std::vector<int32_t>{kIgnore, kIgnore, kIgnore, 0, 2}));
  EXPECT_EQ(sort.sequence_length(2), 5);
  EXPECT_EQ(sort.sequence_length(3), 7);

  // JSONL infers classification from a string target.
  const ParsedDataset labels = parse_dataset_text(
      "{\"input\": [\"1\", \"0\", \"1\"], \"target\": \"even\"}\n"
      "{\"input\": [\"1\"], \"target\": \"odd\"}\n",
      "parity.jsonl");
  EXPECT_EQ(labels.layout, TaskLayout::Classification);
  const FileTask parity(build_file_task_data(labels, labels));
  EXPECT_EQ(parity.info().input_symbols, (std::vector<std::string>{"0", "1", "?"}));
  EXPECT_EQ(parity.data().train[0].tokens, (std::vector<int32_t>{1, 0, 1, 2}));
  EXPECT_EQ(parity.data().train[0].targets, (std::vector<int32_t>{kIgnore, kIgnore, kIgnore, 0}));

  // TSV classification needs the header; CRLF line ends and a byte-order mark are fine.
  const ParsedDataset tsv = parse_dataset_text(
      "\xEF\xBB\xBF#layout classification\r\n1 0 1\teven\r\n1\todd\t1\r\n", "parity.tsv");
  const FileTask same_parity(build_file_task_data(tsv, tsv));
  EXPECT_EQ(same_parity.data().train[0].tokens, parity.data().train[0].tokens);
  EXPECT_EQ(same_parity.data().train[1].targets, parity.data().train[1].targets);
}

TEST(DatasetReadTest, FormatFromExtensionElseContent) {
  EXPECT_EQ(parse_dataset_text("{\"input\": [\"a\"], \"target\": [\"b\"]}\n", "x").format,
            DatasetFormat::Jsonl);
  EXPECT_EQ(parse_dataset_text("a\tb\n", "x").format, DatasetFormat::Tsv);
  EXPECT_EQ(parse_dataset_text("{ a\tb c\n", "x.tsv").format, DatasetFormat::Tsv);
  EXPECT_HAS(error_message([] { parse_dataset_text("a\tb\n", "x.jsonl"); }),
             "x.jsonl:1: not valid JSON");
}

// ---- malformed files: one error, naming file and line
// ------------------------------------------------

struct BadCase {
  std::string name;
  std::string source;
  std::string text;
  std::vector<std::string> expected;  // substrings of the message
};

std::string repeat(const std::string& s, int64_t n) {
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out += s;
  return out;
}

const std::string kGood = "{\"input\": [\"a\"], \"target\": [\"b\"]}\n";

std::vector<BadCase> bad_cases() {
  return {
      {"empty", "e.jsonl", "", {"e.jsonl: the file is empty"}},
      {"blank", "e.tsv", "\n  \n\t\n", {"e.tsv: the file is empty"}},
      {"header_only",
       "h.tsv",
       "#layout tagging\n",
       {"h.tsv: the file has a header but no examples"}},
      {"nul_byte",
       "b.jsonl",
       kGood + std::string("{\"input\": [\"a\0\"]}\n", 18),
       {"b.jsonl:2: binary content", "column 14"}},
      {"invalid_utf8", "b.tsv", "a\tb\nx\xff y\tb\n", {"b.tsv:2: invalid UTF-8", "0xff"}},
      {"overlong_utf8", "b.tsv", "\xc0\xaf\tb\n", {"b.tsv:1: invalid UTF-8"}},
      {"surrogate_utf8", "b.tsv", "\xed\xa0\x80\tb\n", {"b.tsv:1: invalid UTF-8"}},
      {"truncated_utf8", "b.tsv", "a\tb\xc3", {"b.tsv:1: invalid UTF-8"}},
      {"bad_json", "j.jsonl", kGood + "{\"input\": [\"a\"\n", {"j.jsonl:2: not valid JSON"}},
      {"trailing_json",
       "j.jsonl",
       "{\"input\": [\"a\"], \"target\": [\"b\"]} 3\n",
       {"j.jsonl:1: not valid JSON"}},
      {"not_object", "j.jsonl", kGood + "[\"a\", \"b\"]\n", {"j.jsonl:2: expected a JSON object"}},
      {"input_not_list",
       "j.jsonl",
       "{\"input\": \"a b\", \"target\": [\"b\"]}\n",
       {"j.jsonl:1: input: expected a list"}},
      {"input_number",
       "j.jsonl",
       "{\"input\": [\"a\", 3], \"target\": [\"b\", \"c\"]}\n",
       {"j.jsonl:1: input[1]: expected a symbol (a string), got number", "write it as \"3\""}},
      {"target_number",
       "j.jsonl",
       "{\"input\": [\"a\"], \"target\": 3}\n",
       {"j.jsonl:1: target: expected a list of symbols or a string label, got number"}},
      {"target_element",
       "j.jsonl",
       "{\"input\": [\"a\"], \"target\": [true]}\n",
       {"j.jsonl:1: target[0]: expected a symbol (a string) or null, got boolean"}},
      {"missing_input",
       "j.jsonl",
       kGood + "{\"target\": [\"b\"]}\n",
       {"j.jsonl:2: missing key \"input\""}},
      {"missing_target",
       "j.jsonl",
       "{\"input\": [\"a\"]}\n",
       {"j.jsonl:1: missing key \"target\""}},
      {"unknown_key",
       "j.jsonl",
       "{\"input\": [\"a\"], \"targets\": [\"b\"]}\n",
       {"j.jsonl:1: unknown key 'targets'"}},
      {"duplicate_key",
       "j.jsonl",
       "{\"input\": [\"a\"], \"input\": [\"b\"], \"target\": [\"b\"]}\n",
       {"j.jsonl:1: the key 'input' is given twice"}},
      {"deep_nesting",
       "j.jsonl",
       "{\"input\": " + repeat("[", 100000) + "\n",
       {"j.jsonl:1: nested too deeply"}},
      {"nested_symbol",
       "j.jsonl",
       "{\"input\": [[\"a\"]], \"target\": [\"b\"]}\n",
       {"j.jsonl:1: input[0]: expected a symbol (a string), got array"}},
      {"empty_symbol",
       "j.jsonl",
       "{\"input\": [\"\"], \"target\": [\"b\"]}\n",
       {"j.jsonl:1: input[0]: an empty symbol"}},
      {"space_in_symbol",
       "j.jsonl",
       "{\"input\": [\"a b\"], \"target\": [\"b\"]}\n",
       {"j.jsonl:1: input[0]: the symbol 'a b' contains whitespace"}},
      {"control_in_symbol",
       "j.jsonl",
       "{\"input\": [\"a\\u0000\"], \"target\": [\"b\"]}\n",
       {"j.jsonl:1: input[0]: the symbol 'a\\x00' contains whitespace or a control character"}},
      {"long_symbol",
       "j.tsv",
       repeat("x", 300) + "\tb\n",
       {"j.tsv:1: input symbol 1: a symbol of 300 bytes"}},
      {"length_float",
       "j.jsonl",
       "{\"input\": [\"a\"], \"target\": [\"b\"], \"length\": 1.5}\n",
       {"j.jsonl:1: length: expected an integer"}},
      {"length_zero",
       "j.jsonl",
       "{\"input\": [\"a\"], \"target\": [\"b\"], \"length\": 0}\n",
       {"j.jsonl:1: length: must be at least 1"}},
      {"length_huge",
       "j.jsonl",
       "{\"input\": [\"a\"], \"target\": [\"b\"], \"length\": 18446744073709551615}\n",
       {"j.jsonl:1: length 9223372036854775807 is more than the 1 input symbols"}},
      {"length_too_long",
       "j.tsv",
       "a b\tc d\t3\n",
       {"j.tsv:1: length 3 is more than the 2 input symbols"}},
      {"length_not_int", "j.tsv", "a b\tc d\tx\n", {"j.tsv:1: the length 'x' is not an integer"}},
      {"empty_input",
       "j.jsonl",
       "{\"input\": [], \"target\": []}\n",
       {"j.jsonl:1: the input is empty"}},
      {"tagging_mismatch",
       "j.jsonl",
       kGood + "{\"input\": [\"a\", \"b\"], \"target\": [\"b\"]}\n",
       {"j.jsonl:2: the target has 1 entries but the input has 2 symbols"}},
      {"tagging_unscored_only", "j.tsv", "a b\t_ _\n", {"j.tsv:1: no target is scored"}},
      {"tagging_string_target",
       "j.jsonl",
       kGood + "{\"input\": [\"a\"], \"target\": \"b\"}\n",
       {"j.jsonl:2: the target is a string, but the layout is tagging"}},
      {"classification_list",
       "j.jsonl",
       "{\"input\": [\"a\"], \"target\": \"b\"}\n" + kGood,
       {"j.jsonl:2: the target is a list, but the layout is classification"}},
      {"classification_two",
       "c.tsv",
       "#layout classification\na b\tx y\n",
       {"c.tsv:2: the target has 2 symbols; the classification layout needs exactly one label"}},
      {"appended_empty",
       "a.tsv",
       "#layout appended\na b\t\n",
       {"a.tsv:2: the answer (target) is empty"}},
      {"appended_null",
       "a.jsonl",
       "{\"layout\": \"appended\"}\n{\"input\": [\"a\"], \"target\": [\"b\", null]}\n",
       {"a.jsonl:2: target 2: null is the unscored marker"}},
      {"missing_tab", "t.tsv", "a\tb\na b c\n", {"t.tsv:2: no TAB"}},
      {"too_many_fields", "t.tsv", "a\tb\t1\tx\n", {"t.tsv:1: more than 3 TAB-separated fields"}},
      {"tsv_mismatch",
       "t.tsv",
       "a b c\tx y\n",
       {"t.tsv:1: the target has 2 entries but the input has 3"}},
      {"unknown_directive",
       "t.tsv",
       "#layuot tagging\na\tb\n",
       {"t.tsv:1: unknown header line '#layuot'"}},
      {"directive_late",
       "t.tsv",
       "a\tb\n#layout tagging\n",
       {"t.tsv:2: the header line #layout comes after the first example"}},
      {"directive_twice",
       "t.tsv",
       "#layout tagging\n#layout tagging\na\tb\n",
       {"t.tsv:2: #layout is given twice"}},
      {"unknown_layout",
       "t.jsonl",
       "{\"layout\": \"seq2seq\"}\n" + kGood,
       {"t.jsonl:1: unknown layout 'seq2seq' (valid: tagging, appended, classification)"}},
      {"header_unknown_key",
       "t.jsonl",
       "{\"layuot\": \"tagging\"}\n" + kGood,
       {"t.jsonl:1: unknown header key 'layuot'"}},
      {"header_late",
       "t.jsonl",
       kGood + "{\"layout\": \"tagging\"}\n",
       {"t.jsonl:2: a header", "must be the first line"}},
      {"header_one_list",
       "t.jsonl",
       "{\"layout\": \"tagging\", \"input_symbols\": [\"a\"]}\n" + kGood,
       {"t.jsonl:1: the header gives only one of input_symbols and output_symbols"}},
      {"header_duplicate_symbol",
       "t.tsv",
       "#input_symbols a b a\n#output_symbols b\na\tb\n",
       {"t.tsv:1: input_symbols: 'a' is listed twice"}},
      {"header_marker_is_output",
       "t.tsv",
       "#input_symbols a\n#output_symbols b _\na\tb\n",
       {"t.tsv:1: the unscored marker '_' is also an output symbol"}},
      {"header_unknown_input",
       "t.tsv",
       "#input_symbols a\n#output_symbols b\na\tb\nc\tb\n",
       {"t.tsv:4: unknown input symbol 'c'", "header's input_symbols"}},
      {"header_unknown_output",
       "t.jsonl",
       "{\"input_symbols\": [\"a\"], \"output_symbols\": [\"b\"]}\n{\"input\": [\"a\"], "
       "\"target\": [\"z\"]}\n",
       {"t.jsonl:2: unknown output symbol 'z'"}},
      {"overlong_line",
       "l.tsv",
       "a\tb\n" + repeat("a ", (1 << 19) + 1) + "\tb\n",
       {"l.tsv:2: the line has 1048580 bytes; the limit is 1048576"}},
      {"overlong_sequence",
       "l.tsv",
       repeat("a ", 100001) + "\t" + repeat("b ", 100001) + "\n",
       {"l.tsv:1: the example has 100001 tokens", "limit is 100000"}},
      {"overlong_appended",
       "l.tsv",
       "#layout appended\na\t" + repeat("b ", 100000) + "\n",
       {"l.tsv:2: the example has 100002 tokens"}},
  };
}

class Malformed : public ::testing::TestWithParam<BadCase> {};

TEST_P(Malformed, NamesFileAndLine) {
  const BadCase& c = GetParam();
  const std::string message = error_message([&] { parse_dataset_text(c.text, c.source); });
  for (const std::string& part : c.expected) EXPECT_HAS(message, part);
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;  // one line
}

INSTANTIATE_TEST_SUITE_P(Cases, Malformed, ::testing::ValuesIn(bad_cases()),
                         [](const auto& p) { return p.param.name; });

TEST(DatasetLimits, TooManyExamplesAndTooLargeFiles) {
  std::string many;
  many.reserve(4 * (kDatasetMaxExamples + 1));
  for (int64_t i = 0; i <= kDatasetMaxExamples; ++i) many += "a\tb\n";
  EXPECT_HAS(error_message([&] { parse_dataset_text(many, "many.tsv"); }),
             "many.tsv:1000001: more than 1000000 examples");
  const std::string huge(static_cast<size_t>(kDatasetMaxFileBytes) + 1, 'a');
  EXPECT_HAS(error_message([&] { parse_dataset_text(huge, "huge.tsv"); }),
             "huge.tsv: 67108865 bytes is larger than the 64 MiB limit");

  TempDir dir;
  const std::string path = (dir.path() / "huge.tsv").string();
  {
    std::ofstream out(path, std::ios::binary);
    out.seekp(kDatasetMaxFileBytes);
    out.put('\n');  // a sparse file just over the limit
  }
  EXPECT_HAS(error_message([&] { read_dataset_file(path); }),
             "huge.tsv: 64.0 MiB is larger than the 64 MiB limit");
  EXPECT_HAS(error_message([&] { read_dataset_file((dir.path() / "absent.tsv").string()); }),
             "absent.tsv: no such file");
  EXPECT_HAS(error_message([&] { read_dataset_file(dir.path().string()); }), "is a directory");
}

TEST(DatasetRobustness, ArbitraryBytesOnlyEverThrowErrors) {
  // A cheap stand-in for the fuzzer: mutations of valid files in both formats.
  const std::vector<std::string> seeds = {
      "{\"layout\": \"appended\", \"input_symbols\": [\"a\", \"b\"], \"output_symbols\": [\"a\"]}\n"
      "{\"input\": [\"a\", \"b\"], \"target\": [\"a\"], \"length\": 2}\n",
      "#layout tagging\n#unscored .\na b\t. b\t2\n", "{\"input\": [\"x\"], \"target\": \"y\"}\n"};
  Generator rng(11);
  int parsed = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = seeds[static_cast<size_t>(round) % seeds.size()];
    const int edits = static_cast<int>(rng.uniform_int(1, 4));
    for (int k = 0; k < edits; ++k) {
      const size_t at =
          static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(text.size()) - 1));
      switch (rng.uniform_int(0, 2)) {
        case 0:
          text[at] = static_cast<char>(rng.uniform_int(0, 255));
          break;
        case 1:
          text.erase(at, 1);
          break;
        default:
          text.insert(at, 1, "\"[]{},:\t\n _nul"[rng.uniform_int(0, 14)]);
      }
      if (text.empty()) text.push_back('x');
    }
    for (const char* source : {"f.jsonl", "f.tsv", "f"}) {
      try {
        const ParsedDataset d = parse_dataset_text(text, source);
        const FileTask task(build_file_task_data(d, d));
        EXPECT_GE(task.info().vocab_in(), 1);
        ++parsed;
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      }
    }
  }
  EXPECT_GT(parsed, 0);
}

// ---- training and evaluation files
// -----------------------------------------------------------------

TEST(FileTaskData, EvaluationFileUsesTheTrainingVocabulary) {
  const ParsedDataset train = parse_dataset_text(
      "{\"input\": [\"a\", \"b\"], \"target\": [\"x\", \"y\"]}\n", "train.jsonl");
  const DatasetDefaults inherit{train.layout, train.unscored};
  const ParsedDataset unknown_input = parse_dataset_text(
      "{\"input\": [\"a\"], \"target\": [\"x\"]}\n\n{\"input\": [\"b\", \"z\"], \"target\": "
      "[\"y\", \"x\"]}\n",
      "eval.jsonl", inherit);
  std::string message = error_message([&] { build_file_task_data(train, unknown_input); });
  EXPECT_HAS(message, "eval.jsonl:3: unknown input symbol 'z'");
  EXPECT_HAS(message, "the vocabulary of train.jsonl");

  const ParsedDataset unknown_output =
      parse_dataset_text("{\"input\": [\"a\"], \"target\": [\"w\"]}\n", "eval.jsonl", inherit);
  EXPECT_HAS(error_message([&] { build_file_task_data(train, unknown_output); }),
             "eval.jsonl:1: unknown output symbol 'w'");

  const ParsedDataset other_layout =
      parse_dataset_text("{\"layout\": \"appended\"}\n{\"input\": [\"a\"], \"target\": [\"x\"]}\n",
                         "eval.jsonl", inherit);
  EXPECT_HAS(error_message([&] { build_file_task_data(train, other_layout); }),
             "eval.jsonl:1: the layout is appended but the training file train.jsonl is tagging");

  const ParsedDataset other_vocab = parse_dataset_text(
      "{\"input_symbols\": [\"a\"], \"output_symbols\": [\"x\", \"y\"]}\n"
      "{\"input\": [\"a\"], \"target\": [\"x\"]}\n",
      "eval.jsonl", inherit);
  EXPECT_HAS(error_message([&] { build_file_task_data(train, other_vocab); }),
             "eval.jsonl:1: the header's input_symbols differ from the training vocabulary of "
             "train.jsonl");

  const ParsedDataset good =
      parse_dataset_text("{\"input\": [\"b\", \"a\", \"b\"], \"target\": [null, \"x\", \"y\"]}\n",
                         "eval.jsonl", inherit);
  const FileTask task(build_file_task_data(train, good));
  EXPECT_EQ(task.data().eval[0].tokens, (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(task.data().eval[0].targets, (std::vector<int32_t>{kIgnore, 0, 1}));
}

TEST(FileTaskData, EvaluationFileWithoutHeaderInheritsTheLayout) {
  TempDir dir;
  const std::string train = dir.write("train.tsv", "#layout appended\n#unscored .\na b\tb a\n");
  // Read alone this would be tagging; as the evaluation file it is appended (answers of any
  // length).
  const std::string eval = dir.write("eval.tsv", "a b a\tb\nb\ta a\n");
  const std::unique_ptr<FileTask> task = make_file_task(train, eval);
  EXPECT_EQ(task->info().layout, TaskLayout::AppendedQueries);
  EXPECT_EQ(task->eval_sizes(), (std::vector<int>{1, 3}));
  EXPECT_EQ(task->sequence_length(1), 4);  // b | ? ?
  EXPECT_EQ(task->sequence_length(2), 5);  // the longest at sizes <= 2
  EXPECT_EQ(task->sequence_length(3), 5);
}

TEST(FileTaskData, EvaluationFileInheritsTheUnscoredMarker) {
  // The training file marks unscored targets with '.', so '_' can be a class; an evaluation
  // file without its own #unscored reads '_' as that class too, even with a vocabulary header.
  const ParsedDataset train = parse_dataset_text("#unscored .\n0 1\t. _\n1 0\t. 0\n", "train.tsv");
  const ParsedDataset eval =
      parse_dataset_text("#input_symbols 0 1\n#output_symbols 0 _\n0 0 1\t. _ 0\n", "eval.tsv",
                         {train.layout, train.unscored});
  const FileTask task(build_file_task_data(train, eval));
  EXPECT_EQ(task.info().output_symbols, (std::vector<std::string>{"0", "_"}));
  EXPECT_EQ(task.data().eval[0].targets, (std::vector<int32_t>{kIgnore, 1, 0}));
}

TEST(FileTaskSampling, DrawsTheSizeAskedAndEvaluatesTheFile) {
  std::string train_text, eval_text;
  for (int i = 0; i < 10; ++i) {
    train_text += fmt::format("{{\"input\": [\"a\", \"b\"], \"target\": [\"{}\", \"x\"]}}\n", i);
    train_text += fmt::format(
        "{{\"input\": [\"a\", \"b\", \"a\", \"b\"], \"target\": [\"{}\", \"x\", \"x\", \"x\"]}}\n",
        i);
  }
  for (int i = 0; i < 300; ++i)
    eval_text += fmt::format(
        "{{\"input\": [\"a\", \"b\", \"b\"], \"target\": [\"{}\", \"x\", \"x\"]}}\n", i % 10);
  eval_text += "{\"input\": [\"a\"], \"target\": [\"3\"]}\n";
  const ParsedDataset train = parse_dataset_text(train_text, "train.jsonl");
  const ParsedDataset eval =
      parse_dataset_text(eval_text, "eval.jsonl", {train.layout, train.unscored});
  const FileTask task(build_file_task_data(train, eval));

  Generator rng(5);
  std::set<int32_t> firsts;
  for (int i = 0; i < 200; ++i) {
    const Example e = task.sample(rng, 4);
    EXPECT_EQ(e.length, 4);
    EXPECT_EQ(e.tokens.size(), 4u);
    firsts.insert(e.targets[0]);
  }
  EXPECT_EQ(firsts.size(), 10u);  // uniform over the ten examples of size 4
  const std::string message = error_message([&] { task.sample(rng, 3); });
  EXPECT_HAS(message, "train.jsonl has no training example of size 3 (its sizes: 2, 4)");

  // Fewer than `count`: all, in file order. More: a fixed sample of `count`, in file order.
  const std::vector<Example> one = evaluation_examples(task, 1, 200, 1234);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].targets[0], task.data().eval.back().targets[0]);
  const std::vector<Example> a = evaluation_examples(task, 3, 200, 1234);
  const std::vector<Example> b = task.evaluation_set(3, 200, 1234);
  const std::vector<Example> c = task.evaluation_set(3, 200, 99);
  ASSERT_EQ(a.size(), 200u);
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(same(a[i], b[i]));
    differs = differs || !same(a[i], c[i]);
  }
  EXPECT_TRUE(differs);
  EXPECT_EQ(task.evaluation_set(3, 1000, 1).size(), 300u);
  EXPECT_HAS(error_message([&] { task.evaluation_set(2, 10, 1); }),
             "eval.jsonl has no evaluation example of size 2 (its sizes: 1, 3)");
  EXPECT_EQ(FileTask::describe_sizes({1, 2, 3, 5, 7, 8, 10}), "1-3, 5, 7, 8, 10");
}

// Training files whose sizes are not contiguous: the range filters the file, and training
// draws among the sizes it has there ("sizes": each size alike) or among all its examples
// ("examples": sizes weigh by their counts).
std::string sizes_file(const std::vector<std::pair<int, int>>& size_counts) {
  std::string text;
  for (const auto& [size, count] : size_counts)
    for (int i = 0; i < count; ++i) {
      std::string input, target;
      for (int t = 0; t < size; ++t) {
        input += t ? " a" : "a";
        target += t ? " x" : std::to_string(i % 10);
      }
      text += input + "\t" + target + "\n";
    }
  return text;
}

std::map<int, double> size_shares(const FileTask& task, int64_t lo, int64_t hi) {
  Generator rng(11);
  std::map<int, double> shares;
  const int draws = 6000;
  for (int i = 0; i < draws; ++i) shares[task.sample_training(rng, lo, hi).length] += 1.0 / draws;
  return shares;
}

TEST(FileTaskSampling, NonContiguousSizesByTheirSizesOrByTheirExamples) {
  const ParsedDataset train = parse_dataset_text(sizes_file({{2, 1}, {4, 1}, {6, 8}}), "t.tsv");
  const ParsedDataset eval = parse_dataset_text(sizes_file({{2, 1}}), "e.tsv");
  const FileTask by_sizes(build_file_task_data(train, eval));
  const FileTask by_examples(build_file_task_data(train, eval), "examples");
  EXPECT_EQ(by_sizes.check_training_range(1, 7), "");
  EXPECT_EQ(by_sizes.check_training_range(3, 3),
            "the training file t.tsv has no examples of size in [task.min_length, "
            "task.max_length] = [3, 3] (its sizes: 2, 4, 6)");

  std::map<int, double> s = size_shares(by_sizes, 1, 7);
  ASSERT_EQ(s.size(), 3u);  // only the sizes the file has
  for (int n : {2, 4, 6}) EXPECT_NEAR(s[n], 1.0 / 3, 0.03) << n;
  s = size_shares(by_examples, 1, 7);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[2], 0.1, 0.02);
  EXPECT_NEAR(s[4], 0.1, 0.02);
  EXPECT_NEAR(s[6], 0.8, 0.03);
  // The range filters: [3, 6] holds sizes 4 and 6 only.
  s = size_shares(by_sizes, 3, 6);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[4], 0.5, 0.03);
  s = size_shares(by_examples, 3, 6);
  EXPECT_NEAR(s[4], 1.0 / 9, 0.02);
  EXPECT_HAS(error_message([&] {
               Generator rng(1);
               by_sizes.sample_training(rng, 7, 9);
             }),
             "t.tsv has no training example of size in [7, 9] (its sizes: 2, 4, 6)");
}

// With every size of the range present, "sizes" is a generated task's draw, bit for bit: the
// size uniform in [min, max], then an example of it.
TEST(FileTaskSampling, ContiguousSizesDrawAsAGeneratedTask) {
  const ParsedDataset train =
      parse_dataset_text(sizes_file({{1, 3}, {2, 5}, {3, 2}, {4, 7}}), "t.tsv");
  const FileTask task(build_file_task_data(train, train));
  Generator a(3), b(3);
  for (int i = 0; i < 500; ++i) {
    const Example drawn = task.sample_training(a, 2, 4);
    const Example expected = task.sample(b, static_cast<int>(b.uniform_int(2, 4)));
    ASSERT_TRUE(same(drawn, expected)) << i;
  }
  EXPECT_EQ(a.next_u64(), b.next_u64());
}

// A run's task config makes the file task from its files, each time afresh: there is no
// process-wide registry of loaded files. By name alone, 'file' is an error that says how.
TEST(FileTaskBinding, MakeTaskReadsTheConfigsFiles) {
  TempDir dir;
  TaskConfig config;
  config.name = "file";
  config.train_file = dir.write("bound.tsv", "a b\tx y\n");
  config.eval_file = config.train_file;
  const std::unique_ptr<Task> task = make_task(config);
  EXPECT_EQ(task->info().name, "file");
  EXPECT_EQ(task->info().vocab_in(), 2);
  EXPECT_TRUE(task_params("file").empty());
  // Edited files are read again: nothing is cached between calls.
  dir.write("bound.tsv", "a b c\tx y z\n");
  EXPECT_EQ(make_task(config)->info().vocab_in(), 3);
  EXPECT_HAS(error_message([] { make_task("file"); }),
             "task 'file' reads its examples from task.train_file");
  EXPECT_HAS(error_message([] {
               make_task("file", {{"symbols", 3}});
             }),
             "task 'file' takes no parameters");
  config.params = {{"symbols", 3}};
  EXPECT_HAS(error_message([&] { make_task(config); }), "task 'file' takes no parameters");
  config.params = {};
  config.train_file = dir.path().string() + "/missing.tsv";
  EXPECT_HAS(error_message([&] { make_task(config); }), "missing.tsv");
}

// ---- experiment configs
// --------------------------------------------------------------------------------

const char* kFileConfig = R"(name: files
model:
  d_model: 16
  heads: 2
  layers: 1
positional:
  type: learned
task:
  name: file
  train_file: data/train.tsv
  eval_file: data/eval.tsv
training:
  steps: 5
  warmup: 1
)";

void write_dataset(const TempDir& dir) {
  dir.write("configs/data/train.tsv", "#layout appended\na b\tb a\nb\tb\nb b a\ta b b\n");
  dir.write("configs/data/eval.tsv", "a\ta\na b a b\ta a b b\nb a b a b\ta a b b b\n");
}

TEST(FileTaskConfig, LoadsWithVocabularyAndDefaultsFromTheFiles) {
  TempDir dir;
  write_dataset(dir);
  const std::string path = dir.write("configs/files.yaml", kFileConfig);
  CwdGuard cwd;
  fs::current_path(fs::temp_directory_path());  // relative paths are not the cwd's
  const ExperimentConfig c = load_experiment(path);
  EXPECT_EQ(c.task.name, "file");
  EXPECT_EQ(c.model.vocab_in, 4);   // a b | ?
  EXPECT_EQ(c.model.vocab_out, 2);  // a b
  EXPECT_EQ(c.task.train_file, (dir.path() / "configs/data/train.tsv").string());
  EXPECT_EQ(c.task.eval_file, (dir.path() / "configs/data/eval.tsv").string());
  EXPECT_EQ(c.task.min_length, 1);
  EXPECT_EQ(c.task.max_length, 3);
  EXPECT_EQ(c.evaluation.lengths, (std::vector<int64_t>{1, 4, 5}));
  EXPECT_EQ(c.model.positional.keys.integer("max_len"), 11);  // 5 + 1 + 5 tokens
  const std::unique_ptr<Task> task = make_task(c.task);
  EXPECT_EQ(task->info().vocab_in(), 4);
  EXPECT_EQ(evaluation_examples(*task, 4, 10, 0).size(), 1u);

  // The saved config reloads from anywhere (absolute paths) and gives itself back.
  const std::string saved = dir.write("run/config.yaml", to_yaml(c));
  const std::string yaml = to_yaml(c);
  EXPECT_EQ(yaml.find("handle"), std::string::npos);
  EXPECT_EQ(to_yaml(load_experiment(saved)), yaml);
}

TEST(FileTaskConfig, RelativePathsFollowTheirSource) {
  TempDir dir;
  write_dataset(dir);
  const std::string path = dir.write("configs/files.yaml", kFileConfig);
  CwdGuard cwd;
  // A command-line override is relative to the working directory.
  fs::current_path(dir.path() / "configs");
  const ExperimentConfig c = load_experiment(path, {"task.eval_file=data/train.tsv"});
  EXPECT_EQ(c.task.eval_file, (dir.path() / "configs/data/train.tsv").string());
  fs::current_path(dir.path());
  EXPECT_HAS(error_message([&] { load_experiment(path, {"task.eval_file=data/train.tsv"}); }),
             "command line 'task.eval_file=data/train.tsv': task.eval_file: " +
                 (dir.path() / "data/train.tsv").string() + ": no such file");
  // Absolute paths are kept.
  const std::string abs = (dir.path() / "configs/data/eval.tsv").string();
  EXPECT_EQ(load_experiment(path, {"task.eval_file=" + abs}).task.eval_file, abs);
  // A config given by a relative path resolves from its own directory.
  EXPECT_EQ(load_experiment("configs/files.yaml").task.train_file,
            (dir.path() / "configs/data/train.tsv").string());
}

TEST(FileTaskConfig, ErrorsNameTheKeyAndTheFile) {
  TempDir dir;
  write_dataset(dir);
  const std::string path = dir.write("configs/files.yaml", kFileConfig);
  std::string message = error_message([&] { load_experiment(path, {"task.train_file=nope.tsv"}); });
  EXPECT_HAS(message, "task.train_file: ");
  EXPECT_HAS(message, "nope.tsv: no such file");

  dir.write("configs/data/bad.tsv", "a\ta\nc a\ta a\n");
  message = error_message([&] {
    load_experiment(path, {"task.eval_file=" + (dir.path() / "configs/data/bad.tsv").string()});
  });
  EXPECT_HAS(message, "task.eval_file: ");
  EXPECT_HAS(message, "bad.tsv:2: unknown input symbol 'c'");

  message = error_message([&] {
    load_experiment(path, {"task.min_length=4", "task.max_length=5"});
  });
  EXPECT_HAS(message, "task.max_length: the training file");
  EXPECT_HAS(message,
             "has no examples of size in [task.min_length, task.max_length] = [4, 5] (its sizes: "
             "1-3)");
  EXPECT_HAS(error_message([&] { load_experiment(path, {"task.sampling=tokens"}); }),
             "task.sampling: 'tokens' is not valid (valid: sizes, examples)");
  const std::string generated =
      dir.write("configs/generated.yaml", "task:\n  name: copy\n  sampling: examples\n");
  EXPECT_HAS(error_message([&] { load_experiment(generated); }),
             "generated.yaml:3: task.sampling: 'examples' is only for task.name: file");

  message = error_message([&] { load_experiment(path, {"evaluation.lengths=[1,2]"}); });
  EXPECT_HAS(message, "evaluation.lengths: the evaluation file");
  EXPECT_HAS(message, "has no examples of size 2 (its sizes: 1, 4, 5)");

  const std::string no_eval =
      dir.write("configs/no_eval.yaml", "task:\n  name: file\n  train_file: data/train.tsv\n");
  EXPECT_HAS(error_message([&] { load_experiment(no_eval); }),
             "no_eval.yaml:2: task.name: the 'file' task needs task.train_file and task.eval_file");

  const std::string not_file =
      dir.write("configs/not_file.yaml", "task:\n  name: copy\n  train_file: data/train.tsv\n");
  EXPECT_HAS(error_message([&] { load_experiment(not_file); }),
             "not_file.yaml:3: task.train_file: only read when task.name is 'file'");
  EXPECT_HAS(error_message([&] { load_experiment(path, {"task.file_task_handle=1"}); }),
             "file_task_handle");
}

TEST(FileTaskConfig, NonContiguousTrainingFileTrainsAsItIs) {
  TempDir dir;
  dir.write("configs/data/train.tsv", sizes_file({{10, 2}, {20, 2}, {30, 2}}));
  dir.write("configs/data/eval.tsv", sizes_file({{10, 1}, {40, 1}}));
  const std::string path = dir.write("configs/files.yaml", kFileConfig);
  const ExperimentConfig c = load_experiment(path);
  EXPECT_EQ(c.task.min_length, 10);
  EXPECT_EQ(c.task.max_length, 30);
  EXPECT_EQ(c.task.sampling, "sizes");
  EXPECT_EQ(load_experiment(path, {"task.min_length=15"}).task.min_length, 15);
  const ExperimentConfig by_examples = load_experiment(path, {"task.sampling=examples"});
  EXPECT_EQ(by_examples.task.sampling, "examples");
  EXPECT_EQ(load_experiment(dir.write("run/config.yaml", to_yaml(by_examples))).task.sampling,
            "examples");
}

TEST(FileTaskConfig, ShippedExampleLoads) {
  const ExperimentConfig c = load_experiment(PELAB_SOURCE_DIR "/configs/file_example.yaml");
  EXPECT_EQ(c.task.name, "file");
  const std::unique_ptr<Task> task = make_task(c.task);
  EXPECT_EQ(c.model.vocab_in, task->info().vocab_in());
  EXPECT_EQ(c.model.vocab_out, task->info().vocab_out());
  for (const char* name :
       {"copy_train.jsonl", "copy_eval.jsonl", "repeats_train.tsv", "repeats_eval.tsv"})
    EXPECT_NO_THROW(read_dataset_file(std::string(PELAB_SOURCE_DIR "/datasets/") + name)) << name;
}

}  // namespace
}  // namespace pelab
