// Bad input through the real `pelab` binary, one case per way in (command-line arguments, the
// YAML config, key=value overrides, dataset files, checkpoints): exit code 2, exactly one
// line on stderr starting "pelab: error: " that names the culprit, nothing on stdout, and no
// run directory or partial file left behind.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pelab/config/yaml_reader.h"
#include "pelab/core/strings.h"
#include "pelab_process.h"

namespace pelab::testing {
namespace {

const std::string kCliConfig = testing::tiny_config("tiny", R"(training:
  steps: 4
  batch_size: 4
  warmup: 1
  log_every: 2
  checkpoint_every: 2
evaluation:
  lengths: [4, 8]
  examples: 4
)");

class CliErrors : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir_ / "tiny.yaml", kCliConfig); }

  // Runs pelab in the temporary directory, expects a user error mentioning `parts`, and
  // checks that nothing was written there.
  void expect_user_error(const std::vector<std::string>& args,
                         const std::vector<std::string>& parts) {
    const std::vector<std::string> before = listing(dir_.path());
    const Outcome o = run_pelab(args, dir_.path());
    EXPECT_EQ(user_error_problem(o, parts), "");
    EXPECT_EQ(listing(dir_.path()), before) << "files were left behind";
  }

  TempDir dir_;
};

// ---- command-line arguments ---------------------------------------------------------------

// The tests' "nothing written" checks compare listings of a directory: a listing must see a
// change of any one byte of a file, at the start, across the hash's chunks and in the last
// partial word; equal contents list the same (the control).
TEST(Listing, SeesAnyByteOfAFileChange) {
  TempDir dir;
  std::string bytes((3 << 20) + 5, 'a');
  write_file(dir / "f", bytes);
  const std::vector<std::string> original = listing(dir.path());
  for (const size_t at : {size_t{0}, size_t{(1 << 20) - 1}, size_t{1 << 20}, bytes.size() - 1}) {
    std::string changed = bytes;
    changed[at] = 'b';
    write_file(dir / "f", changed);
    EXPECT_NE(listing(dir.path()), original) << at;
  }
  write_file(dir / "f", bytes);
  EXPECT_EQ(listing(dir.path()), original);
}

TEST_F(CliErrors, UnknownOption) {
  expect_user_error({"train", "tiny.yaml", "--frobnicate"},
                    {"--frobnicate", "(see pelab train --help)"});
  // Before any command: named, with the commands (not "A subcommand is required").
  expect_user_error({"--frobnicate"}, {"unknown option '--frobnicate' (pelab takes a command "
                                       "first; valid: train, eval, ",
                                       "; see pelab --help)"});
}

TEST_F(CliErrors, MissingArgument) {
  expect_user_error({"train"}, {"config is required", "pelab train --help"});
  expect_user_error({}, {"A subcommand is required", "(see pelab --help)"});
}

TEST_F(CliErrors, UnknownSubcommand) {
  expect_user_error({"trian", "tiny.yaml"},
                    {"unknown command 'trian' (did you mean 'train'? valid: ", "sweep"});
}

TEST_F(CliErrors, MissingRunDirectoryIsNamed) {
  expect_user_error({"eval", "no-such-run"}, {"no-such-run: no such run directory"});
}

TEST_F(CliErrors, BadOptionValue) {
  expect_user_error({"train", "tiny.yaml", "--stop-after", "-3"},
                    {"--stop-after: expected an integer >= 0, got '-3'"});
  expect_user_error({"eval", "run", "--lengths", "4,x"}, {"--lengths", "x"});
  expect_user_error({"sweep", "tiny.yaml", "--jobs", "0"},
                    {"--jobs: expected an integer >= 1, got '0'"});
}

TEST_F(CliErrors, HelpAndVersionSucceed) {
  Outcome o = run_pelab({"--version"}, dir_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("pelab 0."), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("(commit "), std::string::npos) << o.out;
  o = run_pelab({"train", "--help"}, dir_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("--resume"), std::string::npos) << o.out;
}

TEST_F(CliErrors, ResumeWithoutCheckpointCreatesNothing) {
  expect_user_error({"train", "tiny.yaml", "--out", "run", "--resume"},
                    {"run: nothing to resume (no checkpoint.safetensors)"});
}

// ---- the YAML config ------------------------------------------------------------------------

TEST_F(CliErrors, ConfigSyntaxError) {
  write_file(dir_ / "bad.yaml", "model:\n  d_model: [16\n");
  expect_user_error({"train", "bad.yaml", "--out", "run"}, {"bad.yaml:", "invalid YAML"});
}

TEST_F(CliErrors, ConfigDuplicateKey) {
  write_file(dir_ / "dup.yaml", std::string(kCliConfig) + "seed: 1\n");
  expect_user_error({"train", "dup.yaml"},
                    {"dup.yaml:23: duplicate key 'seed' (first given at line 2)"});
}

TEST_F(CliErrors, ConfigMissing) {
  expect_user_error({"print-config", "absent.yaml"}, {"absent.yaml: no such file"});
}

// ---- key=value overrides ----------------------------------------------------------------------

TEST_F(CliErrors, OverrideTypo) {
  expect_user_error({"train", "tiny.yaml", "model.hedas=4", "--out", "run"},
                    {"command line 'model.hedas=4'", "did you mean 'heads'?"});
}

TEST_F(CliErrors, OverrideWrongType) {
  expect_user_error({"sweep", "tiny.yaml", "sweep.seed=[0,1]", "training.steps=many"},
                    {"command line 'training.steps=many'", "expected an integer, got 'many'"});
}

// New task parameters and the task's position keys, out of range: exit 2, one line naming
// the key and what is valid.
TEST_F(CliErrors, TaskKeysOutOfRange) {
  expect_user_error({"train", "tiny.yaml", "task.name=flip_flop", "task.p_r=1.5", "--out", "run"},
                    {"command line 'task.p_r=1.5'", "task.p_r: must be in [0, 1], got 1.5"});
  expect_user_error({"train", "tiny.yaml", "task.name=flip_flop", "task.p_i=0.9",
                     "model.causal=true", "--out", "run"},
                    {"command line 'task.p_i=0.9'", "task.p_w + task.p_r + task.p_i must be 1"});
  expect_user_error(
      {"train", "tiny.yaml", "task.name=decimal_addition", "task.max_digits_b=0", "--out", "run"},
      {"task.max_digits_b: must be in [1, 1000], got 0"});
  expect_user_error({"train", "tiny.yaml", "task.position_ids=digit_runs",
                     "task.position_offset_max=-1", "--out", "run"},
                    {"command line 'task.position_offset_max=-1'",
                     "task.position_offset_max: must be in [0, 10000], got -1"});
}

// ---- dataset files ----------------------------------------------------------------------------

TEST_F(CliErrors, BinaryDatasetFile) {
  write_file(dir_ / "train.tsv", "a b\tb a\nb a\ta b\n");
  const char binary[] =
      "a b\tb a\n\x7f"
      "ELF\x02\x01\x00\x00\tx\n";  // line 2: an ELF header
  write_file(dir_ / "eval.tsv", std::string(binary, sizeof binary - 1));
  write_file(dir_ / "file.yaml",
             "task:\n  name: file\n  train_file: train.tsv\n  eval_file: eval.tsv\n"
             "training:\n  steps: 2\n  warmup: 1\n");
  expect_user_error({"train", "file.yaml", "--out", "run"}, {"eval.tsv:2:", "binary"});
}

TEST_F(CliErrors, EmptyDatasetFile) {
  write_file(dir_ / "train.jsonl", "");
  write_file(dir_ / "file.yaml",
             "task:\n  name: file\n  train_file: train.jsonl\n  eval_file: train.jsonl\n");
  expect_user_error({"print-config", "file.yaml"}, {"train.jsonl: the file is empty"});
}

TEST_F(CliErrors, UnknownSymbolInEvaluationFile) {
  write_file(dir_ / "train.tsv", "a b\tb a\nb a\ta b\n");
  write_file(dir_ / "eval.tsv", "a b\tb a\na c\tc a\n");
  write_file(dir_ / "file.yaml",
             "task:\n  name: file\n  train_file: train.tsv\n  eval_file: eval.tsv\n");
  expect_user_error({"print-config", "file.yaml"}, {"eval.tsv:2:", "'c'"});
}

// ---- checkpoints ------------------------------------------------------------------------------

class CliCheckpointErrors : public CliErrors {
 protected:
  void SetUp() override {
    CliErrors::SetUp();
    const Outcome o =
        run_pelab({"train", "tiny.yaml", "--out", "run", "--no-progress"}, dir_.path());
    ASSERT_EQ(o.exit_code, 0) << o.err;
    checkpoint_ = read_file(dir_ / "run/checkpoint.safetensors");
    ASSERT_GT(checkpoint_.size(), 100u);
  }
  std::string checkpoint_;
};

TEST_F(CliCheckpointErrors, TruncatedCheckpoint) {
  write_file(dir_ / "run/checkpoint.safetensors", checkpoint_.substr(0, checkpoint_.size() / 2));
  expect_user_error({"eval", "run"}, {"run/checkpoint.safetensors: ", "beyond the data region"});
}

TEST_F(CliCheckpointErrors, GarbageHeader) {
  std::string bad = checkpoint_;
  bad[8] = 'x';
  write_file(dir_ / "run/checkpoint.safetensors", bad);
  expect_user_error({"eval", "run"}, {"run/checkpoint.safetensors: header is not valid JSON",
                                      "expected a JSON object"});
}

TEST_F(CliCheckpointErrors, CheckpointOfAnotherModel) {
  // The run's config asks for d_model 16; a checkpoint of d_model 32 does not fit it.
  const Outcome o = run_pelab(
      {"train", "tiny.yaml", "model.d_model=32", "--out", "other", "--no-progress"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  fs::copy_file(dir_ / "other/checkpoint.safetensors", dir_ / "run/checkpoint.safetensors",
                fs::copy_options::overwrite_existing);
  expect_user_error(
      {"train", "tiny.yaml", "--out", "run", "--resume"},
      {"run/checkpoint.safetensors: the checkpoint was written by a different config"});
}

// ---- what reaches the terminal ------------------------------------------------------------

TEST(PrintableText, IsAWhitelistOfPrintableUtf8) {
  for (const std::string ok :
       {"", "seed=0", "positional.type=rotary", "d_h × 2 — é ü 位置", "\xf0\x9f\x98\x80"})
    EXPECT_TRUE(printable_text(ok)) << ok;
  for (const std::string& bad : std::vector<std::string>{
           "a\nb", "tab\there", std::string("nul\0x", 5), "\x1b[31mred", "del\x7f",
           "c1 csi \xc2\x9b"
           "31m",
           "rlo \xe2\x80\xae", "isolate \xe2\x81\xa6", "line \xe2\x80\xa8", "latin1 \xe9",
           "cut \xc3", "overlong \xc0\xaf", "surrogate \xed\xa0\x80", "beyond \xf4\x90\x80\x80"})
    EXPECT_FALSE(printable_text(bad)) << escape_unprintable(bad);
  EXPECT_EQ(escape_unprintable("a\x1b[31m\n\xc2\x9b é"), "a\\x1b[31m\\n\\xc2\\x9b é");
  EXPECT_TRUE(printable_text(escape_unprintable("\xe2\x80\xae\xff\x01")));
  // A message cut at 80 bytes never splits a character into escaped bytes.
  const std::string as(79, 'a');
  EXPECT_EQ(message_text(fmt::format("{}é", as)), fmt::format("{}... (81 bytes)", as));
}

// A value that reaches the terminal or a sweep's scripts is held to that whitelist: config
// text and overrides are refused with the value escaped, and an error line escapes whatever a
// message quotes as given (a path).
TEST_F(CliErrors, NothingUnprintableReachesTheTerminal) {
  write_file(dir_ / "c1.yaml",
             "name: a\xc2\x9b"
             "b\n" +
                 kCliConfig.substr(kCliConfig.find('\n') + 1));
  expect_user_error({"train", "c1.yaml"},
                    {"c1.yaml:1: name: expected a text value (one line), got 'a\\xc2\\x9bb'"});
  expect_user_error({"print-config", "tiny.yaml", "name='a\nb'"},
                    {"override 'name='a\\nb'': holds a control character"});
  // YAML's escape gives the right-to-left override that the text itself does not hold.
  expect_user_error({"print-config", "tiny.yaml", "sweep.seed=[0, \"\\u202E\"]"},
                    {"sweep.seed: expected a list of plain values, got '\\xe2\\x80\\xae'"});
  const Outcome o = run_pelab({"eval", "run\x1b[31m"}, dir_.path());
  EXPECT_EQ(user_error_problem(o, {"run\\x1b[31m: no such run directory"}), "");
  EXPECT_EQ(o.err.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace pelab::testing
