#include "pelab/run/dump.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>

#include "pelab/autograd/autograd.h"
#include "pelab/config/experiment.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/core/rng.h"
#include "pelab/data/file_dataset.h"
#include "pelab/data/lm_layout.h"
#include "pelab/io/read_file.h"
#include "pelab/run/run_checkpoint.h"
#include "pelab/run/run_directory.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

// Bounds that keep a dump in memory: tokens of the batch, and bytes of its largest outputs
// (logits, and all layers' attention weights together).
constexpr int64_t kDumpMaxTokens = int64_t{1} << 22;
constexpr int64_t kDumpMaxBytes = int64_t{1} << 30;
constexpr int64_t kDumpMaxCount = 100000;
constexpr uint64_t kPositionsFileLimit = uint64_t{64} << 20;

// The examples `pelab gen` would write for the task, as the text of a dataset file: read
// back through the dataset reader, they meet the run's vocabulary exactly as a file would.
ParsedDataset generated_examples(const DumpSource& source, const TaskConfig& run_task_config) {
  PELAB_CHECK(source.task != kFileTaskName,
              "--batch: 'file' is not a generated task; give the dataset file itself");
  const TaskParams params =
      source.task == run_task_config.name ? run_task_config.params : TaskParams{};
  const std::unique_ptr<Task> task = make_task(source.task, params);
  PELAB_CHECK(!source.lengths.empty(), "--batch {}: give the problem sizes with --lengths",
              source.task);
  PELAB_CHECK(source.count >= 1 && source.count <= kDumpMaxCount, "--count {} is outside [1, {}]",
              source.count, kDumpMaxCount);
  for (int64_t n : source.lengths) {
    PELAB_CHECK(n >= task->min_length() && n <= kDatasetMaxTokens,
                "--lengths: {} is outside [{}, {}]", n, task->min_length(), kDatasetMaxTokens);
    PELAB_CHECK(task->sequence_length(static_cast<int>(n)) <= kDatasetMaxTokens,
                "--lengths: size {} gives {} tokens; an example may have {}", n,
                task->sequence_length(static_cast<int>(n)), kDatasetMaxTokens);
  }
  PELAB_CHECK(source.count * static_cast<int64_t>(source.lengths.size()) <= kDumpMaxCount,
              "--count {} × {} lengths is more than the {} examples a dump may hold", source.count,
              source.lengths.size(), kDumpMaxCount);
  Generator rng(derive_seed(source.seed, "gen"));  // as `pelab gen` draws
  std::vector<Example> examples;
  for (int64_t n : source.lengths)
    for (int64_t i = 0; i < source.count; ++i)
      examples.push_back(task->sample(rng, static_cast<int>(n)));
  const std::string text = format_dataset(task->info(), examples, DatasetFormat::Jsonl);
  ParsedDataset parsed = parse_dataset_text(text, "generated " + source.task);
  // Symbol by symbol, not list against list: a task whose vocabulary differs from the run's
  // can still be dumped when every symbol it draws is one the run knows.
  parsed.vocabulary_declared = false;
  return parsed;
}

// The run's vocabulary as a dataset header in `layout`, for the file reader to encode with.
// An lm run's output symbols end with the '<end>' that the layout adds to its task's: a batch
// is a file of the task, so it is read against the task's own symbols, those `pelab gen`
// writes in its header, and to_lm_example adds '<end>' after the answer. Read against the
// run's, a header of the task would differ from it, and an answer holding '<end>' would be
// taken for a symbol the layout can feed back.
ParsedDataset run_vocabulary(const Task& run_task, TaskLayout layout, const std::string& name) {
  const TaskInfo& info = run_task.info();
  ParsedDataset vocabulary;
  vocabulary.source = name;
  vocabulary.layout = layout;
  vocabulary.vocabulary_declared = true;
  vocabulary.input_symbols = info.input_symbols;
  vocabulary.output_symbols = info.output_symbols;
  if (run_task.lm_vocabulary() != nullptr) {
    PELAB_ASSERT(!info.output_symbols.empty() && info.output_symbols.back() == kEndSymbol);
    vocabulary.output_symbols.pop_back();
  }
  return vocabulary;
}

int64_t parse_integer(const std::string& text, const std::string& what) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  PELAB_CHECK(!text.empty() && ec == std::errc() && end == text.data() + text.size(),
              "{}: '{}' is not an integer", what, text);
  return value;
}

// The positions file: one line per example (blank lines and lines starting with '#'
// skipped), each that example's positions, one per token.
std::vector<std::vector<int64_t>> read_positions_file(const std::string& path,
                                                      const DumpExamples& examples) {
  std::istringstream in(read_regular_file(path, "a file of positions", kPositionsFileLimit));
  std::vector<std::vector<int64_t>> out;
  int64_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
    const std::string where = fmt::format("{}:{}", path, line_number);
    PELAB_CHECK(out.size() < examples.examples.size(),
                "{}: more lines of positions than the {} examples of the batch", where,
                examples.examples.size());
    std::istringstream fields(line);
    std::vector<int64_t> positions;
    for (std::string field; fields >> field;) positions.push_back(parse_integer(field, where));
    const Example& e = examples.examples[out.size()];
    PELAB_CHECK(positions.size() == e.tokens.size(),
                "{}: {} positions for the example of {}, which has {} tokens; give one per token",
                where, positions.size(), examples.where[out.size()], e.tokens.size());
    out.push_back(std::move(positions));
  }
  PELAB_CHECK(out.size() == examples.examples.size(),
              "{}: {} lines of positions for the {} examples of the batch; give one line per "
              "example",
              path, out.size(), examples.examples.size());
  return out;
}

// Why a position cannot be given to the model, or "" if it can.
std::string position_problem(int64_t p, const Encoder& model) {
  if (p < 0) return fmt::format("position {} is negative (positions are >= 0)", p);
  if (p > std::numeric_limits<int32_t>::max())
    return fmt::format("position {} is more than {}", p, std::numeric_limits<int32_t>::max());
  const int64_t max_position = model.scheme().max_position();
  if (max_position >= 0 && p > max_position)
    return fmt::format(
        "position {} is beyond the learned table of this run, which stops at {} "
        "(positional.max_len)",
        p, max_position);
  return "";
}

// Bounds on what the dump will hold in memory.
void check_dump_size(const Batch& batch, const DumpOptions& options, const Encoder& model) {
  const ModelConfig& m = model.config();
  const int64_t B = batch.batch_size(), T = batch.length();
  const int64_t logits = B * T * m.vocab_out * 4;
  PELAB_CHECK(logits <= kDumpMaxBytes,
              "the logits of {} examples of {} tokens would take {} MiB (the limit is {} MiB); "
              "dump fewer or shorter examples",
              B, T, logits >> 20, kDumpMaxBytes >> 20);
  if (!options.attention) return;
  // Computed in doubles: B·H·T²·L can overflow 64 bits only in the message, never here.
  const double bytes = 4.0 * static_cast<double>(B) * static_cast<double>(m.heads) *
                       static_cast<double>(T) * static_cast<double>(T) *
                       static_cast<double>(m.layers);
  PELAB_CHECK(bytes <= static_cast<double>(kDumpMaxBytes),
              "--attention: the weights of {} examples of {} tokens ({} layers × {} heads × "
              "{}×{}) would take {:.0f} MiB (the limit is {} MiB); dump fewer or shorter examples",
              B, T, m.layers, m.heads, T, T, bytes / (1 << 20), kDumpMaxBytes >> 20);
}

}  // namespace

DumpExamples read_dump_examples(const DumpSource& source, const Task& run_task,
                                const TaskConfig& run_task_config, const std::string& run_name) {
  PELAB_CHECK(source.file.empty() != source.task.empty(),
              "give the batch as a dataset file or as a task name, not both");
  const TaskInfo& info = run_task.info();
  const ParsedDataset batch_file =
      source.file.empty() ? generated_examples(source, run_task_config)
                          : read_dataset_file(source.file, DatasetDefaults{.layout = info.layout});
  const std::shared_ptr<const FileTaskData> data =
      build_file_task_data(run_vocabulary(run_task, batch_file.layout, run_name), batch_file);
  const LmVocabulary* lm =
      batch_file.layout == TaskLayout::AppendedQueries ? run_task.lm_vocabulary() : nullptr;
  DumpExamples out;
  for (size_t i = 0; i < data->eval.size(); ++i) {
    const std::string where = fmt::format("{}:{}", batch_file.source, data->eval_lines[i]);
    // A layout's '|' or '?' that the run's vocabulary lacks was appended to it: its id is
    // past the run's input vocabulary.
    for (int32_t id : data->eval[i].tokens)
      PELAB_CHECK(id < info.vocab_in(),
                  "{}: the {} layout needs the token '{}', which the vocabulary of {} ({} input "
                  "symbols) lacks",
                  where, to_string(batch_file.layout), data->info.input_symbols[id], run_name,
                  info.vocab_in());
    out.examples.push_back(lm ? to_lm_example(data->eval[i], *lm) : data->eval[i]);
    out.where.push_back(where);
  }
  return out;
}

Padding parse_padding(const std::string& text) {
  if (text == "right") return Padding::Right;
  if (text == "left") return Padding::Left;
  throw Error(fmt::format("--pad: '{}' is not valid (valid: right, left)", text));
}

Batch make_dump_batch(const DumpExamples& examples, const DumpOptions& options,
                      const Encoder& model) {
  const int64_t B = static_cast<int64_t>(examples.examples.size());
  PELAB_CHECK(B >= 1, "the batch has no examples");
  int64_t T = 0;
  for (const Example& e : examples.examples)
    T = std::max<int64_t>(T, static_cast<int64_t>(e.tokens.size()));
  PELAB_CHECK(B * T <= kDumpMaxTokens,
              "{} examples padded to {} tokens make {} slots; a dump may hold {}", B, T, B * T,
              kDumpMaxTokens);
  int64_t shift = 0;
  std::vector<std::vector<int64_t>> given;
  if (options.positions.rfind("shift=", 0) == 0)
    shift = parse_integer(options.positions.substr(6), "--positions shift");
  else if (!options.positions.empty())
    given = read_positions_file(options.positions, examples);

  Batch batch = Batch::padding(B, T);
  for (int64_t b = 0; b < B; ++b) {
    const Example& e = examples.examples[static_cast<size_t>(b)];
    const int64_t n = static_cast<int64_t>(e.tokens.size());
    const int64_t first = options.padding == Padding::Left ? T - n : 0;  // the first real slot
    for (int64_t t = 0; t < T; ++t) {
      const int64_t k = b * T + t, i = t - first;  // i: the token of the example, if real
      const bool real = i >= 0 && i < n;
      const int64_t p = real && !given.empty() ? given[b][i] : t + shift;
      const std::string problem = position_problem(p, model);
      PELAB_CHECK(problem.empty(), "{}: {} {}: {}", examples.where[static_cast<size_t>(b)],
                  real ? "token" : "padded slot", real ? i + 1 : t + 1, problem);
      batch.positions.values[k] = static_cast<int32_t>(p);
      if (!real) continue;
      batch.tokens.values[k] = e.tokens[i];
      batch.targets.values[k] = e.targets[i];
      batch.key_mask.values[k] = 1;
    }
  }
  PELAB_CHECK(std::any_of(batch.targets.values.begin(), batch.targets.values.end(),
                          [](int32_t y) { return y != kIgnore; }),
              "the batch scores no position, so it has no loss");
  check_dump_size(batch, options, model);
  batch.validate(model.config().vocab_in, model.config().vocab_out);
  return batch;
}

SafetensorsWriter dump_tensors(const Encoder& model, const Batch& batch,
                               const DumpOptions& options) {
  SafetensorsWriter w;
  w.add("input.tokens", batch.tokens);
  w.add("input.positions", batch.positions);
  w.add("input.mask", batch.key_mask);
  w.add("input.targets", batch.targets);
  Encoder::Output out;
  {
    std::optional<NoGradGuard> no_grad;
    if (!options.grads) no_grad.emplace();
    out = model.forward(batch);  // evaluation mode: no dropout
  }
  PELAB_CHECK(out.loss.defined(), "the batch scores no position, so it has no loss");
  w.add("output.logits", out.logits);  // [B, T, V_out]
  w.add("output.loss", out.loss);      // []
  if (options.grads) {
    std::vector<Tensor> params = model.params().all();
    for (Tensor& p : params) p.zero_grad();
    out.loss.backward();
    for (Tensor& p : params) {
      const Tensor g = p.grad();  // undefined where no gradient reached: zero
      w.add("grad." + p.name(), g.defined() ? g : Tensor::zeros(p.shape()));
      p.zero_grad();
    }
  }
  if (options.attention) {
    const std::vector<Tensor> maps = model.attention_maps(batch);  // [B, H, T, T] each
    for (size_t l = 0; l < maps.size(); ++l)
      w.add(fmt::format("output.attention.{}.weights", l), maps[l]);
  }
  return w;
}

namespace {

// Where the dump goes must be a file that nothing else owns, checked before anything is read
// or created: not a directory (a path ending in '/' names one, and would leave the directories
// made for it behind), never a file of a run directory (only the trainer writes there), and not
// an existing file unless `overwrite` says so.
void check_dump_out(const DumpRequest& r) {
  PELAB_CHECK(!r.out.empty(), "--out: give the file to write, e.g. --out dump.safetensors");
  const std::string out = message_text(r.out);
  std::error_code ec;
  PELAB_CHECK(r.out.back() != '/' && !fs::is_directory(r.out, ec),
              "--out {} names a directory; give the file to write, e.g. {}dump.safetensors", out,
              r.out.back() == '/' ? out : out + "/");
  const std::string parent = fs::path(r.out).parent_path().string();
  PELAB_CHECK(!is_run_directory(parent) || !fs::exists(fs::symlink_status(r.out, ec)),
              "--out {} is a file of the run directory {}; only training writes there (write "
              "the dump elsewhere)",
              out, parent.empty() ? "." : message_text(parent));
  PELAB_CHECK(r.overwrite || !fs::exists(fs::symlink_status(r.out, ec)),
              "--out {} exists; pelab dump never replaces a file unless given --overwrite", out);
}

}  // namespace

std::string run_dump(const DumpRequest& r) {
  check_dump_out(r);
  RunCheckpoint run = open_run_checkpoint(r.run);
  std::error_code ec;
  for (const std::string& own : {run.checkpoint_path, (fs::path(run.dir) / "config.yaml").string()})
    PELAB_CHECK(!fs::equivalent(r.out, own, ec),
                "--out {} is the run's own {}; write the dump elsewhere", r.out,
                fs::path(own).filename().string());
  const ExperimentConfig& c = run.config;
  set_num_threads(static_cast<int>(c.threads));
  const std::unique_ptr<Task> task = make_task(c.task);
  const DumpExamples examples = read_dump_examples(r.source, *task, c.task, run.dir);
  const Batch batch = make_dump_batch(examples, r.options, *run.model);
  SafetensorsWriter w = dump_tensors(*run.model, batch, r.options);
  const std::string batch_source =
      r.source.file.empty() ? fmt::format("generated {} (seed {})", r.source.task, r.source.seed)
                            : r.source.file;
  w.set_metadata("format", "pelab dump 1");
  w.set_metadata("config", to_yaml(c));
  w.set_metadata("checkpoint", run.checkpoint_path);
  w.set_metadata("batch", batch_source);
  w.set_metadata("padding", r.options.padding == Padding::Left ? "left" : "right");
  w.set_metadata("positions", r.options.positions.empty() ? "index" : r.options.positions);
  const fs::path parent = fs::path(r.out).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    PELAB_CHECK(!ec, "{}: cannot create the directory: {}", parent.string(), ec.message());
  }
  w.write(r.out);
  float loss = 0;
  for (const SafetensorsTensor& t : w.tensors())
    if (t.name == "output.loss") loss = t.f32.at(0);
  return fmt::format("{}: {} examples of up to {} tokens from {}; loss {:.6f}{}{}", r.out,
                     batch.batch_size(), batch.length(), batch_source, loss,
                     r.options.attention ? "; attention weights" : "",
                     r.options.grads ? "; gradients" : "");
}

}  // namespace pelab
