// Bad checkpoints met by `--resume`: truncated, a wrong or oversized header, overlapping
// tensors, edited metadata, shapes that do not fit the config. Each is a one-line error
// naming the checkpoint and the culprit; the run directory is left as it was.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "error_message.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/run/trainer.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using json = nlohmann::json;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

const std::string kCheckpointConfig = testing::tiny_config("tiny", R"(training:
  steps: 6
  batch_size: 4
  warmup: 1
evaluation:
  lengths: [4, 8]
  examples: 4
)");

// The checkpoint bytes with their JSON header edited by `edit` (the data region unchanged).
std::string with_header(const std::string& bytes, const std::function<void(json&)>& edit) {
  uint64_t length = 0;
  std::memcpy(&length, bytes.data(), 8);
  json header = json::parse(bytes.substr(8, length));
  edit(header);
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t new_length = text.size();
  return std::string(reinterpret_cast<const char*>(&new_length), 8) + text +
         bytes.substr(8 + length);
}

class CheckpointErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = parse_experiment(kCheckpointConfig, "tiny.yaml", {}, PELAB_SOURCE_DIR "/configs");
    TrainOptions o;
    o.run_dir = run_;
    o.progress = false;
    o.stop_after = 3;
    ASSERT_FALSE(train_run(config_, o).completed);
    original_ = read_file(checkpoint_);
  }

  // Resumes from `bytes` as the checkpoint; returns the error (one line, naming the file).
  std::string resume_error(const std::string& bytes) {
    write_file(checkpoint_, bytes);
    TrainOptions o;
    o.run_dir = run_;
    o.progress = false;
    o.resume = true;
    std::string message;
    try {
      train_run(config_, o);
      ADD_FAILURE() << "the resume did not fail";
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind(checkpoint_ + ": ", 0), 0u) << message;
    EXPECT_TRUE(read_file(checkpoint_) == bytes) << "the checkpoint was changed";
    return message;
  }

  TempDir dir_;
  const std::string run_ = dir_ / "run";
  const std::string checkpoint_ = dir_ / "run/checkpoint.safetensors";
  ExperimentConfig config_;
  std::string original_;
};

TEST_F(CheckpointErrors, TheUntouchedCheckpointResumes) {
  TrainOptions o;
  o.run_dir = run_;
  o.progress = false;
  o.resume = true;
  EXPECT_TRUE(train_run(config_, o).completed);
}

TEST_F(CheckpointErrors, Truncated) {
  EXPECT_HAS(resume_error(original_.substr(0, original_.size() - 100)), "beyond the data region");
  EXPECT_HAS(resume_error(original_.substr(0, 5)),
             "file is 5 bytes, shorter than the 8-byte header length");
  EXPECT_HAS(resume_error(""), "file is 0 bytes");
}

TEST_F(CheckpointErrors, OversizedHeaderLength) {
  std::string bad = original_;
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(bad.data(), &huge, 8);
  EXPECT_HAS(resume_error(bad), "header length 1099511627776 exceeds the file size");
}

TEST_F(CheckpointErrors, WrongHeader) {
  std::string bad = original_;
  bad[8] = 'x';
  EXPECT_HAS(resume_error(bad), "header is not valid JSON");
  EXPECT_HAS(
      resume_error(with_header(original_, [](json& h) { h["embed.weight"]["dtype"] = "F16"; })),
      "unsupported dtype 'F16' for 'embed.weight' (pelab reads F32 and I64)");
}

TEST_F(CheckpointErrors, OverlappingOffsets) {
  const std::string bad = with_header(original_, [](json& h) {
    h["layers.0.attn.q.bias"]["data_offsets"] = h["layers.0.attn.k.bias"]["data_offsets"];
  });
  EXPECT_HAS(resume_error(bad), "overlap; each byte of the data region must belong to exactly one");
}

TEST_F(CheckpointErrors, ShapeThatDoesNotFitTheConfig) {
  // The same bytes in another shape: the file is well formed, the model is not this one.
  const std::string bad = with_header(original_, [](json& h) {
    h["layers.0.attn.q.weight"]["shape"] = json::array({8, 32});
  });
  EXPECT_HAS(resume_error(bad),
             "parameter 'layers.0.attn.q.weight' has shape [8, 32] but the config needs [16, 16]");
}

TEST_F(CheckpointErrors, EditedMetadata) {
  EXPECT_HAS(
      resume_error(with_header(original_, [](json& h) { h["__metadata__"]["step"] = "3x"; })),
      "__metadata__ 'step' is '3x'; expected an integer in [0, 6]");
  EXPECT_HAS(
      resume_error(with_header(original_, [](json& h) { h["__metadata__"]["step"] = "99"; })),
      "__metadata__ 'step' is '99'");
  EXPECT_HAS(resume_error(with_header(original_, [](json& h) { h["__metadata__"].erase("step"); })),
             "no __metadata__ entry 'step'");
  EXPECT_HAS(resume_error(with_header(original_,
                                      [](json& h) { h["__metadata__"]["config"] = "model: {}"; })),
             "the checkpoint was written by a different config");
}

}  // namespace
}  // namespace pelab
