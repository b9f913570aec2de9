// `pelab suite`: the suite file's errors (file, line, key; exit 2; nothing written), its plan
// (runs, overrides, columns), the recorded baselines beside a user's own scheme, and a suite
// killed at any moment finishing bit-identical to an uninterrupted one. The end-to-end tests
// run the real binary on a tiny suite written into a temporary configs/ tree.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <regex>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/suite/suite.h"
#include "pelab/suite/suite_report.h"
#include "pelab_process.h"

namespace pelab::testing {
namespace {

using json = nlohmann::json;

// A task config of the tiny suite: the end-to-end tests' small model on shift.
const std::string kTask = tiny_config("tiny-shift", R"(training:
  steps: 4
  warmup: 0
evaluation:
  lengths: [4]
  examples: 4
)");

std::string tiny_suite(const std::string& name, const std::string& budget_steps = "6") {
  return "suite: " + name + R"(
description: the tiny test suite
tasks:
  shift: ../tasks/shift.yaml
protocol:
  model: {d_model: 16, heads: 2, layers: 1}
  training: {batch_size: 4, warmup: 0, schedule: constant, log_every: 1, checkpoint_every: 1}
budget:
  steps: )" +
         budget_steps +
         R"(
  seeds: [0, 1]
  lrs: [0.003]
  training_lengths: [1, 6]
  evaluation_lengths: [4, 8, 12]
  examples: 6
schemes: [none, rotary]
randomized:
  schemes: [rotary]
  max_position: 32
  eval_draws: 1
cost:
  seconds_per_token: 1.0e-5
  at_length: 8
  measured: a test's guess
  step_time: {base: none, factors: {rotary: 1.5}, measured: a test's guess}
)";
}

// <dir>/configs/{suites/tiny.yaml, tasks/shift.yaml}; returns the suite file.
std::string write_tiny(const TempDir& dir, const std::string& suite_text) {
  fs::create_directories(dir.path() / "configs" / "suites");
  fs::create_directories(dir.path() / "configs" / "tasks");
  write_file(dir.path() / "configs" / "tasks" / "shift.yaml", kTask);
  const fs::path file = dir.path() / "configs" / "suites" / "tiny.yaml";
  write_file(file, suite_text);
  return file.string();
}

std::string error_of(const std::string& path) {
  try {
    (void)load_suite(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// ---- the suite file's errors ---------------------------------------------------------------

TEST(SuiteFile, ReadsTheTinySuite) {
  TempDir dir;
  const Suite s = load_suite(write_tiny(dir, tiny_suite("tiny")));
  EXPECT_EQ(s.name, "tiny");
  ASSERT_EQ(s.tasks.size(), 1u);
  EXPECT_EQ(s.budget.steps, 6);
  EXPECT_EQ(s.schemes, (std::vector<std::string>{"none", "rotary"}));
  EXPECT_EQ(s.randomized, (std::vector<std::string>{"rotary"}));
  EXPECT_NE(std::find(s.protocol.begin(), s.protocol.end(), "model.d_model=16"), s.protocol.end());
}

TEST(SuiteFile, ErrorsNameFileLineAndKey) {
  TempDir dir;
  const std::string base = tiny_suite("tiny");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return write_tiny(dir, text.replace(at, from.size(), to));
  };
  // Each: the text changed, and what the message must hold.
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> cases = {
      {"suite: tiny", "suite: other", {"tiny.yaml:1: suite: 'other' must be the file's stem"}},
      {"cost:", "costs:", {"tiny.yaml:", "unknown key", "did you mean 'cost'"}},
      {"  steps: 6", "  steps: 0", {"tiny.yaml:9: budget.steps: must be in [1, 100000000], got 0"}},
      {"seeds: [0, 1]", "seeds: [0, 0]", {"budget.seeds: '0' is given twice"}},
      {"seeds: [0, 1]", "seeds: [x]", {"budget.seeds: 'x' is not a seed"}},
      {"training_lengths: [1, 6]",
       "training_lengths: [6, 1]",
       {"budget.training_lengths:", "[MIN, MAX]"}},
      {"[4, 8, 12]", "[8, 4]", {"budget.evaluation_lengths:", "increasing order"}},
      {"schemes: [none, rotary]",
       "schemes: [none, rotory]",
       {"tiny.yaml:",
        "schemes: unknown "
        "scheme 'rotory'",
        "rotary"}},
      {"../tasks/shift.yaml",
       "../tasks/absent.yaml",
       {"tiny.yaml:4: tasks.shift:",
        "is not a "
        "file"}},
      {"d_model: 16", "d_model: sixteen", {"tiny.yaml:6: protocol: task shift:", "model.d_model"}},
      {"heads: 2", "heads: 2, hedas: 3", {"tiny.yaml:6: protocol:", "hedas"}},
      {"  model: {d_model: 16",
       "  seed: 3\n  model: {d_model: 16",
       {"tiny.yaml:6: protocol.seed: set by the suite"}},
      {"  max_position: 32", "  max_position: -1", {"randomized.max_position: must be in"}},
      {"seconds_per_token: 1.0e-5", "seconds_per_token: 0", {"cost.seconds_per_token: must be"}},
      {"at_length: 8", "at_length: 0", {"tiny.yaml:22: cost.at_length: must be in [1, "}},
      {"factors: {rotary: 1.5}",
       "factors: {rotory: 1.5}",
       {"tiny.yaml:24: cost.step_time.factors.rotory: unknown scheme (valid: ", "rotary"}},
      {"factors: {rotary: 1.5}", "factors: {rotary: 0}", {"factors.rotary: must be in (0, 1000]"}},
      {"factors: {rotary: 1.5}",
       "factors: {none: 2}",
       {"factors.none: is the base scheme's own factor: must be 1, got 2"}},
      {"base: none", "base: nope", {"cost.step_time.base: unknown scheme 'nope'"}},
      {"step_time: {base: none, factors: {rotary: 1.5}, measured: a test's guess}",
       "step_time: costs/absent.yaml",
       {"cost.step_time:", "costs/absent.yaml is not a file"}},
      {"  at_length: 8\n", "", {"cost.at_length: missing (the padded sequence length"}},
      // A task's own protocol: its keys, and the budget's and the suite's are not its.
      {"shift: ../tasks/shift.yaml",
       "shift: {config: ../tasks/shift.yaml, protocl: {}}",
       {"tiny.yaml:4: tasks.shift.protocl: unknown key (valid: config, protocol)"}},
      {"shift: ../tasks/shift.yaml",
       "shift: {protocol: {model: {d_model: 8}}}",
       {"tiny.yaml:4: tasks.shift.config: missing"}},
      {"shift: ../tasks/shift.yaml",
       "shift: {config: ../tasks/shift.yaml, protocol: {training: {steps: 9}}}",
       {"tiny.yaml:4: tasks.shift.protocol.training.steps: set by the budget (budget.steps)"}},
      {"shift: ../tasks/shift.yaml",
       "shift: {config: ../tasks/shift.yaml, protocol: {task: {max_length: 9}}}",
       {"tasks.shift.protocol.task.max_length: set by the budget (budget.training_lengths)"}},
      {"shift: ../tasks/shift.yaml",
       "shift: {config: ../tasks/shift.yaml, protocol: {seed: 3}}",
       {"tiny.yaml:4: tasks.shift.protocol.seed: set by the suite itself (budget.seeds)"}},
      {"shift: ../tasks/shift.yaml",
       "shift: {config: ../tasks/shift.yaml, protocol: {model: {layers: many}}}",
       {"tiny.yaml:4: tasks.shift.protocol:", "model.layers"}},
      {"  model: {d_model: 16",
       "  evaluation: {examples: 3}\n  model: {d_model: 16",
       {"tiny.yaml:6: protocol.evaluation.examples: set by the budget (budget.examples)"}},
  };
  for (const auto& [from, to, parts] : cases) {
    const std::string message = error_of(with(from, to));
    ASSERT_FALSE(message.empty()) << to;
    for (const std::string& part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "'" << to << "' gave: " << message << "\nexpected: " << part;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // The control: the unchanged file loads.
  EXPECT_EQ(error_of(write_tiny(dir, base)), "");
}

TEST(SuiteFile, ShippedSuitesLoad) {
  set_config_search_path({PELAB_SOURCE_DIR "/configs"});
  for (const std::string name : {"chomsky", "lm", "pelab"}) {
    const std::string path = std::string(PELAB_SOURCE_DIR "/configs/suites/") + name + ".yaml";
    EXPECT_EQ(error_of(path), "") << name;
  }
  set_config_search_path({});
}

// ---- the plan --------------------------------------------------------------------------------

TEST(SuitePlan, EveryTaskSchemeLrAndSeedWithItsOverrides) {
  TempDir dir;
  const Suite s = load_suite(write_tiny(dir, tiny_suite("tiny")));
  write_file(dir / "rotary500.yaml", "type: rotary\nbase: 500\n");
  const std::vector<SuiteScheme> defaults = suite_schemes(s, {});
  ASSERT_EQ(defaults.size(), 3u);
  EXPECT_EQ(defaults[2].label, "rotary+randomized");
  EXPECT_TRUE(defaults[2].shipped);
  const std::vector<SuiteScheme> mine = suite_schemes(s, {dir / "rotary500.yaml", "none"});
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].label, "rotary500");
  EXPECT_FALSE(mine[0].shipped);
  EXPECT_EQ(mine[0].overrides, (std::vector<std::string>{"positional={type: rotary, base: 500}"}));
  const SweepPlan plan = plan_suite(s, mine, dir / "out", {}, {});
  ASSERT_EQ(plan.runs.size(), 4u);  // 1 task × 2 schemes × 1 lr × 2 seeds
  EXPECT_EQ(plan.runs[0].run.name, "task=shift/scheme=rotary500/training.lr=0.003/seed=0");
  EXPECT_EQ(plan.runs[3].run.name, "task=shift/scheme=none/training.lr=0.003/seed=1");
  EXPECT_NE(plan.runs[0].config_yaml.find("base: 500"), std::string::npos);
  EXPECT_NE(plan.runs[3].config_yaml.find("type: none"), std::string::npos);
  // The control: the default rotary keeps its base.
  const SweepPlan shipped = plan_suite(s, {defaults[1]}, dir / "out2", {}, {});
  EXPECT_EQ(shipped.runs[0].config_yaml.find("base: 500"), std::string::npos);
  // The budget reached the runs.
  EXPECT_NE(plan.runs[0].config_yaml.find("steps: 6"), std::string::npos);
  EXPECT_NE(plan.runs[0].config_yaml.find("lengths: [4, 8, 12]"), std::string::npos)
      << plan.runs[0].config_yaml;
  for (const std::string bad : {"rotory", "rotary+randomised", "none+randomized+randomized"})
    EXPECT_THROW(suite_schemes(s, {bad}), Error) << bad;
  EXPECT_THROW(suite_schemes(s, {"none", "none"}), Error);
}

TEST(SuitePlan, ATasksOwnProtocolReachesOnlyItsRuns) {
  TempDir dir;
  std::string text = tiny_suite("tiny");
  const std::string plain = "  shift: ../tasks/shift.yaml\n";
  text.replace(
      text.find(plain), plain.size(),
      plain + "  narrow: {config: ../tasks/shift.yaml, protocol: {model: {d_model: 8}}}\n");
  const Suite s = load_suite(write_tiny(dir, text));
  ASSERT_EQ(s.tasks.size(), 2u);
  EXPECT_EQ(s.tasks[1].protocol, (std::vector<std::string>{"model.d_model=8"}));
  EXPECT_EQ(s.tasks[1].protocol_lines, (std::vector<int>{5}));
  const SweepPlan plan = plan_suite(s, suite_schemes(s, {"none"}), dir / "out", {}, {});
  ASSERT_EQ(plan.runs.size(), 4u);  // 2 tasks × 1 scheme × 1 lr × 2 seeds
  for (const PlannedRun& r : plan.runs) {
    const bool narrow = r.run.name.starts_with("task=narrow/");
    EXPECT_EQ(r.config_yaml.find("d_model: 8\n") != std::string::npos, narrow) << r.run.name;
    EXPECT_EQ(r.config_yaml.find("d_model: 16\n") != std::string::npos, !narrow) << r.run.name;
  }
  // A task's protocol is part of what fixes the suite's runs.
  std::string other = text;
  other.replace(other.find("d_model: 8}"), 11, "d_model: 4}");
  TempDir dir2;
  EXPECT_NE(load_suite(write_tiny(dir2, other)).fingerprint(), s.fingerprint());
}

TEST(SuiteFile, StepTimesFromTheirOwnFile) {
  TempDir dir;
  std::string text = tiny_suite("tiny");
  const std::string inline_times =
      "step_time: {base: none, factors: {rotary: 1.5}, measured: a test's guess}";
  text.replace(text.find(inline_times), inline_times.size(), "step_time: costs/times.yaml");
  const std::string path = write_tiny(dir, text);
  fs::create_directories(dir.path() / "configs" / "suites" / "costs");
  write_file(dir.path() / "configs" / "suites" / "costs" / "times.yaml",
             "base: none\nfactors: {rotary: 2.5, fire: 7}\nmeasured: by hand\n");
  const Suite s = load_suite(path);
  EXPECT_EQ(s.cost.step_time.factors.at("rotary"), 2.5);
  EXPECT_EQ(s.cost.step_time.factors.at("none"), 1);  // the base's, implied
  EXPECT_EQ(s.cost.step_time.measured, "by hand");
  EXPECT_NE(s.cost.step_time.source.find("times.yaml"), std::string::npos);
  // An error in that file names it.
  write_file(dir.path() / "configs" / "suites" / "costs" / "times.yaml",
             "base: none\nfactors: {rotary: 2.5}\nmeasured: by hand\nextra: 1\n");
  const std::string message = error_of(path);
  EXPECT_NE(message.find("times.yaml:4: extra: unknown key"), std::string::npos) << message;
}

// Every column of a shipped suite has its step-time factor (a run of a scheme without one is
// counted at the base's step, which would understate FIRE's six-fold step, say).
TEST(SuiteFile, ShippedSuitesPriceEveryColumn) {
  set_config_search_path({PELAB_SOURCE_DIR "/configs"});
  for (const std::string name : {"chomsky", "lm", "pelab"}) {
    Suite s = load_suite(std::string(PELAB_SOURCE_DIR "/configs/suites/") + name + ".yaml");
    s.tasks.resize(1);  // the scheme decides the factor, not the task
    TempDir dir;
    const SweepPlan plan = plan_suite(s, suite_schemes(s, {}), dir / "out", {}, {});
    for (const PlannedRun& r : plan.runs) {
      const RunCost cost =
          estimate_run(s.cost, parse_experiment(r.config_yaml, r.run.name, {}, ""));
      EXPECT_TRUE(cost.step_time_known) << name << ": " << r.run.name;
      EXPECT_GT(cost.core_seconds, 0) << r.run.name;
    }
  }
  set_config_search_path({});
}

// The table of a user's own scheme beside a recorded baseline, from a recording written by
// hand: the recorded column shows its numbers, marked, with its commit.
TEST(SuiteReport, RecordedBaselineStandsBesideTheUsersScheme) {
  TempDir dir;
  const Suite s = load_suite(write_tiny(dir, tiny_suite("tiny")));
  json runs = json::array();
  for (int seed : {0, 1})
    runs.push_back({{"task", "shift"},
                    {"lr", "0.003"},
                    {"seed", seed},
                    {"status", "completed"},
                    {"steps", 6},
                    {"train_lengths", {1, 6}},
                    {"validation", {{"sequence_accuracy", 1.0}, {"token_accuracy", 1.0}}},
                    {"stop_when_met", true},
                    {"eval",
                     {{{"length", 4},
                       {"in_training", true},
                       {"sequence_accuracy", 1.0},
                       {"token_accuracy", 1.0}},
                      {{"length", 8},
                       {"in_training", false},
                       {"sequence_accuracy", seed == 0 ? 0.5 : 0.25},
                       {"token_accuracy", 0.9}},
                      {{"length", 12},
                       {"in_training", false},
                       {"sequence_accuracy", seed == 0 ? 0.25 : 0.0},
                       {"token_accuracy", 0.8}}}}});
  json none = {{"suite", "tiny"},      {"scheme", "none"},
               {"randomized", false},  {"fingerprint", s.fingerprint()},
               {"commit", "abc1234"},  {"cpu", "a test CPU"},
               {"date", "2026-11-27"}, {"runs", runs}};
  const fs::path recorded = dir.path() / "results" / "suites" / "tiny";
  fs::create_directories(recorded);
  write_file(recorded / "none.json", none.dump(1));
  EXPECT_EQ(recorded_dir(s), recorded.string());
  Suite elsewhere = s;  // a user's suite file outside configs/suites/: beside it, not above
  elsewhere.path = (dir.path() / "mine" / "tiny.yaml").string();
  EXPECT_EQ(recorded_dir(elsewhere),
            (dir.path() / "mine" / "results" / "suites" / "tiny").string());
  elsewhere.path = "tiny.yaml";
  EXPECT_EQ(recorded_dir(elsewhere), "results/suites/tiny");
  const std::vector<SuiteScheme> mine = suite_schemes(s, {"rotary"});
  const SweepPlan plan = plan_suite(s, mine, dir / "out", {}, {});
  std::string md = suite_markdown(suite_table(s, plan, mine, recorded_dir(s)));
  EXPECT_NE(md.find("none (rec.)"), std::string::npos) << md;
  EXPECT_NE(md.find("rotary"), std::string::npos) << md;
  EXPECT_NE(md.find("abc1234"), std::string::npos) << md;
  EXPECT_NE(md.find("0.38"), std::string::npos) << md;  // seed 0's mean of 0.5 and 0.25
  // The control: recorded under another fingerprint, it is left out and the table says so.
  none["fingerprint"] = "0123456789abcdef";
  write_file(recorded / "none.json", none.dump(1));
  md = suite_markdown(suite_table(s, plan, mine, recorded_dir(s)));
  EXPECT_EQ(md.find("none (rec.)"), std::string::npos) << md;
  EXPECT_NE(md.find("recorded under another version of the suite"), std::string::npos) << md;
}

// ---- the command line ------------------------------------------------------------------------

class SuiteCli : public ::testing::Test {
 protected:
  void SetUp() override { suite_ = write_tiny(dir_, tiny_suite("tiny")); }
  void expect_user_error(const std::vector<std::string>& args,
                         const std::vector<std::string>& parts) {
    const std::vector<std::string> before = listing(dir_.path());
    const Outcome o = run_pelab(args, dir_.path());
    EXPECT_EQ(user_error_problem(o, parts), "");
    EXPECT_EQ(listing(dir_.path()), before) << "files were left behind";
  }
  TempDir dir_;
  std::string suite_;
};

TEST_F(SuiteCli, BadArgumentsAreOneLineExitTwoAndWriteNothing) {
  expect_user_error({"suite", "run", "no_such_suite"},
                    {"no suite 'no_such_suite' (valid: ", "chomsky"});
  expect_user_error({"suite", "run", suite_, "--schemes", "rotory"},
                    {"--schemes: unknown scheme 'rotory'"});
  expect_user_error({"suite", "run", suite_, "--schemes", "absent/group.yaml"},
                    {"absent/group.yaml is not a file"});
  expect_user_error({"suite", "run", suite_, "--launcher", "slurmm"}, {"--launcher"});
  expect_user_error({"suite", "run", suite_, "--max-parallel", "2"},
                    {"--max-parallel", "needs --launcher slurm"});
  expect_user_error({"suite", "run", suite_, "--dry-run", "--index", "0"},
                    {"--dry-run", "--index"});
  expect_user_error({"suite", "record", suite_, "--schemes", "sinusoidal", "--allow-dirty"},
                    {"not one of the suite's recorded schemes"});
  write_file(suite_, tiny_suite("tiny") + "extra: 1\n");
  expect_user_error({"suite", "run", suite_}, {"tiny.yaml:", "extra: unknown key"});
}

TEST_F(SuiteCli, ListAndDryRun) {
  Outcome o = run_pelab({"suite", "list"}, dir_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const std::string name : {"chomsky", "lm", "pelab"})
    EXPECT_NE(o.out.find(name + " "), std::string::npos) << o.out;
  const std::vector<std::string> before = listing(dir_.path());
  o = run_pelab({"suite", "run", suite_, "--dry-run"}, dir_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(lines_of(o.out).size(), 8u) << o.out;  // 6 runs, the total, the recorded ones
  EXPECT_NE(o.out.find("task=shift/scheme=rotary+randomized/training.lr=0.003/seed=1"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("suite tiny: 6 runs, 6 to do"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("recorded baselines beside them ("), std::string::npos) << o.out;
  // One column: only its runs, and the recorded ones that would stand beside it.
  o = run_pelab({"suite", "run", suite_, "--schemes", "rotary", "--dry-run"}, dir_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(lines_of(o.out).size(), 4u) << o.out;
  EXPECT_EQ(o.out.find("scheme=none"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("suite tiny: 2 runs, 2 to do"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(": none recorded yet"), std::string::npos) << o.out;
  EXPECT_EQ(listing(dir_.path()), before) << "--dry-run wrote files";
}

TEST_F(SuiteCli, DocsWritesTheBudgetAndKeepsTheHandWrittenPart) {
  const fs::path docs = dir_.path() / "docs";
  fs::create_directories(docs);
  write_file(docs / "tiny.md",
             "# old page\n\n<!-- Written by hand from here on -->\n\nThe paper's budget.\n");
  Outcome o = run_pelab({"suite", "docs", suite_, "--docs", docs}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string page = read_file(docs / "tiny.md");
  EXPECT_EQ(page.find("# old page"), std::string::npos) << page;
  EXPECT_NE(page.find("not recorded yet"), std::string::npos) << page;
  EXPECT_NE(page.find("Estimated cost: at most "), std::string::npos) << page;
  EXPECT_NE(page.find("By column: none "), std::string::npos) << page;
  EXPECT_NE(page.find("<!-- Written by hand from here on -->\n\nThe paper's budget.\n"),
            std::string::npos)
      << page;
  // Again: the hand-written part is kept once, not doubled.
  o = run_pelab({"suite", "docs", suite_, "--docs", docs}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string again = read_file(docs / "tiny.md");
  EXPECT_EQ(again, page);
  // The control: a page without the marker is written whole.
  write_file(docs / "tiny.md", "# old page\n");
  o = run_pelab({"suite", "docs", suite_, "--docs", docs}, dir_.path());
  EXPECT_EQ(read_file(docs / "tiny.md").find("old page"), std::string::npos);
}

// ---- end to end ------------------------------------------------------------------------------

json run_summary(const fs::path& dir) {
  return json::parse(read_file(dir / "summary.json"));
}

// Everything a run's results are: its summary and evaluation, its final checkpoint, and the
// loss of every step it logged (a run resumed from a checkpoint logs again the steps after it:
// each step's last line counts; the speed is left out).
std::string results_of(const fs::path& run) {
  std::map<int64_t, std::string> steps;
  for (const std::string& line : lines_of(read_file(run / "metrics.jsonl"))) {
    json m = json::parse(line);
    m.erase("tokens_per_s");
    if (m.contains("step")) steps[m["step"].get<int64_t>()] = m.dump();
  }
  std::string r = run_summary(run).dump() + "\n" + read_file(run / "eval.csv");
  for (const auto& [step, line] : steps) r += line + "\n";
  if (fs::exists(run / "checkpoint.safetensors")) r += read_file(run / "checkpoint.safetensors");
  return r;
}

std::map<std::string, std::string> suite_results(const fs::path& out) {
  std::map<std::string, std::string> r;
  for (const auto& e : fs::recursive_directory_iterator(out))
    if (e.path().filename() == "summary.json")
      r[fs::relative(e.path().parent_path(), out).string()] = results_of(e.path().parent_path());
  return r;
}

// tools/suite_runs.sh: a suite's finished runs, saved without checkpoints and restored into
// an empty directory, serve `pelab suite run` as the runs did: nothing is trained again and
// the table is the same. A run that is there already is never overwritten.
TEST(SuiteRuns, SavedRunsAreReusedAfterARestore) {
  TempDir dir;
  const std::string suite = write_tiny(dir, tiny_suite("tiny"));
  const fs::path out = dir.path() / "runs" / "suites" / "tiny";
  const std::vector<std::string> run = {"suite",      "run",           suite,       "--out",
                                        out.string(), "--no-progress", "--no-plots"};
  Outcome o = run_pelab(run);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string table = read_file(out / "suite.md");
  // Every cell shows token accuracy beside the table's sequence accuracy (its interval, " / ",
  // the token mean), and the CSV has both means.
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\] / [0-9.]+ \|)"))) << table;
  EXPECT_NE(read_file(out / "suite.csv").find(",sequence_mean,token_mean,"), std::string::npos);
  const std::string tool = "PELAB_SUITE_RUNS='" + (dir.path() / "runs" / "suites").string() +
                           "' PELAB_SUITE_RECORD='" + (dir / "record") + "' '" +
                           PELAB_SOURCE_DIR "/tools/suite_runs.sh' ";
  auto [saved, save_output] = shell(tool + "save tiny 2>&1");
  ASSERT_EQ(saved, 0) << save_output;
  EXPECT_NE(save_output.find("saved 6 finished runs"), std::string::npos) << save_output;
  for (const auto& f : fs::recursive_directory_iterator(dir.path() / "record"))
    EXPECT_NE(f.path().filename(), "checkpoint.safetensors") << f.path();
  fs::remove_all(out);
  auto [restored, restore_output] = shell(tool + "restore tiny 2>&1");
  ASSERT_EQ(restored, 0) << restore_output;
  EXPECT_NE(restore_output.find("restored 6 finished runs"), std::string::npos) << restore_output;
  o = run_pelab(run);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("0 completed, 6 skipped (already completed)"), std::string::npos) << o.out;
  EXPECT_EQ(read_file(out / "suite.md"), table);
  auto [kept, kept_output] = shell(tool + "restore tiny 2>&1");
  EXPECT_NE(kept_output.find("restored 0 finished runs"), std::string::npos) << kept_output;
  EXPECT_NE(kept_output.find("6 already there"), std::string::npos) << kept_output;
  auto [bad, bad_output] = shell(tool + "save ../x 2>&1");  // a name, not a path
  EXPECT_EQ(bad, 2) << bad_output;
}

// pelab suite record names the commit and the CPUs that trained the runs (each run's
// environment.json), not the tree it is called from. A scheme whose runs come from two
// commits is not recorded, nor one trained by a build that was not one clean commit unless
// --allow-dirty says so.
TEST(SuiteRecord, NamesTheCommitAndCpusThatTrainedTheRuns) {
  TempDir dir;
  const std::string suite = write_tiny(dir, tiny_suite("tiny"));
  const std::string out = dir / "out";
  Outcome o = run_pelab(
      {"suite", "run", suite, "--schemes", "none", "--out", out, "--no-progress", "--no-plots"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  std::vector<fs::path> envs;
  for (const auto& e : fs::recursive_directory_iterator(out))
    if (e.path().filename() == "environment.json") envs.push_back(e.path());
  std::sort(envs.begin(), envs.end());
  ASSERT_EQ(envs.size(), 2u);
  const auto trained_by = [](const fs::path& file, const std::string& commit,
                             const std::string& cpu) {
    json env = json::parse(read_file(file));
    env["git_commit"] = commit;
    env["cpu"] = cpu;
    write_file(file, env.dump(2));
  };
  const std::vector<std::string> record = {"suite", "record", suite, "--schemes",
                                           "none",  "--out",  out};
  const fs::path recorded = dir.path() / "results" / "suites" / "tiny" / "none.json";

  trained_by(envs[0], "0123456789ab", "CPU A");
  trained_by(envs[1], "ba9876543210", "CPU B");
  o = run_pelab(record);
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("none: its runs come from 2 commits"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(recorded));

  trained_by(envs[1], "0123456789ab", "CPU B");
  o = run_pelab(record);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  json j = json::parse(read_file(recorded));
  EXPECT_EQ(j["commit"], "0123456789ab");
  EXPECT_EQ(j["cpu"], "CPU A (1 run), CPU B (1 run)");

  for (const fs::path& env : envs) trained_by(env, "0123456789ab-dirty", "CPU A");
  fs::remove(recorded);
  o = run_pelab(record);
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("not one clean commit"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(recorded));
  std::vector<std::string> allowed = record;
  allowed.push_back("--allow-dirty");
  o = run_pelab(allowed);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  j = json::parse(read_file(recorded));
  EXPECT_EQ(j["commit"], "0123456789ab-dirty (not clean)");
  EXPECT_EQ(j["cpu"], "CPU A");

  // The suite's own files must be committed: recorded from a clean checkout, refused once a
  // task config is edited.
  for (const fs::path& env : envs) trained_by(env, "0123456789ab", "CPU A");
  const std::string git = "cd '" + dir.path().string() + "' && git ";
  ASSERT_EQ(shell(git + "init -q && " + git + "add configs && " + git +
                  "-c user.name=t -c user.email=t@t commit -qm suite")
                .first,
            0);
  o = run_pelab(record);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  write_file(dir / "configs/tasks/shift.yaml", kTask + std::string("# edited\n"));
  o = run_pelab(record);
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("has uncommitted changes (configs/tasks/shift.yaml"), std::string::npos)
      << o.err;
}

TEST(SuiteSlow, RecordedBaselinesStandBesideTheUsersOwnScheme) {
  TempDir dir;
  const std::string suite = write_tiny(dir, tiny_suite("tiny"));
  // Token accuracy: the tiny model gets some tokens right, so the numbers compared below are
  // not all zeros.
  Outcome o = run_pelab({"suite", "run", suite, "--out", dir / "full", "--no-progress",
                         "--no-plots", "--metric", "token_accuracy"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("| task | none | rotary | rotary+randomized |"), std::string::npos) << o.out;
  o = run_pelab({"suite", "record", suite, "--out", dir / "full", "--allow-dirty"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const fs::path recorded = dir.path() / "results" / "suites" / "tiny";
  for (const std::string s : {"none", "rotary", "rotary+randomized"}) {
    ASSERT_TRUE(fs::exists(recorded / (s + ".json"))) << s;
    const json j = json::parse(read_file(recorded / (s + ".json")));
    EXPECT_EQ(j["runs"].size(), 2u);
    EXPECT_FALSE(j["cpu"].get<std::string>().empty());
    EXPECT_FALSE(j["commit"].get<std::string>().empty());
  }

  // The user's own scheme: only it is trained; the recorded ones stand beside it.
  write_file(dir / "rotary500.yaml", "type: rotary\nbase: 500\n");
  o = run_pelab({"suite", "run", suite, "--schemes", dir / "rotary500.yaml", "--out", dir / "mine",
                 "--no-progress", "--no-plots", "--metric", "token_accuracy"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.err.find("sweep suite-tiny: 2 runs"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("| task | none (rec.) | rotary (rec.) | rotary+randomized (rec.) | "
                       "rotary500 |"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("none: recorded at commit "), std::string::npos) << o.out;
  // The recorded cell shows the same numbers as the full run's table.
  const std::string full = read_file(dir.path() / "full" / "suite.csv");
  const std::string mine = read_file(dir.path() / "mine" / "suite.csv");
  const std::string none_full = full.substr(full.find("shift,none,"));
  const std::string none_mine = mine.substr(mine.find("shift,none,"));
  auto numbers = [](const std::string& rest) {  // after the quoted cpu: the cell's statistics
    const std::string line = rest.substr(0, rest.find('\n'));
    return line.substr(line.find("\",", line.find(",\"")) + 2);
  };
  EXPECT_EQ(numbers(none_mine), numbers(none_full)) << full << mine;
  auto field = [](const std::string& csv_line, int k) {  // the k-th field, from 0
    size_t at = 0;
    for (int i = 0; i < k; ++i) at = csv_line.find(',', at) + 1;
    return csv_line.substr(at, csv_line.find_first_of(",\n", at) - at);
  };
  EXPECT_NE(field(numbers(none_full), 4), "0") << full;  // the max: the tiny model gets tokens
  EXPECT_NE(numbers(none_full), numbers(full.substr(full.find("shift,rotary+randomized,"))))
      << full;
  EXPECT_TRUE(fs::exists(dir.path() / "mine" / "suite.tex"));

  // The control: a recording made under another version of the suite is left out.
  json none = json::parse(read_file(recorded / "none.json"));
  none["fingerprint"] = "0123456789abcdef";
  write_file(recorded / "none.json", none.dump(1));
  o = run_pelab({"suite", "report", suite, "--schemes", dir / "rotary500.yaml", "--out",
                 dir / "mine", "--no-plots"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.find("none (rec.)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("rotary (rec.)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("recorded under another version of the suite"), std::string::npos) << o.out;
}

TEST(SuiteSlow, KilledAtAnyMomentTheSameCommandFinishesBitIdentical) {
  TempDir dir;
  const std::string suite = write_tiny(dir, tiny_suite("tiny", "40"));
  const std::vector<std::string> base = {"suite",      "run",    suite, "--no-progress",
                                         "--no-plots", "--jobs", "2"};
  auto args_for = [&](const std::string& out) {
    std::vector<std::string> a = base;
    a.insert(a.end(), {"--out", dir / out});
    return a;
  };
  Outcome o = run_pelab(args_for("whole"));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::map<std::string, std::string> whole = suite_results(dir.path() / "whole");
  ASSERT_EQ(whole.size(), 6u);

  std::mt19937 rng(11);
  int kills = 0;
  for (int round = 0; round < 30; ++round) {
    const pid_t pid = start_pelab(args_for("killed"), dir / "log.txt");
    const int ms = std::uniform_int_distribution<int>(50, 1500)(rng);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    if (::kill(pid, SIGKILL) == 0) ++kills;
    const Outcome k = wait_pelab(pid, dir / "log.txt");
    if (k.exit_code == 0) break;  // it finished before the kill
  }
  EXPECT_GT(kills, 0);
  // No run outlives its suite: nothing else trains in the directory now.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  o = run_pelab(args_for("killed"));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(suite_results(dir.path() / "killed"), whole);
  // The control: another seed's results differ, so the comparison can fail.
  EXPECT_NE(whole.begin()->second, std::next(whole.begin())->second);
}

}  // namespace
}  // namespace pelab::testing
