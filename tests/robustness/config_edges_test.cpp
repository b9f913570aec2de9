// Config edge cases, each a class of input that was accepted and then meant something else:
// key paths with empty parts, YAML texts of several documents, values the task determines
// given otherwise, group files that do not name what they are, run names that are not one
// path component, --out directories that are not runs of the same config, and sweep
// sections that only `pelab sweep` checked. Each is refused with one line that names the file
// and line (or the argument), and a refused command leaves the file system as it was.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "error_message.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab_process.h"
#include "robustness/config_messages.h"

namespace pelab {
namespace {

using testing::config_error;
using testing::error_message;
using testing::expect_message;

using testing::listing;
using testing::Outcome;
using testing::run_pelab;
using testing::TempDir;
using testing::user_error_problem;
using testing::write_file;

const std::string kEdgeConfig = testing::tiny_config("tiny", R"(training:
  steps: 4
  batch_size: 4
  warmup: 1
evaluation:
  lengths: [4, 8]
  examples: 4
)");

ExperimentConfig parsed(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return parse_experiment(text, "x.yaml", overrides, PELAB_SOURCE_DIR "/configs");
}

// kEdgeConfig with `from` replaced by `to` (which must be there).
std::string edge_config_with(const std::string& from, const std::string& to) {
  return testing::replaced(kEdgeConfig, from, to);
}

// "[from, ..., to]".
std::string numbers(int from, int to) {
  std::string list = "[";
  for (int i = from; i <= to; ++i) list += fmt::format("{}{}", i > from ? ", " : "", i);
  return list + "]";
}

// ---- key paths ----------------------------------------------------------------------------

TEST(ConfigEdges, EveryKeyPathIsCheckedPartByPart) {
  for (const std::string key : {"seed.", ".seed", "model..heads", "model.heads.", "model. heads",
                                "training.steps.x.", "sweep.seed."}) {
    const std::string o = key + "=5";
    expect_message(config_error(kEdgeConfig, {o}),
                   {"command line '" + o + "': '" + key + "' is not a valid key"});
  }
  // A sweep axis is a key path too, checked the same way in the file.
  expect_message(config_error(kEdgeConfig + "sweep:\n  seed.: [0, 1]\n"),
                 {"x.yaml:22: sweep.seed.: 'seed.' is not a valid key"});
  // Valid paths still work, a sweep axis with its own dots included.
  EXPECT_EQ(parsed(kEdgeConfig, {"seed=5"}).seed, 5u);
  EXPECT_EQ(parsed(kEdgeConfig, {"sweep.positional.type=[none, alibi]"}).sweep.axes.size(), 1u);
}

// ---- YAML documents -----------------------------------------------------------------------

TEST(ConfigEdges, ASecondYamlDocumentIsRefusedWherever) {
  expect_message(config_error(kEdgeConfig + "---\nseed: 3\n"),
                 {"x.yaml:21: a second YAML document ('---'); a config file holds one document"});
  // An empty second document too: what follows '---' is never silently dropped.
  expect_message(config_error(kEdgeConfig + "---\n"), {"x.yaml:21: a second YAML document"});
  // An override is one line, so a second document there is refused as a line break first.
  expect_message(config_error(kEdgeConfig, {"seed=1\n---\n2"}),
                 {"override 'seed=1\\n---\\n2': holds a control character"});
  TempDir dir;
  write_file(dir / "configs/positional/two.yaml", "type: rotary\n---\ntype: alibi\n");
  write_file(dir / "configs/x.yaml",
             edge_config_with("positional:\n  type: rotary\n", "positional: two\n"));
  expect_message(error_message([&] { load_experiment(dir / "configs/x.yaml"); }),
                 {"positional/two.yaml:2: a second YAML document"});
  // One document that starts with '---' (or ends with '...') is one document.
  EXPECT_NO_THROW(parsed("---\n" + kEdgeConfig + "...\n"));
}

// ---- values the task determines -----------------------------------------------------------

TEST(ConfigEdges, ValuesTheTaskDeterminesMustMatchIt) {
  // shift with 8 symbols: 8 input tokens, 9 output classes.
  expect_message(config_error(kEdgeConfig, {"model.vocab_in=3"}),
                 {"command line 'model.vocab_in=3': model.vocab_in: 3 differs from the task's "
                  "input vocabulary size, 8; the task determines it (leave model.vocab_in out)"});
  expect_message(
      config_error(edge_config_with("  layers: 1\n", "  layers: 1\n  vocab_out: 4\n")),
      {"x.yaml:7: model.vocab_out: 4 differs from the task's output vocabulary size, 9"});
  // The task's own values are accepted: a resolved config holds them and reloads.
  const ExperimentConfig c = parsed(kEdgeConfig, {"model.vocab_in=8", "model.vocab_out=9"});
  EXPECT_EQ(c.model.vocab_in, 8);
  EXPECT_EQ(to_yaml(parsed(to_yaml(c))), to_yaml(c));
}

// ---- config groups ------------------------------------------------------------------------

TEST(ConfigEdges, AGroupFileNamesWhatItIs) {
  TempDir dir;
  write_file(dir / "configs/positional/rotary.yaml", "");
  write_file(dir / "configs/positional/commented.yaml", "# rotary, someday\n");
  write_file(dir / "configs/positional/untyped.yaml", "base: 100.0\n");
  write_file(dir / "configs/model/empty.yaml", "{}\n");
  auto error_with = [&](const std::string& group) {
    write_file(dir / "configs/x.yaml",
               edge_config_with("positional:\n  type: rotary\n", "positional: " + group + "\n"));
    return error_message([&] { load_experiment(dir / "configs/x.yaml"); });
  };
  expect_message(error_with("rotary"),
                 {"configs/positional/rotary.yaml: a positional group must set 'type' (the "
                  "scheme it stands for); the file is empty"});
  expect_message(error_with("commented"),
                 {"configs/positional/commented.yaml: a positional group must set 'type'"});
  expect_message(error_with("untyped"),
                 {"configs/positional/untyped.yaml: a positional group must set 'type'"});
  // model: is also given in kEdgeConfig; the group is refused before that matters.
  write_file(
      dir / "configs/y.yaml",
      edge_config_with("model:\n  d_model: 16\n  heads: 2\n  layers: 1\n", "model: empty\n"));
  expect_message(error_message([&] { load_experiment(dir / "configs/y.yaml"); }),
                 {"configs/model/empty.yaml: the model group is empty"});
  // The same rule from the command line.
  write_file(dir / "configs/z.yaml", kEdgeConfig);
  expect_message(
      error_message([&] { load_experiment(dir / "configs/z.yaml", {"positional=rotary"}); }),
      {"configs/positional/rotary.yaml: a positional group must set 'type'"});
  // Every group pelab ships names what it is.
  for (const std::string group : {"alibi", "binary", "index", "learned", "none", "normalized",
                                  "relative", "rotary", "sinusoidal", "t5"})
    EXPECT_EQ(parsed(kEdgeConfig, {"positional=" + group}).model.positional.type, group);
}

// ---- run names ----------------------------------------------------------------------------

// An empty config, or one of comments only, is refused with one line; `{}` takes every default.
// From the command line it writes nothing.
TEST(ConfigEdges, AnEmptyConfigIsRefused) {
  expect_message(config_error(""), {"x.yaml: the config is empty", "`{}`"});
  expect_message(config_error("# defaults, please\n"), {"x.yaml: the config is empty"});
  EXPECT_EQ(parsed("{}\n").name, "experiment");
  TempDir dir;
  write_file(dir / "empty.yaml", "");
  const std::vector<std::string> before = listing(dir.path());
  const Outcome o = run_pelab({"train", "empty.yaml", "--no-progress"}, dir.path());
  EXPECT_EQ(user_error_problem(o, {"empty.yaml: the config is empty"}), "");
  EXPECT_EQ(listing(dir.path()), before) << "files were left behind";
}

// '' names nothing, in any text key: taken, it read as "not given" (`sweep.select: ""` chose
// nothing and ran) or failed later naming something else. Refused at its line, naming the key
// and, where the key has a list of valid values, the list.
TEST(ConfigEdges, AnEmptyTextValueIsRefusedNamingTheKey) {
  const std::string swept = kEdgeConfig + "sweep:\n  seed: [0, 1]\n  training.lr: [0.01, 0.001]\n";
  expect_message(config_error(swept + "  select: \"\"\n"),
                 {"x.yaml:24: sweep.select: an empty value (''); valid: seed, training.lr"});
  expect_message(config_error(swept + "  select: ''\n"), {"x.yaml:24: sweep.select: an empty"});
  expect_message(config_error(edge_config_with("name: tiny", "name: ''")),
                 {"x.yaml:1: name: an empty value (''); give one, or leave the key out"});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"task.name", "valid: "},
      {"task.layout", "valid: native, lm"},
      {"task.sampling", "valid: sizes, examples"},
      {"task.train_file", "give one, or leave the key out"},
      {"model.norm", "valid: pre, post"},
      {"model.activation", "valid: gelu, relu"},
      {"training.optimizer", "valid: sgd, adam, adamw"},
      {"training.schedule", "valid: constant, linear, cosine"},
      {"positional.type", "valid: "},
      {"positional.scaling.type", "valid: none, pi, ntk, dynamic_ntk, yarn"},
      {"positional.combine", "valid: add, concat"},
  };
  for (const auto& [key, valid] : cases) {
    const std::vector<std::string> overrides = {
        key == "positional.combine" ? "positional.type=sinusoidal" : "seed=0", key + "=''"};
    expect_message(config_error(kEdgeConfig, overrides),
                   {"command line '" + key + "='''", key + ": an empty value ('')", valid});
  }
  // In a list (a sweep axis: each value is a run), an empty item too.
  expect_message(config_error(kEdgeConfig + "sweep:\n  positional.type: [none, '']\n"),
                 {"x.yaml:22: sweep.positional.type: an empty item ('')"});
  // The controls: a select that names an axis, and the same keys with a value.
  EXPECT_EQ(parsed(swept + "  select: training.lr\n").sweep.select, "training.lr");
  EXPECT_EQ(parsed(kEdgeConfig, {"training.optimizer=sgd"}).training.optimizer, "sgd");

  // From the command line, `pelab sweep` refuses before anything is written.
  TempDir dir;
  write_file(dir / "s.yaml", swept + "  select: \"\"\n");
  const std::vector<std::string> before = listing(dir.path());
  const Outcome o = run_pelab({"sweep", "s.yaml", "--no-progress"}, dir.path());
  EXPECT_EQ(user_error_problem(o, {"s.yaml:24: sweep.select: an empty value"}), "");
  EXPECT_EQ(listing(dir.path()), before) << "files were left behind";
}

TEST(ConfigEdges, ARunNameIsOnePathComponent) {
  for (const std::string name : {"../x", "a/b", ".", "..", ".hidden", "/abs"})
    expect_message(config_error(edge_config_with("name: tiny", "name: " + name)),
                   {"x.yaml:1: name: '", "' is not a run name: it names the run's directory"});
  expect_message(config_error(kEdgeConfig, {"name=../x"}),
                 {"command line 'name=../x': name: '../x' is not a run name"});
  expect_message(config_error(kEdgeConfig, {"name=" + std::string(201, 'n')}),
                 {"is not a run name"});
  EXPECT_EQ(parsed(kEdgeConfig, {"name=task-copy_2"}).name, "task-copy_2");
}

TEST(ConfigEdges, ARefusedRunNameWritesNothing) {
  TempDir dir;
  write_file(dir / "tiny.yaml", kEdgeConfig);
  for (const auto& [name, part] : {std::pair{"name=''", "name: an empty value ('')"},
                                   std::pair{"name=../escaped", "is not a run name"}}) {
    const std::vector<std::string> before = listing(dir.path());
    const Outcome o = run_pelab({"train", "tiny.yaml", name, "--no-progress"}, dir.path());
    EXPECT_EQ(user_error_problem(o, {part}), "");
    EXPECT_EQ(listing(dir.path()), before) << "files were left behind";
  }
  EXPECT_FALSE(testing::fs::exists(dir.path() / "escaped"));
}

// ---- --out --------------------------------------------------------------------------------

class RunDirectories : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir_ / "tiny.yaml", kEdgeConfig); }

  // Runs `pelab train tiny.yaml ARGS`, expects a user error with `parts`, and nothing changed.
  void expect_refused(std::vector<std::string> args, const std::vector<std::string>& parts) {
    args.insert(args.begin(), {"train", "tiny.yaml", "--no-progress"});
    const std::vector<std::string> before = listing(dir_.path());
    const Outcome o = run_pelab(args, dir_.path());
    EXPECT_EQ(user_error_problem(o, parts), "");
    EXPECT_EQ(listing(dir_.path()), before) << "files were left behind";
  }

  TempDir dir_;
};

TEST_F(RunDirectories, OutIsNeverADirectoryOfOtherFiles) {
  write_file(dir_ / "notes/config.txt", "mine\n");
  expect_refused({"--out", "notes"},
                 {"notes holds 'config.txt', which is not a pelab run's file", "another --out"});
  // A config.yaml that is not pelab's: a directory (the run was refused only after creating
  // its lock and an empty train.log), or a file of another config.
  testing::fs::create_directories(dir_.path() / "odd/config.yaml");
  expect_refused({"--out", "odd"},
                 {"odd/config.yaml: not a regular file, so odd is not a pelab run"});
  write_file(dir_ / "other/config.yaml", "name: other\n");
  expect_refused({"--out", "other"},
                 {"other holds a run of another config (config.yaml, line 1: 'name: other' vs "
                  "'name: tiny')"});
  expect_refused({"--out", "tiny.yaml"}, {"tiny.yaml: not a directory"});
}

TEST_F(RunDirectories, OutReusesAnEmptyDirectoryOrARunOfTheSameConfig) {
  testing::fs::create_directories(dir_.path() / "empty");
  Outcome o = run_pelab({"train", "tiny.yaml", "--out", "empty", "--no-progress"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // The same config again (its summary removed: a finished run is never overwritten).
  testing::fs::remove(dir_.path() / "empty/summary.json");
  o = run_pelab({"train", "tiny.yaml", "--out", "empty", "--no-progress"}, dir_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // Another config is refused, and the run is left as it was.
  testing::fs::remove(dir_.path() / "empty/summary.json");
  expect_refused({"seed=1", "--out", "empty"},
                 {"empty holds a run of another config (config.yaml, line 2: 'seed: 0' vs "
                  "'seed: 1')"});
}

// ---- the sweep section --------------------------------------------------------------------

// Overrides apply in the order given, after the file and its sweep: a key the command line sets
// is fixed for every run, so the axis over it is dropped (and a selection by it), and a key of
// the task it names is checked against that task, not the one the axis would set back.
TEST(ConfigEdges, AnOverrideFixesASweptKey) {
  const std::string swept =
      edge_config_with("name: shift\n  shift: 1", "name: parity") +
      "sweep:\n  task.name: [parity, cycle_navigation]\n  training.lr: [0.001, 0.003]\n"
      "  seed: [0, 1]\n  select: training.lr\n";
  const ExperimentConfig c = parsed(swept, {"task.name=reverse", "task.symbols=2"});
  EXPECT_EQ(c.task.name, "reverse");
  ASSERT_EQ(c.sweep.axes.size(), 2u);
  EXPECT_EQ(c.sweep.axes[0].first, "training.lr");
  EXPECT_EQ(c.sweep.select, "training.lr");
  const ExperimentConfig fixed_lr = parsed(swept, {"training.lr=0.01"});
  EXPECT_EQ(fixed_lr.sweep.axes.size(), 2u);
  EXPECT_EQ(fixed_lr.sweep.select, "");
  // An axis the overrides set themselves stays: the key's override is then the base's value.
  const ExperimentConfig kept =
      parsed(swept, {"sweep.task.name=[parity, reverse]", "task.name=cycle_navigation"});
  ASSERT_EQ(kept.sweep.axes.size(), 3u);
  EXPECT_EQ(kept.sweep.axes[0].first, "task.name");
  // The control: without the override of task.name, symbols is parity's error, as it should be.
  expect_message(config_error(swept, {"task.symbols=2"}), {"task.symbols", "unknown key"});
}

TEST(ConfigEdges, EveryCommandChecksTheSweepSection) {
  const std::string bad_group = kEdgeConfig + "sweep:\n  positional: [none, rotry]\n";
  expect_message(config_error(bad_group),
                 {"x.yaml:22: sweep value 'positional=rotry': no config group 'rotry'"});
  expect_message(config_error(kEdgeConfig + "sweep:\n  seed: [0, 1]\n  model.heads: [2, 3]\n"),
                 {"x.yaml:23: sweep value 'model.heads=3': model.heads: 3 heads do not divide"});
  expect_message(config_error(kEdgeConfig + "sweep:\n  seed: [0, 1, 0]\n"),
                 {"x.yaml:22: sweep.seed: the value '0' is given twice (each value is one run)"});
  expect_message(config_error(kEdgeConfig + "sweep:\n  modle.heads: [2]\n"),
                 {"x.yaml:22: sweep value 'modle.heads=2': unknown key 'modle'"});
  // A combination of values: each loads alone, not together with the base's rotary.
  expect_message(config_error(kEdgeConfig + "sweep:\n  model.d_model: [6, 16]\n"),
                 {"x.yaml:22: sweep value 'model.d_model=6'", "rotary needs an even head width"});
  EXPECT_NO_THROW(
      parsed(kEdgeConfig + "sweep:\n  model.d_model: [6, 16]\n  positional.type: [none]\n"));
  // Every run is loaded to check it: a typo cannot ask for millions.
  expect_message(config_error(kEdgeConfig, {"sweep.seed=" + numbers(0, 199),
                                            "sweep.training.steps=" + numbers(1, 60)}),
                 {"sweep.training.steps: the sweep would have more than 10000 runs"});
  // From the command line, the sweep's values are named with the argument that set them.
  expect_message(config_error(kEdgeConfig, {"sweep.positional=[rotry]"}),
                 {"command line 'sweep.positional=[rotry]': sweep value 'positional=rotry'"});

  // train and print-config check it too, and refuse before writing anything.
  TempDir dir;
  write_file(dir / "bad.yaml", kEdgeConfig + "sweep:\n  positional.type: [none, rotry]\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"print-config", "bad.yaml"},
        std::vector<std::string>{"train", "bad.yaml", "--no-progress"}}) {
    const std::vector<std::string> before = listing(dir.path());
    const Outcome o = run_pelab(args, dir.path());
    EXPECT_EQ(user_error_problem(o, {"bad.yaml:22: sweep value 'positional.type=rotry': "
                                     "positional.type: unknown scheme 'rotry'"}),
              "")
        << args[0];
    EXPECT_EQ(listing(dir.path()), before) << "files were left behind";
  }
}

}  // namespace
}  // namespace pelab
