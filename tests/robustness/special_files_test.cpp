// Special files never hang pelab: a FIFO (or a device) given where a file is read — a config, a
// group, a dataset file, a checkpoint, a run's files, the --torch-script — is refused with one
// line, at once, before anything waits for a writer. Each command runs under `timeout`, so a
// regression fails the test instead of hanging it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "pelab_process.h"

namespace pelab::testing {
namespace {

const std::string kSpecialConfig = tiny_config("tiny", R"(training:
  steps: 2
  batch_size: 4
  warmup: 1
evaluation:
  lengths: [4]
  examples: 4
)");

class SpecialFiles : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir_ / "tiny.yaml", kSpecialConfig); }

  void make_fifo(const std::string& name) {
    fs::create_directories((dir_.path() / name).parent_path());
    ASSERT_EQ(::mkfifo((dir_ / name).c_str(), 0644), 0) << name;
  }

  // Runs pelab with `args` in the temporary directory, bounded by 30 s, and expects a user
  // error (exit 2) whose one line holds every one of `parts`.
  void expect_refused(const std::string& args, const std::vector<std::string>& parts) {
    const auto [status, output] = shell("cd '" + dir_.path().string() + "' && timeout 30 '" +
                                        pelab_binary() + "' " + args + " 2>&1");
    ASSERT_NE(status, 124) << "pelab " << args << " hung on a special file";
    EXPECT_EQ(status, 2) << output;
    EXPECT_EQ(lines_of(output).size(), 1u) << output;
    for (const std::string& part : parts) EXPECT_NE(output.find(part), std::string::npos) << output;
  }

  TempDir dir_;
};

TEST_F(SpecialFiles, ConfigAndGroupFiles) {
  make_fifo("fifo.yaml");
  expect_refused("train fifo.yaml", {"fifo.yaml: not a regular file"});
  make_fifo("positional/piped.yaml");
  write_file(dir_ / "grouped.yaml", "task:\n  name: shift\npositional: piped\n");
  expect_refused("print-config grouped.yaml", {"piped.yaml", "not a regular file"});
}

TEST_F(SpecialFiles, DatasetFiles) {
  for (const std::string ext : {"tsv", "jsonl"}) {
    write_file(dir_ / ("train." + ext), ext == "tsv"
                                            ? "a b\tb a\n"
                                            : R"({"input": ["a", "b"], "target": ["b", "a"]})"
                                              "\n");
    make_fifo("eval-fifo." + ext);
    write_file(dir_ / ("eval-" + ext + ".yaml"), "task:\n  name: file\n  train_file: train." + ext +
                                                     "\n  eval_file: eval-fifo." + ext + "\n");
    expect_refused("print-config eval-" + ext + ".yaml",
                   {"eval-fifo." + ext + ": not a regular file; expected a dataset file"});
    make_fifo("train-fifo." + ext);
    write_file(dir_ / ("train-" + ext + ".yaml"), "task:\n  name: file\n  train_file: train-fifo." +
                                                      ext + "\n  eval_file: train." + ext + "\n");
    expect_refused("train train-" + ext + ".yaml --out run-" + ext,
                   {"train-fifo." + ext + ": not a regular file; expected a dataset file"});
  }
}

TEST_F(SpecialFiles, CheckpointsAndRunFiles) {
  const auto [status, output] = shell("cd '" + dir_.path().string() + "' && '" + pelab_binary() +
                                      "' train tiny.yaml --out run --no-progress 2>&1");
  ASSERT_EQ(status, 0) << output;
  fs::rename(dir_.path() / "run/checkpoint.safetensors", dir_.path() / "run/real.safetensors");
  make_fifo("run/checkpoint.safetensors");
  expect_refused("eval run", {"checkpoint.safetensors: is not a regular file"});
  expect_refused("train tiny.yaml --out run --resume",
                 {"checkpoint.safetensors: is not a regular file"});
  // A run's summary.json as a FIFO: compare refuses it instead of waiting.
  fs::rename(dir_.path() / "run/real.safetensors", dir_.path() / "run/checkpoint.safetensors");
  fs::rename(dir_.path() / "run/summary.json", dir_.path() / "run/summary.real");
  make_fifo("run/summary.json");
  const auto [compare_status, compare_output] =
      shell("cd '" + dir_.path().string() + "' && timeout 30 '" + pelab_binary() +
            "' compare run --no-plots 2>&1");
  EXPECT_NE(compare_status, 124) << "compare hung on a FIFO summary.json";
  // per_position.csv as a FIFO: compare refuses it with one line instead of waiting.
  fs::remove(dir_.path() / "run/summary.json");
  fs::rename(dir_.path() / "run/summary.real", dir_.path() / "run/summary.json");
  fs::remove(dir_.path() / "run/per_position.csv");
  make_fifo("run/per_position.csv");
  const auto [positions_status, positions_output] =
      shell("cd '" + dir_.path().string() + "' && timeout 30 '" + pelab_binary() +
            "' compare run --no-plots 2>&1");
  EXPECT_NE(positions_status, 124) << "compare hung on a FIFO per_position.csv";
  EXPECT_NE(positions_output.find("per_position.csv: not a regular file"), std::string::npos)
      << positions_output;
  // config.yaml as a FIFO on --resume.
  fs::rename(dir_.path() / "run/config.yaml", dir_.path() / "run/config.real");
  make_fifo("run/config.yaml");
  expect_refused("train tiny.yaml --out run --resume", {"config.yaml: not a regular file"});
}

// Every file a run or a sweep opens for writing or locking, not only those it reads: a lock
// or a log that is a FIFO would block open() (a writer waits for a reader). The sweep
// records the run as failed, naming the file, and goes on with the others; a trainer refuses
// with one line.
TEST_F(SpecialFiles, LocksAndLogs) {
  write_file(dir_ / "swept.yaml", kSpecialConfig + "sweep:\n  seed: [0, 1]\n");
  const std::string sweep = "sweep swept.yaml --out swd --no-progress --jobs 1";
  const std::string in_dir = "cd '" + dir_.path().string() + "' && timeout 60 '" + pelab_binary();
  const auto [first_status, first_output] = shell(in_dir + "' " + sweep + " 2>&1");
  ASSERT_EQ(first_status, 0) << first_output;
  for (const std::string name : {".run.lock", "stdout.log"}) {
    SCOPED_TRACE(name);
    fs::remove(dir_.path() / "swd/seed=0/summary.json");
    fs::remove(dir_.path() / ("swd/seed=0/" + name));
    make_fifo("swd/seed=0/" + name);
    const auto [status, output] = shell(in_dir + "' " + sweep + " 2>&1");
    ASSERT_NE(status, 124) << "pelab sweep hung on a FIFO " << name;
    EXPECT_NE(status, 0) << output;
    EXPECT_NE(output.find("FAILED seed=0: swd/seed=0/" + name + ": not a regular file"),
              std::string::npos)
        << output;
    fs::remove(dir_.path() / ("swd/seed=0/" + name));
  }
  // A trainer resuming a run whose lock or logs are FIFOs.
  for (const std::string name : {".run.lock", "train.log", "metrics.jsonl"}) {
    SCOPED_TRACE(name);
    const fs::path kept = dir_.path() / "swd/seed=1/kept";
    fs::rename(dir_.path() / ("swd/seed=1/" + name), kept);
    make_fifo("swd/seed=1/" + name);
    expect_refused("train swept.yaml seed=1 --out swd/seed=1 --resume --no-progress",
                   {"swd/seed=1/" + name + ": not a regular file; expected a"});
    fs::remove(dir_.path() / ("swd/seed=1/" + name));
    fs::rename(kept, dir_.path() / ("swd/seed=1/" + name));
  }
}

TEST_F(SpecialFiles, TorchScript) {
  make_fifo("torch_ref.py");
  expect_refused("bench --vs-torch --torch-script torch_ref.py --smoke",
                 {"torch_ref.py: not a regular file"});
}

}  // namespace
}  // namespace pelab::testing
