// Training to a criterion (training.stop_when): the config keys, where a run stops, what
// summary.json records, that the checks leave the training itself untouched, and that a
// resumed run stops exactly where an uninterrupted one does.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "error_message.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/io/safetensors.h"
#include "pelab/run/trainer.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using json = nlohmann::json;
using testing::read_file;
using testing::TempDir;

const char* kStopConfig = R"(name: stop
seed: 5
model:
  d_model: 16
  heads: 2
  layers: 1
positional: rotary
task:
  name: reverse
  min_length: 2
  max_length: 6
training:
  steps: 24
  batch_size: 8
  warmup: 2
  log_every: 4
  checkpoint_every: 5
evaluation:
  lengths: [4, 8]
  examples: 8
)";

ExperimentConfig stop_config(const std::vector<std::string>& overrides = {}) {
  return parse_experiment(kStopConfig, "stop.yaml", overrides, PELAB_SOURCE_DIR "/configs");
}

std::string stop_error(const std::vector<std::string>& overrides) {
  return testing::error_message([&] { stop_config(overrides); });
}

void stop_train(const ExperimentConfig& c, const std::string& dir, int64_t stop_after = 0,
                bool resume = false) {
  TrainOptions o;
  o.run_dir = dir;
  o.progress = false;
  o.stop_after = stop_after;
  o.resume = resume;
  train_run(c, o);
}

json summary(const std::string& dir) {
  return json::parse(read_file(dir + "/summary.json"));
}

// The validation lines of metrics.jsonl: (step, checks in a row).
std::vector<std::pair<int64_t, int64_t>> checks(const std::string& dir) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const std::string& line : testing::lines_of(read_file(dir + "/metrics.jsonl"))) {
    const json j = json::parse(line);
    if (j.contains("validation"))
      out.emplace_back(j["step"], j["validation"]["checks_at_threshold"]);
  }
  return out;
}

const std::vector<std::string> kAlwaysMet = {"training.stop_when.accuracy=0.000001",
                                             "training.stop_when.every=4"};

TEST(StopWhen, OffUnlessGivenAndKeptOutOfConfigYaml) {
  EXPECT_FALSE(stop_config().training.stop_when.enabled());
  EXPECT_EQ(to_yaml(stop_config()).find("stop_when"), std::string::npos);
  const ExperimentConfig c =
      stop_config({"training.stop_when.accuracy=0.99", "training.stop_when.patience=3",
                   "training.stop_when.metric=sequence_accuracy"});
  EXPECT_TRUE(c.training.stop_when.enabled());
  const ExperimentConfig again = parse_experiment(to_yaml(c), "again.yaml", {}, "");
  EXPECT_EQ(to_yaml(again), to_yaml(c));
  EXPECT_EQ(again.training.stop_when.patience, 3);
  EXPECT_EQ(again.training.stop_when.metric, "sequence_accuracy");
}

TEST(StopWhen, BadKeysAreRefusedWithTheirPlace) {
  EXPECT_NE(stop_error({"training.stop_when.accuracy=1.5"}).find("must be in (0, 1], got 1.5"),
            std::string::npos);
  EXPECT_NE(stop_error({"training.stop_when.patience=2"}).find("needs a threshold"),
            std::string::npos);
  EXPECT_NE(stop_error({"training.stop_when.accuracy=0.9", "training.stop_when.metric=loss"})
                .find("'loss' is not valid (valid: token_accuracy, sequence_accuracy)"),
            std::string::npos);
  EXPECT_NE(stop_error({"training.stop_when.accuracy=0.9", "training.stop_when.every=0"})
                .find("training.stop_when.every: must be >= 1"),
            std::string::npos);
}

TEST(StopWhen, StopsAtTheCheckThatCompletesThePatience) {
  TempDir dir;
  stop_train(stop_config(kAlwaysMet), dir / "one");
  EXPECT_EQ(summary(dir / "one")["steps"], 4);
  EXPECT_EQ(summary(dir / "one")["stop_when"]["met"], true);
  EXPECT_EQ(summary(dir / "one")["stop_when"]["step"], 4);

  std::vector<std::string> three = kAlwaysMet;
  three.push_back("training.stop_when.patience=3");
  stop_train(stop_config(three), dir / "three");
  EXPECT_EQ(summary(dir / "three")["steps"], 12);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{4, 1}, {8, 2}, {12, 3}};
  EXPECT_EQ(checks(dir / "three"), expected);
}

TEST(StopWhen, UnmetCriterionTrainsToTheMaximumAndSaysSo) {
  TempDir dir;
  stop_train(
      stop_config({"training.stop_when.accuracy=1", "training.stop_when.metric=sequence_accuracy",
                   "training.stop_when.every=4"}),
      dir / "r");
  const json s = summary(dir / "r");
  EXPECT_EQ(s["steps"], 24);
  EXPECT_EQ(s["stop_when"]["met"], false);
  EXPECT_TRUE(s["stop_when"]["step"].is_null());
  EXPECT_EQ(checks(dir / "r").size(), 6u);
  EXPECT_LT(s["validation"]["sequence_accuracy"].get<double>(), 1.0);
}

TEST(StopWhen, ValidationIsAtTheTrainingLengthsAndAlwaysRecorded) {
  TempDir dir;
  stop_train(stop_config(), dir / "r");
  const json v = summary(dir / "r")["validation"];
  EXPECT_EQ(v["lengths"], json({2, 3, 4, 5, 6}));
  EXPECT_EQ(v["examples"], 64);
  EXPECT_FALSE(summary(dir / "r").contains("stop_when"));
}

// The checks only read the model: with a criterion that is never met, the parameters and the
// optimizer state are those of a run without checks, bit for bit.
TEST(StopWhen, ChecksLeaveTheTrainingUntouched) {
  TempDir dir;
  stop_train(stop_config(), dir / "plain");
  stop_train(
      stop_config({"training.stop_when.accuracy=1", "training.stop_when.metric=sequence_accuracy",
                   "training.stop_when.every=2"}),
      dir / "checked");
  const SafetensorsFile a = read_safetensors(dir / "plain/checkpoint.safetensors");
  const SafetensorsFile b = read_safetensors(dir / "checked/checkpoint.safetensors");
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].name, b.tensors[i].name);
    EXPECT_TRUE(a.tensors[i].f32 == b.tensors[i].f32) << a.tensors[i].name;
    EXPECT_TRUE(a.tensors[i].i64 == b.tensors[i].i64) << a.tensors[i].name;
  }
}

// The checks in a row are part of the checkpoint: stopped after 6 steps (one check passed)
// and resumed, the run stops at step 12 as an uninterrupted one does, not at 16.
TEST(StopWhen, ResumedRunStopsWhereAnUninterruptedOneDoes) {
  std::vector<std::string> three = kAlwaysMet;
  three.push_back("training.stop_when.patience=3");
  TempDir dir;
  stop_train(stop_config(three), dir / "whole");
  stop_train(stop_config(three), dir / "split", /*stop_after=*/6);
  stop_train(stop_config(three), dir / "split", 0, /*resume=*/true);
  EXPECT_EQ(summary(dir / "split")["steps"], 12);
  EXPECT_TRUE(read_file(dir / "whole/checkpoint.safetensors") ==
              read_file(dir / "split/checkpoint.safetensors"));
  EXPECT_EQ(checks(dir / "whole"), checks(dir / "split"));
}

}  // namespace
}  // namespace pelab
