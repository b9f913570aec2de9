// A run that fails inside a sweep (here: its numbers diverge, exit code 4) is recorded as
// failed, the sweep finishes the other runs and exits 1 with a summary line, compare counts
// the diverged runs as runs that did not learn, and running the sweep again redoes only the
// failed or missing runs. With the real binary.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "pelab_process.h"

namespace pelab::testing {
namespace {

using json = nlohmann::json;

const std::string kSweep = tiny_config("sweepfail", R"(training:
  steps: 6
  batch_size: 4
  warmup: 0
  schedule: constant
  clip_norm: 0
  log_every: 2
evaluation:
  lengths: [4, 6]
  examples: 4
sweep:
  training.lr: [0.001, 1e30]
  seed: [0, 1]
)");

std::string status_of(const fs::path& run) {
  return json::parse(read_file(run / "status.json"))["status"].get<std::string>();
}

TEST(SweepFailureSlow, FailedRunsAreRecordedSkippedRunsStayAndOnlyFailuresAreRedone) {
  TempDir dir;
  write_file(dir / "sweep.yaml", kSweep);
  const std::vector<std::string> args = {
      "sweep", dir / "sweep.yaml", "--out", dir / "out", "--jobs", "2", "--no-progress"};
  const fs::path out = dir.path() / "out";
  const fs::path good0 = out / "training.lr=0.001/seed=0", good1 = out / "training.lr=0.001/seed=1";
  const fs::path bad0 = out / "training.lr=1e30/seed=0", bad1 = out / "training.lr=1e30/seed=1";

  Outcome o = run_pelab(args);
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("sweep: 4 runs: 2 completed, 0 skipped (already completed), 2 failed"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(status_of(good0), "completed");
  EXPECT_EQ(status_of(good1), "completed");
  for (const fs::path& bad : {bad0, bad1}) {
    const json s = json::parse(read_file(bad / "status.json"));
    EXPECT_EQ(s["status"], "failed");
    EXPECT_EQ(s["exit_code"], 4);  // diverged: a result, not bad input
    EXPECT_NE(s["error"].get<std::string>().find("pelab: error: step 2: the loss is nan"),
              std::string::npos)
        << s.dump();
    EXPECT_FALSE(fs::exists(bad / "summary.json"));
  }
  EXPECT_NE(o.err.find("FAILED training.lr=1e30/seed=0"), std::string::npos) << o.err;
  // The comparison counts the diverged runs as runs that did not learn, in their own group.
  const Outcome compared = run_pelab({"compare", out, "--no-plots"});
  EXPECT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_NE(compared.out.find("| 1e+30 (did not learn) | 2 | 0 |"), std::string::npos)
      << compared.out;
  EXPECT_NE(compared.out.find("Diverged (2 runs;"), std::string::npos) << compared.out;

  // Again, after losing one completed run: the other completed run is skipped, the lost one
  // and the failed ones are redone.
  const std::string kept_checkpoint = read_file(good1 / "checkpoint.safetensors");
  fs::remove_all(good0);
  o = run_pelab(args);
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("sweep: 4 runs: 1 completed, 1 skipped (already completed), 2 failed"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(status_of(good0), "completed");
  EXPECT_TRUE(read_file(good1 / "checkpoint.safetensors") == kept_checkpoint);
  EXPECT_EQ(status_of(bad0), "failed");
}

}  // namespace
}  // namespace pelab::testing
