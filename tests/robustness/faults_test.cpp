// Faults: a run killed at any moment (even while it writes a checkpoint) keeps a loadable
// checkpoint; SIGINT/SIGTERM finish the step, save and exit with code 3, and --resume goes
// on; non-finite numbers stop a run naming the step and the tensor or op, keeping the last
// good checkpoint. FaultsSlow and FaultSignals start real `pelab train` processes.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include "pelab/autograd/autograd.h"
#include "pelab/config/experiment.h"
#include "pelab/config/load_model.h"
#include "pelab/core/error.h"
#include "pelab/io/safetensors.h"
#include "pelab/ops/ops.h"
#include "pelab/run/trainer.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using testing::Outcome;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

std::string tiny_with_training(const std::string& training) {
  return testing::tiny_config("tiny", R"(evaluation:
  lengths: [4, 8]
  examples: 4
training:
)" + training);
}

int64_t checkpoint_step(const std::string& path) {
  return std::stoll(read_safetensors(path).metadata_value("step"));
}

// The step of the last complete line of metrics.jsonl that has one (0 if none); a line the
// run is still writing is left for the next look.
int64_t last_metrics_step(const testing::fs::path& run) {
  std::string text = read_file(run / "metrics.jsonl");
  text.erase(text.find_last_of('\n') + 1);  // npos + 1 == 0: no complete line yet
  int64_t step = 0;
  for (const std::string& line : testing::lines_of(text)) {
    const size_t at = line.find("\"step\":");
    if (at != std::string::npos) step = std::stoll(line.substr(at + 7));
  }
  return step;
}

// Waits until `done` holds (polling often, so that a short-lived state such as a checkpoint
// write in progress is seen), at most `seconds`.
bool wait_for(const std::function<bool()>& done, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return done();
}

// ---- killed while saving --------------------------------------------------------------------

// Whether a checkpoint write is under way in `run`: its temporary exists.
bool writing_checkpoint(const testing::fs::path& run) {
  std::error_code error;
  for (testing::fs::directory_iterator it(run, error), end; !error && it != end;
       it.increment(error))
    if (it->path().filename().string().rfind("checkpoint.safetensors.tmp-", 0) == 0) return true;
  return false;
}

TEST(FaultsSlow, KilledAtAnyMomentTheLastCheckpointLoads) {
  // A model large enough (~0.8 M parameters, ~10 MB per checkpoint with the optimizer state)
  // that writing the checkpoint after every step is much of the run's time. The kills are
  // aimed by what the run shows, never by the clock, so that a slow build (sanitizers, a
  // loaded machine) aims them as well as a fast one: every other trial kills as soon as a
  // checkpoint's temporary appears (inside a write), the others once the run has logged a
  // few more steps after its first checkpoint (any moment of a step).
  const std::string config = R"(name: big
seed: 0
model:
  d_model: 128
  heads: 4
  layers: 4
positional:
  type: learned
task:
  name: copy
  min_length: 1
  max_length: 4
evaluation:
  lengths: [4]
  examples: 4
training:
  steps: 100000
  batch_size: 2
  warmup: 1
  log_every: 1
  checkpoint_every: 1
)";
  TempDir dir;
  write_file(dir / "big.yaml", config);
  std::mt19937 rng(7);
  int killed_while_saving = 0;
  const int trials = 12;
  const double patience = 600;  // seconds; generous for a sanitized build on a busy machine
  for (int trial = 0; trial < trials; ++trial) {
    const testing::fs::path run = dir.path() / fmt::format("run{}", trial);
    const std::string ckpt = (run / "checkpoint.safetensors").string();
    const pid_t pid = testing::start_pelab(
        {"train", dir / "big.yaml", "--out", run.string(), "--no-progress"}, dir / "log.txt");
    ASSERT_TRUE(wait_for([&] { return testing::fs::exists(ckpt); }, patience))
        << read_file(dir / "log.txt");
    if (trial % 2 == 0) {
      ASSERT_TRUE(wait_for([&] { return writing_checkpoint(run); }, patience))
          << read_file(dir / "log.txt");
    } else {
      const int64_t target = last_metrics_step(run) + std::uniform_int_distribution<int>(0, 3)(rng);
      ASSERT_TRUE(wait_for([&] { return last_metrics_step(run) >= target; }, patience))
          << read_file(dir / "log.txt");
    }
    ::kill(pid, SIGKILL);
    const Outcome o = testing::wait_pelab(pid, dir / "log.txt");
    ASSERT_EQ(o.signal, SIGKILL) << o.err;

    // A temporary left behind means the kill interrupted a checkpoint write.
    if (writing_checkpoint(run)) ++killed_while_saving;
    // Whatever the moment, the checkpoint is complete and rebuilds the model.
    const SafetensorsFile file = read_safetensors(ckpt);
    EXPECT_NO_THROW(load_model(file)) << "trial " << trial;
    EXPECT_GE(checkpoint_step(ckpt), 1) << "trial " << trial;
  }
  EXPECT_GT(killed_while_saving, 0) << "no kill landed inside a checkpoint write";
  std::printf("%d of %d kills interrupted a checkpoint write\n", killed_while_saving, trials);

  // And the run resumes from it (removing the stale temporary).
  const testing::fs::path run = dir.path() / "run0";
  const int64_t saved = checkpoint_step((run / "checkpoint.safetensors").string());
  const Outcome o = testing::run_pelab({"train", dir / "big.yaml", "--out", run.string(),
                                        "--resume", "--stop-after", "2", "--no-progress"});
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_EQ(checkpoint_step((run / "checkpoint.safetensors").string()), saved + 2);
  for (const auto& e : testing::fs::directory_iterator(run))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

// ---- SIGINT / SIGTERM ---------------------------------------------------------------------

class FaultSignals : public ::testing::TestWithParam<int> {};

TEST_P(FaultSignals, FinishesTheStepSavesExitsThreeAndResumes) {
  const int sig = GetParam();
  TempDir dir;
  write_file(dir / "tiny.yaml",
             tiny_with_training("  steps: 100000\n  batch_size: 4\n  warmup: 1\n  log_every: 1\n"
                                "  checkpoint_every: 0\n"));
  const testing::fs::path run = dir.path() / "run";
  const pid_t pid = testing::start_pelab(
      {"train", dir / "tiny.yaml", "--out", run.string(), "--no-progress"}, dir / "log.txt");
  ASSERT_TRUE(wait_for([&] { return last_metrics_step(run) >= 3; }, 60))
      << read_file(dir / "log.txt");
  ::kill(pid, sig);
  const Outcome o = testing::wait_pelab(pid, dir / "log.txt");
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.err.find("stopped at step"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("continue with --resume"), std::string::npos) << o.err;
  // The step in progress was finished and saved: the checkpoint is at the last logged step.
  const std::string ckpt = (run / "checkpoint.safetensors").string();
  const int64_t stopped = checkpoint_step(ckpt);
  EXPECT_GE(stopped, 3);
  EXPECT_EQ(last_metrics_step(run), stopped);
  EXPECT_FALSE(testing::fs::exists(run / "summary.json"));

  const Outcome resumed = testing::run_pelab({"train", dir / "tiny.yaml", "--out", run.string(),
                                              "--resume", "--stop-after", "5", "--no-progress"});
  EXPECT_EQ(resumed.exit_code, 3) << resumed.err;
  EXPECT_NE(resumed.err.find(fmt::format("resuming {} at step {}", run.string(), stopped)),
            std::string::npos)
      << resumed.err;
  EXPECT_EQ(checkpoint_step(ckpt), stopped + 5);
  // Every step logged once, in order.
  int64_t expected = 1;
  for (const std::string& line : testing::lines_of(read_file(run / "metrics.jsonl")))
    EXPECT_NE(line.find(fmt::format("\"step\":{},", expected++)), std::string::npos) << line;
  EXPECT_EQ(expected, stopped + 6);
}

INSTANTIATE_TEST_SUITE_P(Signals, FaultSignals, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& p) { return p.param == SIGINT ? "SIGINT" : "SIGTERM"; });

// ---- non-finite numbers -------------------------------------------------------------------

// Adam's first update moves every weight by about lr: 1e30 leaves them finite, but the
// attention scores of the next forward pass overflow.
const char* kDiverging =
    "  steps: 10\n  batch_size: 4\n  warmup: 0\n  schedule: constant\n  lr: 1e30\n"
    "  clip_norm: 0\n  checkpoint_every: 1\n";

// The message of the run's divergence, which must come as a DivergedError (`pelab train`
// exits 4 on it, and a comparison counts the run as one that did not learn).
std::string train_error(const std::string& config_text, const std::string& run) {
  const ExperimentConfig c =
      parse_experiment(config_text, "x.yaml", {}, PELAB_SOURCE_DIR "/configs");
  TrainOptions o;
  o.run_dir = run;
  o.progress = false;
  try {
    train_run(c, o);
  } catch (const DivergedError& e) {
    return e.what();
  } catch (const Error& e) {
    ADD_FAILURE() << "not a DivergedError: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "the run did not stop";
  return "";
}

TEST(Faults, NonFiniteLossStopsNamingTheStepAndKeepsTheLastGoodCheckpoint) {
  TempDir dir;
  const std::string message = train_error(tiny_with_training(kDiverging), dir / "run");
  EXPECT_NE(message.find("step 2: the loss is nan"), std::string::npos) << message;
  EXPECT_NE(message.find("the last good checkpoint, step 1, is kept in"), std::string::npos)
      << message;
  const std::string ckpt = dir / "run/checkpoint.safetensors";
  EXPECT_EQ(checkpoint_step(ckpt), 1);
  const std::unique_ptr<Encoder> model = load_model(ckpt);
  for (const Tensor& p : model->params().all())
    for (const float v : p.to_vector()) ASSERT_TRUE(std::isfinite(v)) << p.name();
}

TEST(Faults, CheckFiniteNamesTheFirstBadOp) {
  TempDir dir;
  const std::string message = train_error(
      tiny_with_training(std::string(kDiverging) + "  check_finite: true\n"), dir / "run");
  EXPECT_NE(message.find("step 2: forward: the output of op '"), std::string::npos) << message;
  EXPECT_NE(message.find("found by training.check_finite"), std::string::npos) << message;
  EXPECT_NE(message.find("the last good checkpoint, step 1"), std::string::npos) << message;
  EXPECT_FALSE(check_finite_enabled()) << "the run must restore the setting";
}

TEST(Faults, UpdateThatOverflowsNamesTheParameter) {
  TempDir dir;
  const std::string message = train_error(
      // AdamW moves each weight by about lr and decays it by lr·weight_decay·w: together
      // more than the largest float for some of them.
      tiny_with_training("  steps: 10\n  batch_size: 4\n  warmup: 0\n  lr: 3.4e38\n"
                         "  weight_decay: 1\n  clip_norm: 0\n"),
      dir / "run");
  EXPECT_NE(message.find("step 1: the update made parameter '"), std::string::npos) << message;
  EXPECT_NE(message.find("no checkpoint was written yet"), std::string::npos) << message;
}

TEST(Faults, CheckFiniteCatchesForwardAndBackward) {
  struct Restore {
    ~Restore() { set_check_finite(false); }
  } restore;
  Tensor x = Tensor::from_vector({3}, {1.0f, -1.0f, 2.0f}).set_requires_grad(true);
  set_check_finite(false);
  EXPECT_NO_THROW(log(x));  // off: NaN passes silently
  set_check_finite(true);
  try {
    log(x);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the output of op 'log' holds nan (at flat index 1 of "
                                         "shape [3]"),
              std::string::npos)
        << e.what();
  }
  // Finite forward, infinite gradient: d log(x)/dx = 1/x overflows at a denormal x.
  Tensor tiny = Tensor::from_vector({2}, {1.0f, 1e-45f}).set_requires_grad(true);
  Tensor y = sum_all(log(tiny));
  try {
    y.backward();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the gradient op 'log' passes to its input 0 holds inf"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pelab
