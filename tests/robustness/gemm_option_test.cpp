// `--gemm auto|onednn|openblas|packed` on any command (before or after it) or PELAB_GEMM
// chooses the backend of every matmul, so a result can be checked under another backend.
// environment.json records the one a run used; a bad value is one clear error.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pelab_process.h"

namespace pelab::testing {
namespace {

const std::string kGemmSweepConfig = tiny_config("tiny", R"(training:
  steps: 2
  batch_size: 4
  warmup: 1
evaluation:
  lengths: [4]
  examples: 4
sweep:
  seed: [0, 1]
)");

class GemmOption : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir_.path() / "tiny.yaml", kGemmSweepConfig); }
  std::string gemm_of(const std::string& run) const {
    return nlohmann::json::parse(read_file(dir_.path() / run / "environment.json"))["gemm"];
  }
  // `pelab args` in the test's directory with PELAB_GEMM=env.
  std::pair<int, std::string> with_env(const std::string& env, const std::string& args) const {
    return shell("cd " + dir_.path().string() + " && PELAB_GEMM=" + env + " " + pelab_binary() +
                 " " + args);
  }
  TempDir dir_;
};

TEST_F(GemmOption, TheChosenBackendIsTheOneUsed) {
  ASSERT_EQ(
      run_pelab({"train", "tiny.yaml", "--out", "auto", "--no-progress"}, dir_.path()).exit_code,
      0);
  EXPECT_EQ(gemm_of("auto"), "auto");
  const Outcome o = run_pelab(
      {"train", "tiny.yaml", "--gemm", "packed", "--out", "packed", "--no-progress"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(gemm_of("packed"), "packed");
  ASSERT_EQ(
      run_pelab({"--gemm", "onednn", "train", "tiny.yaml", "--out", "onednn", "--no-progress"},
                dir_.path())
          .exit_code,
      0);
  EXPECT_EQ(gemm_of("onednn"), "onednn");
  ASSERT_EQ(with_env("openblas", "train tiny.yaml --out env --no-progress").first, 0);
  EXPECT_EQ(gemm_of("env"), "openblas");
  // The option wins over the environment.
  ASSERT_EQ(with_env("openblas", "train tiny.yaml --gemm packed --out both --no-progress").first,
            0);
  EXPECT_EQ(gemm_of("both"), "packed");
}

// The runs a sweep starts are pelab processes: they use the sweep's backend.
TEST_F(GemmOption, ASweepsRunsUseItsBackend) {
  const Outcome o =
      run_pelab({"sweep", "tiny.yaml", "--gemm", "openblas", "--out", "runs"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(gemm_of("runs/seed=0"), "openblas");
  EXPECT_EQ(gemm_of("runs/seed=1"), "openblas");
}

TEST_F(GemmOption, ABadValueIsOneErrorAndWritesNothing) {
  const std::vector<std::string> before = listing(dir_.path());
  const Outcome o = run_pelab({"train", "tiny.yaml", "--gemm", "fast"}, dir_.path());
  EXPECT_EQ(user_error_problem(o, {"--gemm: fast not in {auto,onednn,openblas,packed}"}), "");
  const auto [code, out] = with_env("fast", "train tiny.yaml");
  EXPECT_EQ(code, 2);
  EXPECT_EQ(out,
            "pelab: error: PELAB_GEMM: 'fast' is not a GEMM backend (valid: auto, onednn, "
            "openblas, packed)\n");
  EXPECT_EQ(listing(dir_.path()), before);
  // pelab's own option without a command is not an unknown option.
  EXPECT_EQ(user_error_problem(run_pelab({"--gemm", "packed"}, dir_.path()),
                               {"a command is required after --gemm (valid: train, eval,"}),
            "");
}

}  // namespace
}  // namespace pelab::testing
