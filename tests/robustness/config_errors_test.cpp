// Bad configs and overrides: each case gives one line that names the file and line (or the
// command-line argument) where the bad value was written, the key or value, and what would be
// valid; a refused command leaves the file system as it was. docs/errors.md lists them. The
// YAML cases include what yaml-cpp alone lets through or chokes on: duplicate keys, alias
// bombs, deep nesting, self-referencing aliases.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "error_message.h"
#include "pelab/config/experiment.h"
#include "pelab/config/load_model.h"
#include "pelab/config/model_config_yaml.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/nn/checkpoint.h"
#include "pelab/nn/encoder.h"
#include "pelab/positional/scheme.h"
#include "pelab/sweep/sweep.h"
#include "pelab_process.h"
#include "robustness/config_messages.h"

namespace pelab {
namespace {

using testing::config_error;
using testing::error_message;
using testing::expect_message;

using testing::TempDir;
using testing::write_file;

const std::string kValid = testing::tiny_config("tiny", R"(training:
  steps: 10
  batch_size: 4
  warmup: 2
evaluation:
  lengths: [4, 8]
  examples: 8
)");

// kValid with `from` replaced by `to` (which must be there).
std::string valid_config_with(const std::string& from, const std::string& to) {
  return testing::replaced(kValid, from, to);
}

TEST(ConfigErrors, ValidConfigLoads) {
  EXPECT_NO_THROW(parse_experiment(kValid, "x.yaml", {}, PELAB_SOURCE_DIR "/configs"));
}

// ---- the YAML itself --------------------------------------------------------------------

TEST(ConfigErrors, SyntaxErrorNamesFileAndLine) {
  expect_message(config_error(valid_config_with("  lengths: [4, 8]", "  lengths: [4, 8")),
                 {"x.yaml:", "invalid YAML"});
  expect_message(config_error(valid_config_with("  heads: 2\n", "  heads: 2\n heads: 3\n")),
                 {"x.yaml:", "invalid YAML"});
  expect_message(config_error("model: {d_model: 16\n"), {"x.yaml:", "invalid YAML"});
}

TEST(ConfigErrors, DuplicateKeyNamesBothLines) {
  // yaml-cpp alone keeps the first value silently.
  expect_message(config_error(valid_config_with("  layers: 1\n", "  layers: 1\n  heads: 4\n")),
                 {"x.yaml:7: duplicate key 'heads' (first given at line 5)"});
  expect_message(config_error(std::string(kValid) + "seed: 1\n"),
                 {"x.yaml:21: duplicate key 'seed' (first given at line 2)"});
}

TEST(ConfigErrors, AliasBombIsRejectedQuickly) {
  // "Billion laughs": ten levels of ten aliases each expand to 10^10 nodes.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    bomb += fmt::format("a{}: &a{} [", i, i);
    for (int k = 0; k < 10; ++k) bomb += fmt::format("{}*a{}", k ? ", " : "", i - 1);
    bomb += "]\n";
  }
  const auto start = std::chrono::steady_clock::now();
  expect_message(config_error(bomb), {"x.yaml:", "expands to more than 1000000 nodes"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

TEST(ConfigErrors, DeepNestingIsRejected) {
  std::string deep = "model: ";
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  expect_message(config_error(deep + "\n"), {"x.yaml:1: nesting deeper than 64 levels"});
  // Far deeper than any stack could recurse through: yaml-cpp's own guard stops it.
  std::string abyss(1'000'000, '[');
  expect_message(config_error(abyss), {"x.yaml:1: nesting deeper than 64 levels"});
  std::string maps;
  for (int i = 0; i < 100; ++i) maps += std::string(static_cast<size_t>(i), ' ') + "k:\n";
  expect_message(config_error(maps), {"x.yaml:", "nesting deeper than 64 levels"});
}

TEST(ConfigErrors, SelfReferencingAliasIsRejected) {
  expect_message(config_error("model: &m [*m]\n"), {"x.yaml:1: nesting deeper than 64 levels"});
  expect_message(config_error("model: *nowhere\n"), {"x.yaml:1: invalid YAML"});
}

TEST(ConfigErrors, DocumentThatIsNotAMapping) {
  expect_message(config_error("- model\n- task\n"), {"x.yaml", "a mapping"});
  expect_message(config_error("just text\n"), {"x.yaml", "a mapping"});
}

// ---- keys and values --------------------------------------------------------------------

TEST(ConfigErrors, UnknownKeySuggestsTheNearest) {
  expect_message(config_error(valid_config_with("  heads: 2", "  hedas: 2")),
                 {"x.yaml:5: model.hedas: unknown key (did you mean 'heads'?", "valid: "});
  expect_message(config_error(valid_config_with("training:", "trainig:")),
                 {"x.yaml:14: trainig: unknown key (did you mean 'training'?"});
  expect_message(config_error(valid_config_with("  warmup: 2", "  warmpu: 2")),
                 {"x.yaml:17: training.warmpu: unknown key (did you mean 'warmup'?"});
}

TEST(ConfigErrors, WrongTypeNamesKeyAndValue) {
  expect_message(config_error(valid_config_with("  heads: 2", "  heads: two")),
                 {"x.yaml:5: model.heads: expected an integer, got 'two'"});
  expect_message(config_error(valid_config_with("  heads: 2", "  heads: 2.5")),
                 {"x.yaml:5: model.heads: expected an integer, got '2.5'"});
  expect_message(config_error(valid_config_with("  steps: 10", "  steps: [10]")),
                 {"x.yaml:15: training.steps: expected an integer, got a list"});
  expect_message(config_error(valid_config_with("  type: rotary", "  type: {name: rotary}")),
                 {"x.yaml:8: positional.type: expected a text value (one line), got a mapping"});
  expect_message(config_error(valid_config_with("name: tiny", "name: tiny\nthreads: lots")),
                 {"x.yaml:2: threads: expected an integer, got 'lots'"});
  expect_message(config_error(valid_config_with("  lengths: [4, 8]", "  lengths: [4, eight]")),
                 {"evaluation.lengths: expected a list of integers, got 'eight'"});
  expect_message(config_error(valid_config_with("training:\n", "training:\n  lr: .nan\n")),
                 {"training.lr: expected a number, got '.nan'"});
  expect_message(config_error(valid_config_with("  heads: 2", "  heads: 99999999999999999999")),
                 {"model.heads: expected an integer"});
  // Text that would break a one-line message is refused and shown escaped.
  expect_message(config_error(valid_config_with("name: tiny", "name: \"two\\nlines\"")),
                 {"x.yaml:1: name: expected a text value (one line), got 'two\\nlines'"});
  expect_message(config_error(valid_config_with("  heads: 2", "  \"he\\x01ads\": 2")),
                 {"x.yaml:5: model: keys must be plain names, got 'he\\x01ads'"});
  // pelab computes in float32: a number beyond its range is refused where it is written.
  expect_message(config_error(valid_config_with("training:\n", "training:\n  lr: 1e39\n")),
                 {"x.yaml:15: training.lr: 1e39 is out of range (a number must be at most "
                  "3.40282e+38 in magnitude)"});
}

TEST(ConfigErrors, OutOfRangeValuesNameTheValidRange) {
  expect_message(config_error(valid_config_with("  steps: 10", "  steps: 0")),
                 {"x.yaml:15: training.steps: must be positive, got 0"});
  expect_message(config_error(valid_config_with("training:\n", "training:\n  lr: -0.1\n")),
                 {"training.lr: must be positive, got -0.1"});
  expect_message(config_error(valid_config_with("  layers: 1", "  layers: 1\n  dropout: 1.5")),
                 {"model.dropout must be in [0, 1), got 1.5"});
  expect_message(config_error(valid_config_with("  shift: 1", "  shift: 5000")),
                 {"x.yaml:11: task.shift: must be in [1, 4096], got 5000"});
  expect_message(config_error(valid_config_with("seed: 0", "seed: -1")),
                 {"x.yaml:2: seed: must be >= 0"});
  expect_message(config_error(valid_config_with("name: tiny", "name: tiny\nthreads: 0")),
                 {"threads: must be in [1, 256], got 0"});
  expect_message(config_error(valid_config_with("  batch_size: 4", "  batch_size: 100000000")),
                 {"training.batch_size: must be at most 65536"});
  expect_message(config_error(valid_config_with("  max_length: 8", "  max_length: 100000000")),
                 {"task.max_length: 100000000 is above the longest problem size pelab takes"});
  expect_message(config_error(valid_config_with("  lengths: [4, 8]", "  lengths: [4, 0]")),
                 {"evaluation.lengths: length 0 is outside"});
  expect_message(config_error(valid_config_with("  examples: 8", "  examples: 0")),
                 {"evaluation.examples: must be in [1, 1000000], got 0"});
}

TEST(ConfigErrors, InconsistentValuesNameBothKeys) {
  expect_message(config_error(valid_config_with("  heads: 2", "  heads: 3")),
                 {"x.yaml:5", "model.heads: 3 heads do not divide model.d_model = 16"});
  expect_message(config_error(valid_config_with("  warmup: 2", "  warmup: 20")),
                 {"x.yaml:17: training.warmup: must be in [0, training.steps = 10], got 20"});
  expect_message(config_error(valid_config_with("  min_length: 1", "  min_length: 9")),
                 {"task.max_length: 8 is below task.min_length = 9"});
  // rotary needs an even head width: 6 / 2 = 3.
  expect_message(config_error(valid_config_with("  d_model: 16", "  d_model: 6")),
                 {"x.yaml:", "rotary"});
  // A key the scheme does not take.
  expect_message(config_error(valid_config_with("  type: rotary", "  type: rotary\n  max_len: 8")),
                 {"x.yaml:9: positional.max_len: the 'rotary' scheme does not take this key"});
  // A learned table shorter than the evaluated lengths.
  expect_message(config_error(valid_config_with("  type: rotary", "  type: learned\n  max_len: 4")),
                 {"positional.max_len: the learned table has 4 rows"});
}

// The tasks of other papers and positions from the task: every bad value is one line at the
// line it was written, naming the key and what is valid.
TEST(ConfigErrors, NewTaskKeysAreRefusedAtTheirKeys) {
  const auto task = [](const std::string& keys) {
    return config_error(valid_config_with("  name: shift\n  shift: 1", keys));
  };
  expect_message(task("  name: flip_flop\n  p_w: -0.1"),
                 {"x.yaml:11: task.p_w: must be in [0, 1], got -0.1"});
  // Across parameters: blamed on the first of them given.
  expect_message(task("  name: flip_flop\n  p_r: 0.3"),
                 {"x.yaml:11: task.p_r: task.p_w + task.p_r + task.p_i must be 1, got 0.1 + 0.3 "
                  "+ 0.8 = 1.2"});
  expect_message(task("  name: decimal_addition\n  min_digits_a: 5\n  max_digits_a: 3"),
                 {"x.yaml:12: task.max_digits_a: must be >= task.min_digits_a = 5, got 3"});
  expect_message(task("  name: decimal_addition\n  max_digits_b: 2000"),
                 {"x.yaml:11: task.max_digits_b: must be in [1, 1000], got 2000"});
  // Sizes beyond the longest operand the parameters allow.
  expect_message(task("  name: decimal_addition\n  max_digits_a: 4\n  max_digits_b: 4"),
                 {"x.yaml:14: task.max_length: size 8 is above the longest operand "
                  "task.max_digits_a = 4 and task.max_digits_b = 4 allow"});
  // A causal-only task with a bidirectional model (the tiny config's default).
  expect_message(task("  name: flip_flop"),
                 {"x.yaml:10: task.name: task 'flip_flop' needs model.causal: true"});
  expect_message(task("  name: shift\n  shift: 1\n  position_ids: abacus"),
                 {"x.yaml:12: task.position_ids: 'abacus' is not valid (valid: index, "
                  "digit_runs)"});
  expect_message(task("  name: shift\n  shift: 1\n  position_ids: digit_runs\n  "
                      "position_offset_max: 10001"),
                 {"x.yaml:13: task.position_offset_max: must be in [0, 10000], got 10001"});
  expect_message(task("  name: shift\n  shift: 1\n  position_offset_max: 3"),
                 {"x.yaml:12: task.position_offset_max: only read with task.position_ids: "
                  "digit_runs"});
  expect_message(task("  name: associative_recall\n  position_ids: digit_runs"),
                 {"task.position_ids: task 'associative_recall' has no digit symbol"});
  expect_message(
      config_error(
          valid_config_with("  type: rotary", "  type: rotary\n  randomize:\n    max_position: 64"),
          {"task.position_ids=digit_runs"}),
      {"command line 'task.position_ids=digit_runs': task.position_ids: digit_runs numbers "
       "tokens by their runs of digits and positional.randomize by a random sample"});
}

// Rotary's fraction and its nested scaling mapping: every bad value is one line at the line
// it was written (d_h = 8 here: 4 pairs), naming the key; a missing required key names it.
TEST(ConfigErrors, RotaryOptionsAreRefusedAtTheirKeys) {
  const auto rotary_with = [](const std::string& keys) {
    return config_error(valid_config_with("  type: rotary", "  type: rotary\n" + keys));
  };
  expect_message(rotary_with("  fraction: 0.2"),
                 {"x.yaml:9: positional.fraction: 0.2 of d_h / 2 = 4 pairs leaves none to rotate"});
  expect_message(rotary_with("  fraction: 1.5"),
                 {"x.yaml:9: positional.fraction: must be in [0, 1], got 1.5"});
  expect_message(rotary_with("  fraction: half"), {"x.yaml:9: positional.fraction: expected a"});
  expect_message(rotary_with("  scaling: yarn"),
                 {"x.yaml:9: positional.scaling: expected a mapping of keys"});
  expect_message(rotary_with("  scaling:\n    type: yarm\n    original_length: 8"),
                 {"x.yaml:10: positional.scaling.type: 'yarm' is not valid (valid: none, pi, ntk, "
                  "dynamic_ntk, yarn)"});
  expect_message(rotary_with("  scaling:\n    type: pi\n    factr: 2"),
                 {"x.yaml:11: positional.scaling.factr: unknown key (did you mean 'factor'?"});
  expect_message(rotary_with("  scaling:\n    type: pi\n    factor: 0.5"),
                 {"x.yaml:11: positional.scaling.factor: must be in [1, inf], got 0.5"});
  expect_message(rotary_with("  scaling:\n    type: pi\n    factor: [2]"),
                 {"x.yaml:11: positional.scaling.factor: expected a"});
  expect_message(
      rotary_with("  scaling:\n    type: ntk\n    factor: 2\n    original_length: 0"),
      {"x.yaml:12: positional.scaling.original_length: must be in [1, 2147483647], got 0"});
  expect_message(rotary_with("  scaling:\n    type: yarn\n    original_length: 2.5"),
                 {"x.yaml:11: positional.scaling.original_length: expected an integer"});
  for (const std::string type : {"yarn", "dynamic_ntk"})
    expect_message(
        rotary_with("  scaling:\n    type: " + type + "\n    factor: 2"),
        {"x.yaml:10: positional.scaling.type: " + type +
         " needs positional.scaling.original_length (the length the model was trained on), "
         "which is not given"});
  expect_message(rotary_with("  fraction: 0.25\n  scaling:\n    type: ntk\n    factor: 2"),
                 {"x.yaml:9: positional.fraction: scaling.type ntk needs at least 2 pairs rotated, "
                  "got n_rot = 1"});
  expect_message(
      config_error(valid_config_with("  type: rotary", "  type: alibi\n  scaling:\n    type: pi")),
      {"x.yaml:9: positional.scaling: the 'alibi' scheme does not take this key"});
  expect_message(
      config_error(valid_config_with("  type: rotary", "  type: alibi\n  fraction: 0.5")),
      {"x.yaml:9: positional.fraction: the 'alibi' scheme does not take this key"});
  expect_message(rotary_with("  scalng:\n    type: pi"),
                 {"x.yaml:9: positional.scalng: unknown key (did you mean 'scaling'?"});
  expect_message(config_error(kValid, {"positional.scaling.factor=0.5"}),
                 {"command line 'positional.scaling.factor=0.5': positional.scaling.factor: must "
                  "be in [1, inf], got 0.5"});
  EXPECT_NO_THROW(
      parse_experiment(kValid, "x.yaml",
                       {"positional.fraction=0.5", "positional.scaling.type=yarn",
                        "positional.scaling.factor=4", "positional.scaling.original_length=8"},
                       PELAB_SOURCE_DIR "/configs"));
}

TEST(ConfigErrors, HugeModelIsRefusedBeforeAllocating) {
  expect_message(config_error(valid_config_with("  d_model: 16", "  d_model: 1000000000")),
                 {"model.d_model must be in [1, 1048576], got 1000000000"});
  // Each size is allowed, their product is not: refused at the first parameter that
  // would pass the budget, without allocating it.
  expect_message(config_error(valid_config_with("  d_model: 16", "  d_model: 65536")),
                 {"x.yaml:3: model: the model would have more than 268435456 parameters (at "
                  "'layers.0.attn.q.weight', shape [65536, 65536])"});
}

TEST(ConfigErrors, UnknownNamesListTheValidOnes) {
  expect_message(config_error(valid_config_with("  type: rotary", "  type: rotory")),
                 {"x.yaml:8: positional.type: unknown scheme 'rotory' (valid: ", "rotary"});
  expect_message(config_error(valid_config_with("  name: shift", "  name: shfit")),
                 {"x.yaml:10: task.name: unknown task 'shfit' (valid: ", "shift"});
  expect_message(
      config_error(valid_config_with("positional:\n  type: rotary\n", "positional: rotry\n")),
      {"x.yaml:7: positional: no config group 'rotry'", "valid: ", "rotary"});
}

TEST(ConfigErrors, LengthSamplingIsOneOfTwoAndNeedsAGeneratedTask) {
  expect_message(
      config_error(valid_config_with("  warmup: 2\n", "  warmup: 2\n  length_sampling: once\n")),
      {"x.yaml:",
       "training.length_sampling: 'once' is not valid (valid: per_example, "
       "per_batch)"});
  // A file task's training file need not have every size of the range.
  expect_message(error_message([] {
                   load_experiment(PELAB_SOURCE_DIR "/configs/file_example.yaml",
                                   {"training.length_sampling=per_batch"});
                 }),
                 {"training.length_sampling", "valid with task 'file': per_example"});
}

TEST(ConfigErrors, AGroupIsANameNotAPath) {
  // Found by fuzzing: a name too long to be a file name made the file-system call throw.
  expect_message(config_error(valid_config_with("positional:\n  type: rotary\n",
                                                "positional: " + std::string(5000, 'r') + "\n")),
                 {"x.yaml:7: positional: '", "' is not a config group name (valid: ", "rotary"});
  expect_message(config_error(valid_config_with("positional:\n  type: rotary\n",
                                                "positional: ../tasks/copy\n")),
                 {"x.yaml:7: positional: '../tasks/copy' is not a config group name"});
  expect_message(
      config_error(valid_config_with("positional:\n  type: rotary\n", "positional: .hidden\n")),
      {"x.yaml:7: positional: '.hidden' is not a config group name"});
}

// ---- key=value overrides ----------------------------------------------------------------

TEST(OverrideErrors, NotKeyEqualsValue) {
  expect_message(config_error(kValid, {"model.heads"}),
                 {"override 'model.heads': expected key=value"});
  expect_message(config_error(kValid, {"=4"}), {"override '=4': expected key=value"});
  expect_message(config_error(kValid, {"model.heads="}),
                 {"command line 'model.heads=': empty value"});
  expect_message(config_error(kValid, {"model..heads=4"}), {"'model..heads' is not a valid key"});
}

TEST(OverrideErrors, UnknownKeySuggestsTheNearest) {
  expect_message(config_error(kValid, {"modle.heads=4"}),
                 {"command line 'modle.heads=4': unknown key 'modle' (did you mean 'model'?"});
  expect_message(config_error(kValid, {"model.hedas=4"}),
                 {"command line 'model.hedas=4': model.hedas: unknown key (did you mean 'heads'?"});
}

TEST(OverrideErrors, WrongTypeOrRangeNamesTheArgument) {
  expect_message(config_error(kValid, {"model.heads=four"}),
                 {"command line 'model.heads=four': model.heads: expected an integer, got 'four'"});
  expect_message(config_error(kValid, {"training.steps=-5"}),
                 {"command line 'training.steps=-5': training.steps: must be positive, got -5"});
  expect_message(config_error(kValid, {"model.heads=3"}),
                 {"command line 'model.heads=3'", "3 heads do not divide model.d_model = 16"});
  expect_message(config_error(kValid, {"seed.x=1"}),
                 {"command line 'seed.x=1': 'seed' is not a section"});
}

TEST(OverrideErrors, BadYamlValue) {
  expect_message(config_error(kValid, {"evaluation.lengths=[4, 8"}),
                 {"command line 'evaluation.lengths=[4, 8': the value is not valid YAML"});
  std::string deep = "model.d_model=";
  for (int i = 0; i < 100; ++i) deep += "[";
  expect_message(config_error(kValid, {deep}), {"command line 'model.d_model=[[["});
  expect_message(config_error(kValid, {"sweep.seed=[&a [1, 1, 1], *a, {x: 1, x: 2}]"}),
                 {"command line 'sweep.seed=", "duplicate key 'x'"});
}

// ---- the file -----------------------------------------------------------------------------

TEST(ConfigFileErrors, MissingDirectoryOrBinaryFile) {
  TempDir dir;
  expect_message(error_message([&] { load_experiment(dir / "absent.yaml"); }),
                 {"absent.yaml: no such file"});
  expect_message(error_message([&] { load_experiment(dir.path().string()); }),
                 {"not a regular file; expected a YAML config"});
  const char binary[] = "name: x\nseed: 0\x00\x01\x02";
  write_file(dir / "binary.yaml", std::string(binary, sizeof binary - 1));
  expect_message(error_message([&] { load_experiment(dir / "binary.yaml"); }),
                 {"binary.yaml:2: not a text file (a NUL byte)"});
  write_file(dir / "huge.yaml", std::string((16u << 20) + 1, '#'));
  expect_message(error_message([&] { load_experiment(dir / "huge.yaml"); }),
                 {"huge.yaml: more than 16777216 bytes is too large for a config"});
}

TEST(ConfigFileErrors, ErrorsInAGroupNameTheGroupFile) {
  TempDir dir;
  write_file(dir / "configs/positional/odd.yaml", "type: rotary\ntype: alibi\n");
  write_file(dir / "configs/x.yaml",
             valid_config_with("positional:\n  type: rotary\n", "positional: odd\n"));
  expect_message(error_message([&] { load_experiment(dir / "configs/x.yaml"); }),
                 {"positional/odd.yaml:2: duplicate key 'type' (first given at line 1)"});
}

// ---- where an error points --------------------------------------------------------------

// A config whose positions come from a group file: an error must not point at the group's
// `type` line when the bad value was written elsewhere.
const std::string kGrouped =
    valid_config_with("positional:\n  type: rotary\n", "positional: rotary\n");

TEST(ErrorPlaces, AModelValueIsReportedWhereItWasWritten) {
  expect_message(config_error(kGrouped, {"model.d_model=0"}),
                 {"command line 'model.d_model=0': model.d_model must be in [1, 1048576], got 0"});
  // Messages about several keys point at the one just changed on the command line.
  expect_message(
      config_error(kGrouped, {"model.d_model=6"}),
      {"command line 'model.d_model=6': model.d_model: rotary needs an even head width"});
  expect_message(config_error(kGrouped, {"model.d_model=9"}),
                 {"command line 'model.d_model=9': model.heads: 2 heads do not divide"});
  expect_message(config_error(kGrouped, {"model.d_model=65536"}),
                 {"command line 'model.d_model=65536': model.d_model: the model would have more"});
  // Written in the file: its line.
  expect_message(config_error(valid_config_with("  d_model: 16", "  d_model: 0")),
                 {"x.yaml:4: model.d_model must be in [1, 1048576], got 0"});
  // Both written in files: the scheme's line, in the group file that sets it.
  TempDir dir;
  write_file(dir / "configs/positional/rotary.yaml", "type: rotary\n");
  write_file(dir / "configs/x.yaml", [] {
    std::string text = kGrouped;
    return text.replace(text.find("d_model: 16"), 11, "d_model: 6");
  }());
  expect_message(error_message([&] { load_experiment(dir / "configs/x.yaml"); }),
                 {"configs/positional/rotary.yaml:1: positional.type: rotary needs an even head"});
}

TEST(ErrorPlaces, SweepErrorsNameTheAxisLine) {
  TempDir dir;
  write_file(dir / "c.yaml", kValid + "sweep:\n  seed: [0, 1]\n  positional.type: [none, rotry]\n");
  SweepOptions o;
  o.config_path = dir / "c.yaml";
  o.out_dir = dir / "out";
  o.executable = "/bin/false";
  const std::string msg = error_message([&] { run_sweep(o); });
  expect_message(msg, {"c.yaml:23: sweep value 'positional.type=rotry': positional.type: unknown "
                       "scheme 'rotry'"});
  EXPECT_EQ(msg.find("command line"), std::string::npos) << msg;
  EXPECT_FALSE(testing::fs::exists(dir / "out"));
}

TEST(ErrorPlaces, ACheckpointsConfigIsNamedWithTheCheckpoint) {
  TempDir dir;
  const ModelConfig config =
      parse_experiment(kValid, "x.yaml", {}, PELAB_SOURCE_DIR "/configs").model;
  Encoder model(config, make_scheme, 0);
  std::string text = model_sections_yaml(config);
  text.replace(text.find("heads: 2"), 8, "heads: 3");
  model_checkpoint(model, text).write(dir / "ckpt.safetensors");
  expect_message(error_message([&] { load_model(dir / "ckpt.safetensors"); }),
                 {"ckpt.safetensors [config]: model.heads: 3 heads do not divide"});
}

// ---- refusals name what was given and leave nothing behind ----------------------------

class RefusalsName : public ::testing::Test {
 protected:
  // Runs pelab in the temporary directory, expects a user error mentioning `parts` and none
  // of `absent`, and checks that the tree is exactly as it was.
  void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& parts,
                      const std::string& absent = "") {
    const std::vector<std::string> before = testing::listing(dir_.path());
    const testing::Outcome o = testing::run_pelab(args, dir_.path());
    EXPECT_EQ(testing::user_error_problem(o, parts), "");
    if (!absent.empty()) {
      EXPECT_EQ(o.err.find(absent), std::string::npos) << o.err;
    }
    EXPECT_EQ(testing::listing(dir_.path()), before) << "files were left behind";
  }

  TempDir dir_;
};

TEST_F(RefusalsName, EvalNamesTheFileItWasGiven) {
  write_file(dir_ / "notes.txt", "not a checkpoint\n");
  expect_refused({"eval", "notes.txt"}, {"notes.txt: no config.yaml beside the checkpoint"});
  expect_refused({"eval", "/dev/null"}, {"/dev/null: not a regular file or directory"},
                 "/dev/config.yaml");
}

TEST_F(RefusalsName, CompareRefusesADamagedSummary) {
  write_file(dir_ / "runs/a/config.yaml", kValid);
  write_file(dir_ / "runs/a/summary.json", "{\"status\": \"compl");
  expect_refused({"compare", "runs", "--no-plots"},
                 {"runs/a/summary.json: not valid JSON; the file is damaged"});
  write_file(dir_ / "runs/a/summary.json", "[1, 2]");
  expect_refused({"compare", "runs", "--no-plots"}, {"runs/a/summary.json: not a JSON object"});
  write_file(dir_ / "runs/a/summary.json", R"({"status": "completed"})");
  expect_refused({"compare", "runs", "--no-plots"},
                 {"runs/a/summary.json: not a summary pelab train writes"});
}

}  // namespace
}  // namespace pelab
