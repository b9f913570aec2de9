// `pelab gen`: writes a generated task's examples as a dataset file (datasets/README.md), to
// inspect a task or to train on it through `task.name: file`.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "pelab/cli/commands.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/rng.h"
#include "pelab/data/file_dataset.h"
#include "pelab/data/task.h"
#include "pelab/io/atomic_file.h"

namespace pelab::cli {

namespace fs = std::filesystem;

namespace {

// "1,2,5-8" → sorted distinct sizes; each in [0, kDatasetMaxTokens] (the task's own minimum
// is checked once the task is made).
std::vector<int64_t> parse_lengths(const std::vector<std::string>& values) {
  const IntegerRange sizes = range_of<int64_t>(0, kDatasetMaxTokens);
  std::vector<int64_t> lengths;
  for (const std::string& item : option_items("--lengths", values)) {
    const size_t dash = item.find('-', 1);
    if (dash == std::string::npos) {
      lengths.push_back(option_integer("--lengths", item, sizes));
      continue;
    }
    const int64_t lo = option_integer("--lengths", item.substr(0, dash), sizes);
    const int64_t hi = option_integer("--lengths", item.substr(dash + 1), sizes);
    if (lo > hi)
      throw CLI::ValidationError(
          "--lengths",
          fmt::format("expected a range lo-hi with lo <= hi, got '{}'", message_text(item)));
    for (int64_t n = lo; n <= hi; ++n) lengths.push_back(n);
  }
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  return lengths;
}

// --param key=value, each value read as the task's key table types it (an unknown key is
// left to make_task, which lists the task's parameters).
TaskParams parse_params(const std::string& task, const std::vector<std::string>& items) {
  const std::vector<TaskParam> specs = task_params(task);
  TaskParams params;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    PELAB_CHECK(eq != std::string::npos && eq > 0,
                "--param '{}': expected key=value, e.g. --param symbols=4", item);
    const std::string key = item.substr(0, eq), text = item.substr(eq + 1);
    PELAB_CHECK(!params.has(key), "--param: '{}' is given twice", key);
    const TaskParam* spec = find_key(specs, key);
    std::string error;
    if (spec && spec->type == KeySpec::Type::Text) {
      params.set(key, text);
    } else if (spec && spec->type == KeySpec::Type::Number) {
      double value = 0;
      error = parse_number(text, NumberRange{}, value);
      params.set(key, value);
    } else {
      int64_t value = 0;
      error = parse_integer(text, IntegerRange{}, value);
      params.set(key, value);
    }
    PELAB_CHECK(error.empty(), "--param {}: {}", message_text(key), error);
  }
  return params;
}

void add_tasks_command(CLI::App& app, Action& action) {
  auto name = std::make_shared<std::string>();
  auto markdown = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "tasks",
      "List the generated tasks, or describe one: input, target, scored positions, "
      "parameters and what it needs from position");
  cmd->add_option("task", *name, "a task to describe (default: list them all)");
  cmd->add_flag("--markdown", *markdown, "every task's full description as Markdown");
  cmd->callback([name, markdown, &action] {
    action = [name, markdown] {
      if (*markdown) {
        fmt::print("{}", task_reference_markdown());
        return 0;
      }
      if (name->empty()) {
        for (const std::string& task : task_names()) {
          const std::unique_ptr<Task> generator = make_task(task);
          const TaskInfo& info = generator->info();
          // The first sentence of the description that says what is read.
          const std::string& text = info.description;
          const size_t from = std::min(text.find("Input"), text.size());
          const size_t to = text.find(". ", from);
          fmt::print("{:<20} {:<17} {}\n", task, to_string(info.layout),
                     text.substr(from, to == std::string::npos ? to : to + 1 - from));
        }
        fmt::print("\n`pelab tasks NAME` describes one; `task.name: file` reads your own data.\n");
        return 0;
      }
      const std::unique_ptr<Task> task = make_task(*name);
      const TaskInfo& info = task->info();
      fmt::print("{} ({} layout{})\n\n{}\n\nPosition: {}\n\nSource: {}.\n\nParameters:\n", *name,
                 to_string(info.layout), info.causal_only ? "; needs model.causal: true" : "",
                 info.description, info.position_need, info.source);
      for (const TaskParam& p : task_params(*name))
        fmt::print("  task.{} = {}  {} (in {})\n", p.name, key_value_text(*p.default_value), p.help,
                   key_valid_text(p));
      return 0;
    };
  });
}

}  // namespace

void add_data_commands(CLI::App& app, Action& action) {
  add_tasks_command(app, action);
  struct GenArgs {
    std::string task;
    std::vector<std::string> params;
    std::vector<int64_t> lengths;
    int64_t count = 0;
    uint64_t seed = 0;
    std::string format;
    std::string out;
  };
  auto ga = std::make_shared<GenArgs>();
  CLI::App* gen =
      app.add_subcommand("gen",
                         "Write a generated task's examples as a dataset file (JSONL or TSV; see "
                         "datasets/README.md), to inspect it or train on it with task.name: file");
  gen->add_option("task", ga->task, "the task to generate (e.g. copy, shift, parity)")->required();
  gen->add_option("--param", ga->params, "a task parameter key=value (repeat for more)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  gen->add_option_function<std::vector<std::string>>(
         "--lengths",
         [ga](const std::vector<std::string>& values) { ga->lengths = parse_lengths(values); },
         "problem sizes, e.g. 1,2,3 or 1-8")
      ->type_name("N,LO-HI,...")
      ->required();
  add_integer(gen, "--count", ga->count, range_of<int64_t>(1, kDatasetMaxExamples),
              "examples per length")
      ->required();
  // A seed as a config takes it (seed: must be >= 0), never wrapped around.
  add_integer(gen, "--seed", ga->seed, range_of<int64_t>(0), "random seed (default 0)");
  gen->add_option("--format", ga->format,
                  "jsonl or tsv (default: from --out's extension, else jsonl)");
  gen->add_option("--out", ga->out, "the file to write ('-' for standard output)")->required();
  gen->callback([ga, &action] {
    action = [ga] {
      PELAB_CHECK(ga->task != kFileTaskName,
                  "'file' is not a generated task; pelab gen writes a generated task as a file");
      const std::unique_ptr<Task> task = make_task(ga->task, parse_params(ga->task, ga->params));
      const std::vector<int64_t>& lengths = ga->lengths;
      // The format: --format, else the extension of --out, else JSONL. The reader goes by the
      // extension, so the two must agree.
      const std::optional<DatasetFormat> by_name =
          ga->out == "-" ? std::nullopt : dataset_format_of_path(ga->out);
      DatasetFormat format = DatasetFormat::Jsonl;
      if (by_name.has_value()) format = by_name.value();
      if (!ga->format.empty()) {
        const DatasetFormat asked = parse_dataset_format(ga->format);
        PELAB_CHECK(format == asked || !by_name.has_value(),
                    "--format {} does not match the extension of {} (the reader goes by the "
                    "extension); name it .{}",
                    ga->format, ga->out, to_string(asked));
        format = asked;
      }
      // Bounds: what the reader accepts (examples, tokens, bytes), checked before generating.
      PELAB_CHECK(ga->count <= kDatasetMaxExamples &&
                      ga->count * static_cast<int64_t>(lengths.size()) <= kDatasetMaxExamples,
                  "--count {} × {} lengths is more than the {} examples a dataset file may hold",
                  ga->count, lengths.size(), kDatasetMaxExamples);
      int64_t tokens = 0;
      for (int64_t n : lengths) {
        PELAB_CHECK(n >= task->min_length() && n <= kDatasetMaxTokens,
                    "--lengths: {} is outside [{}, {}]", n, task->min_length(), kDatasetMaxTokens);
        const int64_t t = task->sequence_length(static_cast<int>(n));
        PELAB_CHECK(t <= kDatasetMaxTokens,
                    "--lengths: size {} gives {} tokens; a dataset example may have {}", n, t,
                    kDatasetMaxTokens);
        tokens += t * ga->count;
      }
      PELAB_CHECK(tokens * 2 <= kDatasetMaxFileBytes,
                  "{} examples of up to {} tokens would exceed the {} MiB limit of a dataset "
                  "file; lower --count or --lengths",
                  ga->count * static_cast<int64_t>(lengths.size()),
                  task->sequence_length(static_cast<int>(lengths.back())),
                  kDatasetMaxFileBytes >> 20);

      Generator rng(derive_seed(ga->seed, "gen"));
      std::vector<Example> examples;
      examples.reserve(static_cast<size_t>(ga->count) * lengths.size());
      for (int64_t n : lengths)
        for (int64_t i = 0; i < ga->count; ++i)
          examples.push_back(task->sample(rng, static_cast<int>(n)));
      TaskLayout layout = TaskLayout::Tagging;
      const std::string text = format_dataset(task->info(), examples, format, &layout);
      PELAB_CHECK(static_cast<int64_t>(text.size()) <= kDatasetMaxFileBytes,
                  "the file would have {} bytes, more than the {} MiB limit of a dataset file; "
                  "lower --count or --lengths",
                  text.size(), kDatasetMaxFileBytes >> 20);
      const std::string sizes =
          FileTask::describe_sizes(std::vector<int>(lengths.begin(), lengths.end()));
      const std::string summary = fmt::format(
          "{} examples of {} (sizes {}, {} each, seed {}; {} layout, {} input and {} output "
          "symbols)",
          examples.size(), ga->task, sizes, ga->count, ga->seed, to_string(layout),
          task->info().vocab_in(), task->info().vocab_out());
      if (ga->out == "-") {
        std::cout << text << std::flush;
        fmt::print(stderr, "wrote {}\n", summary);
        return 0;
      }
      const fs::path parent = fs::path(ga->out).parent_path();
      if (!parent.empty()) {
        std::error_code ec;
        fs::create_directories(parent, ec);
        PELAB_CHECK(!ec, "{}: cannot create the directory: {}", parent.string(), ec.message());
      }
      write_file_atomic(ga->out, text);
      fmt::print("{}: wrote {}\n", ga->out, summary);
      return 0;
    };
  });
}

}  // namespace pelab::cli
