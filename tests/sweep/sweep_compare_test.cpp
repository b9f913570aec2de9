// pelab sweep and pelab compare: axis expansion, run naming, skip/redo/resume decisions, the
// child-process machinery (with a fake `pelab` shell script, no training), and compare's
// grouping, statistics and outputs on synthetic run directories. SweepSlow runs the real
// binary end to end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/report/plot.h"
#include "pelab/report/report.h"
#include "pelab/sweep/sweep.h"
#include "pelab_process.h"

namespace pelab {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::pelab_binary;
using testing::read_file;
using testing::shell;
using testing::TempDir;
using testing::write_file;

// A tiny valid config with a sweep over two schemes and two seeds.
// (The sweep sets positional.type, so the base config's scheme never trains.)
const std::string kTinyConfig = testing::tiny_config("tiny", R"(training:
  steps: 20
  batch_size: 8
  warmup: 5
  log_every: 10
  checkpoint_every: 0
evaluation:
  lengths: [4, 8, 16]
  examples: 16
sweep:
  positional.type: [none, rotary]
  seed: [0, 1]
)");

// ---- axis expansion and naming ----------------------------------------------------------

TEST(SweepExpand, ProductInAxisOrderWithOverrides) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> axes = {
      {"positional.type", {"none", "rotary"}}, {"seed", {"0", "1", "2"}}};
  const std::vector<SweepRun> runs = expand_sweep(axes, "out", {"training.steps=60"});
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[0].name, "positional.type=none/seed=0");
  EXPECT_EQ(runs[1].name, "positional.type=none/seed=1");
  EXPECT_EQ(runs[3].name, "positional.type=rotary/seed=0");
  EXPECT_EQ(runs[5].name, "positional.type=rotary/seed=2");
  EXPECT_EQ(runs[5].dir, (fs::path("out") / "positional.type=rotary" / "seed=2").string());
  const std::vector<std::string> expected = {"training.steps=60", "positional.type=rotary",
                                             "seed=2", "sweep={}"};
  EXPECT_EQ(runs[5].overrides, expected);
  ASSERT_EQ(runs[4].values.size(), 2u);
  EXPECT_EQ(runs[4].values[0], (std::pair<std::string, std::string>{"positional.type", "rotary"}));
  EXPECT_EQ(runs[4].values[1], (std::pair<std::string, std::string>{"seed", "1"}));
}

TEST(SweepExpand, SingleAxis) {
  const std::vector<SweepRun> runs = expand_sweep({{"seed", {"3"}}}, "/x", {});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].dir, "/x/seed=3");
  EXPECT_EQ(runs[0].overrides, (std::vector<std::string>{"seed=3", "sweep={}"}));
}

TEST(SweepExpand, UnsafeValuesAreMadePathSafe) {
  EXPECT_EQ(sweep_dir_component("evaluation.lengths", "[8, 16]"), "evaluation.lengths=_8,_16_");
  EXPECT_EQ(sweep_dir_component("task.name", "a/b"), "task.name=a_b");
  EXPECT_EQ(sweep_dir_component("training.lr", "1e-3"), "training.lr=1e-3");
  // The override keeps the value verbatim.
  const std::vector<SweepRun> runs = expand_sweep({{"task.name", {"a/b"}}}, "o", {});
  EXPECT_EQ(runs[0].overrides[0], "task.name=a/b");
}

TEST(SweepExpand, CollisionsAndEmptyAxesAreErrors) {
  EXPECT_THROW(expand_sweep({{"task.name", {"a/b", "a_b"}}}, "o", {}), Error);
  EXPECT_THROW(expand_sweep({{"seed", {"1", "1"}}}, "o", {}), Error);
  EXPECT_THROW(expand_sweep({{"seed", {}}}, "o", {}), Error);
  EXPECT_THROW(expand_sweep({{"a/b", {"1"}}}, "o", {}), Error);
}

TEST(SweepExpand, DefaultJobsIsAtLeastOne) {
  EXPECT_GE(default_jobs(1), 1);
  EXPECT_EQ(default_jobs(100000), 1);
}

// ---- validation before anything starts ---------------------------------------------------

TEST(SweepValidate, BadAxisValueIsNamedAndNothingStarts) {
  TempDir tmp;
  std::string config = kTinyConfig;
  config.replace(config.find("[none, rotary]"), 14, "[none, rotory]");
  write_file(tmp / "c.yaml", config);
  SweepOptions o;
  o.config_path = tmp / "c.yaml";
  o.out_dir = tmp / "out";
  o.executable = "/bin/false";
  try {
    run_sweep(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("positional.type=rotory"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rotory"), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(SweepValidate, BadAxisKeyIsNamed) {
  TempDir tmp;
  std::string config = kTinyConfig;
  config.replace(config.find("positional.type: [none"), 16, "positional.tpye:");
  write_file(tmp / "c.yaml", config);
  SweepOptions o;
  o.config_path = tmp / "c.yaml";
  o.out_dir = tmp / "out";
  o.executable = "/bin/false";
  try {
    run_sweep(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tpye"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(SweepValidate, NoAxesIsAnError) {
  TempDir tmp;
  std::string config = kTinyConfig;
  config.erase(config.find("sweep:"));
  write_file(tmp / "c.yaml", config);
  SweepOptions o;
  o.config_path = tmp / "c.yaml";
  o.out_dir = tmp / "out";
  EXPECT_THROW(run_sweep(o), Error);
  // ... unless the command line adds one. /bin/true exits 0 without a summary: a failure.
  o.overrides = {"sweep.seed=[0,1]"};
  o.executable = "/bin/true";
  o.progress = false;
  const SweepResult r = run_sweep(o);
  EXPECT_EQ(r.total, 2);
  EXPECT_EQ(r.failed, 2);
  const json s = json::parse(read_file(fs::path(tmp / "out") / "seed=1" / "status.json"));
  EXPECT_EQ(s["status"], "failed");
  EXPECT_EQ(s["exit_code"], 0);
  EXPECT_NE(s["error"].get<std::string>().find("no completed summary.json"), std::string::npos);
}

// ---- the plan, as another launcher reads it ----------------------------------------------

TEST(SweepPlan, PlanListsEachRunsArgumentsAndWritesNothing) {
  TempDir tmp;
  write_file(tmp / "c.yaml", kTinyConfig);
  SweepOptions o;
  o.config_path = tmp / "c.yaml";
  o.out_dir = tmp / "out";
  o.overrides = {"training.steps=30"};
  o.jobs = 3;
  const SweepPlan plan = plan_sweep(o);
  EXPECT_FALSE(fs::exists(tmp / "out"));
  EXPECT_EQ(plan.jobs, 3);
  ASSERT_EQ(plan.runs.size(), 4u);
  const PlannedRun& last = plan.runs.back();
  EXPECT_EQ(last.run.name, "positional.type=rotary/seed=1");
  EXPECT_EQ(last.steps, 30);
  EXPECT_EQ(last.plan.action, RunAction::fresh);
  const std::vector<std::string> args = train_arguments(plan, 3);
  const std::vector<std::string> expected = {
      "train",    plan.config_path, "training.steps=30", "positional.type=rotary", "seed=1",
      "sweep={}", "--out",          last.run.dir,        "--no-progress"};
  EXPECT_EQ(args, expected);
}

TEST(SweepPlan, RunPlannedRunsExactlyThatRun) {
  TempDir tmp;
  write_file(tmp / "c.yaml", kTinyConfig);
  SweepOptions o;
  o.config_path = tmp / "c.yaml";
  o.out_dir = tmp / "out";
  const SweepPlan plan = plan_sweep(o);
  // /bin/true exits 0 without writing a summary: the run is recorded as failed.
  const FinishedRun f = run_planned(plan, 1, "/bin/true");
  EXPECT_EQ(f.outcome, RunOutcome::failed);
  EXPECT_NE(f.line.find(plan.runs[1].run.name), std::string::npos) << f.line;
  const json s = json::parse(read_file(fs::path(plan.runs[1].run.dir) / "status.json"));
  EXPECT_EQ(s["status"], "failed");
  EXPECT_FALSE(fs::exists(plan.runs[0].run.dir));
  EXPECT_FALSE(fs::exists(plan.runs[2].run.dir));
}

// ---- skip / resume / redo ---------------------------------------------------------------

TEST(SweepPlan, DecidesFromTheRunFiles) {
  TempDir tmp;
  const std::string cfg = "name: x\nseed: 1\n";
  EXPECT_EQ(plan_run(tmp / "missing", cfg).action, RunAction::fresh);

  fs::create_directories(tmp / "empty");
  EXPECT_EQ(plan_run(tmp / "empty", cfg).action, RunAction::fresh);

  write_file(tmp.path() / "done" / "config.yaml", cfg);
  write_file(tmp.path() / "done" / "summary.json", R"({"status": "completed", "eval": []})");
  RunPlan p = plan_run(tmp / "done", cfg);
  EXPECT_EQ(p.action, RunAction::skip);
  EXPECT_FALSE(p.config_mismatch);
  p = plan_run(tmp / "done", "name: x\nseed: 2\n");
  EXPECT_EQ(p.action, RunAction::skip);
  EXPECT_TRUE(p.config_mismatch);

  // A failed run is redone even if it left a checkpoint.
  write_file(tmp.path() / "failed" / "config.yaml", cfg);
  write_file(tmp.path() / "failed" / "checkpoint.safetensors", "x");
  write_file(tmp.path() / "failed" / "status.json", R"({"status": "failed", "exit_code": 2})");
  p = plan_run(tmp / "failed", cfg);
  EXPECT_EQ(p.action, RunAction::fresh);
  EXPECT_NE(p.reason.find("exit 2"), std::string::npos);

  write_file(tmp.path() / "partial" / "config.yaml", cfg);
  write_file(tmp.path() / "partial" / "checkpoint.safetensors", "x");
  write_file(tmp.path() / "partial" / "status.json", R"({"status": "interrupted"})");
  EXPECT_EQ(plan_run(tmp / "partial", cfg).action, RunAction::resume);
  // A checkpoint of another config cannot be resumed: redo.
  p = plan_run(tmp / "partial", "name: y\n");
  EXPECT_EQ(p.action, RunAction::fresh);
  EXPECT_TRUE(p.config_mismatch);

  // A summary that is not "completed" does not count.
  write_file(tmp.path() / "odd" / "summary.json", R"({"status": "stopped"})");
  EXPECT_EQ(plan_run(tmp / "odd", cfg).action, RunAction::fresh);
}

TEST(SweepPlan, FirstDifferenceAndLastLine) {
  EXPECT_EQ(first_difference("a\nb\n", "a\nb\n"), "");
  EXPECT_EQ(first_difference("a\nb\n", "a\nc\n"), "line 2: 'b' vs 'c'");
  EXPECT_EQ(first_difference("a\n", "a\nb\n"), "line 2: '(end)' vs 'b'");
  TempDir tmp;
  write_file(tmp.path() / "log", "one\npelab: error: bad thing\n\n  \n");
  EXPECT_EQ(last_line(tmp / "log"), "pelab: error: bad thing");
  write_file(tmp.path() / "bar", "[##..] 1/4\r[####] 4/4\r\n");
  EXPECT_EQ(last_line(tmp / "bar"), "[####] 4/4");
  EXPECT_EQ(last_line(tmp / "nothing"), "");
}

// ---- the child-process machinery, with a fake pelab -------------------------------------

// A stand-in for `pelab train CONFIG overrides... --out DIR --no-progress [--resume]`: records
// its arguments, fails for rotary seed 1, sleeps when asked, otherwise writes a completed
// summary.json.
const char* kFakePelab = R"(#!/bin/sh
out=""; prev=""; fail=0; slow=0
for a in "$@"; do
  [ "$prev" = "--out" ] && out="$a"
  [ "$a" = "positional.type=rotary" ] && fail=$((fail + 1))
  [ "$a" = "seed=1" ] && fail=$((fail + 1))
  [ "$a" = "training.steps=999" ] && slow=1
  prev="$a"
done
echo "$@" >> "$out/invocations"
if [ $slow = 1 ]; then
  trap 'echo "stopped; continue with --resume" >&2; exit 3' INT
  touch "$out/started"
  while true; do sleep 0.05; done
fi
echo "training..."
if [ $fail = 2 ]; then echo "pelab: error: step 3: the loss is nan" >&2; exit 2; fi
printf '{"status": "completed", "eval": []}\n' > "$out/summary.json"
exit 0
)";

struct FakeSweep {
  TempDir tmp;
  SweepOptions options;
  FakeSweep() {
    write_file(tmp / "c.yaml", kTinyConfig);
    write_file(tmp / "fake-pelab", kFakePelab);
    ::chmod((tmp / "fake-pelab").c_str(), 0755);
    options.config_path = tmp / "c.yaml";
    options.out_dir = tmp / "out";
    options.executable = tmp / "fake-pelab";
    options.jobs = 2;
    options.progress = false;
  }
  fs::path run(const std::string& name) const { return fs::path(tmp / "out") / name; }
};

TEST(SweepProcess, RunsFailsRecordsAndSkips) {
  FakeSweep f;
  SweepResult r = run_sweep(f.options);
  EXPECT_EQ(r.total, 4);
  EXPECT_EQ(r.completed, 3);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.skipped, 0);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(r.tally().find("3 completed"), std::string::npos) << r.tally();
  EXPECT_NE(r.tally().find("1 failed"), std::string::npos) << r.tally();

  // The command line of a run, and its log.
  const std::string args = read_file(f.run("positional.type=none/seed=0") / "invocations");
  EXPECT_NE(args.find("train "), std::string::npos) << args;
  EXPECT_NE(args.find("positional.type=none seed=0 sweep={} --out "), std::string::npos) << args;
  EXPECT_NE(args.find("--no-progress"), std::string::npos) << args;
  EXPECT_EQ(args.find("--resume"), std::string::npos) << args;
  EXPECT_NE(read_file(f.run("positional.type=none/seed=0") / "stdout.log").find("training..."),
            std::string::npos);
  const json ok = json::parse(read_file(f.run("positional.type=none/seed=0") / "status.json"));
  EXPECT_EQ(ok["status"], "completed");

  const json failed =
      json::parse(read_file(f.run("positional.type=rotary/seed=1") / "status.json"));
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["exit_code"], 2);
  EXPECT_EQ(failed["error"], "pelab: error: step 3: the loss is nan");
  EXPECT_TRUE(fs::exists(f.tmp / "out/sweep.json"));
  const json manifest = json::parse(read_file(f.tmp / "out/sweep.json"));
  EXPECT_EQ(manifest["runs"].size(), 4u);
  EXPECT_EQ(manifest["runs"][3]["name"], "positional.type=rotary/seed=1");

  // Again: the completed runs are skipped, the failed one is redone (and fails again).
  r = run_sweep(f.options);
  EXPECT_EQ(r.skipped, 3);
  EXPECT_EQ(r.completed, 0);
  EXPECT_EQ(r.failed, 1);
  const std::string again = read_file(f.run("positional.type=rotary/seed=1") / "invocations");
  EXPECT_EQ(std::count(again.begin(), again.end(), '\n'), 2);
  EXPECT_EQ(read_file(f.run("positional.type=none/seed=0") / "invocations").size(), args.size());

  // A run with a checkpoint (of the same config) and no summary is resumed.
  const fs::path partial = f.run("positional.type=none/seed=1");
  fs::remove(partial / "summary.json");
  write_file(partial / "checkpoint.safetensors", "x");
  write_file(
      partial / "config.yaml",
      to_yaml(load_experiment(f.tmp / "c.yaml", {"positional.type=none", "seed=1", "sweep={}"})));
  r = run_sweep(f.options);
  EXPECT_EQ(r.completed, 1);
  EXPECT_EQ(r.skipped, 2);
  const std::string resumed = read_file(partial / "invocations");
  EXPECT_NE(resumed.substr(resumed.find('\n') + 1).find("--resume"), std::string::npos) << resumed;
  EXPECT_NE(read_file(partial / "stdout.log").find("resumed by pelab sweep"), std::string::npos);
}

TEST(SweepProcess, MismatchedCompletedRunIsAnError) {
  FakeSweep f;
  write_file(f.run("positional.type=none/seed=0") / "config.yaml", "name: other\n");
  write_file(f.run("positional.type=none/seed=0") / "summary.json", R"({"status": "completed"})");
  try {
    run_sweep(f.options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("different config"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(f.run("positional.type=rotary/seed=0")));
}

TEST(SweepProcess, OneSweepPerDirectory) {
  FakeSweep f;
  fs::create_directories(f.tmp / "out");
  const int fd = ::open((f.tmp / "out/.sweep.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  try {
    run_sweep(f.options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another pelab sweep"), std::string::npos) << e.what();
  }
  ::close(fd);
  EXPECT_EQ(run_sweep(f.options).completed, 3);
}

TEST(SweepProcess, MissingExecutableFailsEveryRun) {
  FakeSweep f;
  f.options.executable = f.tmp / "no-such-pelab";
  const SweepResult r = run_sweep(f.options);
  EXPECT_EQ(r.failed, 4);
  const json s = json::parse(read_file(f.run("positional.type=none/seed=0") / "status.json"));
  EXPECT_EQ(s["status"], "failed");
  EXPECT_NE(s["error"].get<std::string>().find("cannot start"), std::string::npos);
}

TEST(SweepProcess, SigintStopsLaunchingAndForwards) {
  FakeSweep f;
  f.options.overrides = {"training.steps=999"};  // the fake runs until interrupted
  f.options.jobs = 2;
  std::thread interrupter([&] {
    // Wait until both first runs have started (the handler is installed by then).
    for (int i = 0; i < 200; ++i) {
      if (fs::exists(f.run("positional.type=none/seed=0") / "started") &&
          fs::exists(f.run("positional.type=none/seed=1") / "started"))
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(::getpid(), SIGINT);
  });
  const SweepResult r = run_sweep(f.options);
  interrupter.join();
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.interrupted, 2);
  EXPECT_EQ(r.not_started, 2);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.exit_code(), 3);
  const json s = json::parse(read_file(f.run("positional.type=none/seed=0") / "status.json"));
  EXPECT_EQ(s["status"], "interrupted");
  EXPECT_EQ(s["exit_code"], 3);
  EXPECT_FALSE(fs::exists(f.run("positional.type=rotary/seed=0")));
}

// ---- compare on synthetic runs ----------------------------------------------------------

struct FakeRun {
  std::string scheme;
  uint64_t seed;
  std::vector<double> acc;  // sequence accuracy at lengths 8, 16, 32, 64
  std::string task = "shift";
};

// Writes a completed run: config.yaml, summary.json (training lengths 1–16) and
// per_position.csv (accuracy at length 64, position p: acc[3] + p / 100).
void write_run(const fs::path& dir, const FakeRun& r) {
  std::string config = fmt::format(
      "name: demo\nseed: {}\nthreads: 1\nmodel:\n  d_model: 16\n  embed_scale: {}\n"
      "positional:\n  type: {}\n",
      r.seed, r.scheme == "none" ? "1" : "4", r.scheme);
  if (r.scheme == "rotary") config += "  base: 10000\n";
  config += fmt::format("task:\n  name: {}\n  min_length: 1\n  max_length: 16\n", r.task);
  config += "evaluation:\n  lengths: [8, 16, 32, 64]\n";
  write_file(dir / "config.yaml", config);
  json summary = {{"status", "completed"},
                  {"seed", r.seed},
                  {"scheme", r.scheme},
                  {"train_lengths", {1, 16}},
                  {"eval", json::array()}};
  const int64_t lengths[] = {8, 16, 32, 64};
  for (int i = 0; i < 4; ++i)
    summary["eval"].push_back({{"length", lengths[i]},
                               {"sequence_accuracy", r.acc[i]},
                               {"token_accuracy", (1 + r.acc[i]) / 2},
                               {"loss", 0.1},
                               {"in_training", lengths[i] <= 16}});
  write_file(dir / "summary.json", summary.dump(2));
  std::string pp = "length,position,scored,accuracy,loss\n";
  for (int p = 0; p < 4; ++p) pp += fmt::format("16,{},10,1.0,0.1\n", p);
  for (int p = 0; p < 6; ++p) pp += fmt::format("64,{},10,{:.6f},0.1\n", p, r.acc[3] + p / 100.0);
  write_file(dir / "per_position.csv", pp);
}

// none: seeds 0–2; rotary: seeds 0–2 (plus base: 10000); one failed and one incomplete run.
void write_demo(const fs::path& root) {
  write_run(root / "positional.type=none/seed=0", {"none", 0, {0.9, 0.8, 0.1, 0.0}});
  write_run(root / "positional.type=none/seed=1", {"none", 1, {0.7, 0.6, 0.3, 0.0}});
  write_run(root / "positional.type=none/seed=2", {"none", 2, {0.8, 0.7, 0.2, 0.0}});
  write_run(root / "positional.type=rotary/seed=0", {"rotary", 0, {1.0, 1.0, 0.5, 0.25}});
  write_run(root / "positional.type=rotary/seed=1", {"rotary", 1, {1.0, 0.9, 0.4, 0.25}});
  write_run(root / "positional.type=rotary/seed=10", {"rotary", 10, {1.0, 0.8, 0.3, 0.25}});
  const fs::path failed = root / "positional.type=alibi/seed=0";
  write_file(failed / "config.yaml", "name: demo\nseed: 0\npositional:\n  type: alibi\n");
  write_file(failed / "status.json",
             R"({"status": "failed", "exit_code": 2, "error": "pelab: error: boom"})");
  const fs::path partial = root / "positional.type=alibi/seed=1";
  write_file(partial / "config.yaml", "name: demo\nseed: 1\npositional:\n  type: alibi\n");
  write_file(partial / "checkpoint.safetensors", "x");
}

TEST(CompareStats, SampleStd) {
  const Stat s = summarize({0.9, 0.7, 0.8}, {0, 1, 2});
  EXPECT_NEAR(s.mean, 0.8, 1e-12);
  EXPECT_NEAR(s.std, 0.1, 1e-12);  // sqrt((0.01 + 0.01 + 0) / 2)
  EXPECT_EQ(s.n, 3);
  const Stat one = summarize({0.5});
  EXPECT_EQ(one.n, 1);
  EXPECT_TRUE(std::isnan(one.std));
  EXPECT_EQ(format_stat(one), "0.50");
  EXPECT_EQ(format_stat(s), "0.80 ± 0.10");
  EXPECT_EQ(format_stat(summarize({})), "—");
  const Stat two = summarize({1.0, 0.0});
  EXPECT_NEAR(two.std, std::sqrt(0.5), 1e-12);
}

TEST(CompareFind, RunsStatusesAndNaturalOrder) {
  TempDir tmp;
  write_demo(tmp.path());
  const std::vector<RunRecord> runs = find_runs({tmp.path().string()});
  ASSERT_EQ(runs.size(), 8u);
  std::vector<std::string> names;
  for (const RunRecord& r : runs) names.push_back(fs::relative(r.dir, tmp.path()).string());
  EXPECT_EQ(names[0], "positional.type=alibi/seed=0");
  EXPECT_EQ(names[6], "positional.type=rotary/seed=1");
  EXPECT_EQ(names[7], "positional.type=rotary/seed=10");  // 10 after 1 (and after 2 if any)
  EXPECT_EQ(runs[0].status, "failed");
  EXPECT_EQ(runs[0].detail, "exit 2: pelab: error: boom");
  EXPECT_EQ(runs[1].status, "incomplete");
  EXPECT_EQ(runs[2].status, "completed");
  EXPECT_EQ(runs[2].config.at("positional.type"), "none");
  EXPECT_EQ(runs[2].config.at("evaluation.lengths"), "[8, 16, 32, 64]");
  EXPECT_EQ(runs[7].seed, 10u);
  EXPECT_EQ(runs[7].train_max_length, 16);
  ASSERT_EQ(runs[7].eval.size(), 4u);
  EXPECT_TRUE(runs[7].eval[1].in_training);
  EXPECT_FALSE(runs[7].eval[2].in_training);
}

// Links that lead back up (`ln -s . runs/loop`) are followed once: the walk remembers where it
// has been, so eight links to the directory itself neither repeat the run nor take the walk
// 8^8 directories deep. The control: a link to a run elsewhere is still followed.
TEST(CompareFind, LinksBackUpAreWalkedOnce) {
  TempDir tmp;
  const fs::path root = tmp / "runs";
  write_run(root / "one", {"rotary", 0, {1.0, 1.0, 0.5, 0.25}});
  for (int i = 0; i < 8; ++i) fs::create_directory_symlink(".", root / fmt::format("loop{}", i));
  write_run(tmp / "elsewhere/two", {"none", 1, {0.9, 0.8, 0.1, 0.0}});
  fs::create_directory_symlink(tmp / "elsewhere", root / "linked");
  const std::vector<RunRecord> runs = find_runs({root.string()});
  ASSERT_EQ(runs.size(), 2u);
}

TEST(CompareFind, SweepJsonOrderAndNotStarted) {
  TempDir tmp;
  write_run(tmp.path() / "seed=0", {"none", 0, {1, 1, 1, 1}});
  write_run(tmp.path() / "seed=1", {"none", 1, {1, 1, 1, 1}});
  write_file(tmp.path() / "sweep.json",
             R"({"runs": [{"name": "seed=1"}, {"name": "seed=0"}, {"name": "seed=2"}]})");
  const std::vector<RunRecord> runs = find_runs({tmp.path().string()});
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(fs::path(runs[0].dir).filename(), "seed=1");
  EXPECT_EQ(fs::path(runs[1].dir).filename(), "seed=0");
  EXPECT_EQ(runs[2].status, "not started");
}

TEST(CompareGroups, KeysAreTheFewestThatTellRunsApart) {
  TempDir tmp;
  write_demo(tmp.path());
  const std::vector<RunRecord> runs = find_runs({tmp.path().string()});
  std::vector<RunRecord> done;
  for (const RunRecord& r : runs)
    if (r.status == "completed") done.push_back(r);
  // positional.base (rotary only) and model.embed_scale go with positional.type; seed is
  // never a group key.
  EXPECT_EQ(grouping_keys(done), (std::vector<std::string>{"positional.type"}));

  // Two tasks as well: two keys.
  write_run(tmp.path() / "copy/positional.type=none/seed=0", {"none", 0, {1, 1, 1, 1}, "copy"});
  const std::vector<RunRecord> more = find_runs({tmp.path().string()});
  const Comparison c = compare_runs(more, Metric::sequence_accuracy);
  EXPECT_EQ(c.group_keys, (std::vector<std::string>{"positional.type", "task.name"}));
  ASSERT_EQ(c.groups.size(), 3u);
  EXPECT_EQ(c.groups[0].label, "none / copy");
  EXPECT_EQ(c.groups[1].label, "none / shift");
  EXPECT_EQ(c.groups[2].label, "rotary / shift");
}

TEST(CompareGroups, FailedRunsKeepTheLabels) {
  TempDir tmp;
  write_run(tmp.path() / "positional.type=rotary/seed=0", {"rotary", 0, {1, 1, 0.5, 0}});
  const fs::path failed = tmp.path() / "positional.type=none/seed=0";
  write_file(failed / "config.yaml", "name: demo\nseed: 0\npositional:\n  type: none\n");
  write_file(failed / "status.json",
             R"j({"status": "failed", "signal": "11 (Segmentation fault)"})j");
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  EXPECT_EQ(c.group_keys, (std::vector<std::string>{"positional.type"}));
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].label, "rotary");
  ASSERT_EQ(c.excluded.size(), 1u);
  EXPECT_EQ(c.excluded[0].detail, "signal 11 (Segmentation fault)");
}

TEST(CompareGroups, OnlySeedsDifferOneGroupNamedAfterTheExperiment) {
  TempDir tmp;
  write_run(tmp.path() / "seed=0", {"rotary", 0, {1, 1, 0.5, 0}});
  write_run(tmp.path() / "seed=1", {"rotary", 1, {1, 1, 0.7, 0}});
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  EXPECT_TRUE(c.group_keys.empty());
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].label, "demo");
  EXPECT_NEAR(c.groups[0].lengths[2].stat.mean, 0.6, 1e-12);
}

// A sweep of one scheme (an axis with one value) is that scheme's group, named after it, not
// after the experiment; the seed and the selected key do not name it.
TEST(CompareGroups, AnAxisOfOneValueNamesTheOneGroup) {
  TempDir tmp;
  write_run(tmp.path() / "positional=relative/training.lr=0.001/seed=0",
            {"relative", 0, {1, 1, 0.5, 0}});
  write_run(tmp.path() / "positional=relative/training.lr=0.001/seed=1",
            {"relative", 1, {1, 1, 0.7, 0}});
  const std::vector<RunRecord> runs = find_runs({tmp.path().string()});
  const Comparison selected =
      compare_runs(runs, Metric::sequence_accuracy, false, {.select = "training.lr"});
  EXPECT_TRUE(selected.group_keys.empty());
  ASSERT_EQ(selected.groups.size(), 1u);
  EXPECT_EQ(selected.groups[0].label, "relative");
  const Comparison plain = compare_runs(runs, Metric::sequence_accuracy, false);
  EXPECT_EQ(plain.groups[0].label, "relative / 0.001");
}

// A sweep over a key config.yaml leaves out at its default (rotary's scaling.factor, 1): the
// default's runs are labelled with it, not as if the key were absent.
TEST(CompareGroups, AKeyLeftOutAtItsDefaultIsLabelledWithIt) {
  TempDir tmp;
  for (const std::string factor : {"1", "2"})
    for (uint64_t seed : {0, 1}) {
      const fs::path dir =
          tmp.path() / ("positional.scaling.factor=" + factor) / ("seed=" + std::to_string(seed));
      write_run(dir, {"rotary", seed, {1, 1, 0.5, 0}});
      std::string config = read_file(dir / "config.yaml");
      const std::string scaling =
          "  scaling:\n    type: pi\n" + (factor == "1" ? "" : "    factor: " + factor + "\n");
      config.insert(config.find("task:"), scaling);
      write_file(dir / "config.yaml", config);
    }
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  EXPECT_EQ(c.group_keys, (std::vector<std::string>{"positional.scaling.factor"}));
  ASSERT_EQ(c.groups.size(), 2u);
  EXPECT_EQ(c.groups[0].label, "1");
  EXPECT_EQ(c.groups[1].label, "2");
}

// The steps each run took, averaged per group: where stop_when ended it, so the reader sees
// at what point of training each group's extrapolation was measured.
TEST(CompareStats, StepsPerGroup) {
  TempDir tmp;
  for (const auto& [seed, steps] : {std::pair{0, 300}, std::pair{1, 500}}) {
    const fs::path dir = tmp.path() / fmt::format("seed={}", seed);
    write_run(dir, {"rotary", static_cast<uint64_t>(seed), {1, 1, 0.5, 0}});
    json summary = json::parse(read_file(dir / "summary.json"));
    summary["steps"] = steps;
    write_file(dir / "summary.json", summary.dump(2));
  }
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].steps.n, 2);
  EXPECT_EQ(c.groups[0].steps.mean, 400);
  EXPECT_NE(comparison_markdown(c).find("| demo | 2 | 2 | 400 |"), std::string::npos)
      << comparison_markdown(c);
}

TEST(CompareStats, MeansStdsAndInDistributionSplit) {
  TempDir tmp;
  write_demo(tmp.path());
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  EXPECT_EQ(c.completed_runs, 6);
  EXPECT_EQ(c.excluded.size(), 2u);
  EXPECT_EQ(c.lengths, (std::vector<int64_t>{8, 16, 32, 64}));
  ASSERT_EQ(c.groups.size(), 2u);
  const Group& none = c.groups[0];
  EXPECT_EQ(none.label, "none");
  EXPECT_EQ(none.train_max_length, 16);
  ASSERT_EQ(none.lengths.size(), 4u);
  EXPECT_TRUE(none.lengths[0].in_training);
  EXPECT_TRUE(none.lengths[1].in_training);
  EXPECT_FALSE(none.lengths[2].in_training);
  // n = 8: 0.9, 0.7, 0.8 → 0.8 ± 0.1;  n = 32: 0.1, 0.3, 0.2 → 0.2 ± 0.1
  EXPECT_NEAR(none.lengths[0].stat.mean, 0.8, 1e-12);
  EXPECT_NEAR(none.lengths[0].stat.std, 0.1, 1e-12);
  EXPECT_NEAR(none.lengths[2].stat.mean, 0.2, 1e-12);
  EXPECT_EQ(none.lengths[0].stat.n, 3);
  // In-distribution per seed: (0.9+0.8)/2 = 0.85, 0.65, 0.75 → 0.75 ± 0.1.
  EXPECT_NEAR(none.in_distribution.mean, 0.75, 1e-12);
  EXPECT_NEAR(none.in_distribution.std, 0.1, 1e-12);
  // Extrapolation per seed: 0.05, 0.15, 0.1 → 0.1 ± 0.05.
  EXPECT_NEAR(none.extrapolation.mean, 0.1, 1e-12);
  EXPECT_NEAR(none.extrapolation.std, 0.05, 1e-12);

  const Group& rotary = c.groups[1];
  EXPECT_EQ(rotary.lengths[1].stat.seeds, (std::vector<uint64_t>{0, 1, 10}));
  EXPECT_NEAR(rotary.lengths[1].stat.mean, 0.9, 1e-12);  // 1.0, 0.9, 0.8
  EXPECT_NEAR(rotary.lengths[1].stat.std, 0.1, 1e-12);
  EXPECT_NEAR(rotary.lengths[3].stat.std, 0.0, 1e-12);
  // Extrapolation per seed: 0.375, 0.325, 0.275 → 0.325 ± 0.05.
  EXPECT_NEAR(rotary.extrapolation.mean, 0.325, 1e-12);
  EXPECT_NEAR(rotary.extrapolation.std, 0.05, 1e-12);

  // Token accuracy = (1 + sequence accuracy) / 2 in the fake runs.
  const Comparison t = compare_runs(find_runs({tmp.path().string()}), Metric::token_accuracy);
  EXPECT_NEAR(t.groups[0].lengths[0].stat.mean, 0.9, 1e-12);
  EXPECT_NEAR(t.groups[0].lengths[0].stat.std, 0.05, 1e-12);
  // Whatever the metric, a group keeps both accuracies, for the cells that show them side by
  // side: a token comparison still knows in-distribution sequence accuracy (0.75 per seed).
  EXPECT_NEAR(t.groups[0].in_distribution.mean, (1 + 0.75) / 2, 1e-12);
  EXPECT_NEAR(t.groups[0].in_distribution_sequence.mean, 0.75, 1e-12);
  EXPECT_NEAR(t.groups[0].extrapolation_sequence.mean, 0.1, 1e-12);
  EXPECT_NEAR(none.in_distribution_sequence.mean, none.in_distribution.mean, 1e-12);

  // By position at the longest length (64), averaged over seeds: none 0 + p/100.
  EXPECT_EQ(c.position_length, 64);
  ASSERT_EQ(none.by_position.size(), 6u);
  EXPECT_NEAR(none.by_position[5].mean, 0.05, 1e-9);
  EXPECT_NEAR(rotary.by_position[2].mean, 0.27, 1e-9);
  EXPECT_EQ(rotary.by_position[2].n, 3);
  EXPECT_EQ(none.last_train_position, 3);  // the last position at length 16
}

// Sequence accuracy stands left of the slash and token accuracy right of it, whichever is the
// table's metric (the one with the interval); a statistic with no values adds nothing.
TEST(CompareOutput, SequenceAndTokenCellsKeepTheirSides) {
  const Stat sequence = summarize({0.0, 0.02, 0.04}), token = summarize({0.9, 0.91, 0.92});
  EXPECT_EQ(with_token(format_interval(sequence), token).substr(0, 4), "0.02");
  EXPECT_EQ(with_token("0.02", token), "0.02 / 0.91");
  EXPECT_EQ(with_sequence(sequence, "0.91"), "0.02 / 0.91");
  EXPECT_EQ(with_token("0.02", Stat{}), "0.02");
  EXPECT_EQ(with_sequence(Stat{}, "0.91"), "0.91");
}

TEST(CompareOutput, MarkdownAndCsv) {
  TempDir tmp;
  write_demo(tmp.path());
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  const std::string md = comparison_markdown(c);
  EXPECT_NE(md.find("## Sequence accuracy by length"), std::string::npos) << md;
  EXPECT_NE(
      md.find("| positional.type | n | 8* | 16* | 32 | 64 | in-distribution | extrapolation |"),
      std::string::npos)
      << md;
  // Cells: sequence accuracy's mean over seeds [95% bootstrap interval] / token accuracy's
  // mean (the fake runs' token accuracy is (1 + sequence accuracy) / 2). With three seeds the
  // interval's ends are the smallest and largest values (each drawn three times has chance
  // 1/27 > 2.5%). none never reaches 0.95 in distribution; rotary's seed 10 (0.90) does not
  // either, so both groups' extrapolation carries the mark.
  EXPECT_NE(md.find("each cell: sequence accuracy, mean over seeds [95% bootstrap interval] / "
                    "token accuracy, mean over seeds"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| none (did not learn) | 3 | 0.80 [0.70, 0.90] / 0.90 | 0.70 [0.60, 0.80] / "
                    "0.85 | 0.20 [0.10, 0.30] / 0.60 † | 0.00 [0.00, 0.00] / 0.50 † | 0.75 "
                    "[0.65, 0.85] / 0.88 | 0.10 [0.05, 0.15] / 0.55 † |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| rotary (learned 2 of 3) | 3 | 1.00 [1.00, 1.00] / 1.00 | 0.90 [0.80, 1.00] "
                    "/ 0.95 | 0.40 [0.30, 0.50] / 0.70 † | 0.25 [0.25, 0.25] / 0.62 † |"),
            std::string::npos)
      << md;
  // Over seeds: mean [interval] / token mean, median and max of each seed's in-distribution
  // and extrapolation means (no steps: these summaries record none).
  EXPECT_NE(md.find("| rotary (learned 2 of 3) | 3 | 2 | — | 0.95 [0.90, 1.00] / 0.97 | 0.95 | "
                    "1.00 | 0.33 [0.28, 0.38] / 0.66 † | 0.33 † | 0.38 † |"),
            std::string::npos)
      << md;
  // A token-accuracy comparison's cells are token accuracy already: nothing beside them.
  const std::string tok = comparison_markdown(
      compare_runs(find_runs({tmp.path().string()}), Metric::token_accuracy, false));
  EXPECT_NE(tok.find("| none (did not learn) | 3 | 0.90 [0.85, 0.95] | "), std::string::npos)
      << tok;
  EXPECT_NE(md.find("Not included (2 runs)"), std::string::npos) << md;
  EXPECT_NE(md.find("positional.type=alibi/seed=0`: failed: exit 2: pelab: error: boom"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("positional.type=alibi/seed=1`: incomplete: a checkpoint but no summary.json"),
            std::string::npos)
      << md;

  const std::string csv = comparison_csv(c);
  std::stringstream ss(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 9u);  // header + 2 groups × 4 lengths
  EXPECT_EQ(lines[0], "group,length,in_training,mean,std,n,seeds,values,median,max,ci_low,ci_high");
  EXPECT_EQ(lines[1],
            "none,8,true,0.800000,0.100000,3,0;1;2,0.900000;0.700000;0.800000,0.800000,0.900000,"
            "0.700000,0.900000");
  EXPECT_EQ(lines[7],
            "rotary,32,false,0.400000,0.100000,3,0;1;10,0.500000;0.400000;0.300000,0.400000,"
            "0.500000,0.300000,0.500000");

  const json j = json::parse(comparison_json(c));
  EXPECT_EQ(j["metric"], "sequence_accuracy");
  EXPECT_EQ(j["groups"][0]["keys"]["positional.type"], "none");
  EXPECT_NEAR(j["groups"][0]["extrapolation"]["mean"].get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(j["groups"][0]["extrapolation"]["max"].get<double>(), 0.15, 1e-12);
  EXPECT_NEAR(j["groups"][0]["extrapolation"]["ci95"][1].get<double>(), 0.15, 1e-12);
  EXPECT_EQ(j["groups"][0]["learned_runs"], 0);
  EXPECT_EQ(j["groups"][1]["learned_runs"], 2);
  EXPECT_EQ(j["excluded"].size(), 2u);
}

TEST(CompareOutput, SingleSeedAndMissingLengths) {
  TempDir tmp;
  write_run(tmp.path() / "a/seed=0", {"none", 0, {0.5, 0.5, 0.5, 0.5}});
  write_run(tmp.path() / "b/seed=0", {"rotary", 0, {1, 1, 1, 1}});
  // rotary seed 1 lacks length 64.
  write_run(tmp.path() / "b/seed=1", {"rotary", 1, {1, 1, 1, 1}});
  json s = json::parse(read_file(tmp.path() / "b/seed=1/summary.json"));
  s["eval"].erase(3);
  write_file(tmp.path() / "b/seed=1/summary.json", s.dump());
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  const std::string md = comparison_markdown(c);
  // Token accuracy beside sequence accuracy: (1 + 0.5) / 2 in the fake runs.
  EXPECT_NE(md.find("| none (did not learn) | 1 | 0.50 / 0.75 | 0.50 / 0.75 | 0.50 / 0.75 † | "
                    "0.50 / 0.75 † | 0.50 / 0.75 | 0.50 / 0.75 † |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 1.00 / 1.00 (n=1) |"), std::string::npos) << md;
  const std::string csv = comparison_csv(c);
  EXPECT_NE(csv.find("none,8,true,0.500000,,1,0,0.500000,0.500000,0.500000,0.500000,0.500000\n"),
            std::string::npos)
      << csv;
}

// A group whose settings cannot represent its task (relative clipped at k = 2 on shift by 2,
// docs/model.md "Representability") is labelled so and its reason listed; k = 16 (rows past
// the longest training distance, 15) only beyond training; k = 3, the control, is neither.
TEST(CompareOutput, NotRepresentableGroupsAreMarked) {
  TempDir tmp;
  for (const int k : {2, 3, 16}) {
    const fs::path dir = tmp.path() / fmt::format("positional.max_distance={}/seed=0", k);
    write_run(dir, {"relative", 0, {1, 1, 0.5, 0.2}});
    std::string config = read_file(dir / "config.yaml");
    const std::string type = "  type: relative\n";
    config.replace(config.find(type), type.size(), type + fmt::format("  max_distance: {}\n", k));
    write_file(dir / "config.yaml", config);
  }
  const Comparison c =
      compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy, false);
  ASSERT_EQ(c.groups.size(), 3u);
  EXPECT_NE(c.groups[0].not_representable.find("k = 2 does not exceed the offset the answer "
                                               "needs (2)"),
            std::string::npos)
      << c.groups[0].not_representable;
  EXPECT_EQ(c.groups[1].not_representable, "");
  EXPECT_NE(c.groups[2].not_representable, "");
  EXPECT_EQ(c.groups[2].not_representable_in_distribution, "");
  EXPECT_EQ(group_label(c.groups[2]), "16 (not representable beyond training)");
  EXPECT_EQ(group_label(c.groups[0]), "2 (not representable at these settings)");
  EXPECT_EQ(group_label(c.groups[1]), "3");
  const std::string md = comparison_markdown(c);
  EXPECT_NE(md.find("| 2 (not representable at these settings) | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Not representable at these settings (the scheme cannot single out what "
                    "the task asks"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- 2: relative's k = 2 does not exceed"), std::string::npos) << md;
  EXPECT_NE(md.find("- 16 (beyond training only): relative's k = 16 exceeds"), std::string::npos)
      << md;
  EXPECT_EQ(json::parse(comparison_json(c))["groups"][1]["not_representable"], "");
}

// Learned: a run's stop_when outcome decides when it has one; otherwise its validation score
// (the in-distribution evaluation for runs without one) against the threshold.
TEST(CompareProtocol, LearnedFollowsStopWhenThenValidation) {
  RunRecord r;
  r.eval = {{8, true, 0.97, 0.99}, {32, false, 0.1, 0.5}};
  const CompareRule rule;  // learned_at 0.95
  EXPECT_TRUE(run_learned(r, Metric::sequence_accuracy, rule));
  r.validation_sequence_accuracy = 0.90;  // the validation score stands before the evaluation
  EXPECT_FALSE(run_learned(r, Metric::sequence_accuracy, rule));
  r.validation_token_accuracy = 0.96;
  EXPECT_TRUE(run_learned(r, Metric::token_accuracy, rule));
  r.stop_when_met = false;  // the criterion of the run itself decides
  EXPECT_FALSE(run_learned(r, Metric::token_accuracy, rule));
  r.stop_when_met = true;
  EXPECT_TRUE(run_learned(r, Metric::sequence_accuracy, rule));
  CompareRule strict;
  strict.learned_at = 0.99;
  r.stop_when_met.reset();
  EXPECT_FALSE(run_learned(r, Metric::token_accuracy, strict));
}

// The lr rule: per group, the lr with the best mean validation score is kept, whatever the
// extrapolation of the others; the rule comes from the runs' own sweep.select.
TEST(CompareProtocol, SelectsTheLrWithTheBestValidationScore) {
  TempDir tmp;
  struct Lr {
    std::string lr;
    double validation;
    double acc32;
  };
  const std::vector<Lr> lrs = {{"0.0001", 0.60, 0.9}, {"0.001", 0.98, 0.3}, {"0.01", 0.97, 0.5}};
  for (const std::string scheme : {"none", "rotary"})
    for (const Lr& lr : lrs)
      for (uint64_t seed : {0, 1}) {
        const fs::path dir = tmp.path() / ("positional.type=" + scheme) / ("training.lr=" + lr.lr) /
                             fmt::format("seed={}", seed);
        write_run(dir, {scheme, seed, {1.0, 1.0, lr.acc32, 0.0}});
        write_file(dir / "config.yaml",
                   read_file(dir / "config.yaml") + "training:\n  lr: " + lr.lr +
                       "\nsweep:\n  positional: [none, rotary]\n  training.lr: [0.0001, 0.001, "
                       "0.01]\n  select: training.lr\n");
        json s = json::parse(read_file(dir / "summary.json"));
        s["validation"] = {{"sequence_accuracy", lr.validation + 0.01 * seed},
                           {"token_accuracy", lr.validation}};
        write_file(dir / "summary.json", s.dump());
      }
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  EXPECT_EQ(c.rule.select, "training.lr");
  EXPECT_EQ(c.group_keys, std::vector<std::string>{"positional.type"});
  ASSERT_EQ(c.groups.size(), 2u);
  for (const Group& g : c.groups) {
    EXPECT_EQ(g.selected, "0.001") << g.label;
    ASSERT_EQ(g.candidates.size(), 3u);
    EXPECT_NEAR(g.candidates[0].validation, 0.605, 1e-12);
    EXPECT_EQ(g.candidates[1].runs, 2);
    EXPECT_EQ(g.runs.size(), 2u);                     // only the selected lr's runs
    EXPECT_NEAR(g.lengths[2].stat.mean, 0.3, 1e-12);  // not the best extrapolation (0.9)
  }
  const std::string md = comparison_markdown(c);
  EXPECT_NE(md.find("| none | 0.0001: 0.605 (2); 0.001: 0.985 (2); 0.01: 0.975 (2) | 0.001 |"),
            std::string::npos)
      << md;
  // The same rule given on the command line, for runs whose sweep did not name it.
  CompareRule by_hand;
  by_hand.select = "training.lr";
  EXPECT_EQ(compare_runs(find_runs({tmp.path().string()}), Metric::token_accuracy, false, by_hand)
                .groups[0]
                .selected,
            "0.001");
}

// A run whose training diverged (exit code 4) did not learn: it counts in its group, in the
// learned fraction and in the lr selection (validation 0), and is listed, never dropped.
TEST(CompareProtocol, DivergedRunsCountAsRunsThatDidNotLearn) {
  TempDir tmp;
  const auto add = [&](const std::string& lr, uint64_t seed, double validation, bool diverge) {
    const fs::path dir = tmp.path() / ("training.lr=" + lr) / fmt::format("seed={}", seed);
    write_run(dir, {"rotary", seed, {1.0, 1.0, 0.5, 0.0}});
    write_file(dir / "config.yaml",
               read_file(dir / "config.yaml") + "training:\n  lr: " + lr +
                   "\nsweep:\n  training.lr: [0.001, 0.01]\n  select: training.lr\n");
    if (diverge) {
      fs::remove(dir / "summary.json");
      fs::remove(dir / "per_position.csv");
      write_file(dir / "status.json", R"({"status": "failed", "exit_code": 4, "error": )"
                                      R"("pelab: error: step 7: the loss is nan"})");
      return;
    }
    json s = json::parse(read_file(dir / "summary.json"));
    s["validation"] = {{"sequence_accuracy", validation}, {"token_accuracy", validation}};
    s["stop_when"] = {{"met", validation >= 0.95}};
    write_file(dir / "summary.json", s.dump());
  };
  // lr 0.01: one seed at 0.99, the other diverged: mean validation 0.495, below lr 0.001's 0.9.
  add("0.001", 0, 0.96, false);
  add("0.001", 1, 0.84, false);
  add("0.01", 0, 0.99, false);
  add("0.01", 1, 0, true);
  const std::vector<RunRecord> runs = find_runs({tmp.path().string()});
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[3].status, "diverged");
  EXPECT_EQ(runs[3].detail, "exit 4: pelab: error: step 7: the loss is nan");
  EXPECT_FALSE(run_learned(runs[3], Metric::sequence_accuracy, {}));
  Comparison c = compare_runs(runs, Metric::sequence_accuracy, false);
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].selected, "0.001");
  EXPECT_NEAR(c.groups[0].candidates[1].validation, 0.495, 1e-12);
  EXPECT_EQ(c.groups[0].candidates[1].runs, 2);
  EXPECT_EQ(c.completed_runs, 3);
  EXPECT_TRUE(c.excluded.empty());
  ASSERT_EQ(c.diverged.size(), 1u);

  // Selected by hand, the lr with the diverged run: 1 of 2 learned, numbers from the other.
  CompareRule keep_high;
  keep_high.select = "training.lr";
  std::vector<RunRecord> high;
  for (const RunRecord& r : runs)
    if (r.config.at("training.lr") == "0.01") high.push_back(r);
  c = compare_runs(high, Metric::sequence_accuracy, false, keep_high);
  const Group& g = c.groups.at(0);
  EXPECT_EQ(g.runs.size(), 1u);
  EXPECT_EQ(g.diverged.size(), 1u);
  EXPECT_EQ(g.trained_runs(), 2);
  EXPECT_EQ(g.learned_runs, 1);
  EXPECT_FALSE(g.all_learned());
  EXPECT_EQ(g.in_distribution.n, 1);
  EXPECT_EQ(group_label(g), "demo (learned 1 of 2)");
  const std::string md = comparison_markdown(c);
  EXPECT_NE(md.find("Diverged (1 run; each scores 0 in the selection of `training.lr`; those "
                    "at the value selected also count in their group as runs that did not learn"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("seed=1`: exit 4: pelab: error: step 7: the loss is nan"), std::string::npos)
      << md;
  const json j = json::parse(comparison_json(c));
  EXPECT_EQ(j["groups"][0]["diverged"].size(), 1u);
  EXPECT_EQ(j["diverged"][0]["detail"], "exit 4: pelab: error: step 7: the loss is nan");

  // Every run of a group diverged: the group stands, with no numbers and nothing learned.
  std::vector<RunRecord> only_diverged = {runs[3]};
  c = compare_runs(only_diverged, Metric::sequence_accuracy, false);
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_TRUE(c.groups[0].runs.empty());
  EXPECT_EQ(c.groups[0].first_run(), runs[3].dir);
  EXPECT_EQ(c.groups[0].learned_runs, 0);
  EXPECT_EQ(c.completed_runs, 0);
}

TEST(CompareOutput, WritesFilesAndSaysWhenGnuplotIsMissing) {
  TempDir tmp;
  write_demo(tmp.path());
  CompareOptions o;
  o.dirs = {tmp.path().string()};
  o.out_dir = tmp / "report";
  o.gnuplot = "/nonexistent/gnuplot";
  const CompareOutput out = run_compare(o);
  EXPECT_NE(out.plot_message.find("gnuplot not found"), std::string::npos) << out.plot_message;
  for (const char* f : {"compare.md", "compare.csv", "compare.json"})
    EXPECT_TRUE(fs::exists(fs::path(tmp / "report") / f)) << f;
  EXPECT_EQ(out.written.size(), 3u);
  EXPECT_EQ(read_file(fs::path(tmp / "report") / "compare.md"), out.markdown);

  CompareOptions none;
  none.dirs = {tmp / "report"};
  EXPECT_THROW(run_compare(none), Error);
}

TEST(ComparePlot, ScriptsHoldDataTitlesAndTrainingMark) {
  TempDir tmp;
  write_demo(tmp.path());
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  const std::string s = length_plot_script(c, {{"pngcairo size 1000,600", "a.png"}});
  EXPECT_NE(s.find("$g0 << EOD"), std::string::npos) << s;
  EXPECT_NE(s.find("8 0.8 0.7 0.9 3\n"), std::string::npos) << s;  // mean, 95% interval, n
  EXPECT_NE(s.find("set arrow 1 from 16, graph 0 to 16, graph 1"), std::string::npos) << s;
  EXPECT_NE(s.find("with yerrorlines"), std::string::npos) << s;
  EXPECT_NE(s.find("dashtype 3 title 'rotary (learned 2 of 3)'"), std::string::npos) << s;
  EXPECT_NE(s.find("title 'none (did not learn)'"), std::string::npos) << s;
  EXPECT_NE(s.find("set output 'a.png'"), std::string::npos) << s;
  EXPECT_NE(s.find("set logscale x 2"), std::string::npos) << s;
  const std::string p = position_plot_script(c, {{"svg", "b.svg"}});
  EXPECT_NE(p.find("length 64"), std::string::npos) << p;
  EXPECT_NE(p.find("\n5 0.05 "), std::string::npos) << p;
  EXPECT_NE(p.find("set arrow 1 from 3,"), std::string::npos) << p;
}

TEST(ComparePlot, RendersWithGnuplotWhenInstalled) {
  const GnuplotInfo info = probe_gnuplot();
  if (!info.found) GTEST_SKIP() << "gnuplot is not installed";
  TempDir tmp;
  write_demo(tmp.path());
  const Comparison c = compare_runs(find_runs({tmp.path().string()}), Metric::sequence_accuracy);
  const PlotResult r = write_plots(c, tmp.path().string());
  EXPECT_EQ(r.message, "");
  if (!info.png_terminal.empty()) {
    EXPECT_GT(fs::file_size(tmp.path() / "accuracy_by_length.png"), 1000u);
    EXPECT_GT(fs::file_size(tmp.path() / "accuracy_by_position.png"), 1000u);
  }
  if (info.svg) {
    EXPECT_NE(read_file(tmp.path() / "accuracy_by_length.svg").find("<svg"), std::string::npos);
  }
  EXPECT_TRUE(fs::exists(tmp.path() / "accuracy_by_length.gp"));
}

// ---- end to end with the real binary ------------------------------------------------------

// The pelab binary: <build dir>/pelab, the test binary being <build dir>/tests/pelab_tests.
TEST(SweepSlow, TwoSchemesTwoSeedsEndToEnd) {
  const std::string pelab = pelab_binary();
  if (!fs::exists(pelab)) GTEST_SKIP() << pelab << " is not built";
  TempDir tmp;
  write_file(tmp / "tiny.yaml", kTinyConfig);
  const std::string cmd = fmt::format("'{}' sweep '{}' --out '{}' --jobs 2 --no-progress", pelab,
                                      tmp / "tiny.yaml", tmp / "out");
  auto [code, output] = shell(cmd);
  ASSERT_EQ(code, 0) << output;
  for (const char* run : {"positional.type=none/seed=0", "positional.type=none/seed=1",
                          "positional.type=rotary/seed=0", "positional.type=rotary/seed=1"}) {
    const fs::path dir = fs::path(tmp / "out") / run;
    const json summary = json::parse(read_file(dir / "summary.json"));
    EXPECT_EQ(summary["status"], "completed") << run;
    EXPECT_EQ(json::parse(read_file(dir / "status.json"))["status"], "completed") << run;
    EXPECT_TRUE(fs::exists(dir / "stdout.log")) << run;
    // A run is a plain training run: no sweep section in its config.
    EXPECT_EQ(read_file(dir / "config.yaml").find("sweep"), std::string::npos) << run;
  }
  EXPECT_NE(output.find("| positional.type | n | 4* | 8* | 16 | in-distribution | extrapolation |"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("4 completed, 0 skipped"), std::string::npos) << output;
  const std::string csv = read_file(fs::path(tmp / "out") / "compare.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);  // header + 2 groups × 3 lengths

  // Again: everything is skipped, the comparison is repeated.
  std::tie(code, output) = shell(cmd);
  EXPECT_EQ(code, 0) << output;
  EXPECT_NE(output.find("0 completed, 4 skipped"), std::string::npos) << output;

  // A config change that the completed runs do not match is refused.
  std::tie(code, output) = shell(cmd + " training.steps=21");
  EXPECT_EQ(code, 2) << output;
  EXPECT_NE(output.find("pelab: error: "), std::string::npos) << output;

  // compare on its own, with token accuracy, elsewhere.
  std::tie(code, output) = shell(fmt::format("'{}' compare '{}' --out '{}' --metric token_accuracy",
                                             pelab, tmp / "out", tmp / "report"));
  EXPECT_EQ(code, 0) << output;
  EXPECT_NE(output.find("## Token accuracy by length"), std::string::npos) << output;
  EXPECT_TRUE(fs::exists(fs::path(tmp / "report") / "compare.json"));
}

}  // namespace
}  // namespace pelab
