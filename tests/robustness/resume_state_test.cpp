// `--resume` restores only a state the run could have saved. Every entry it reads from the
// checkpoint — parameters, optimizer buffers and step counts, the data RNG's state, the step
// counters and the format — is checked for dtype, shape, range and finiteness before anything
// in the run directory changes: a refusal is one line naming the checkpoint and the entry,
// exit code 2, and the directory is left byte for byte as it was (names, contents and
// modification times; train.log gains no "resuming").
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/core/rng.h"
#include "pelab/io/safetensors.h"
#include "pelab/nn/checkpoint.h"
#include "pelab/positional/scheme.h"
#include "pelab_process.h"

namespace pelab::testing {
namespace {

const std::string kResumeConfig = testing::tiny_config("tiny", R"(training:
  steps: 6
  batch_size: 4
  warmup: 1
evaluation:
  lengths: [4, 8]
  examples: 4
)");

// Everything a refusal must leave alone: each file's and directory's path, modification
// time and (for files) contents.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string mtime =
        std::to_string(fs::last_write_time(e.path()).time_since_epoch().count());
    files[fs::relative(e.path(), dir).string()] =
        mtime + (e.is_regular_file() ? " " + read_file(e.path()) : " (directory)");
  }
  files[". (mtime)"] = std::to_string(fs::last_write_time(dir).time_since_epoch().count());
  return files;
}

class ResumeState : public ::testing::Test {
 protected:
  // One run stopped after 3 of its 6 steps; each test resumes a copy.
  static void SetUpTestSuite() {
    write_file(shared_.path() / "tiny.yaml", kResumeConfig);
    const Outcome o =
        run_pelab({"train", "tiny.yaml", "--out", "run", "--stop-after", "3", "--no-progress"},
                  shared_.path());
    ASSERT_EQ(o.exit_code, 3) << o.err;
  }
  void SetUp() override {
    fs::copy(shared_.path(), dir_.path(), fs::copy_options::recursive);
    const SafetensorsFile file = read_safetensors(checkpoint_);
    for (const SafetensorsTensor& t : file.tensors)  // "adamw", or the config's optimizer
      if (t.name.rfind("optim.", 0) == 0) kind_ = t.name.substr(6, t.name.find('.', 6) - 6);
    ASSERT_FALSE(kind_.empty());
  }

  // Rewrites the checkpoint after `edit` changed its tensors or metadata.
  void edit_checkpoint(const std::function<void(SafetensorsFile&)>& edit) {
    SafetensorsFile file = read_safetensors(checkpoint_);
    edit(file);
    SafetensorsWriter w;
    for (const auto& [key, value] : file.metadata) w.set_metadata(key, value);
    for (const SafetensorsTensor& t : file.tensors) w.add(t);
    w.write(checkpoint_);
  }
  // The tensor `name` of `file` (which must hold it).
  static SafetensorsTensor& tensor(SafetensorsFile& file, const std::string& name) {
    for (SafetensorsTensor& t : file.tensors)
      if (t.name == name) return t;
    throw Error("no tensor " + name);
  }
  void edit_tensor(const std::string& name, const std::function<void(SafetensorsTensor&)>& edit) {
    edit_checkpoint([&](SafetensorsFile& f) { edit(tensor(f, name)); });
  }
  void set_metadata(const std::string& key, const std::string& value) {
    edit_checkpoint([&](SafetensorsFile& f) { f.metadata[key] = value; });
  }
  // "optim.adamw.m.0" for ("m", 0).
  std::string optim(const std::string& buffer, int param) const {
    return "optim." + kind_ + "." + buffer + "." + std::to_string(param);
  }

  // `pelab train --resume` refuses the checkpoint with one line holding every one of `parts`
  // and leaves the run directory as it was. Restores the original checkpoint afterwards.
  void expect_refused(const std::vector<std::string>& parts) {
    const std::map<std::string, std::string> before = snapshot(dir_.path() / "run");
    const Outcome o =
        run_pelab({"train", "tiny.yaml", "--out", "run", "--resume", "--no-progress"}, dir_.path());
    EXPECT_EQ(user_error_problem(o, parts), "");
    EXPECT_TRUE(snapshot(dir_.path() / "run") == before) << "the run directory was changed";
    fs::copy_file(shared_.path() / "run/checkpoint.safetensors", checkpoint_,
                  fs::copy_options::overwrite_existing);
  }

  static TempDir shared_;
  TempDir dir_;
  const std::string checkpoint_ = dir_ / "run/checkpoint.safetensors";
  std::string kind_;  // the optimizer's name in its state's names
};
TempDir ResumeState::shared_;

constexpr const char* kCheckpoint = "run/checkpoint.safetensors: ";

TEST_F(ResumeState, TheUntouchedCheckpointResumes) {
  const Outcome o =
      run_pelab({"train", "tiny.yaml", "--out", "run", "--resume", "--no-progress"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(read_file(dir_ / "run/train.log").find("resuming run at step 3"), std::string::npos);
}

// The issue's example: a reshaped state once resumed as if it were the saved one.
TEST_F(ResumeState, RngStateOfAnotherShapeOrDtypeIsRefused) {
  edit_tensor("rng.data", [](SafetensorsTensor& t) { t.shape = {4, 2}; });
  expect_refused({kCheckpoint, "rng.data has shape [4, 2]; expected [8]"});
  edit_tensor("rng.data", [](SafetensorsTensor& t) {
    t.shape = {7};
    t.i64.pop_back();
  });
  expect_refused({kCheckpoint, "rng.data has shape [7]; expected [8]"});
  edit_tensor("rng.data", [](SafetensorsTensor& t) {
    t.dtype = "F32";
    t.f32.assign(t.i64.begin(), t.i64.end());
    t.i64.clear();
  });
  expect_refused({kCheckpoint, "tensor 'rng.data' is F32, expected I64"});
  edit_tensor("rng.data", [](SafetensorsTensor& t) { t.i64[3] = int64_t{1} << 40; });
  expect_refused({kCheckpoint, "'rng.data' holds 1099511627776 at flat index 3"});
  edit_checkpoint([](SafetensorsFile& f) {
    std::erase_if(f.tensors, [](auto& t) { return t.name == "rng.data"; });
  });
  expect_refused({kCheckpoint, "no tensor 'rng.data'"});
}

// xoshiro256**'s all-zero state is a fixed point no seed reaches: the sampler would draw the
// same example forever.
TEST_F(ResumeState, TheAllZeroRngStateIsRefused) {
  edit_tensor("rng.data", [](SafetensorsTensor& t) { t.i64.assign(8, 0); });
  expect_refused({kCheckpoint, "rng.data is all zeros"});
  Generator g(1);
  EXPECT_THROW(g.set_state({0, 0, 0, 0}), Error);
  EXPECT_NO_THROW(g.set_state({0, 0, 0, 1}));
}

// The issue's example: NaN weights once appended "resuming" to train.log, then the run stopped
// calling the corrupt file "the last good checkpoint".
TEST_F(ResumeState, NonFiniteParametersAreRefused) {
  edit_tensor("embed.weight", [](SafetensorsTensor& t) { t.f32[5] = std::nanf(""); });
  expect_refused({kCheckpoint, "parameter 'embed.weight' holds NaN at element 5"});
  edit_tensor("layers.0.attn.q.bias",
              [](SafetensorsTensor& t) { t.f32[0] = -std::numeric_limits<float>::infinity(); });
  expect_refused({kCheckpoint, "parameter 'layers.0.attn.q.bias' holds an infinite value"});
}

TEST_F(ResumeState, NonFiniteOrImpossibleOptimizerStateIsRefused) {
  const std::string m0 = optim("m", 0), v1 = optim("v", 1);
  edit_tensor(m0, [](SafetensorsTensor& t) { t.f32[2] = std::nanf(""); });
  expect_refused({kCheckpoint, "buffer '" + m0.substr(6) + "' holds NaN at element 2"});
  edit_tensor(v1, [](SafetensorsTensor& t) { t.f32[0] = std::numeric_limits<float>::infinity(); });
  expect_refused({kCheckpoint, "buffer '" + v1.substr(6) + "' holds an infinite value"});
  // A second moment is a mean of squares.
  edit_tensor(v1, [](SafetensorsTensor& t) { t.f32[1] = -0.5f; });
  expect_refused(
      {kCheckpoint, "buffer '" + v1.substr(6) + "' holds -0.5 at element 1", "never negative"});
  // A parameter with no update yet has zero moments.
  edit_tensor(optim("step", 0), [](SafetensorsTensor& t) { t.f32[0] = 0; });
  expect_refused({kCheckpoint, "buffer '" + m0.substr(6) + "'", "but '" + kind_ + ".step.0' = 0"});
  edit_tensor(optim("step", 0), [](SafetensorsTensor& t) { t.f32[0] = 2.5f; });
  expect_refused({kCheckpoint, "'" + kind_ + ".step.0' = 2.5 is not an update count in [0, 3]"});
  edit_tensor(optim("step", 0), [](SafetensorsTensor& t) { t.f32[0] = 4; });
  expect_refused({kCheckpoint, "'" + kind_ + ".step.0' = 4 is not an update count in [0, 3]"});
}

TEST_F(ResumeState, OptimizerStateOfAnotherShapeOrDtypeIsRefused) {
  const std::string m0 = optim("m", 0);
  edit_tensor(m0, [](SafetensorsTensor& t) { t.shape = {static_cast<int64_t>(t.f32.size())}; });
  expect_refused({kCheckpoint, "buffer '" + m0.substr(6) + "' has shape"});
  edit_tensor(m0, [](SafetensorsTensor& t) {
    t.dtype = "I64";
    t.i64.assign(t.f32.size(), 0);
    t.f32.clear();
  });
  expect_refused({kCheckpoint, "tensor '" + m0 + "' is I64, expected F32"});
  edit_checkpoint(
      [&](SafetensorsFile& f) { std::erase_if(f.tensors, [&](auto& t) { return t.name == m0; }); });
  expect_refused({kCheckpoint, "missing buffer '" + m0.substr(6) + "'"});
}

TEST_F(ResumeState, StepCountersAreChecked) {
  set_metadata("optimizer_steps", "2");
  expect_refused({kCheckpoint, "__metadata__ 'optimizer_steps' is 2 but 'step' is 3"});
  set_metadata("optimizer_steps", "-1");
  expect_refused({kCheckpoint,
                  "__metadata__ 'optimizer_steps' is '-1'; expected an integer in "
                  "[0, 6]"});
  set_metadata("step", "7");
  expect_refused({kCheckpoint, "__metadata__ 'step' is '7'; expected an integer in [0, 6]"});
}

TEST_F(ResumeState, TheLastLossIsChecked) {
  for (const std::string bad : {"nan", "inf", "", "1.5x", "one"}) {
    set_metadata("loss", bad);
    expect_refused({kCheckpoint, "__metadata__ 'loss' is '" + bad + "'; expected a finite number"});
  }
}

// A run stopped after its last step (here by --stop-after) and resumed takes no step more, and
// its results are the uninterrupted run's: the final loss comes from the checkpoint.
TEST_F(ResumeState, ResumedAfterItsLastStepTheResultsAreTheUninterruptedRuns) {
  Outcome o = run_pelab({"train", "tiny.yaml", "--out", "whole", "--no-progress"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = run_pelab({"train", "tiny.yaml", "--out", "cut", "--stop-after", "6", "--no-progress"},
                dir_.path());
  ASSERT_EQ(o.exit_code, 3) << o.err;
  EXPECT_FALSE(fs::exists(dir_.path() / "cut/summary.json"));
  o = run_pelab({"train", "tiny.yaml", "--out", "cut", "--resume", "--no-progress"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string whole = read_file(dir_.path() / "whole/summary.json");
  EXPECT_EQ(read_file(dir_.path() / "cut/summary.json"), whole);
  EXPECT_EQ(whole.find("\"final_loss\": 0.0"), std::string::npos) << whole;  // the control
  EXPECT_EQ(read_file(dir_.path() / "cut/checkpoint.safetensors"),
            read_file(dir_.path() / "whole/checkpoint.safetensors"));
}

TEST_F(ResumeState, OtherFormatsAndForeignTensorsAreRefused) {
  set_metadata("format", "pelab checkpoint 9");
  expect_refused({kCheckpoint,
                  "__metadata__ 'format' is 'pelab checkpoint 9'; expected 'pelab "
                  "checkpoint 1'"});
  edit_checkpoint([](SafetensorsFile& f) { f.metadata.erase("format"); });
  expect_refused({kCheckpoint, "no __metadata__ entry 'format'"});
  for (const std::string name : {"grad.embed.weight", "rng.dropout"}) {
    edit_checkpoint([&](SafetensorsFile& f) {
      SafetensorsTensor extra = tensor(f, "rng.data");
      extra.name = name;
      f.tensors.push_back(extra);
    });
    expect_refused({kCheckpoint, "tensor '" + name + "' is not part of a run checkpoint"});
  }
}

// Names come from the file; a message quoting one stays one line.
TEST_F(ResumeState, AForeignNameIsShownOnOneLine) {
  SafetensorsFile file = read_safetensors(checkpoint_);
  SafetensorsTensor extra = tensor(file, "rng.data");
  extra.name = "embed\nweight";
  file.tensors.push_back(extra);
  const ExperimentConfig c =
      parse_experiment(kResumeConfig, "tiny.yaml", {}, PELAB_SOURCE_DIR "/configs");
  Encoder model(c.model, make_scheme, 0);
  try {
    load_parameters(model, file);
    ADD_FAILURE() << "a foreign tensor was loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'embed\\nweight' is not a parameter"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pelab::testing
