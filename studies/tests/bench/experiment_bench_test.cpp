// `pelab bench --config default`: the shipped experiments as cases of the training benchmark.
#include "pelab/bench/experiment_bench.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pelab/core/error.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using testing::lines_of;
using testing::run_pelab;
using testing::TempDir;
using testing::user_error_problem;

// The named cases are found through the config search path, as `pelab` sets it.
class ExperimentBench : public ::testing::Test {
 protected:
  void SetUp() override { set_config_search_path({PELAB_SOURCE_DIR "/configs"}); }
  void TearDown() override { set_config_search_path({}); }
};

TEST_F(ExperimentBench, NamedCasesAreTheShippedExperiments) {
  const ExperimentConfig def = load_experiment_case("default", "", 1);
  EXPECT_EQ(def.name, "default");
  EXPECT_EQ(def.model.positional.type, "rotary");
  EXPECT_TRUE(def.model.causal);
  EXPECT_EQ(def.model.layers, 3);
  EXPECT_EQ(def.training.batch_size, 32);
  EXPECT_TRUE(def.sweep.axes.empty());  // one run, not the sweep
  // The claim: the default comparison made bidirectional (C1's settings.overrides).
  const ExperimentConfig claim = load_experiment_case("claim", "", 1);
  EXPECT_EQ(claim.name, "default");
  EXPECT_FALSE(claim.model.causal);
  EXPECT_EQ(load_experiment_case("survey", "", 1).task.name, "reverse");
  EXPECT_EQ(load_experiment_case("quickstart", "", 1).name, "quickstart");
  // --scheme as the positional group; --threads as the run's threads.
  const ExperimentConfig alibi = load_experiment_case("default", "alibi", 2);
  EXPECT_EQ(alibi.model.positional.type, "alibi");
  EXPECT_EQ(alibi.threads, 2);
}

TEST_F(ExperimentBench, DeletangIsROnesRunOnItsBinaryStrings) {
  const ExperimentConfig c = load_experiment_case("deletang", "rotary", 1);
  EXPECT_EQ(c.task.name, "reverse");
  EXPECT_EQ(c.model.layers, 5);
  EXPECT_EQ(c.model.positional.type, "rotary");
  EXPECT_EQ(c.task.params.integer("symbols"), 2);
}

TEST_F(ExperimentBench, UnknownNameListsTheValidOnes) {
  try {
    (void)find_experiment_case("defualt");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "unknown bench config 'defualt' (valid: tiny, small, medium, default, "
                 "quickstart, claim, survey, deletang, or the path of an experiment's .yaml)");
  }
}

TEST_F(ExperimentBench, TimesTrainingStepsAndCountsRealAndPaddedTokens) {
  TrainCaseOptions o;
  o.warmup = 1;
  o.max_steps = 2;
  o.min_steps = 1;
  o.max_seconds = 0;
  const TrainCaseResult r = run_experiment_case("quickstart", "", o);
  EXPECT_EQ(r.scheme, "rotary");
  EXPECT_GE(r.steps, 1);
  EXPECT_GT(r.ms_median, 0);
  // Lengths 1–16 in batches of 32: the padded batch holds every real token and more.
  EXPECT_GT(r.real_tokens_per_step, 0);
  EXPECT_LE(r.real_tokens_per_step, r.tokens_per_step);
  EXPECT_LE(r.tokens_per_step, 32.0 * 17);
  EXPECT_GT(r.gflop_per_step, 0);
  EXPECT_TRUE(std::isfinite(r.final_loss));
}

// Through the command line: the case runs in a child process and prints its row.
TEST(ExperimentBenchCommand, DefaultRunsTwoStepsInAChildAndPrintsARow) {
  TempDir dir;
  const testing::Outcome o =
      run_pelab({"bench", "--config", "default", "--warmup", "1", "--steps", "2", "--min-steps",
                 "2", "--max-seconds", "0", "--peak-gflops", "50", "--json", dir / "bench.json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  int rows = 0;
  for (const std::string& line : lines_of(o.out))
    if (line.rfind("default ", 0) == 0) {
      ++rows;
      EXPECT_NE(line.find(" rotary "), std::string::npos) << line;
    }
  EXPECT_EQ(rows, 1) << o.out;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(dir / "bench.json"));
  ASSERT_EQ(j["rows"].size(), 1u);
  const nlohmann::json& row = j["rows"][0];
  EXPECT_EQ(row["config"], "default");
  EXPECT_EQ(row["case"], "experiment");
  EXPECT_EQ(row["scheme"], "rotary");
  EXPECT_GT(row["real_tokens_per_s"].get<double>(), 0);
  EXPECT_LE(row["real_tokens_per_step"].get<double>(), row["tokens_per_step"].get<double>());
}

// With several thread counts the cases alternate round by round, and the scaling is the median
// of the rounds' own ratios: round r's n-thread throughput over round r's 1-thread throughput.
TEST(ExperimentBenchCommand, ThreadScalingIsPairedRoundByRound) {
  TempDir dir;
  const testing::Outcome o = run_pelab({"bench",
                                        "--config",
                                        "tiny",
                                        "--scheme",
                                        "none",
                                        "--threads",
                                        "1,2",
                                        "--repeats",
                                        "3",
                                        "--warmup",
                                        "1",
                                        "--steps",
                                        "2",
                                        "--min-steps",
                                        "2",
                                        "--max-seconds",
                                        "0",
                                        "--peak-gflops",
                                        "50",
                                        "--omp-wait",
                                        "default",
                                        "--json",
                                        dir / "bench.json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(dir / "bench.json"));
  ASSERT_EQ(j["rows"].size(), 2u);
  const std::vector<double> one = j["rows"][0]["ms_per_repeat"].get<std::vector<double>>(),
                            two = j["rows"][1]["ms_per_repeat"].get<std::vector<double>>();
  ASSERT_EQ(one.size(), 3u);
  ASSERT_EQ(two.size(), 3u);
  ASSERT_EQ(j["scaling"].size(), 1u) << j.dump();
  const nlohmann::json& s = j["scaling"][0];
  EXPECT_EQ(s["threads"], 2);
  EXPECT_EQ(s["omp_wait"], "default");
  const std::vector<double> ratios = s["speedup_per_round"].get<std::vector<double>>();
  ASSERT_EQ(ratios.size(), 3u);
  for (size_t r = 0; r < 3; ++r) EXPECT_NEAR(ratios[r], one[r] / two[r], 1e-9 * ratios[r]) << r;
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_DOUBLE_EQ(s["speedup_median"].get<double>(), sorted[1]);
  EXPECT_NE(o.out.find("scaling tiny none: 2 threads = "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("median of 3 paired rounds"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("the OpenMP runtime's own wait policy, as pelab train"), std::string::npos)
      << o.out;
}

TEST(ExperimentBenchCommand, UnknownConfigIsOneLineListingTheValidNames) {
  const testing::Outcome o = run_pelab({"bench", "--config", "tiny,defualt"});
  EXPECT_EQ(user_error_problem(o, {"unknown bench config 'defualt'",
                                   "tiny, small, medium, default, quickstart, claim, survey"}),
            "");
}

TEST(ExperimentBenchCommand, VsTorchRefusesTheShippedExperiments) {
  const testing::Outcome o = run_pelab({"bench", "--config", "default", "--vs-torch"});
  EXPECT_EQ(user_error_problem(o, {"--vs-torch compares only the reference configs"}), "");
}

}  // namespace
}  // namespace pelab
