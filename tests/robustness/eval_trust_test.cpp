// `pelab eval` takes the model and everything that indexes its outputs from one source: the
// checkpoint it evaluates, whose stored config must equal the run's config.yaml (checked as
// strictly as `--resume` checks it). A mismatch, a checkpoint with NaN weights, or a file
// that is not the run's checkpoint is a one-line error naming the files; nothing is written.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "pelab/io/safetensors.h"
#include "pelab_process.h"

namespace pelab::testing {
namespace {

const std::string kTrustConfig = testing::tiny_config("tiny", R"(training:
  steps: 4
  batch_size: 4
  warmup: 1
evaluation:
  lengths: [4, 8]
  examples: 4
)");

// Replaces the first occurrence of `from` in the file at `path` by `to`.
void edit_file(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = read_file(path);
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << path;
  write_file(path, text.replace(at, from.size(), to));
}

class EvalTrust : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    write_file(shared_.path() / "tiny.yaml", kTrustConfig);
    const Outcome o =
        run_pelab({"train", "tiny.yaml", "--out", "run", "--no-progress"}, shared_.path());
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  void SetUp() override {
    fs::copy(shared_.path() / "run", dir_.path() / "run", fs::copy_options::recursive);
  }

  void expect_user_error(const std::vector<std::string>& args,
                         const std::vector<std::string>& parts) {
    const std::vector<std::string> before = listing(dir_.path());
    const Outcome o = run_pelab(args, dir_.path());
    EXPECT_EQ(user_error_problem(o, parts), "");
    EXPECT_EQ(listing(dir_.path()), before) << "files were left behind";
  }

  // Both `pelab eval run` and `pelab train run/config.yaml --resume` refuse the run with one
  // line holding each of their `parts`, leaving every file as it was.
  void expect_both_refuse(const std::vector<std::string>& eval_parts,
                          const std::vector<std::string>& resume_parts) {
    SCOPED_TRACE(read_file(config_));
    expect_user_error({"eval", "run"}, eval_parts);
    expect_user_error({"train", "run/config.yaml", "--out", "run", "--resume", "--no-progress"},
                      resume_parts);
  }

  // Rewrites the checkpoint with its metadata entry `key` set to `value`.
  void set_metadata(const std::string& key, const std::string& value) {
    SafetensorsFile file = read_safetensors(checkpoint_);
    SafetensorsWriter w;
    for (auto& [k, v] : file.metadata) w.set_metadata(k, k == key ? value : v);
    for (SafetensorsTensor t : file.tensors) w.add(std::move(t));
    w.write(checkpoint_);
  }

  // A metadata entry edited to `value`: eval and resume both refuse it with `expected`.
  void expect_metadata_refused(const std::string& key, const std::string& value,
                               const std::string& expected) {
    set_metadata(key, value);
    expect_both_refuse({"run/checkpoint.safetensors: __metadata__ '" + key + "'", expected},
                       {"run/checkpoint.safetensors: __metadata__ '" + key + "'", expected});
  }

  static TempDir shared_;
  TempDir dir_;
  const std::string config_ = dir_ / "run/config.yaml";
  const std::string checkpoint_ = dir_ / "run/checkpoint.safetensors";
};
TempDir EvalTrust::shared_;

TEST_F(EvalTrust, TheRunEvaluatesAsIs) {
  const Outcome o = run_pelab({"eval", "run", "--lengths", "4,16"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("     16 "), std::string::npos) << o.out;
}

// A task edited in config.yaml after training (more symbols than the model's vocab_out) once
// read past the logits buffer: exit 0, loss 1e27. The model and the task now agree or eval
// refuses, naming the first line that differs.
TEST_F(EvalTrust, ConfigYamlEditedAfterTrainingIsRefused) {
  edit_file(config_, "symbols: 8", "symbols: 16");
  expect_user_error({"eval", "run"},
                    {"run/checkpoint.safetensors: the checkpoint was written "
                     "by a different config than run/config.yaml",
                     "'vocab_in: 8' in the checkpoint", "'vocab_in: 16' in config.yaml"});
}

TEST_F(EvalTrust, FlippedCausalOrRotaryBaseIsRefused) {
  edit_file(config_, "causal: false", "causal: true");
  expect_user_error({"eval", "run"}, {"different config than run/config.yaml", "causal"});
  fs::copy_file(shared_.path() / "run/config.yaml", config_, fs::copy_options::overwrite_existing);
  edit_file(config_, "base: 10000", "base: 500");
  expect_user_error({"eval", "run"}, {"different config than run/config.yaml", "base"});
}

TEST_F(EvalTrust, NonFiniteWeightsAreRefused) {
  SafetensorsFile file = read_safetensors(checkpoint_);
  SafetensorsWriter w;
  for (auto& [key, value] : file.metadata) w.set_metadata(key, value);
  for (SafetensorsTensor t : file.tensors) {
    if (t.name == "embed.weight") t.f32[5] = std::nanf("");
    w.add(std::move(t));
  }
  w.write(checkpoint_);
  expect_user_error({"eval", "run"}, {"run/checkpoint.safetensors: parameter 'embed.weight' "
                                      "holds NaN at element 5"});
}

// ---- eval is as strict as --resume -------------------------------------------------------

// The line of config.yaml that gives model.vocab_out ("  vocab_out: 9").
std::string vocab_out_line(const std::string& config_yaml) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(config_yaml, m, std::regex("  vocab_out: [0-9]+\\n")));
  return m.str();
}

// vocab_out is determined by the task; an edited one in config.yaml used to be replaced by
// the task's value on eval (exit 0) while --resume refused the file.
TEST_F(EvalTrust, SmallerVocabOutIsRefused) {
  const std::string line = vocab_out_line(read_file(config_));
  edit_file(config_, line, "  vocab_out: 5\n");
  expect_both_refuse({"different config than run/config.yaml", "'vocab_out: 5' in config.yaml"},
                     {"run/config.yaml:", "model.vocab_out: 5 differs"});
}

TEST_F(EvalTrust, LargerVocabOutIsRefused) {
  const std::string line = vocab_out_line(read_file(config_));
  edit_file(config_, line, "  vocab_out: 30\n");
  expect_both_refuse({"different config than run/config.yaml", "'vocab_out: 30' in config.yaml"},
                     {"run/config.yaml:", "model.vocab_out: 30 differs"});
}

TEST_F(EvalTrust, RemovedVocabOutIsRefused) {
  const std::string line = vocab_out_line(read_file(config_));
  edit_file(config_, line, "");
  expect_both_refuse({"different config than run/config.yaml", "vocab_out"},
                     {"the config differs from the one the run started with"});
}

TEST_F(EvalTrust, AnotherFormatIsRefused) {
  expect_metadata_refused("format", "other", "is 'other'; expected 'pelab");
}

TEST_F(EvalTrust, AStepThatIsNotANumberIsRefused) {
  expect_metadata_refused("step", "x", "is 'x'; expected an integer in [0, 4]");
}

TEST_F(EvalTrust, ANegativeStepIsRefused) {
  expect_metadata_refused("step", "-4", "is '-4'; expected an integer in [0, 4]");
}

TEST_F(EvalTrust, OptimizerStepsOutOfRangeAreRefused) {
  expect_metadata_refused("optimizer_steps", "1e20", "is '1e20'; expected an integer in [0, 4]");
}

// `pelab eval RUN/other.safetensors` evaluates that file, never RUN/checkpoint.safetensors.
TEST_F(EvalTrust, TheNamedCheckpointIsTheOneEvaluated) {
  write_file(dir_ / "run/other.safetensors", "garbage, not a safetensors file");
  expect_user_error({"eval", "run/other.safetensors"}, {"run/other.safetensors: "});
  fs::copy_file(checkpoint_, dir_ / "run/copy.safetensors");
  const Outcome copy = run_pelab({"eval", "run/copy.safetensors"}, dir_.path());
  const Outcome own = run_pelab({"eval", "run"}, dir_.path());
  ASSERT_EQ(copy.exit_code, 0) << copy.err;
  EXPECT_EQ(copy.out, own.out);
}

TEST_F(EvalTrust, AMissingCheckpointIsNamedAsOne) {
  expect_user_error({"eval", "run/nope.safetensors"}, {"run/nope.safetensors: no such checkpoint"});
}

TEST_F(EvalTrust, NotARegularFileIsRefused) {
  expect_user_error({"eval", "/dev/null"}, {"/dev/null: not a regular file or directory"});
}

// A CSV text with the cells of the columns from `first` on rounded to six decimals, as a run
// writes them (the header is kept).
std::string rounded_to_six_decimals(const std::string& csv, size_t first, size_t last) {
  std::string out;
  for (const std::string& line : lines_of(csv)) {
    std::string row;
    size_t column = 0;
    for (size_t start = 0, end = 0; end != std::string::npos; start = end + 1, ++column) {
      end = line.find(',', start);
      const std::string cell = line.substr(start, end == std::string::npos ? end : end - start);
      const bool number = !out.empty() && column >= first && column <= last;
      row += (column ? "," : "") + (number ? fmt::format("{:.6f}", std::stod(cell)) : cell);
    }
    out += row + "\n";
  }
  return out;
}

// `pelab eval --out` repeats the run's final evaluation: the same rows, with every digit
// (rounded, they are the run's own files byte for byte), and the table prints six decimals.
TEST_F(EvalTrust, EvalOutWritesTheRunsFilesWithEveryDigit) {
  const Outcome o = run_pelab({"eval", "run", "--out", "again"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(rounded_to_six_decimals(read_file(dir_.path() / "again/eval.csv"), 4, 6),
            read_file(dir_.path() / "run/eval.csv"));
  EXPECT_EQ(rounded_to_six_decimals(read_file(dir_.path() / "again/per_position.csv"), 3, 4),
            read_file(dir_.path() / "run/per_position.csv"));
  // Some value has more digits than six decimals (a mean loss does).
  EXPECT_NE(read_file(dir_.path() / "again/eval.csv"), read_file(dir_.path() / "run/eval.csv"));
  const std::vector<std::string> table = lines_of(o.out);
  ASSERT_GE(table.size(), 3u);
  EXPECT_TRUE(std::regex_search(table[1], std::regex(R"( \d+\.\d{6} +\d+\.\d{6} +\d+\.\d{6} )")))
      << table[1];
  // Without --out nothing is written.
  const std::vector<std::string> before = listing(dir_.path());
  ASSERT_EQ(run_pelab({"eval", "run"}, dir_.path()).exit_code, 0);
  EXPECT_EQ(listing(dir_.path()), before);
}

TEST_F(EvalTrust, EvalOutNeverOverwritesResults) {
  expect_user_error({"eval", "run", "--out", "run"},
                    {"--out run: it already holds eval.csv; choose another --out or delete it"});
  expect_user_error({"eval", "run", "--out", "run/config.yaml"},
                    {"--out run/config.yaml: not a directory"});
}

// `pelab eval --set`: rotary's scaling, which changes no parameter, set for one evaluation.
// It acts (the losses differ from the run's own in their last digits at least), it is said
// above the table and kept beside the CSVs as the config evaluated, and no file of the run
// changes. Any other key is one line naming it, exit 2, nothing written.
TEST_F(EvalTrust, EvalSetScalesRotaryForOneEvaluation) {
  const std::vector<std::string> run_files = listing(dir_.path() / "run");  // with contents
  ASSERT_EQ(run_pelab({"eval", "run", "--out", "plain"}, dir_.path()).exit_code, 0);
  const Outcome o = run_pelab(
      {"eval", "run", "--set", "positional.scaling.type=yarn", "positional.scaling.factor=4",
       "positional.scaling.original_length=16", "--out", "scaled"},
      dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("set for this evaluation (the run's files are unchanged): "
                       "positional.scaling.type=yarn positional.scaling.factor=4 "
                       "positional.scaling.original_length=16\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(read_file(dir_.path() / "scaled/eval_config.yaml")
                .find("  type: rotary\n  base: 10000\n  scaling:\n    type: yarn\n    factor: 4\n"
                      "    original_length: 16\n"),
            std::string::npos);
  EXPECT_NE(read_file(dir_.path() / "scaled/eval.csv"), read_file(dir_.path() / "plain/eval.csv"));
  EXPECT_FALSE(fs::exists(dir_.path() / "plain/eval_config.yaml"));
  EXPECT_EQ(listing(dir_.path() / "run"), run_files);
}

TEST_F(EvalTrust, EvalSetRefusesKeysThatChangeTheModel) {
  for (const std::string key : {"model.d_model=32", "positional.fraction=0.5", "positional.base=10",
                                "training.steps=9", "positional.scaling"})
    expect_user_error({"eval", "run", "--set", key, "--out", "out"},
                      {"--set " + key +
                       ": an evaluation can set only keys that change no "
                       "parameter (valid: positional.scaling.type, positional.scaling.factor, "
                       "positional.scaling.original_length)"});
  expect_user_error({"eval", "run", "--set", "positional.scaling.factor=0.5"},
                    {"command line 'positional.scaling.factor=0.5': positional.scaling.factor: "
                     "must be in [1, inf], got 0.5"});
  expect_user_error({"eval", "run", "--set", "positional.scaling.type=yarn"},
                    {"positional.scaling.type: yarn needs positional.scaling.original_length"});
}

// Every wrong --set is one line naming the key, exit code 2, and nothing written (--out
// included): a key of another scheme's run, a key given twice, a value of the wrong shape or
// out of range, a setting without a value. The controls: each key with a good value.
TEST_F(EvalTrust, EvalSetRefusesEveryWrongCaseNamingTheKey) {
  ASSERT_EQ(
      run_pelab({"init", "run/config.yaml", "positional=alibi", "--out", "alibi"}, dir_.path())
          .exit_code,
      0);
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"alibi", "--set", "positional.scaling.type=pi"},
       {"command line 'positional.scaling.type=pi': positional.scaling: the 'alibi' scheme "
        "does not take this key"}},
      {{"run", "--set", "positional.scaling.factor=2", "--set", "positional.scaling.factor=4"},
       {"--set positional.scaling.factor=4: positional.scaling.factor is set twice"}},
      {{"run", "--set", "positional.scaling.factor=[2]"},
       {"positional.scaling.factor: expected a number"}},
      {{"run", "--set", "positional.scaling.factor=nan"}, {"positional.scaling.factor: "}},
      {{"run", "--set", "positional.scaling.factor=1e39"},
       {"positional.scaling.factor: 1e39 is out of range"}},
      {{"run", "--set", "positional.scaling.original_length=0"},
       {"positional.scaling.original_length: must be in ["}},
      {{"run", "--set", "positional.scaling.original_length=2.5"},
       {"positional.scaling.original_length: "}},
      {{"run", "--set", "positional.scaling.type=yarm"},
       {"positional.scaling.type: 'yarm' is not valid (valid: none, pi, ntk, dynamic_ntk, yarn)"}},
      {{"run", "--set", "positional.scaling.type="}, {"positional.scaling.type="}},
      {{"run", "--set", "positional.scaling.factor"},
       {"--set positional.scaling.factor: an evaluation can set only keys"}},
      {{"run", "--set", "positional.scaling.type={a: 1}"}, {"positional.scaling.type: expected"}},
  };
  for (const auto& [args, parts] : cases) {
    std::vector<std::string> command = {"eval"};
    command.insert(command.end(), args.begin(), args.end());
    command.insert(command.end(), {"--out", "out"});
    SCOPED_TRACE(args.back());
    expect_user_error(command, parts);
  }
  for (const char* good : {"positional.scaling.type=pi", "positional.scaling.factor=2",
                           "positional.scaling.original_length=8"}) {
    const Outcome o = run_pelab({"eval", "run", "--set", good}, dir_.path());
    EXPECT_EQ(o.exit_code, 0) << good << ": " << o.err;
  }
}

}  // namespace
}  // namespace pelab::testing
