// Reproducibility: the same config, seed and thread count give bit-identical parameters,
// optimizer state and metrics (timing fields aside); N steps in one go equal N/2 steps, a
// resume and N/2 more, bit for bit; every run records what produced it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "pelab/config/experiment.h"
#include "pelab/io/safetensors.h"
#include "pelab/run/trainer.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using json = nlohmann::json;
using testing::read_file;
using testing::TempDir;

// Dropout, randomized positions and an evaluation mid-run: every source of randomness a run
// has. The Slow cases repeat the checks with two threads (parallel reductions), which is
// slow on a loaded machine.
const char* kReproConfig = R"(name: repro
seed: 3
model:
  d_model: 16
  heads: 2
  layers: 2
  dropout: 0.1
positional:
  type: learned
  randomize:
    max_position: 40
task:
  name: reverse
  min_length: 2
  max_length: 8
training:
  steps: 24
  batch_size: 8
  warmup: 4
  log_every: 2
  eval_every: 6
  checkpoint_every: 5
evaluation:
  lengths: [4, 8, 12]
  examples: 16
)";

ExperimentConfig repro_config(const std::vector<std::string>& overrides = {}) {
  return parse_experiment(kReproConfig, "repro.yaml", overrides, PELAB_SOURCE_DIR "/configs");
}

TrainResult repro_train(const ExperimentConfig& c, const std::string& dir, bool resume = false,
                        int64_t stop_after = 0) {
  TrainOptions o;
  o.run_dir = dir;
  o.progress = false;
  o.resume = resume;
  o.stop_after = stop_after;
  return train_run(c, o);
}

// metrics.jsonl without its timing field.
std::string repro_metrics(const std::string& dir) {
  std::string out;
  for (const std::string& line : testing::lines_of(read_file(dir + "/metrics.jsonl"))) {
    json j = json::parse(line);
    j.erase("tokens_per_s");
    out += j.dump() + "\n";
  }
  return out;
}

// Everything a finished run computed: checkpoint bytes (parameters, optimizer state, data RNG,
// step), metrics, evaluation.
void expect_identical_runs(const std::string& a, const std::string& b) {
  for (const char* file :
       {"checkpoint.safetensors", "eval.csv", "per_position.csv", "summary.json", "config.yaml"})
    EXPECT_TRUE(read_file(a + "/" + file) == read_file(b + "/" + file)) << file << " differs";
  EXPECT_EQ(repro_metrics(a), repro_metrics(b));
}

void expect_same_bits(const std::vector<std::string>& overrides) {
  TempDir dir;
  repro_train(repro_config(overrides), dir / "a");
  repro_train(repro_config(overrides), dir / "b");
  expect_identical_runs(dir / "a", dir / "b");
  EXPECT_GT(repro_metrics(dir / "a").size(), 100u);
}

TEST(Reproducibility, SameConfigSeedAndThreadsGiveIdenticalBits) {
  expect_same_bits({});
}
TEST(ReproducibilitySlow, SameConfigSeedAndTwoThreadsGiveIdenticalBits) {
  expect_same_bits({"threads=2"});
}

TEST(Reproducibility, AnotherSeedGivesOtherBits) {
  // The comparison above can fail: a different seed changes the checkpoint and the metrics.
  TempDir dir;
  repro_train(repro_config(), dir / "a");
  repro_train(repro_config({"seed=4"}), dir / "b");
  EXPECT_FALSE(read_file(dir / "a/checkpoint.safetensors") ==
               read_file(dir / "b/checkpoint.safetensors"));
  EXPECT_NE(repro_metrics(dir / "a"), repro_metrics(dir / "b"));
}

void expect_resume_exact(const std::vector<std::string>& overrides) {
  TempDir dir;
  const ExperimentConfig c = repro_config(overrides);
  const TrainResult whole = repro_train(c, dir / "whole");
  EXPECT_TRUE(whole.completed);
  // Stopping at 11 falls between checkpoints (every 5) and between logged steps (every 2).
  for (const int64_t first : {int64_t{12}, int64_t{11}}) {
    const std::string parts = dir / fmt::format("parts{}", first);
    const TrainResult half = repro_train(c, parts, false, first);
    EXPECT_FALSE(half.completed);
    EXPECT_EQ(half.steps_done, first);
    EXPECT_EQ(
        std::stoll(read_safetensors(parts + "/checkpoint.safetensors").metadata_value("step")),
        first);
    const TrainResult rest = repro_train(c, parts, true);
    EXPECT_TRUE(rest.completed);
    EXPECT_EQ(rest.final_loss, whole.final_loss);
    expect_identical_runs(dir / "whole", parts);
  }
}

TEST(Reproducibility, HalfResumeHalfEqualsOneGo) {
  expect_resume_exact({});
}
TEST(ReproducibilitySlow, HalfResumeHalfEqualsOneGoWithTwoThreads) {
  expect_resume_exact({"threads=2"});
}

TEST(Reproducibility, EnvironmentRecordsWhatProducedTheRun) {
  TempDir dir;
  repro_train(repro_config({"training.steps=2", "training.warmup=1", "threads=2"}), dir / "run");
  const json env = json::parse(read_file(dir / "run/environment.json"));
  for (const char* key :
       {"pelab_version", "git_commit", "onednn", "openblas", "compiler", "os", "cpu"}) {
    ASSERT_TRUE(env.contains(key) && env[key].is_string()) << key << " in " << env.dump();
    EXPECT_FALSE(env[key].get<std::string>().empty()) << key;
  }
  EXPECT_NE(env["git_commit"], "unknown") << "built outside git?";
  for (const char* lib : {"fmt", "spdlog", "nlohmann_json", "yaml-cpp", "openmp"})
    EXPECT_TRUE(env["libraries"].contains(lib)) << lib;
  EXPECT_EQ(env["threads"], 2);
  EXPECT_EQ(env["seed"], 3);
}

}  // namespace
}  // namespace pelab
