// The launchers of pelab/sweep/slurm.h: --slurm-opt validation, the batch scripts, a dry
// run's files, the --index entry point (with a fake `pelab` that writes a summary), --status
// and the command-line checks of the launcher options. The real Slurm is exercised by
// tests/slurm/sweep_integration.sh.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "error_message.h"
#include "pelab/core/error.h"
#include "pelab/sweep/slurm.h"
#include "pelab/sweep/sweep.h"
#include "pelab_process.h"

namespace pelab {
namespace {

using testing::error_message;

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

const std::string kSlurmConfig = testing::tiny_config("tiny", R"(training:
  steps: 20
  batch_size: 8
  warmup: 5
  log_every: 10
  checkpoint_every: 0
evaluation:
  lengths: [4, 8]
  examples: 16
sweep:
  positional.type: [none, rotary]
  seed: [0, 1]
)");

// Completes every run it is given: writes DIR/summary.json and exits 0.
const std::string kFakeSlurmPelab = R"(#!/bin/sh
out=""; prev=""
for a in "$@"; do [ "$prev" = "--out" ] && out="$a"; prev="$a"; done
echo "$@" >> "$out/invocations"
printf '{"status": "completed", "eval": []}\n' > "$out/summary.json"
exit 0
)";

struct Sweep {
  TempDir tmp;
  SweepOptions options;
  Sweep() {
    write_file(tmp / "c.yaml", kSlurmConfig);
    write_file(tmp / "fake-pelab", kFakeSlurmPelab);
    ::chmod((tmp / "fake-pelab").c_str(), 0755);
    options.config_path = tmp / "c.yaml";
    options.out_dir = tmp / "out";
    options.executable = tmp / "fake-pelab";
    options.overrides = {"threads=2"};
  }
  fs::path out() const { return fs::path(tmp / "out"); }
};

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- --slurm-opt --------------------------------------------------------------------------

TEST(SweepSlurmOptions, ParsesKnownKeys) {
  const std::vector<SlurmOption> parsed = parse_slurm_options(
      {"partition=gpu", "time=1-02:00:00", "mem=8G", "cpus-per-task=4", "account=proj-1"});
  ASSERT_EQ(parsed.size(), 5u);
  EXPECT_EQ(parsed[1], SlurmOption("time", "1-02:00:00"));
  for (const char* t : {"30", "30:00", "2:00:00", "1-12", "1-12:30", "UNLIMITED"})
    EXPECT_NO_THROW(parse_slurm_options({std::string("time=") + t})) << t;
}

TEST(SweepSlurmOptions, ErrorsAreOneLineAndNameTheOption) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"partition", "expected KEY=VALUE"},
      {"=gpu", "expected KEY=VALUE"},
      {"colour=blue", "unknown key 'colour' (known: account, partition"},
      {"array=0-3", "pelab sweep sets --array itself (use --max-parallel)"},
      {"output=x.log", "sets --output itself"},
      {"time=soon", "time=soon: not a Slurm time"},
      {"mem=lots", "mem=lots: not a memory size"},
      {"cpus-per-task=0", "cpus-per-task=0: not a whole number in [1, 999999]"},
      {"cpus-per-task=99999999999999999999", "not a whole number in [1, 999999]"},
      {"partition=a b", "holds only letters, digits and ._:,+=@/%- (no spaces"},
      {"partition=$(x)", "holds only letters, digits"},
      // Control characters: refused, and printed escaped so the message stays one line and
      // sends nothing to the terminal.
      {"partition=gpu\x1b[31m", "partition=gpu\\x1b[31m: a value holds only"},
      {"account=a\x01", "account=a\\x01: a value holds only"},
      {"mail-user=me\x7f@x.org", "mail-user=me\\x7f@x.org: a value holds only"},
      {"partition=a\vb", "partition=a\\x0bb: a value holds only"},
      {"partition=a\fb", "partition=a\\x0cb: a value holds only"},
      {"colour\x1b=blue", "unknown key 'colour\\x1b'"},
      {"partition=", "the value is empty"}};
  for (const auto& [option, part] : cases) {
    const std::string given = option;  // clang 14 cannot capture a structured binding
    const std::string e = error_message([&] { parse_slurm_options({given}); });
    EXPECT_TRUE(mentions(e, part)) << option << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    EXPECT_TRUE(std::none_of(e.begin(), e.end(), [](char ch) { return ch < 0x20 || ch == 0x7f; }))
        << "a raw control character in: " << e;
  }
  // What Slurm's values hold passes: a partition, an e-mail address, a time, a memory size.
  EXPECT_EQ(parse_slurm_options({"partition=gpu-a100_x", "mail-user=first.last+pelab@example.org",
                                 "time=1-02:30:00", "mem=8G"})
                .size(),
            4u);
  EXPECT_TRUE(mentions(error_message([] {
                         parse_slurm_options({"time=5", "time=6"});
                       }),
                       "time is given twice"));
}

// ---- the scripts ----------------------------------------------------------------------------

TEST(SweepSlurmScript, ArrayIndicesAsRanges) {
  EXPECT_EQ(array_indices({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(array_indices({3}), "3");
  EXPECT_EQ(array_indices({}), "");
}

TEST(SweepSlurmScript, ArrayScriptRunsEachTaskByIndex) {
  Sweep s;
  const SweepPlan plan = absolute_plan(plan_sweep(s.options));
  ASSERT_TRUE(fs::path(plan.out_dir).is_absolute());
  SlurmLaunch launch;
  launch.executable = "/opt/pelab/bin/pelab";
  launch.max_parallel = 2;
  launch.options = parse_slurm_options({"partition=short", "time=10", "mem=1G"});
  const std::string script = slurm_array_script(plan, {0, 1, 3}, launch);
  const std::string dir = plan.out_dir + "/slurm";
  for (const std::string& line :
       {std::string("#!/bin/bash\n"), std::string("#SBATCH --job-name=pelab-tiny\n"),
        std::string("#SBATCH --array=0-1,3%2\n"), std::string("#SBATCH --cpus-per-task=2\n"),
        "#SBATCH --output=" + dir + "/run-%a.log\n", std::string("#SBATCH --open-mode=append\n"),
        std::string("#SBATCH --requeue\n"), std::string("#SBATCH --partition=short\n"),
        std::string("#SBATCH --time=10\n"), std::string("#SBATCH --mem=1G\n"),
        "\nexec /opt/pelab/bin/pelab sweep " + plan.config_path + " threads=2 --out " +
            plan.out_dir + " --index \"$SLURM_ARRAY_TASK_ID\"\n"})
    EXPECT_TRUE(mentions(script, line)) << line << "\nin:\n" << script;
  // Every #SBATCH line precedes the first command (sbatch stops reading them there).
  EXPECT_LT(script.rfind("#SBATCH"), script.find("exec "));

  const std::string compare = slurm_compare_script(plan, launch);
  EXPECT_TRUE(mentions(compare, "#SBATCH --partition=short\n#SBATCH --time=10\n")) << compare;
  EXPECT_FALSE(mentions(compare, "--mem")) << compare;
  EXPECT_TRUE(mentions(compare, "exec /opt/pelab/bin/pelab compare " + plan.out_dir +
                                    " --metric sequence_accuracy\n"))
      << compare;
}

TEST(SweepSlurmScript, CpusPerTaskCoversTheThreads) {
  Sweep s;
  const SweepPlan plan = absolute_plan(plan_sweep(s.options));
  EXPECT_EQ(plan_threads(plan), 2);
  SlurmLaunch launch;
  launch.executable = "/bin/pelab";
  launch.options = parse_slurm_options({"cpus-per-task=4"});
  EXPECT_TRUE(mentions(slurm_array_script(plan, {0}, launch), "--cpus-per-task=4\n"));
  EXPECT_FALSE(mentions(slurm_array_script(plan, {0}, launch), "--array=0%"));
  launch.options = parse_slurm_options({"cpus-per-task=1"});
  EXPECT_TRUE(mentions(error_message([&] { slurm_array_script(plan, {0}, launch); }),
                       "cpus-per-task=1: fewer CPUs than the 2 threads each run trains with"));
}

TEST(SweepSlurmSubmit, DryRunWritesTheScriptsForTheRunsToDo) {
  Sweep s;
  SlurmLaunch launch;
  launch.executable = "/bin/pelab";
  launch.dry_run = true;
  SlurmSubmission sub = submit_slurm_sweep(s.options, launch);
  EXPECT_EQ(sub.indices, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(sub.array_job.empty());
  EXPECT_TRUE(mentions(read_file(s.out() / "slurm" / "sweep.sbatch"), "--array=0-3\n"));
  EXPECT_TRUE(fs::exists(s.out() / "slurm" / "compare.sbatch"));
  EXPECT_FALSE(fs::exists(s.out() / "slurm" / "jobs.json"));
  const json manifest = json::parse(read_file(s.out() / "sweep.json"));
  EXPECT_EQ(manifest["runs"][1]["name"], "positional.type=none/seed=1");

  // A completed run is not submitted again.
  const SweepPlan plan = plan_sweep(s.options);
  const fs::path done = plan.runs[1].run.dir;
  write_file(done / "config.yaml", plan.runs[1].config_yaml);
  write_file(done / "summary.json", R"({"status": "completed"})");
  sub = submit_slurm_sweep(s.options, launch);
  EXPECT_EQ(sub.indices, (std::vector<size_t>{0, 2, 3}));
  EXPECT_TRUE(mentions(sub.script, "--array=0,2-3\n")) << sub.script;
}

// Slurm reads #SBATCH lines with its own parser ('#' starts a comment, quotes are read): a
// path it would misread is refused before anything is written, and the job name is cleaned.
TEST(SweepSlurmScript, PathsSlurmCannotReadAreRefused) {
  for (const std::string bad : {"o#8", "my runs", "o'x$y", "a%b"}) {
    Sweep s;
    s.options.out_dir = s.tmp / bad;
    SlurmLaunch launch;
    launch.executable = "/bin/pelab";
    launch.dry_run = true;
    EXPECT_TRUE(mentions(error_message([&] { submit_slurm_sweep(s.options, launch); }),
                         "the sweep directory (--out) of a sweep run by Slurm may hold only"))
        << bad;
    EXPECT_FALSE(fs::exists(s.tmp / bad)) << bad;
  }
  Sweep s;
  s.options.overrides.push_back("name=a b#c");
  SlurmLaunch launch;
  launch.executable = "/bin/pelab";
  launch.dry_run = true;
  s.options.out_dir = s.tmp / "named";
  const SlurmSubmission sub = submit_slurm_sweep(s.options, launch);
  EXPECT_TRUE(mentions(sub.script, "#SBATCH --job-name=pelab-a_b_c\n")) << sub.script;
}

TEST(SweepSlurmSubmit, PrintLauncherListsOneCommandPerRun) {
  Sweep s;
  const std::vector<std::string> lines = sweep_commands(s.options, "/bin/pelab");
  ASSERT_EQ(lines.size(), 4u);
  const std::string abs_out = fs::absolute(s.out()).lexically_normal().string();
  EXPECT_EQ(lines[3], "/bin/pelab sweep " +
                          fs::absolute(s.tmp / "c.yaml").lexically_normal().string() +
                          " threads=2 --out " + abs_out + " --index 3");
  EXPECT_TRUE(fs::exists(s.out() / "sweep.json"));
}

// ---- one run as a task ----------------------------------------------------------------------

TEST(SweepTask, TrainsExactlyThatRunThenSkipsIt) {
  Sweep s;
  EXPECT_EQ(run_sweep_task(s.options, 2), 0);
  const SweepPlan plan = plan_sweep(s.options);
  EXPECT_TRUE(fs::exists(fs::path(plan.runs[2].run.dir) / "summary.json"));
  EXPECT_EQ(json::parse(read_file(fs::path(plan.runs[2].run.dir) / "status.json"))["status"],
            "completed");
  // The same arguments as the local sweep's run.
  std::string expected;
  for (const std::string& a : train_arguments(plan, 2))
    expected += (expected.empty() ? "" : " ") + a;
  EXPECT_EQ(read_file(fs::path(plan.runs[2].run.dir) / "invocations"), expected + "\n");
  for (size_t i : {0, 1, 3}) EXPECT_FALSE(fs::exists(plan.runs[i].run.dir)) << i;
  EXPECT_EQ(run_sweep_task(s.options, 2), 0);  // completed: not trained again
  EXPECT_EQ(testing::lines_of(read_file(fs::path(plan.runs[2].run.dir) / "invocations")).size(),
            1u);
}

TEST(SweepTask, FailedRunAndBadIndex) {
  Sweep s;
  s.options.executable = "/bin/true";  // exits 0 without a summary: failed
  EXPECT_EQ(run_sweep_task(s.options, 0), 1);
  EXPECT_TRUE(mentions(error_message([&] { run_sweep_task(s.options, 4); }),
                       "--index 4: the sweep has 4 runs (0-3)"));
}

TEST(SweepTask, RefusesARunAnotherProcessTrains) {
  Sweep s;
  const SweepPlan plan = plan_sweep(s.options);
  fs::create_directories(plan.runs[1].run.dir);
  const std::string lock = (fs::path(plan.runs[1].run.dir) / ".run.lock").string();
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  // The run's files are left alone and the task fails; the run is taken up again later.
  EXPECT_EQ(run_sweep_task(s.options, 1), 1);
  ::close(fd);
  EXPECT_EQ(run_sweep_task(s.options, 1), 0);
}

TEST(SweepTask, RefusesAnIndexOfAnotherSweep) {
  Sweep s;
  fs::create_directories(s.out());
  write_file(s.out() / "sweep.json", R"({"runs": [{"name": "a"}, {"name": "b"}]})");
  const std::string e = error_message([&] { run_sweep_task(s.options, 1); });
  EXPECT_TRUE(mentions(e,
                       "sweep.json lists another sweep (run 1 is 'b' there, "
                       "'positional.type=none/seed=1' here)"))
      << e;
}

// Slurm may signal only the batch process (`scancel --batch`, `--signal=B:...`): --index must
// pass SIGTERM on to the run, which saves, is recorded interrupted and resumes next time.
TEST(SweepTask, SigtermToTheTaskReachesTheRun) {
  Sweep s;
  const std::string config = s.tmp / "c.yaml";
  const std::vector<std::string> args = {
      "sweep", config, "training.steps=200000", "--out", s.out().string(), "--index", "1"};
  const pid_t pid = testing::start_pelab(args, s.tmp / "task.log");
  const fs::path run = s.out() / "positional.type=none" / "seed=1";
  for (int i = 0; i < 600 && !fs::exists(run / "metrics.jsonl"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(run / "metrics.jsonl")) << read_file(s.tmp / "task.log");
  ::kill(pid, SIGTERM);  // the task only, not its child
  const testing::Outcome o = testing::wait_pelab(pid, s.tmp / "task.log");
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_EQ(json::parse(read_file(run / "status.json"))["status"], "interrupted");
  EXPECT_TRUE(fs::exists(run / "checkpoint.safetensors"));
  EXPECT_FALSE(fs::exists(run / "summary.json"));
  EXPECT_TRUE(mentions(o.err, "stopped positional.type=none/seed=1")) << o.err;
  s.options.overrides = {"training.steps=200000"};
  const SweepPlan plan = plan_sweep(s.options);
  EXPECT_EQ(plan.runs[1].plan.action, RunAction::resume);
}

// ---- status -------------------------------------------------------------------------------

TEST(SweepStatusReport, CountsFromTheRunDirectories) {
  Sweep s;
  sweep_commands(s.options, "/bin/pelab");  // writes sweep.json
  const SweepPlan plan = plan_sweep(s.options);
  write_file(fs::path(plan.runs[0].run.dir) / "summary.json", R"({"status": "completed"})");
  write_file(fs::path(plan.runs[1].run.dir) / "status.json",
             R"({"status": "failed", "exit_code": 2, "error": "the loss is nan"})");
  write_file(fs::path(plan.runs[2].run.dir) / "status.json", R"({"status": "running"})");
  const SweepStatus st = sweep_status(s.out());
  EXPECT_EQ(st.count(RunState::done), 1);
  EXPECT_EQ(st.count(RunState::failed), 1);
  EXPECT_EQ(st.count(RunState::running), 1);
  EXPECT_EQ(st.count(RunState::pending), 1);
  const std::string report = st.report();
  EXPECT_TRUE(mentions(report, "4 runs: 1 done, 1 running, 1 failed, 1 pending\n")) << report;
  EXPECT_TRUE(mentions(report, "failed  positional.type=none/seed=1: exit 2: the loss is nan"))
      << report;
  EXPECT_TRUE(mentions(report, "pending positional.type=rotary/seed=1: not started")) << report;
  EXPECT_TRUE(
      mentions(error_message([&] { sweep_status((s.tmp / "nothing")); }), "no sweep.json here"));
}

// ---- the command line -----------------------------------------------------------------------

TEST(SweepLauncherCli, OptionsOfOneLauncherAreRefusedWithOthers) {
  Sweep s;
  const std::string config = (s.tmp / "c.yaml");
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"sweep", config, "--slurm-opt", "time=5"}, {"--slurm-opt: needs --launcher slurm"}},
      {{"sweep", config, "--max-parallel", "2"}, {"--max-parallel: needs --launcher slurm"}},
      {{"sweep", config, "--dry-run"}, {"--dry-run: needs --launcher slurm"}},
      {{"sweep", config, "--launcher", "print", "--index", "1"}, {"--index: trains one run"}},
      {{"sweep", config, "--launcher", "slurm", "--slurm-opt", "colour=red", "--dry-run"},
       {"--slurm-opt colour=red: unknown key 'colour'"}},
      {{"sweep"}, {"config is required", "pelab sweep --help"}},
      {{"sweep", "--status", (s.tmp / "none")}, {"no sweep.json here"}}};
  for (const auto& [args, parts] : cases) {
    const std::string problem = testing::user_error_problem(testing::run_pelab(args), parts);
    EXPECT_EQ(problem, "") << args.back();
  }
}

TEST(SweepLauncherCli, DryRunPrintsTheScriptWithTheAbsoluteBinary) {
  Sweep s;
  const testing::Outcome o = testing::run_pelab(
      {"sweep", (s.tmp / "c.yaml"), "--out", s.out().string(), "--launcher", "slurm", "--dry-run",
       "--threads", "1", "--max-parallel", "2", "--slurm-opt", "time=5"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, read_file(s.out() / "slurm" / "sweep.sbatch"));
  EXPECT_TRUE(mentions(o.out, "#SBATCH --array=0-3%2\n#SBATCH --cpus-per-task=1\n")) << o.out;
  EXPECT_TRUE(
      mentions(o.out, "exec " + fs::canonical(testing::pelab_binary()).string() + " sweep "))
      << o.out;
  EXPECT_TRUE(mentions(o.out, " threads=1 --out ")) << o.out;
  EXPECT_TRUE(mentions(o.err, "sbatch --dependency=afterany:$jobid")) << o.err;
}

}  // namespace
}  // namespace pelab
