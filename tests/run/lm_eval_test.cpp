// The lm layout in a run: its config key (checks, errors, config.yaml), greedy generation on a
// hand-checkable model, that generation's exact match is teacher forcing's all-right on a
// trained model (why validation may stay teacher-forced), `pelab dump`'s batches, and
// `pelab train` end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "error_message.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/data/batching.h"
#include "pelab/data/lm_layout.h"
#include "pelab/positional/scheme.h"
#include "pelab/run/decoding.h"
#include "pelab/run/dump.h"
#include "pelab/run/evaluate.h"
#include "pelab/run/trainer.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using testing::read_file;
using testing::TempDir;

const char* kLmConfig = R"(name: lm
seed: 3
model:
  d_model: 32
  heads: 2
  layers: 2
  causal: true
positional: none
task:
  name: copy
  symbols: 4
  min_length: 1
  max_length: 6
  layout: lm
training:
  steps: 300
  batch_size: 16
  lr: 0.003
  warmup: 20
  log_every: 100
evaluation:
  lengths: [2, 4, 6, 9]
  examples: 32
)";

ExperimentConfig lm_config(const std::vector<std::string>& overrides = {}) {
  return parse_experiment(kLmConfig, "lm.yaml", overrides, PELAB_SOURCE_DIR "/configs");
}

std::string lm_error(const std::vector<std::string>& overrides, const char* text = kLmConfig) {
  return testing::error_message(
      [&] { parse_experiment(text, "lm.yaml", overrides, PELAB_SOURCE_DIR "/configs"); });
}

TEST(LmConfig, ErrorsNameTheFileLineAndKey) {
  EXPECT_EQ(lm_error({"task.layout=decoder"}),
            "command line 'task.layout=decoder': task.layout: 'decoder' is not valid (valid: "
            "native, lm)");
  EXPECT_EQ(lm_error({}, R"(model:
  causal: true
task:
  name: parity
  layout: lm
)"),
            "lm.yaml:5: task.layout: " + lm_layout_problem(make_task("parity")->info()));
  EXPECT_EQ(lm_error({"model.causal=false"}),
            "lm.yaml:14: task.layout: 'lm' needs model.causal: true (the answer is fed back as "
            "input, so bidirectional attention would read the token each position is to "
            "predict; valid with model.causal: false: native)");
}

// Generation feeds the model ever longer prefixes of the sequence it was trained on whole; a
// scheme that numbers positions by the sequence's length (normalized) would read each prefix
// unlike training, so it is refused, by the property the scheme declares. Every other scheme
// is accepted.
TEST(LmConfig, ASchemeWhosePositionsDependOnTheLengthIsRefused) {
  EXPECT_EQ(lm_error({"positional=normalized"}),
            "lm.yaml:14: task.layout: 'lm' cannot take positional.type: normalized (it numbers "
            "positions by the sequence's length, which grows during generation); every scheme "
            "but normalized can");
  for (const SchemeInfo& info : scheme_table()) {
    SCOPED_TRACE(info.name);
    EXPECT_EQ(info.positions_depend_on_length, info.name == "normalized");
    if (!info.positions_depend_on_length) {
      EXPECT_NO_THROW(lm_config({"positional={type: " + info.name + "}"}));
    }
  }
}

TEST(LmConfig, AFileTaskWhoseAnswersAreNotInputsCannotUseIt) {
  TempDir dir;
  const std::string data =
      "{\"layout\": \"appended\"}\n{\"input\": [\"a\", \"b\"], \"target\": [\"x\"]}\n";
  testing::write_file(dir.path() / "train.jsonl", data);
  testing::write_file(dir.path() / "eval.jsonl", data);
  const std::string text = R"(model:
  causal: true
task:
  name: file
  train_file: train.jsonl
  eval_file: eval.jsonl
  layout: lm
)";
  testing::write_file(dir.path() / "x.yaml", text);
  std::string message;
  try {
    load_experiment(dir / "x.yaml");
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_EQ(message, dir / "x.yaml" +
                         ":7: task.layout: 'lm' feeds the answer back as input, but the output "
                         "symbol 'x' of task 'file' is not one of its input symbols (valid for "
                         "it: native)");
}

TEST(LmConfig, TheRunsConfigSavesTheLayoutOnlyWhenItIsLm) {
  const ExperimentConfig lm = lm_config();
  EXPECT_EQ(lm.task.layout, "lm");
  EXPECT_EQ(lm.model.vocab_out, 5);  // 4 symbols and <end>
  const std::string yaml = to_yaml(lm);
  EXPECT_NE(yaml.find("  max_length: 6\n  layout: lm\ntraining:"), std::string::npos) << yaml;
  EXPECT_EQ(to_yaml(parse_experiment(yaml, "run.yaml", {}, PELAB_SOURCE_DIR "/configs")), yaml);
  const ExperimentConfig native = lm_config({"task.layout=native"});
  EXPECT_EQ(native.model.vocab_out, 4);
  EXPECT_EQ(to_yaml(native).find("layout"), std::string::npos);
}

// ---- greedy generation -------------------------------------------------------------------

// A model that predicts from the current token alone: 0 → 1, 1 → 2, 2 → <end> (3), and the
// separator (3) → 0; one-hot logits.
Tensor next_of_token(const Batch& batch) {
  const int64_t B = batch.batch_size(), L = batch.length(), V = 4;
  const int32_t next[] = {1, 2, 3, 0};
  std::vector<float> z(static_cast<size_t>(B * L * V), 0.0f);
  for (int64_t k = 0; k < B * L; ++k) z[k * V + next[batch.tokens.values[k]]] = 1.0f;
  return Tensor::from_vector({B, L, V}, z);
}

TEST(LmGeneration, HandCheckedGreedyDecoding) {
  // Output ids 0..2 are the input ids 0..2; <end> is 3; the input 3 is the separator.
  const LmVocabulary v{{0, 1, 2}, 3};
  const auto example = [](std::vector<int32_t> tokens, std::vector<int32_t> targets) {
    Example e;
    e.tokens = std::move(tokens);
    e.targets = std::move(targets);
    e.length = 1;
    return e;
  };
  Batch batch = collate({
      example({1, 2, 3, 0, 1, 2}, {-1, -1, 0, 1, 2, 3}),  // generates 0 1 2 <end>: exact
      example({2, 3, 0}, {-1, 0, 3}),                     // 0, then 1 where <end> is due
      example({0, 2, 1, 1}, {-1, 1, 1, 3}),               // <end> at once: stops
      example({3, 2, 2}, {2, 2, 3}),                      // reads its own tokens: 0 1 2
  });
  const int64_t T = batch.length();
  for (int64_t k = 0; k < batch.tokens.numel(); ++k) batch.positions.values[k] = 100 + 3 * k;
  std::vector<Batch> steps;
  const IntTensor out = greedy_predictions(
      [&](const Batch& step) {
        steps.push_back(step);
        return next_of_token(step);
      },
      batch, v);
  const int32_t o = kNoPrediction;
  EXPECT_EQ(out.values, (std::vector<int32_t>{o, o, 0, 1, 2, 3,  //
                                              o, 0, 1, o, o, o,  //
                                              o, 3, o, o, o, o,  //
                                              0, 1, 2, o, o, o}));
  // One forward pass per step, over the examples still generating, each their prompt and
  // what they generated, right-padded, with the full sequence's positions.
  ASSERT_EQ(steps.size(), 4u);
  const std::vector<std::vector<int64_t>> rows = {{0, 1, 2, 3}, {0, 1, 3}, {0, 3}, {0}};
  const std::vector<int64_t> first = {2, 1, 1, 0};  // each prompt's last token
  for (size_t s = 0; s < steps.size(); ++s) {
    SCOPED_TRACE(s);
    const Batch& step = steps[s];
    ASSERT_EQ(step.batch_size(), static_cast<int64_t>(rows[s].size()));
    EXPECT_EQ(step.length(), 3 + static_cast<int64_t>(s));
    const int64_t L = step.length();
    for (size_t i = 0; i < rows[s].size(); ++i) {
      const int64_t b = rows[s][i];
      int64_t real = 0;
      for (int64_t t = 0; t < L; ++t) {
        EXPECT_EQ(step.positions.values[i * L + t], batch.positions.values[b * T + t]);
        real += step.key_mask.values[i * L + t];
      }
      EXPECT_EQ(real, first[b] + 1 + static_cast<int64_t>(s));
    }
  }
  // The fed-back tokens: example 3 read 0 then 1 (its own), not its gold 2 2.
  EXPECT_EQ(steps[2].tokens.values[1 * 5 + 0], 3);
  EXPECT_EQ(steps[2].tokens.values[1 * 5 + 1], 0);
  EXPECT_EQ(steps[2].tokens.values[1 * 5 + 2], 1);
}

// ---- generation's exact match = teacher forcing's all-right ------------------------------

// For every evaluation example of a briefly trained copy run (some examples right, some
// wrong), greedy generation is an exact match exactly when every teacher-forced argmax is
// right (the argument is in validate(), evaluate.cpp). It rests on the output at t depending
// only on what is at or before t; a forward pass of L tokens could round unlike the prefix of
// a longer one, so this asserts it on these seeds. With randomized positions, both read the
// positions drawn for the full sequence.
TEST(LmEvaluation, GenerationExactMatchIsTeacherForcedAllRight) {
  const std::vector<std::vector<std::string>> runs = {
      {"positional=none"},
      {"positional=rotary"},
      {"positional=rotary", "positional.randomize.max_position=40"}};
  for (const std::vector<std::string>& overrides : runs) {
    SCOPED_TRACE(overrides.back());
    const ExperimentConfig c = lm_config(overrides);
    const RandomizeConfig* randomize = c.randomize.max_position > 0 ? &c.randomize : nullptr;
    Generator position_rng(7);
    Training t(c);
    for (int64_t step = 0; step < c.training.steps; ++step)
      train_step(c, t, t.stream.next(), step, [] { return std::string(); });
    const LmVocabulary* lm = t.task->lm_vocabulary();
    ASSERT_NE(lm, nullptr);
    int64_t exact = 0, wrong = 0;
    for (int64_t n : c.evaluation.lengths) {
      const std::vector<Example> examples =
          evaluation_examples(*t.task, n, c.evaluation.examples, c.evaluation.seed);
      const Batch batch = collate(examples, randomize, &position_rng);
      const IntTensor forced = teacher_forced_predictions(t.model->forward(batch).logits, batch);
      const IntTensor generated = greedy_predictions(*t.model, batch, *lm);
      const int64_t T = batch.length();
      for (int64_t b = 0; b < batch.batch_size(); ++b) {
        bool forced_right = true, generated_right = true;
        for (int64_t t_ = 0; t_ < T; ++t_) {
          const int32_t y = batch.targets.values[b * T + t_];
          if (y == kIgnore) continue;
          forced_right = forced_right && forced.values[b * T + t_] == y;
          generated_right = generated_right && generated.values[b * T + t_] == y;
        }
        EXPECT_EQ(generated_right, forced_right) << "n " << n << " example " << b;
        (generated_right ? exact : wrong) += 1;
      }
    }
    EXPECT_GT(exact, 0);  // both outcomes occur: the equality is not vacuous
    EXPECT_GT(wrong, 0);
    // So evaluate's sequence accuracy is the same either way.
    const Evaluation greedy = evaluate(*t.model, *t.task, c);
    const Evaluation forced = evaluate(*t.model, *t.task, c, {}, AnswerDecoding::teacher_forced);
    ASSERT_EQ(greedy.by_length.size(), forced.by_length.size());
    for (size_t i = 0; i < greedy.by_length.size(); ++i) {
      EXPECT_EQ(greedy.by_length[i].sequence_accuracy, forced.by_length[i].sequence_accuracy);
      EXPECT_EQ(greedy.by_length[i].loss, forced.by_length[i].loss);
    }
  }
}

// ---- teacher forcing is causal -----------------------------------------------------------

// Teacher forcing feeds the gold answer as input; it is a fair stand-in for generation only if
// no position reads a later token. So changing answer token y_k (at input position p) must
// leave every logit at positions before p bit-identical, in every row of the batch, through
// the model's public forward pass; and the logits at p itself do change (not vacuous). On an
// initialized model of every scheme the lm layout takes (relative ones mix positions inside
// attention).
TEST(LmTeacherForcing, AChangedAnswerTokenLeavesEarlierLogitsBitIdentical) {
  for (const SchemeInfo& info : scheme_table()) {
    if (info.positions_depend_on_length) continue;  // refused with task.layout: lm
    const std::string& scheme = info.name;
    SCOPED_TRACE(scheme);
    const ExperimentConfig c = lm_config({"positional={type: " + scheme + "}"});
    const Training t(c);
    const std::vector<Example> examples = evaluation_examples(*t.task, 5, 4, c.evaluation.seed);
    const Batch batch = collate(examples);
    const int64_t T = batch.length(), V = c.model.vocab_out;
    const int64_t first = T - 5;  // copy of size 5: the answer tokens y_1..y_5 are the last 5
    const Tensor before = t.model->forward(batch).logits;  // [B, T, V]
    for (const int64_t k : {int64_t{0}, int64_t{2}, int64_t{4}}) {
      const int64_t p = first + k;  // y_{k+1}'s input position
      Batch changed = batch;
      int32_t& token = changed.tokens.values[1 * T + p];
      token = (token + 1) % 4;  // another answer symbol (input ids 0..3 are the symbols)
      const Tensor after = t.model->forward(changed).logits;
      for (int64_t b = 0; b < batch.batch_size(); ++b)
        EXPECT_EQ(std::memcmp(before.data() + b * T * V, after.data() + b * T * V,
                              sizeof(float) * static_cast<size_t>((b == 1 ? p : T) * V)),
                  0)
            << "row " << b << ", answer token " << k;
      EXPECT_NE(std::memcmp(before.data() + (T + p) * V, after.data() + (T + p) * V,
                            sizeof(float) * static_cast<size_t>(V)),
                0)
          << "answer token " << k;
    }
  }
}

// ---- a file task -------------------------------------------------------------------------

// An appended file task can use the layout. Its examples' prompts and answers differ in length
// within one problem size (`length` sets the size), so generation's step batches are right-
// padded; each example's greedy answer in its batch is the one it generates alone.
TEST(LmFileTask, ExamplesOfDifferentPromptAndAnswerLengthsTrainAndGenerate) {
  TempDir dir;
  const std::string data =
      R"({"layout": "appended", "input_symbols": ["a", "b", "c"], "output_symbols": ["a", "b", "c"]}
{"input": ["a"], "target": ["a"], "length": 1}
{"input": ["b", "c"], "target": ["c", "b", "b"], "length": 1}
{"input": ["c"], "target": ["c", "c"], "length": 1}
{"input": ["a", "b"], "target": ["b"], "length": 2}
{"input": ["b", "a", "c"], "target": ["c", "a", "b", "a"], "length": 2}
{"input": ["c", "c"], "target": ["a", "c"], "length": 2}
{"input": ["a", "c", "b", "a"], "target": ["a", "b"], "length": 2}
)";
  testing::write_file(dir.path() / "train.jsonl", data);
  testing::write_file(dir.path() / "eval.jsonl", data);
  testing::write_file(dir.path() / "x.yaml", R"(seed: 4
model:
  d_model: 16
  heads: 2
  layers: 1
  causal: true
positional:
  type: rotary
task:
  name: file
  train_file: train.jsonl
  eval_file: eval.jsonl
  layout: lm
training:
  steps: 30
  batch_size: 8
  lr: 0.01
  warmup: 5
evaluation:
  examples: 8
)");
  const ExperimentConfig c = load_experiment(dir / "x.yaml");
  EXPECT_EQ(c.model.vocab_out, 4);  // a b c <end>
  Training t(c);
  for (int64_t step = 0; step < c.training.steps; ++step)
    train_step(c, t, t.stream.next(), step, [] { return std::string(); });
  const LmVocabulary* lm = t.task->lm_vocabulary();
  ASSERT_NE(lm, nullptr);
  EXPECT_EQ(lm->input_of_output, (std::vector<int32_t>{0, 1, 2}));

  const Evaluation e = evaluate(*t.model, *t.task, c);
  ASSERT_EQ(e.by_length.size(), 2u);
  EXPECT_EQ(e.by_length[0].examples, 3);
  EXPECT_EQ(e.by_length[0].scored, 2 + 4 + 3);  // m + 1 slots each
  EXPECT_EQ(e.by_length[1].scored, 2 + 5 + 3 + 3);
  int64_t longest_generated = 0;  // tokens; ≥ 2: a step after the first fed one back
  for (const int64_t n : {1, 2}) {
    SCOPED_TRACE(n);
    const std::vector<Example> examples = evaluation_examples(*t.task, n, 8, c.evaluation.seed);
    const Batch batch = collate(examples);
    const IntTensor together = greedy_predictions(*t.model, batch, *lm);
    const int64_t T = batch.length();
    for (size_t i = 0; i < examples.size(); ++i) {
      const Batch one = collate({examples[i]});
      const IntTensor alone = greedy_predictions(*t.model, one, *lm);
      const int64_t L = one.length();  // collate pads on the right: the example comes first
      const std::vector<int32_t> row(together.values.begin() + static_cast<int64_t>(i) * T,
                                     together.values.begin() + static_cast<int64_t>(i) * T + L);
      EXPECT_EQ(row, alone.values) << "example " << i;
      longest_generated = std::max<int64_t>(
          longest_generated,
          std::count_if(row.begin(), row.end(), [](int32_t y) { return y != kNoPrediction; }));
      for (int64_t t_ = L; t_ < T; ++t_)
        EXPECT_EQ(together.values[static_cast<int64_t>(i) * T + t_], kNoPrediction);
    }
  }
  EXPECT_GE(longest_generated, 2);
}

// ---- pelab dump ---------------------------------------------------------------------------

TEST(LmDump, AppendedExamplesAreLaidOutAsTheRunTrainsOnThem) {
  const ExperimentConfig c = lm_config();
  const std::unique_ptr<Task> lm = make_task(c.task);
  TaskConfig native_config = c.task;
  native_config.layout = "native";
  const std::unique_ptr<Task> native = make_task(native_config);
  DumpSource source;
  source.task = "copy";
  source.lengths = {3, 5};
  source.count = 2;
  source.seed = 5;
  const DumpExamples laid_out = read_dump_examples(source, *lm, c.task, "run");
  const DumpExamples as_drawn = read_dump_examples(source, *native, native_config, "run");
  ASSERT_EQ(laid_out.examples.size(), 4u);
  ASSERT_EQ(as_drawn.examples.size(), 4u);
  for (size_t i = 0; i < laid_out.examples.size(); ++i) {
    const Example expected = to_lm_example(as_drawn.examples[i], *lm->lm_vocabulary());
    EXPECT_EQ(laid_out.examples[i].tokens, expected.tokens);
    EXPECT_EQ(laid_out.examples[i].targets, expected.targets);
    EXPECT_EQ(laid_out.examples[i].targets.back(), 4);  // <end>
  }
}

// ---- end to end --------------------------------------------------------------------------

TEST(LmTrain, PelabTrainWritesEvalCsv) {
  TempDir dir;
  testing::write_file(dir.path() / "lm.yaml", kLmConfig);
  const testing::Outcome o = testing::run_pelab(
      {"train", dir / "lm.yaml", "--out", dir / "run", "--no-progress", "training.steps=20"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::vector<std::string> rows = testing::lines_of(read_file(dir / "run/eval.csv"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0],
            "length,tokens,examples,scored,token_accuracy,sequence_accuracy,loss,"
            "in_training");
  EXPECT_EQ(rows[2].rfind("4,9,32,160,", 0), 0u) << rows[2];  // n=4: 9 tokens, 5 slots each
  const std::vector<std::string> positions =
      testing::lines_of(read_file(dir / "run/per_position.csv"));
  EXPECT_EQ(positions[1].rfind("2,2,32,", 0), 0u) << positions[1];  // slot 0 at the separator
  EXPECT_NE(read_file(dir / "run/config.yaml").find("layout: lm"), std::string::npos);
}

}  // namespace
}  // namespace pelab
