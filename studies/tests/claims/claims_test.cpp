// The claim machinery: the rotary checks on known-good and known-bad constructions, and
// `pelab reproduce` on the claims that need no training.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "pelab/analysis/rotary_check.h"
#include "pelab/claims/reproduce.h"
#include "pelab/core/error.h"
#include "pelab_process.h"

namespace pelab {
namespace {

namespace fs = std::filesystem;

// A correct rotary in the rotate-half layout (GPT-NeoX): pairs (i, i + d/2).
std::vector<double> rotate_half_rope(const std::vector<double>& x, int64_t p) {
  const size_t half = x.size() / 2;
  std::vector<double> out(x.size());
  for (size_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(p) * std::pow(10000.0, -2.0 * i / x.size());
    out[i] = x[i] * std::cos(angle) - x[i + half] * std::sin(angle);
    out[i + half] = x[i + half] * std::cos(angle) + x[i] * std::sin(angle);
  }
  return out;
}

TEST(RotaryCheck, RealRotationsPassAndTheNotesRollDoesNot) {
  for (const PositionMap& f : {pelab_rotary(16, 10000.0), PositionMap(rotate_half_rope)}) {
    const RotaryCheck c = check_rotary(f, 16, 500, {1, 9, 300}, 30, 1);
    EXPECT_LT(c.max_score_change, 1e-5);
    EXPECT_NEAR(c.min_norm_ratio, 1.0, 1e-6);
    EXPECT_NEAR(c.max_norm_ratio, 1.0, 1e-6);
  }
  const PositionMap note = [](const std::vector<double>& x, int64_t p) {
    return note003_rope(x, p, static_cast<int64_t>(x.size()));
  };
  const RotaryCheck c = check_rotary(note, 16, 500, {1, 9, 300}, 30, 1);
  EXPECT_GT(c.max_score_change, 1e-2);
  EXPECT_GT(c.max_norm_ratio - c.min_norm_ratio, 1e-2);
}

TEST(RotaryCheck, NoteConstructionIsTheNotesFormula) {
  // x = e_1 at position 1, dim_arg = 4: θ = (1, 0.01, 1, 0.01); out_i = x_i cos θ_i +
  // x_(i−1) sin θ_i, so out = (0, cos 0.01, sin 1, 0).
  const std::vector<double> out = note003_rope({0, 1, 0, 0}, 1, 4);
  EXPECT_NEAR(out[0], 0.0, 1e-15);
  EXPECT_NEAR(out[1], std::cos(0.01), 1e-15);
  EXPECT_NEAR(out[2], std::sin(1.0), 1e-15);
  EXPECT_NEAR(out[3], 0.0, 1e-15);
  // The note's example: dim // 2 angles for an embedding of dim does not broadcast.
  EXPECT_THROW(note003_rope(std::vector<double>(64, 1.0), 3, 32), Error);
}

TEST(Reproduce, AnalyticClaimsWriteReportAndJson) {
  ReproduceOptions o;
  o.only = {"C8", "C9", "C10", "C11", "C12"};
  o.quick = true;
  const testing::TempDir tmp;
  o.out = tmp / "analytic";
  o.configs_dir = std::string(PELAB_SOURCE_DIR) + "/studies/configs";
  const std::vector<ClaimResult> results = reproduce(o);
  ASSERT_EQ(results.size(), 5u);
  std::ifstream in(fs::path(o.out) / "claims.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["claims"].size(), 5u);
  for (const auto& c : j["claims"]) {
    EXPECT_TRUE(c["verdict"] == "supported" || c["verdict"] == "refuted" ||
                c["verdict"] == "mixed");
    EXPECT_FALSE(c["rule"].get<std::string>().empty());
    for (const auto& figure : c["figures"])
      EXPECT_TRUE(fs::exists(fs::path(o.out) / figure.get<std::string>())) << figure;
  }
  std::ifstream md(fs::path(o.out) / "report.md");
  const std::string report((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  for (const std::string id : {"C8", "C9", "C10", "C11", "C12"})
    EXPECT_NE(report.find("## " + id), std::string::npos) << id;
  // C12 quotes NumPy's error for the note's example as written: its (10, 64) embeddings
  // against (10, 32) angles.
  EXPECT_NE(results[4].because.find("shapes (10,64) (10,32)"), std::string::npos)
      << results[4].because;
}

TEST(Reproduce, TheNotesClaimsComeFirstThenThePublishedReproductions) {
  const std::vector<std::string> ids = claim_ids();
  const auto at = [&](const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) - ids.begin();
  };
  ASSERT_LT(at("R3"), static_cast<std::ptrdiff_t>(ids.size()));
  EXPECT_EQ(ids.front(), "C1");
  EXPECT_LT(at("C2"), at("C10"));  // by number, not as text
  EXPECT_LT(at("C16"), at("R1"));
  EXPECT_EQ(at("R1") + 1, at("R2"));
  EXPECT_EQ(at("R2") + 1, at("R3"));
}

TEST(Reproduce, BadClaimConfigsAndIdsAreClearErrors) {
  const testing::TempDir tmp;
  const std::string configs = tmp / "configs";
  fs::create_directories(fs::path(configs) / "claims");
  std::ofstream(fs::path(configs) / "claims" / "c08.yaml")
      << "claim: C8\nstatement: s\nsources: ['002']\nverdict: v\nprecondition: p\nsettings:\n"
         "  d_model: 8\n  positons: 3\n";
  ReproduceOptions o;
  o.only = {"C8"};
  o.out = tmp / "bad-out";
  o.configs_dir = configs;
  o.allow_dirty = true;  // what is tested is the config's error, whatever the build
  try {
    reproduce(o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("c08.yaml:8"), std::string::npos) << m;
    EXPECT_NE(m.find("positions"), std::string::npos) << m;  // did you mean
  }
  // A claim without its precondition, written before the run, is refused.
  std::ofstream(fs::path(configs) / "claims" / "c08.yaml")
      << "claim: C8\nstatement: s\nsources: ['002']\nverdict: v\nsettings:\n  d_model: 8\n";
  try {
    reproduce(o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the key 'precondition'"), std::string::npos) << e.what();
  }
  o.only = {"C99"};
  EXPECT_THROW(reproduce(o), Error);
  // R3's published figures: a pair that is not [mean, std] names its line, before any run.
  std::ofstream(fs::path(configs) / "claims" / "r03.yaml")
      << "claim: R3\nstatement: s\nsources: x\nverdict: v\nprecondition: p\nsettings:\n"
         "  experiment: nowhere.yaml\n  published:\n    copy:\n      none: [0.3]\n";
  o.only = {"R3"};
  try {
    reproduce(o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("r03.yaml:10: settings.published.copy.none: expected [mean, std]"),
              std::string::npos)
        << m;
  }
  EXPECT_FALSE(fs::exists(fs::path(o.out) / "runs")) << "a run started despite the bad config";
}

// A studies configs directory under `root` with R1 and its experiment, R1's quick section narrowed
// to rotary on `tasks` at the given learning rates, `first_budget` (by default 20 steps, too few to
// learn parity): seconds to run. `larger_budget`: the overrides of R1's second sweep for a task not
// learned.
void write_narrow_r1(const testing::TempDir& root, const std::string& lrs,
                     const std::string& larger_budget = "[]", const std::string& tasks = "parity",
                     const std::string& first_budget = "training.steps=20") {
  fs::create_directories(fs::path(root / "studies/configs/claims"));
  fs::create_directories(fs::path(root / "studies/configs/reproductions"));
  const std::string source = PELAB_SOURCE_DIR "/studies/configs/";
  fs::copy_file(source + "reproductions/deletang.yaml",
                root / "studies/configs/reproductions/deletang.yaml");
  std::string r1 = testing::read_file(source + "claims/r01.yaml");
  const size_t quick = r1.find("\nquick:\n"), verdict = r1.find("\nverdict:");
  ASSERT_TRUE(quick != std::string::npos && verdict > quick);
  r1.replace(quick + 1, verdict - quick,
             "quick:\n  min_tasks: 1\n  larger_budget: " + larger_budget +
                 "\n  sweeps:\n    - [\"sweep.positional=[rotary]\", "
                 "\"sweep.task.name=[" +
                 tasks + "]\", \"sweep.training.lr=[" + lrs +
                 "]\", \"sweep.seed=[0]\", task.max_length=4, " + first_budget +
                 ", "
                 "training.clip_norm=0, \"evaluation.lengths=[4, 8]\", evaluation.examples=20]\n");
  testing::write_file(root / "studies/configs/claims/r01.yaml", r1);
}

// `pelab reproduce --quick --only <only>` in `root` (with write_narrow_r1's configs) into
// root/out.
std::pair<int, std::string> reproduce_narrow_r1(const testing::TempDir& root,
                                                const std::string& only = "R1") {
  return testing::shell("cd '" + std::string(root / "") + "' && '" + testing::pelab_binary() +
                        "' reproduce --quick --only " + only + " --jobs 2 --out out 2>&1");
}

// A run whose training diverges is a result, not a broken sweep: the claim is judged with it
// counted as a run that did not learn, and the report lists it.
TEST(Reproduce, ADivergedRunIsCountedAndListedAndTheClaimIsJudged) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  write_narrow_r1(tmp, "0.001, 1e30");  // 1e30 diverges at once
  auto [code, output] = reproduce_narrow_r1(tmp);
  ASSERT_EQ(code, 0) << output;
  const std::string diverged_run = "positional=rotary/task.name=parity/training.lr=1e30/seed=0";
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  const nlohmann::json& experiment = j["claims"][0]["experiments"][0];
  ASSERT_EQ(experiment["diverged"].size(), 1u) << experiment.dump();
  EXPECT_NE(experiment["diverged"][0].get<std::string>().find(diverged_run), std::string::npos);
  EXPECT_EQ(j["claims"][0]["verdict"], "inconclusive");  // 20 steps: nothing learned
  const std::string report = testing::read_file(tmp / "out/report.md");
  // The report names the CPU that trained the runs (one here), as environment.json has it.
  const nlohmann::json env = nlohmann::json::parse(testing::read_file(
      fs::path(tmp / "out") / experiment["diverged"][0].get<std::string>() / "environment.json"));
  const std::string cpu =
      fmt::format("{}, {}", env["cpu"].get<std::string>(), env["isa"].get<std::string>());
  EXPECT_EQ(j["run_cpus"], nlohmann::json::array({cpu})) << j["run_cpus"].dump();
  EXPECT_NE(report.find(fmt::format("(finished runs are reused), on {}.", cpu)), std::string::npos)
      << report;
  EXPECT_NE(report.find("**Diverged runs** (1; each scored 0 in the selection of its learning "
                        "rate; those at the rate selected also counted in their group"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("| rotary / parity | 0.001: "), std::string::npos) << report;
  EXPECT_NE(report.find("1e+30: 0.000 (1) | 0.001 |"), std::string::npos) << report;
  // Each table stands apart: Markdown reads a header row right under another table, or a line
  // right under a table, as one of its rows.
  std::vector<std::string> lines;
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto table_line = [](const std::string& line) { return line.rfind("|", 0) == 0; };
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    if (table_line(lines[i]) && lines[i + 1].rfind("|--", 0) == 0) {
      EXPECT_EQ(lines[i - 1], "") << "table header at line " << i + 1 << ": " << lines[i];
    }
    if (table_line(lines[i]) && !table_line(lines[i + 1])) {
      EXPECT_EQ(lines[i + 1], "") << "line " << i + 2 << " right under a table: " << lines[i + 1];
    }
  }
}

// The CPUs a report names come from each run's environment.json, which a user may have edited
// or a crash left unreadable: an isa that is not a string names the CPU with "unknown
// instructions", and a file that is not JSON is passed over; neither is an error.
TEST(Reproduce, ARunsEnvironmentWithoutAnIsaStringStillNamesItsCpu) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  write_narrow_r1(tmp, "0.001, 0.003");
  auto [code, output] = reproduce_narrow_r1(tmp);
  ASSERT_EQ(code, 0) << output;
  const fs::path runs = tmp / "out";
  std::vector<fs::path> envs;
  for (const fs::directory_entry& f : fs::recursive_directory_iterator(runs))
    if (f.path().filename() == "environment.json") envs.push_back(f.path());
  std::sort(envs.begin(), envs.end());
  ASSERT_EQ(envs.size(), 2u);
  nlohmann::json env = nlohmann::json::parse(testing::read_file(envs[0]));
  const std::string cpu = env["cpu"].get<std::string>();
  env["isa"] = 512;
  testing::write_file(envs[0], env.dump(2));
  testing::write_file(envs[1], "{ not json");
  std::tie(code, output) = reproduce_narrow_r1(tmp);  // both runs are reused
  ASSERT_EQ(code, 0) << output;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  const std::string named = cpu + ", unknown instructions";
  EXPECT_EQ(j["run_cpus"], nlohmann::json::array({named})) << j["run_cpus"].dump();
  const std::string report = testing::read_file(tmp / "out/report.md");
  EXPECT_NE(report.find("(finished runs are reused), on " + named + "."), std::string::npos)
      << report;
}

// C13 and C14 read a trained model of each group; a group whose every run diverged has none.
// The claim is then judged inconclusive (C14: no trained table) or its variant counts as one
// that did not learn (C13 times the architecture, which needs no weights), never an error.
TEST(Reproduce, AClaimWhoseGroupAllDivergedIsInconclusiveNotAnError) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  fs::create_directories(fs::path(tmp / "studies/configs/claims"));
  fs::create_directories(fs::path(tmp / "configs"));
  const std::string source = PELAB_SOURCE_DIR "/";
  fs::copy_file(source + "configs/default.yaml", tmp / "configs/default.yaml");
  // Every run diverges at its first step (lr 1e30); each list is a claim's overrides.
  const auto diverging = [](const std::string& overrides) {
    return "[" + overrides +
           "\"sweep.seed=[0]\", \"sweep.training.lr=[1e30]\", training.steps=20, "
           "training.warmup=0, \"evaluation.lengths=[8, 32]\", evaluation.examples=20]\n";
  };
  const std::string sinusoidal = "\"sweep.positional=[sinusoidal]\", ";
  const std::vector<std::pair<std::string, std::string>> quick = {
      {"c13", "quick:\n  min_steps: 1\n  max_seconds: 0.05\n  rounds: 1\n  add_overrides: " +
                  diverging(sinusoidal) + "  concat_overrides: " +
                  diverging(sinusoidal +
                            "model.d_model=80, positional=sinusoidal, positional.combine=concat, "
                            "positional.dim=16, ") +
                  "  wide_add_overrides: " + diverging(sinusoidal + "model.d_model=80, ")},
      {"c14", "quick:\n  overrides: " + diverging("\"sweep.positional=[learned, sinusoidal]\", ")}};
  for (const auto& [claim, section] : quick) {
    std::string config = testing::read_file(source + "studies/configs/claims/" + claim + ".yaml");
    const size_t begin = config.find("\nquick:\n"), end = config.find("\nverdict:");
    ASSERT_TRUE(begin != std::string::npos && end > begin) << claim;
    config.replace(begin + 1, end - begin, section);
    testing::write_file(tmp / ("studies/configs/claims/" + claim + ".yaml"), config);
  }
  auto [code, output] =
      testing::shell("cd '" + std::string(tmp / "") + "' && '" + testing::pelab_binary() +
                     "' reproduce --quick --only C13,C14 --jobs 2 --out out 2>&1");
  ASSERT_EQ(code, 0) << output;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  ASSERT_EQ(j["claims"].size(), 2u);
  for (const nlohmann::json& c : j["claims"]) EXPECT_EQ(c["verdict"], "inconclusive") << c.dump();
  EXPECT_NE(
      j["claims"][0]["because"].get<std::string>().find("every run of every variant diverged"),
      std::string::npos)
      << j["claims"][0].dump();
  EXPECT_TRUE(j["claims"][0]["numbers"]["variants"][0]["in_distribution"].is_null())
      << j["claims"][0]["numbers"].dump();
  EXPECT_NE(
      j["claims"][1]["because"].get<std::string>().find("every learned run diverged (1 of 1)"),
      std::string::npos)
      << j["claims"][1].dump();
}

// A task no scheme learned within R1's first budget is probed with the larger one (one run:
// the best scheme at its selected lr and first seed); only if the probe learns it is the task
// swept again whole, and its row and the verdict use that sweep's runs.
TEST(Reproduce, R1ProbesAnUnlearnedTaskWithTheLargerBudgetAndSweepsItIfItLearns) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  for (const bool learns : {false, true}) {
    const testing::TempDir tmp;
    // 20 steps do not learn parity at lengths up to 4; 300 do (R1's quick section), 30 do not.
    write_narrow_r1(tmp, "0.001", learns ? "[training.steps=300]" : "[training.steps=30]");
    auto [code, output] = reproduce_narrow_r1(tmp);
    ASSERT_EQ(code, 0) << output;
    const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
    const nlohmann::json& claim = j["claims"][0];
    const nlohmann::json& experiments = claim["experiments"];
    ASSERT_EQ(experiments.size(), learns ? 3u : 2u) << experiments.dump();
    const nlohmann::json& probe = experiments[1]["overrides"];
    EXPECT_NE(std::find(probe.begin(), probe.end(), "sweep.positional=[rotary]"), probe.end())
        << probe.dump();
    EXPECT_NE(std::find(probe.begin(), probe.end(), "sweep.seed=[0]"), probe.end());
    EXPECT_EQ(probe.back(), learns ? "training.steps=300" : "training.steps=30");
    const nlohmann::json& task = claim["numbers"]["tasks"][0];
    EXPECT_EQ(task["larger_budget"], learns);
    EXPECT_EQ(task["larger_budget_probe"], learns ? "rotary, lr 0.001, seed 0 (learned it)"
                                                  : "rotary, lr 0.001, seed 0 (did not learn it)");
    const std::string report = testing::read_file(tmp / "out/report.md");
    EXPECT_NE(report.find(learns ? "parity: rotary, lr 0.001, seed 0 (learned it), swept again"
                                 : "(did not learn it), not swept again"),
              std::string::npos)
        << report;
    if (learns) {  // the verdict's runs are the larger sweep's: parity is judged
      const std::string runs = experiments[2]["runs"];
      EXPECT_EQ(nlohmann::json::parse(testing::read_file(
                    tmp / ("out/" + runs +
                           "/positional=rotary/task.name=parity/"
                           "training.lr=0.001/seed=0/summary.json")))["stop_when"]["met"],
                true);
      EXPECT_FALSE(task["learned_schemes"].empty()) << task.dump();
    }
  }
}

// R2 compares each task at the budget R1 settled on for it. Here R1's first budget (160 steps,
// a check every 20) learns cycle_navigation but not parity, whose probe then learns it at the
// larger budget (300 steps): parity's learned and randomized runs are at 300 steps, and the
// first budget's randomized sweep is narrowed to cycle_navigation.
TEST(Reproduce, R2ComparesATaskAtTheBudgetR1SettledOn) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  write_narrow_r1(tmp, "0.001", "[training.steps=300]", "parity, cycle_navigation",
                  "training.steps=160, training.stop_when.every=20");
  fs::copy_file(PELAB_SOURCE_DIR "/studies/configs/claims/r02.yaml",
                tmp / "studies/configs/claims/r02.yaml");
  auto [code, output] = reproduce_narrow_r1(tmp, "R1,R2");
  ASSERT_EQ(code, 0) << output;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  const nlohmann::json& r2 = j["claims"][1];
  ASSERT_EQ(r2["id"], "R2");
  ASSERT_EQ(r2["numbers"]["larger_budget_tasks"], nlohmann::json::array({"parity"}))
      << "R1's first budget must learn cycle_navigation and not parity: "
      << j["claims"][0]["numbers"].dump();
  std::vector<std::string> randomized;  // each randomized sweep's overrides
  for (const nlohmann::json& e : r2["experiments"])
    if (e["overrides"].dump().find("randomize") != std::string::npos)
      randomized.push_back(e["overrides"].dump());
  ASSERT_EQ(randomized.size(), 2u) << r2["experiments"].dump();
  EXPECT_EQ(randomized[0].find("\"training.steps=300\""), std::string::npos) << randomized[0];
  EXPECT_NE(randomized[0].find("\"sweep.task.name=[cycle_navigation]\""), std::string::npos)
      << randomized[0];
  EXPECT_NE(randomized[1].find("\"sweep.task.name=[parity]\",\"training.steps=300\""),
            std::string::npos)
      << randomized[1];
  // Both of rotary's plain groups learned: parity's is R1's larger sweep, not its first.
  size_t rotary = 0;
  for (const nlohmann::json& pair : r2["numbers"]["pairs"]) {
    if (pair["scheme"] != "rotary") continue;
    ++rotary;
    EXPECT_EQ(pair["plain_learned"], nlohmann::json::array({1, 1})) << pair.dump();
  }
  EXPECT_EQ(rotary, 2u) << r2["numbers"].dump();
  EXPECT_EQ(r2["numbers"]["pairs"].size(), 4u) << r2["numbers"].dump();
  const std::string report = testing::read_file(tmp / "out/report.md");
  EXPECT_NE(report.find("parity at R1's larger budget (`training.steps=300`"), std::string::npos)
      << report;
}

// The committed record of the reproductions' runs: saved without checkpoints, restored into
// an empty output directory, it serves `pelab reproduce` as the runs did, with no training.
TEST(Reproduce, SavedRunSummariesAreReusedAfterARestore) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  write_narrow_r1(tmp, "0.001, 0.003");
  auto [code, output] = reproduce_narrow_r1(tmp);
  ASSERT_EQ(code, 0) << output;
  const nlohmann::json first = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  const std::string tool = "PELAB_CLAIMS_OUT='" + (tmp / "out") + "' PELAB_CLAIM_RUNS='" +
                           (tmp / "record") + "' '" +
                           PELAB_SOURCE_DIR "/studies/tools/claim_runs.sh' ";
  auto [saved, save_output] = testing::shell(tool + "save 2>&1");
  ASSERT_EQ(saved, 0) << save_output;
  EXPECT_NE(save_output.find("saved 2 finished runs"), std::string::npos) << save_output;
  for (const auto& f : fs::recursive_directory_iterator(tmp / "record"))
    EXPECT_NE(f.path().filename(), "checkpoint.safetensors") << f.path();

  fs::remove_all(tmp / "out");
  auto [restored, restore_output] = testing::shell(tool + "restore 2>&1");
  ASSERT_EQ(restored, 0) << restore_output;
  EXPECT_NE(restore_output.find("restored 2 finished runs"), std::string::npos) << restore_output;
  auto [again, again_output] = reproduce_narrow_r1(tmp);
  ASSERT_EQ(again, 0) << again_output;
  EXPECT_NE(again_output.find("0 to start, 0 to resume, 2 already completed"), std::string::npos)
      << again_output;
  const nlohmann::json second = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  EXPECT_EQ(second["claims"][0]["because"], first["claims"][0]["because"]);
  EXPECT_EQ(second["claims"][0]["numbers"], first["claims"][0]["numbers"]);
  // A run that is there already is never overwritten.
  auto [kept, kept_output] = testing::shell(tool + "restore 2>&1");
  EXPECT_NE(kept_output.find("restored 0 finished runs"), std::string::npos) << kept_output;
  EXPECT_NE(kept_output.find("2 already there"), std::string::npos) << kept_output;
}

// `pelab reproduce --quick` end to end, as a user runs it: every claim pelab measures, with
// its training runs, then again to check that finished runs are reused.
TEST(ReproduceSlow, QuickRunsEveryClaimAndReusesRuns) {
  const std::string pelab = testing::pelab_binary();
  ASSERT_TRUE(fs::exists(pelab)) << pelab << " is not built";
  const testing::TempDir tmp;
  const std::string out = tmp / "quick";
  const std::string cmd = "cd '" + std::string(PELAB_SOURCE_DIR) + "' && '" + pelab +
                          "' reproduce --quick --jobs 2 --out '" + out + "'";
  auto [code, output] = testing::shell(cmd);
  ASSERT_EQ(code, 0) << output;
  std::ifstream in(fs::path(out) / "claims.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["claims"].size(), claim_ids().size());
  EXPECT_TRUE(j["quick"].get<bool>());
  std::map<std::string, std::string> runs_of;  // claim → its (first) experiment's runs
  for (const nlohmann::json& c : j["claims"]) {
    const std::string id = c["id"];
    const std::string verdict = c["verdict"];
    EXPECT_TRUE(verdict == "supported" || verdict == "refuted" || verdict == "mixed" ||
                verdict == "inconclusive")
        << id;
    EXPECT_FALSE(c["because"].get<std::string>().empty()) << id;
    for (const nlohmann::json& f : c["figures"])
      EXPECT_TRUE(fs::exists(fs::path(out) / f.get<std::string>())) << id << ": " << f;
    if (!c["experiments"].empty()) runs_of[id] = c["experiments"][0]["runs"];
  }
  // The claims on the default comparison's runs share them rather than training them again.
  ASSERT_FALSE(runs_of["C5"].empty());
  for (const std::string id : {"C4", "C14", "C16"}) EXPECT_EQ(runs_of[id], runs_of["C5"]) << id;
  EXPECT_NE(runs_of["C1"], runs_of["C5"]);
  // R2's plain runs are R1's: every experiment of R1 is one of R2's.
  std::map<std::string, std::vector<std::string>> experiments_of;
  for (const nlohmann::json& c : j["claims"])
    for (const nlohmann::json& e : c["experiments"]) experiments_of[c["id"]].push_back(e["runs"]);
  ASSERT_FALSE(experiments_of["R1"].empty());
  for (const std::string& runs : experiments_of["R1"])
    EXPECT_NE(std::find(experiments_of["R2"].begin(), experiments_of["R2"].end(), runs),
              experiments_of["R2"].end())
        << runs;
  auto [again, output2] = testing::shell(cmd);
  ASSERT_EQ(again, 0) << output2;
  EXPECT_EQ(output2.find("start "), std::string::npos) << "a finished run was trained again";
}

}  // namespace
}  // namespace pelab
