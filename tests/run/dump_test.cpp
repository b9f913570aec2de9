// `pelab dump`: its gradients are the ones an SGD step applies, its logits give the loss the
// evaluation computes, its attention weights are distributions that respect the mask, and
// bad input is one error with nothing written.
#include "pelab/run/dump.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "pelab/config/experiment.h"
#include "pelab/data/batching.h"
#include "pelab/data/file_dataset.h"
#include "pelab/io/safetensors.h"
#include "pelab/positional/scheme.h"
#include "pelab/run/evaluate.h"
#include "pelab/run/run_checkpoint.h"
#include "pelab/run/trainer.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using testing::TempDir;

// The tiny run, evaluated only at sizes 4 and 8 (a learned table then stops at position 7).
const char* kEvaluation = "evaluation:\n  lengths: [4, 8]\n  examples: 8\n";

ExperimentConfig dump_config(const std::string& training,
                             const std::vector<std::string>& overrides = {}) {
  return parse_experiment(testing::tiny_config("dump", training + kEvaluation), "dump.yaml",
                          overrides, PELAB_SOURCE_DIR "/configs");
}

void dump_train(const ExperimentConfig& c, const std::string& dir, bool init_only = false,
                bool resume = false) {
  TrainOptions o;
  o.run_dir = dir;
  o.progress = false;
  o.init_only = init_only;
  o.resume = resume;
  train_run(c, o);
}

// Examples as a dataset file of the run's task (TSV, with the task's header).
std::string write_examples(const TempDir& dir, const std::string& name, const Task& task,
                           const std::vector<Example>& examples) {
  const std::string path = dir / name;
  testing::write_file(path, format_dataset(task.info(), examples, DatasetFormat::Tsv));
  return path;
}

SafetensorsFile dump(const std::string& run, const DumpSource& source, const DumpOptions& options,
                     const std::string& out) {
  DumpRequest r;
  r.run = run;
  r.source = source;
  r.options = options;
  r.out = out;
  run_dump(r);
  return read_safetensors(out);
}

DumpSource from_file(const std::string& path) {
  DumpSource s;
  s.file = path;
  return s;
}

const char* kSgd = R"(training:
  steps: 1
  batch_size: 6
  optimizer: sgd
  lr: 0.5
  momentum: 0
  weight_decay: 0
  clip_norm: 0
  warmup: 0
  schedule: constant
  log_every: 1
)";

TEST(Dump, GradientsEqualThoseOneSgdStepApplies) {
  TempDir dir;
  const ExperimentConfig c = dump_config(kSgd, {"positional.type=learned"});
  const std::string run = dir / "run";
  dump_train(c, run, /*init_only=*/true);
  // The batch of step 1, exactly as the trainer draws it, written as a file.
  const std::unique_ptr<Task> task = make_task(c.task);
  TrainingStream stream(c, *task);
  std::vector<Example> examples;
  stream.next(&examples);
  const std::string batch = write_examples(dir, "step1.tsv", *task, examples);
  DumpOptions options;
  options.grads = true;
  const SafetensorsFile d = dump(run, from_file(batch), options, dir / "d.safetensors");
  const SafetensorsFile w0 = read_safetensors(run + "/checkpoint.safetensors");
  dump_train(c, run, false, /*resume=*/true);
  const SafetensorsFile w1 = read_safetensors(run + "/checkpoint.safetensors");

  const double lr = c.training.lr;
  int64_t checked = 0, nonzero = 0;
  const RunCheckpoint trained = open_run_checkpoint(run);
  for (const Tensor& p : trained.model->params().all()) {
    const SafetensorsTensor* g = d.find("grad." + p.name());
    ASSERT_NE(g, nullptr) << p.name();
    ASSERT_EQ(g->shape, p.shape()) << p.name();
    const SafetensorsTensor& a = *w0.find(p.name());
    const SafetensorsTensor& b = *w1.find(p.name());
    for (int64_t i = 0; i < g->numel(); ++i) {
      const double recovered = (static_cast<double>(a.f32[i]) - b.f32[i]) / lr;
      // w1 = w0 − lr·g rounded once to float32: half an ulp of w1, divided by lr.
      const double rounding = std::ldexp(std::max(std::fabs(a.f32[i]), std::fabs(b.f32[i])), -23);
      ASSERT_NEAR(recovered, g->f32[i], rounding / lr + 1e-6 * std::fabs(g->f32[i]))
          << p.name() << "[" << i << "]";
      ++checked;
      nonzero += g->f32[i] != 0.0f;
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(nonzero, checked / 2);  // the comparison is not between zeros
}

// Cross-entropy over the scored targets, from the dump's logits, in double.
double loss_from_logits(const SafetensorsFile& d) {
  const Tensor logits = d.tensor("output.logits");  // [B, T, V]
  const IntTensor targets = d.int_tensor("input.targets");
  const int64_t V = logits.shape()[2];
  const float* z = logits.data();
  double sum = 0;
  int64_t scored = 0;
  for (int64_t k = 0; k < targets.numel(); ++k) {
    const int32_t y = targets.values[k];
    if (y == kIgnore) continue;
    const float* row = z + k * V;
    const float mx = *std::max_element(row, row + V);
    double e = 0;
    for (int64_t c = 0; c < V; ++c) e += std::exp(static_cast<double>(row[c] - mx));
    sum += std::log(e) - (row[y] - mx);
    ++scored;
  }
  return sum / static_cast<double>(scored);
}

TEST(Dump, LogitsGiveTheLossTheEvaluationComputes) {
  TempDir dir;
  const ExperimentConfig c = dump_config("training:\n  steps: 30\n  warmup: 5\n  batch_size: 8\n");
  const std::string run = dir / "run";
  dump_train(c, run);
  const RunCheckpoint opened = open_run_checkpoint(run);
  const std::unique_ptr<Task> task = make_task(c.task);
  for (const int64_t n : {int64_t{4}, int64_t{8}}) {
    const std::vector<Example> examples =
        evaluation_examples(*task, n, c.evaluation.examples, c.evaluation.seed);
    const std::string batch = write_examples(dir, fmt::format("eval{}.tsv", n), *task, examples);
    const SafetensorsFile d =
        dump(run, from_file(batch), DumpOptions{}, dir / fmt::format("d{}.safetensors", n));
    const double ce = loss_from_logits(d);
    EXPECT_NEAR(ce, d.tensor("output.loss").item(), 1e-5 * ce) << n;
    const Evaluation e = evaluate(*opened.model, *task, c, {n});
    EXPECT_NEAR(ce, e.by_length.at(0).loss, 1e-9 * ce) << n;
  }
}

// Every attention row is a distribution over the admissible keys (real, and not later than
// the query when causal); a row with none is all zero.
void expect_attention_respects_the_mask(const SafetensorsFile& d, bool causal) {
  const IntTensor mask = d.int_tensor("input.mask");
  const int64_t B = mask.shape[0], T = mask.shape[1];
  int64_t layers = 0, empty_rows = 0;
  while (d.find(fmt::format("output.attention.{}.weights", layers))) {
    const Tensor alpha = d.tensor(fmt::format("output.attention.{}.weights", layers));
    ASSERT_EQ(alpha.shape(), (Shape{B, 2, T, T}));
    const float* a = alpha.data();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < T; ++i) {
          const float* row = a + ((b * 2 + h) * T + i) * T;
          double sum = 0;
          bool admissible_key = false;
          for (int64_t j = 0; j < T; ++j) {
            const bool admissible = mask.values[b * T + j] == 1 && (!causal || j <= i);
            if (!admissible) {
              EXPECT_EQ(row[j], 0.0f) << b << " " << h << " " << i << " " << j;
            }
            admissible_key = admissible_key || admissible;
            sum += row[j];
          }
          EXPECT_NEAR(sum, admissible_key ? 1.0 : 0.0, 1e-5) << b << " " << h << " " << i;
          empty_rows += !admissible_key;
        }
    ++layers;
  }
  EXPECT_EQ(layers, 1);
  if (causal) {
    EXPECT_GT(empty_rows, 0);  // left padding made some
  }
}

TEST(Dump, AttentionRowsSumToOneAndRespectTheMask) {
  TempDir dir;
  for (const bool causal : {false, true}) {
    const ExperimentConfig c = dump_config("training:\n  steps: 3\n  warmup: 1\n",
                                           {fmt::format("model.causal={}", causal)});
    const std::string run = dir / fmt::format("run{}", causal);
    dump_train(c, run);
    const std::unique_ptr<Task> task = make_task(c.task);
    Generator rng(7);
    const std::vector<Example> examples = sample_examples(*task, 6, 1, 8, rng);
    const std::string batch = write_examples(dir, "mixed.tsv", *task, examples);
    DumpOptions options;
    options.attention = true;
    options.padding = causal ? Padding::Left : Padding::Right;
    const SafetensorsFile d =
        dump(run, from_file(batch), options, dir / fmt::format("d{}.safetensors", causal));
    expect_attention_respects_the_mask(d, causal);
  }
}

// The same for every scheme that acts inside attention (a causal-only one causal), with its
// padding on the left and randomized positions: the weights dumped come through each scheme's
// own terms.
TEST(Dump, EverySchemeInAttentionDumpsWeightsThatRespectTheMask) {
  TempDir dir;
  for (const SchemeInfo& info : scheme_table()) {
    if (info.acts == SchemeInfo::Acts::Nowhere || info.acts == SchemeInfo::Acts::Input) continue;
    SCOPED_TRACE(info.name);
    const ExperimentConfig c =
        dump_config("training:\n  steps: 2\n  warmup: 1\n",
                    {"positional={type: " + info.name + ", randomize: {max_position: 40}}",
                     fmt::format("model.causal={}", info.causal_only)});
    const std::string run = dir / info.name;
    dump_train(c, run);
    const std::unique_ptr<Task> task = make_task(c.task);
    Generator rng(7);
    const std::vector<Example> examples = sample_examples(*task, 6, 1, 8, rng);
    const std::string batch = write_examples(dir, info.name + ".tsv", *task, examples);
    DumpOptions options;
    options.attention = true;
    options.padding = Padding::Left;
    const SafetensorsFile d =
        dump(run, from_file(batch), options, dir / (info.name + ".safetensors"));
    expect_attention_respects_the_mask(d, info.causal_only);
  }
}

TEST(Dump, LaysOutPaddingAndPositionsAsAsked) {
  TempDir dir;
  const ExperimentConfig c = dump_config("training:\n  steps: 2\n  warmup: 1\n");
  const std::string run = dir / "run";
  dump_train(c, run, true);
  const std::unique_ptr<Task> task = make_task(c.task);
  Generator rng(3);
  const std::vector<Example> examples = {task->sample(rng, 5), task->sample(rng, 2)};
  const std::string batch = write_examples(dir, "two.tsv", *task, examples);
  testing::write_file(dir / "positions.txt", "# one line per example\n0 2 4 6 8\n\n7 9\n");

  DumpOptions options;
  options.padding = Padding::Left;
  options.positions = "shift=3";
  SafetensorsFile d = dump(run, from_file(batch), options, dir / "a.safetensors");
  EXPECT_EQ(d.int_tensor("input.positions").values,
            (std::vector<int32_t>{3, 4, 5, 6, 7, 3, 4, 5, 6, 7}));
  EXPECT_EQ(d.int_tensor("input.mask").values,
            (std::vector<int32_t>{1, 1, 1, 1, 1, 0, 0, 0, 1, 1}));
  const std::vector<int32_t> tokens = d.int_tensor("input.tokens").values;
  EXPECT_EQ(std::vector<int32_t>(tokens.begin() + 8, tokens.end()), examples[1].tokens);
  EXPECT_EQ(std::vector<int32_t>(tokens.begin(), tokens.begin() + 5), examples[0].tokens);

  options.padding = Padding::Right;
  options.positions = dir / "positions.txt";
  d = dump(run, from_file(batch), options, dir / "b.safetensors");
  EXPECT_EQ(d.int_tensor("input.positions").values,
            (std::vector<int32_t>{0, 2, 4, 6, 8, 7, 9, 2, 3, 4}));  // padding keeps its index
  EXPECT_EQ(d.int_tensor("input.targets").values[6], examples[1].targets[1]);
}

TEST(Dump, AGeneratedTaskGivesTheBatchOfTheFileGenWrites) {
  TempDir dir;
  const ExperimentConfig c = dump_config("training:\n  steps: 2\n  warmup: 1\n");
  const std::string run = dir / "run";
  dump_train(c, run, true);
  DumpSource generated;
  generated.task = "shift";
  generated.lengths = {3, 6};
  generated.count = 2;
  generated.seed = 5;
  const SafetensorsFile a = dump(run, generated, DumpOptions{}, dir / "a.safetensors");
  ASSERT_EQ(testing::run_pelab({"gen", "shift", "--param", "shift=1", "--lengths", "3,6", "--count",
                                "2", "--seed", "5", "--out", dir / "gen.jsonl"})
                .exit_code,
            0);
  const SafetensorsFile b =
      dump(run, from_file(dir / "gen.jsonl"), DumpOptions{}, dir / "b.safetensors");
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].name, b.tensors[i].name);
    EXPECT_EQ(a.tensors[i].f32, b.tensors[i].f32) << a.tensors[i].name;
    EXPECT_EQ(a.tensors[i].i64, b.tensors[i].i64) << a.tensors[i].name;
  }
  EXPECT_EQ(a.int_tensor("input.tokens").shape, (Shape{4, 6}));
}

// An lm run's batch is a file of its task: the file `pelab gen` writes for the task, header
// included, is taken (the run's output vocabulary adds '<end>' to the task's, which no file
// of the task lists), and an answer holding '<end>', which the layout adds itself and cannot
// feed back, is one line naming the file, the line and the symbol (it was an internal error).
TEST(Dump, AnLmRunTakesItsTasksFilesAndRefusesEndInAnAnswer) {
  TempDir dir;
  const std::string yaml = dir / "c.yaml";
  testing::write_file(yaml, R"(name: lm
seed: 1
model: {d_model: 16, heads: 2, layers: 1, causal: true}
positional: {type: rotary}
task: {name: copy, min_length: 1, max_length: 4, layout: lm}
training: {steps: 2, warmup: 1}
evaluation: {lengths: [4], examples: 4}
)");
  const std::string run = dir / "run";
  ASSERT_EQ(testing::run_pelab({"init", yaml, "--out", run}).exit_code, 0);
  for (const char* format : {"jsonl", "tsv"}) {
    const std::string gen = dir / fmt::format("gen.{}", format);
    ASSERT_EQ(testing::run_pelab({"gen", "copy", "--lengths", "3", "--count", "2", "--out", gen})
                  .exit_code,
              0);
    const testing::Outcome o = testing::run_pelab(
        {"dump", run, "--batch", gen, "--out", dir / "d.safetensors", "--overwrite"});
    EXPECT_EQ(o.exit_code, 0) << o.err;
    // The same examples as the task drawn by name: '<end>' comes from the layout alone.
    const SafetensorsFile from_file = read_safetensors(dir / "d.safetensors");
    DumpSource generated;
    generated.task = "copy";
    generated.lengths = {3};
    generated.count = 2;
    const SafetensorsFile by_name =
        dump(run, generated, DumpOptions{}, dir / fmt::format("n-{}.safetensors", format));
    EXPECT_EQ(from_file.int_tensor("input.targets").values,
              by_name.int_tensor("input.targets").values);
  }
  testing::write_file(dir / "end.jsonl",
                      "{\"input\":[\"1\",\"4\",\"3\"],\"target\":[\"1\",\"<end>\",\"3\"]}\n");
  testing::write_file(dir / "end.tsv", "1 2 3\t1 2 3\n1 4 3\t1 <end> 3\n");
  for (const auto& [file, line] : {std::pair{"end.jsonl", 1}, std::pair{"end.tsv", 2}}) {
    const std::vector<std::string> before = testing::listing(dir.path());
    const testing::Outcome o =
        testing::run_pelab({"dump", run, "--batch", dir / file, "--out", dir / "e.safetensors"});
    EXPECT_EQ(testing::user_error_problem(
                  o, {fmt::format("{}:{}: unknown output symbol '<end>'", file, line)}),
              "");
    EXPECT_EQ(o.err.find("internal error"), std::string::npos) << o.err;
    EXPECT_EQ(testing::listing(dir.path()), before) << file;
  }
}

// Each refusal: one line, exit code 2, and no dump written.
TEST(Dump, BadInputIsOneErrorAndWritesNothing) {
  TempDir dir;
  const std::string yaml = dir / "c.yaml";
  testing::write_file(
      yaml, testing::tiny_config(
                "dump", std::string("training:\n  steps: 2\n  warmup: 1\n") + kEvaluation));
  const std::string run = dir / "run";
  ASSERT_EQ(testing::run_pelab({"init", yaml, "positional.type=learned", "--out", run}).exit_code,
            0);
  testing::write_file(dir / "unknown.tsv", "1 2 x\t_ 1 2\n");
  testing::write_file(dir / "long.tsv", "1 2 3 4 5 6 7 1 2\t_ 1 2 3 4 5 6 7 1\n");
  testing::write_file(dir / "ok.tsv", "1 2 3\t_ 1 2\n");
  testing::write_file(dir / "short.txt", "0 1\n");
  testing::write_file(dir / "none.txt", "# no positions\n");
  // One good line, then more comment than the 64 MiB a positions file may hold, then a line
  // that would be refused: the file is refused for its size, not read in part.
  testing::write_file(dir / "huge.txt", "0 1 2\n" + std::string(64 << 20, '#') + "\n0 1 2\n");
  const std::string out = dir / "out.safetensors";
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--batch", dir / "unknown.tsv"}, {"unknown.tsv:1: unknown input symbol 'x'"}},
      {{"--batch", dir / "long.tsv"},
       {"long.tsv:1: token 9: position 8 is beyond the learned table", "stops at 7"}},
      {{"--batch", dir / "ok.tsv", "--positions", "shift=6"},
       {"ok.tsv:1: token 3: position 8 is beyond the learned table"}},
      {{"--batch", dir / "ok.tsv", "--positions", "shift=-1"}, {"position -1 is negative"}},
      {{"--batch", dir / "ok.tsv", "--positions", dir / "short.txt"},
       {"short.txt:1: 2 positions for the example of", "which has 3 tokens"}},
      {{"--batch", "shift"}, {"--batch shift is a task; give its problem sizes with --lengths"}},
      {{"--batch", "parity", "--lengths", "3"}, {"generated parity:2: unknown output symbol"}},
      {{"--batch", "copy", "--lengths", "3"},
       {"generated copy:2: the appended layout needs the token '|'", "(8 input symbols)"}},
      {{"--batch", dir / "ok.tsv", "--positions", dir / "huge.txt"},
       {"huge.txt: larger than the 67108864 bytes allowed for a file of positions"}},
      {{"--batch", dir / "ok.tsv", "--positions", dir / "none.txt"},
       {"none.txt: 0 lines of positions for the 1 examples of the batch"}},
      {{"--batch", dir / "ok.tsv", "--lengths", "3"}, {"--batch", "is a file; --lengths"}},
      {{"--batch", dir / "ok.tsv", "--pad", "middle"}, {"--pad"}},
  };
  for (const auto& [args, parts] : cases) {
    std::vector<std::string> command = {"dump", run, "--out", out};
    command.insert(command.end(), args.begin(), args.end());
    const std::vector<std::string> before = testing::listing(dir.path());
    const testing::Outcome o = testing::run_pelab(command);
    EXPECT_EQ(testing::user_error_problem(o, parts), "") << args.at(1);
    EXPECT_EQ(testing::listing(dir.path()), before) << args.at(1);
  }
  // Where the dump goes: never a file of a run directory (only training writes there), never
  // a directory (nothing is created for it), never an existing file unless --overwrite.
  const std::string log_before = testing::read_file(run + "/train.log");
  for (const std::string& own : {run + "/checkpoint.safetensors", run + "/train.log"}) {
    const testing::Outcome o =
        testing::run_pelab({"dump", run, "--batch", dir / "ok.tsv", "--out", own, "--overwrite"});
    EXPECT_EQ(testing::user_error_problem(o, {"is a file of the run directory", "elsewhere"}), "")
        << own;
  }
  EXPECT_EQ(testing::read_file(run + "/train.log"), log_before);
  const std::vector<std::string> before = testing::listing(dir.path());
  const testing::Outcome into_dir =
      testing::run_pelab({"dump", run, "--batch", dir / "ok.tsv", "--out", dir / "nd/sub/"});
  EXPECT_EQ(testing::user_error_problem(into_dir,
                                        {"nd/sub/ names a directory", "nd/sub/dump.safetensors"}),
            "");
  EXPECT_EQ(testing::listing(dir.path()), before) << "directories were left behind";
  // The same command with good input succeeds: the refusals above are about the input.
  EXPECT_EQ(testing::run_pelab({"dump", run, "--batch", dir / "ok.tsv", "--out", out}).exit_code,
            0);
  const testing::Outcome again =
      testing::run_pelab({"dump", run, "--batch", dir / "ok.tsv", "--out", out});
  EXPECT_EQ(testing::user_error_problem(again, {"exists", "--overwrite"}), "");
  EXPECT_EQ(
      testing::run_pelab({"dump", run, "--batch", dir / "ok.tsv", "--out", out, "--overwrite"})
          .exit_code,
      0);
  // A new file in new directories is fine: they are made once the dump is ready.
  EXPECT_EQ(testing::run_pelab(
                {"dump", run, "--batch", dir / "ok.tsv", "--out", dir / "new/deeper/d.safetensors"})
                .exit_code,
            0);
}

}  // namespace
}  // namespace pelab
