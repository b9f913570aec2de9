// One process trains a run at a time, whoever started it: a hand-run `pelab train`, a local
// sweep or a Slurm task. The trainer holds <run>/.run.lock; a second trainer of the same run
// is refused with one line and touches nothing, and a sweep leaves a locked run alone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <string>

#include "pelab_process.h"

namespace pelab::testing {
namespace {

const std::string kLockConfig = tiny_config("tiny", R"(training:
  steps: 2
  batch_size: 4
  warmup: 1
evaluation:
  lengths: [4]
  examples: 4
)");

// Holds the lock on `path` as another process would (a different open file description).
class HeldLock {
 public:
  explicit HeldLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT, 0644)) {
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::flock(fd_, LOCK_EX | LOCK_NB), 0);
  }
  ~HeldLock() { ::close(fd_); }

 private:
  int fd_;
};

TEST(RunLock, ASecondTrainerOfTheSameRunIsRefused) {
  TempDir dir;
  write_file(dir / "tiny.yaml", kLockConfig);
  fs::create_directories(dir.path() / "run");
  {
    const HeldLock held(dir / "run/.run.lock");
    const Outcome o =
        run_pelab({"train", "tiny.yaml", "--out", "run", "--no-progress"}, dir.path());
    EXPECT_EQ(user_error_problem(o, {"another pelab is training run", "run/.run.lock"}), "");
    EXPECT_FALSE(fs::exists(dir.path() / "run/config.yaml")) << "the refused trainer wrote";
  }
  const Outcome o = run_pelab({"train", "tiny.yaml", "--out", "run", "--no-progress"}, dir.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
}

TEST(RunLock, ASweepLeavesALockedRunAlone) {
  TempDir dir;
  write_file(dir / "tiny.yaml", kLockConfig + "sweep:\n  seed: [0, 1]\n");
  fs::create_directories(dir.path() / "out/seed=0");
  write_file(dir / "out/seed=0/checkpoint.safetensors", "another trainer's checkpoint");
  const HeldLock held(dir / "out/seed=0/.run.lock");
  const Outcome o =
      run_pelab({"sweep", "tiny.yaml", "--out", "out", "--no-progress", "--jobs", "1"}, dir.path());
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE((o.out + o.err).find("another pelab is training it"), std::string::npos)
      << o.out << o.err;
  EXPECT_EQ(read_file(dir.path() / "out/seed=0/checkpoint.safetensors"),
            "another trainer's checkpoint");
  EXPECT_TRUE(fs::exists(dir.path() / "out/seed=1/summary.json"));
}

}  // namespace
}  // namespace pelab::testing
