// The claim machinery: the rotary checks on known-good and known-bad constructions, and
// `pelab reproduce` on the claims that need no training.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
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

// The cells of a Markdown table row, trimmed ("| a | b |" → {"a", "b"}).
std::vector<std::string> row_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line.substr(1));
  for (std::string cell; std::getline(in, cell, '|');) {
    const size_t begin = cell.find_first_not_of(' '), end = cell.find_last_not_of(' ');
    cells.push_back(begin == std::string::npos ? "" : cell.substr(begin, end - begin + 1));
  }
  return cells;
}

// What a report's tables show of sequence and token accuracy: the columns whose header says
// they hold both ("sequence / token"), and every cell of theirs with a number ("0.55") that
// holds only one (no " / "), as "<header>: <cell>".
struct AccuracyColumns {
  int64_t columns = 0;
  std::vector<std::string> one_accuracy_cells;
};
AccuracyColumns accuracy_columns(const std::string& report) {
  std::vector<std::string> lines;
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::regex number("[0-9]\\.[0-9]");
  AccuracyColumns out;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("|", 0) != 0 || lines[i + 1].rfind("|--", 0) != 0) continue;
    const std::vector<std::string> header = row_cells(lines[i]);
    std::vector<size_t> both;
    for (size_t k = 0; k < header.size(); ++k)
      if (header[k].find("sequence / token") != std::string::npos) both.push_back(k);
    out.columns += static_cast<int64_t>(both.size());
    for (size_t r = i + 2; r < lines.size() && lines[r].rfind("|", 0) == 0; ++r) {
      const std::vector<std::string> cells = row_cells(lines[r]);
      for (const size_t k : both)
        if (k < cells.size() && std::regex_search(cells[k], number) &&
            cells[k].find(" / ") == std::string::npos)
          out.one_accuracy_cells.push_back(header[k] + ": " + cells[k]);
    }
  }
  return out;
}

// The control of accuracy_columns: a table whose column says both and shows one is caught, as
// is none that shows both; a column that does not claim both is not its business.
TEST(ReportTables, AColumnThatDropsTokenAccuracyIsCaught) {
  const std::string both =
      "\n| scheme | in-distribution (sequence / token) | steps |\n|---|--:|--:|\n"
      "| rotary | 0.02 ± 0.01 / 0.91 | 400 |\n| alibi | — | 300 |\n\n";
  const AccuracyColumns good = accuracy_columns(both);
  EXPECT_EQ(good.columns, 1);
  EXPECT_TRUE(good.one_accuracy_cells.empty());
  const std::string dropped =
      "\n| scheme | in-distribution (sequence / token) | steps |\n|---|--:|--:|\n"
      "| rotary | 0.02 ± 0.01 | 400 |\n\n";
  const AccuracyColumns bad = accuracy_columns(dropped);
  ASSERT_EQ(bad.one_accuracy_cells.size(), 1u);
  EXPECT_EQ(bad.one_accuracy_cells[0], "in-distribution (sequence / token): 0.02 ± 0.01");
  EXPECT_EQ(accuracy_columns("\n| scheme | ms/step |\n|---|--:|\n| rotary | 1.5 |\n").columns, 0);
}

// Every table of a claim's report that shows an accuracy shows sequence and token accuracy
// side by side: at least `columns` columns say so, and none of their cells drops one.
void expect_both_accuracies(const std::string& report, int64_t columns) {
  const AccuracyColumns a = accuracy_columns(report);
  EXPECT_GE(a.columns, columns) << report;
  for (const std::string& cell : a.one_accuracy_cells) ADD_FAILURE() << "one accuracy: " << cell;
}

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

// A studies configs directory under `root` with R3 and its experiment, R3's quick section
// narrowed to rotary on copy at the given learning rates and 20 steps: seconds to run. These
// runs check the machinery every trained claim shares (diverged runs, the CPUs a report names,
// saved runs); with no NoPE run R3's own verdict is inconclusive.
void write_narrow_r3(const testing::TempDir& root, const std::string& lrs) {
  fs::create_directories(fs::path(root / "studies/configs/claims"));
  fs::create_directories(fs::path(root / "studies/configs/reproductions"));
  const std::string source = PELAB_SOURCE_DIR "/studies/configs/";
  fs::copy_file(source + "reproductions/kazemnejad.yaml",
                root / "studies/configs/reproductions/kazemnejad.yaml");
  std::string r3 = testing::read_file(source + "claims/r03.yaml");
  const size_t quick = r3.find("\nquick:\n"), verdict = r3.find("\nverdict:");
  ASSERT_TRUE(quick != std::string::npos && verdict > quick);
  r3.replace(quick + 1, verdict - quick,
             "quick:\n  min_seeds: 1\n  overrides: [\"sweep.positional=[rotary]\", "
             "\"sweep.task.name=[copy]\", \"sweep.training.lr=[" +
                 lrs +
                 "]\", \"sweep.seed=[0]\", task.symbols=8, task.max_length=4, "
                 "training.steps=20, training.warmup=0, \"evaluation.lengths=[4, 8]\", "
                 "evaluation.examples=20]\n");
  testing::write_file(root / "studies/configs/claims/r03.yaml", r3);
}

// `pelab reproduce --quick --only <only>` in `root` into root/out.
std::pair<int, std::string> reproduce_in(const testing::TempDir& root,
                                         const std::string& only = "R3",
                                         const std::string& flags = "--quick") {
  return testing::shell("cd '" + std::string(root / "") + "' && '" + testing::pelab_binary() +
                        "' reproduce " + flags + " --only " + only + " --jobs 2 --out out 2>&1");
}

// A run whose training diverges is a result, not a broken sweep: the claim is judged with it
// counted as a run that did not learn, and the report lists it.
TEST(Reproduce, ADivergedRunIsCountedAndListedAndTheClaimIsJudged) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  write_narrow_r3(tmp, "0.001, 1e30");  // 1e30 diverges at once
  auto [code, output] = reproduce_in(tmp);
  ASSERT_EQ(code, 0) << output;
  const std::string diverged_run = "positional=rotary/task.name=copy/training.lr=1e30/seed=0";
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  const nlohmann::json& experiment = j["claims"][0]["experiments"][0];
  ASSERT_EQ(experiment["diverged"].size(), 1u) << experiment.dump();
  EXPECT_NE(experiment["diverged"][0].get<std::string>().find(diverged_run), std::string::npos);
  EXPECT_EQ(j["claims"][0]["verdict"], "inconclusive");  // no NoPE to compare with
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
  EXPECT_NE(report.find("| rotary / copy | 0.001: "), std::string::npos) << report;
  EXPECT_NE(report.find("1e+30: 0.000 (1) | 0.001 |"), std::string::npos) << report;
  // R3's scores (exact match / token accuracy) and the sweep's per-seed table.
  expect_both_accuracies(report, 3);
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
  write_narrow_r3(tmp, "0.001, 0.003");
  auto [code, output] = reproduce_in(tmp);
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
  std::tie(code, output) = reproduce_in(tmp);  // both runs are reused
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

// A small suite of the chomsky suite's tasks (`tasks`: the suite's name: config file lines) on
// a small encoder, with rotary plain and randomized (from [0, max_position)) and a cap of
// `steps`, at root/configs/suites/tiny.yaml: seconds to run. At 400 steps plain rotary learns
// even_pairs, and with positions from [0, 20000) randomized rotary does not (it does by 2000).
void write_tiny_suite(const testing::TempDir& root, const std::string& tasks, int steps = 40,
                      int max_position = 64) {
  fs::create_directories(fs::path(root / "configs/suites"));
  testing::write_file(
      root / "configs/suites/tiny.yaml",
      "suite: tiny\ndescription: small\ntasks:\n" + tasks +
          "protocol:\n  model: {d_model: 32, heads: 2, layers: 2, d_ff: 64, causal: false}\n"
          "  training: {batch_size: 16, warmup: 0, log_every: 20}\n"
          "budget:\n  steps: " +
          std::to_string(steps) +
          "\n  stop_when: {accuracy: 0.95, metric: sequence_accuracy, "
          "patience: 2, every: 20, examples: 8}\n  seeds: [0]\n  lrs: [0.003]\n"
          "  training_lengths: [1, 4]\n  evaluation_lengths: [4, 8]\n  examples: 20\n"
          "schemes: [rotary]\nrandomized: {schemes: [rotary], max_position: " +
          std::to_string(max_position) +
          "}\ncost: {seconds_per_token: 1.0e-6, at_length: 8, step_time: {base: none, factors: {}, "
          "measured: a test guess}}\n");
}

// The lines of write_tiny_suite's tasks for parity_check and even_pairs.
std::string tiny_tasks(bool parity = true) {
  const std::string dir = PELAB_SOURCE_DIR "/configs/tasks/";
  return (parity ? "  parity_check: " + dir + "parity.yaml\n" : std::string()) +
         "  even_pairs: " + dir + "even_pairs_deletang.yaml\n";
}

// R1 and R2 read their configs with the tiny suite and these settings (and quick section, if
// any) in place of their own.
void write_suite_claims(const testing::TempDir& root, const std::string& r1_settings,
                        const std::string& r2_settings) {
  fs::create_directories(fs::path(root / "studies/configs/claims"));
  for (const auto& [file, settings] : {std::pair{std::string("r01.yaml"), r1_settings},
                                       std::pair{std::string("r02.yaml"), r2_settings}}) {
    std::string config = testing::read_file(PELAB_SOURCE_DIR "/studies/configs/claims/" + file);
    const size_t begin = config.find("\nsettings:\n"), end = config.find("\nverdict:");
    ASSERT_TRUE(begin != std::string::npos && end > begin) << file;
    config.replace(begin + 1, end - begin, "settings:\n" + settings);
    testing::write_file(root / ("studies/configs/claims/" + file), config);
  }
}

// R1 and R2 train exactly the runs `pelab suite run` makes, in its directory: after the claims,
// the suite has nothing left to train, and the claims read the same runs.
TEST(Reproduce, R1AndR2TakeTheSuitesRunsAndTheSuiteReusesThem) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  write_tiny_suite(tmp, tiny_tasks());
  write_suite_claims(tmp,
                     "  suite: configs/suites/tiny.yaml\n  tasks: [parity_check]\n"
                     "  controls: [even_pairs]\n  schemes: [rotary]\n  min_tasks: 1\n",
                     "  plain_runs_of: R1\n  min_seeds: 1\n");
  auto [code, output] = reproduce_in(tmp, "R1,R2", "--allow-dirty");
  ASSERT_EQ(code, 0) << output;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  const nlohmann::json& r1 = j["claims"][0];
  const nlohmann::json& r2 = j["claims"][1];
  // The suite's directory, relative to OUT.
  ASSERT_EQ(r1["experiments"].size(), 1u) << r1["experiments"].dump();
  EXPECT_EQ(r1["experiments"][0]["runs"], "../runs/suites/tiny");
  EXPECT_EQ(r2["experiments"][0]["runs"], "../runs/suites/tiny");
  for (const char* run : {"task=parity_check/scheme=rotary", "task=even_pairs/scheme=rotary",
                          "task=even_pairs/scheme=rotary+randomized"})
    EXPECT_TRUE(fs::exists(fs::path(tmp / "runs/suites/tiny") / run /
                           "training.lr=0.003/seed=0/summary.json"))
        << run;
  // The control is judged beside the task, and both rows are in R1's numbers.
  ASSERT_EQ(r1["numbers"]["tasks"].size(), 2u) << r1["numbers"].dump();
  EXPECT_EQ(r1["numbers"]["tasks"][1]["task"], "even_pairs");
  EXPECT_EQ(r1["numbers"]["tasks"][1]["control"], true);
  const std::string report = testing::read_file(tmp / "out/report.md");
  EXPECT_NE(report.find("pelab at most 40 steps at batch 16"), std::string::npos) << report;
  EXPECT_NE(report.find("Every pair is compared at the suite's cap (40 steps"), std::string::npos)
      << report;
  // R1's best and protocol columns, R2's plain and randomized ones: token accuracy, their
  // metric, with sequence accuracy beside it.
  expect_both_accuracies(report, 4);
  // The suite finds every run finished: one compute budget for both.
  auto [suite_code, suite_output] =
      testing::shell("cd '" + std::string(tmp / "") + "' && '" + testing::pelab_binary() +
                     "' suite run configs/suites/tiny.yaml --no-progress --no-plots 2>&1");
  ASSERT_EQ(suite_code, 0) << suite_output;
  EXPECT_NE(suite_output.find("0 to start, 0 to resume, 4 already completed"), std::string::npos)
      << suite_output;
}

// R1's probe: the best scheme of the probed task, at its selected lr and the suite's first
// seed, trained to the probe's cap in a directory beside the suite's; a quick run takes its
// smaller budget into a directory of its own under OUT.
TEST(Reproduce, R1ProbesItsTaskAtTheLargerCapBesideTheSuitesRuns) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  write_tiny_suite(tmp, tiny_tasks());
  write_suite_claims(tmp,
                     "  suite: configs/suites/tiny.yaml\n  tasks: [parity_check]\n"
                     "  schemes: [rotary]\n  probes:\n"
                     "    - {task: parity_check, steps: 80, schemes: 1}\n"
                     "  quick_budget: {}\nquick:\n  quick_budget: {steps: 20, examples: 10}\n",
                     "  plain_runs_of: R1\n");
  auto [code, output] = reproduce_in(tmp, "R1");
  ASSERT_EQ(code, 0) << output;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  const nlohmann::json& experiments = j["claims"][0]["experiments"];
  ASSERT_EQ(experiments.size(), 2u) << experiments.dump();
  EXPECT_EQ(experiments[0]["runs"], "runs/suite-tiny-quick");
  EXPECT_EQ(experiments[0]["steps"], 20);
  EXPECT_EQ(experiments[1]["runs"], "runs/suite-tiny-quick-steps80");
  EXPECT_EQ(experiments[1]["steps"], 80);
  EXPECT_TRUE(fs::exists(tmp / "out/runs/suite-tiny-quick-steps80/task=parity_check/"
                               "scheme=rotary/training.lr=0.003/seed=0/summary.json"));
  EXPECT_FALSE(fs::exists(tmp / "runs/suites/tiny")) << "a quick run wrote into the suite's runs";
  const std::string report = testing::read_file(tmp / "out/report.md");
  EXPECT_NE(report.find("**Probes**"), std::string::npos) << report;
  EXPECT_NE(report.find("parity_check: rotary (in-distribution "), std::string::npos) << report;
}

// R2's larger cap: a task whose plain runs learned within the suite's cap and whose randomized
// runs did not gets one probe of the randomized scheme at the larger cap, beside the suite's
// runs; only if it learns are the task's randomized runs trained again there.
TEST(Reproduce, R2ProbesTheRandomizedSideAtTheLargerCap) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  write_tiny_suite(tmp, tiny_tasks(/*parity=*/false), 400, 20000);
  write_suite_claims(tmp,
                     "  suite: configs/suites/tiny.yaml\n  tasks: [even_pairs]\n"
                     "  schemes: [rotary]\n",
                     "  plain_runs_of: R1\n  min_seeds: 1\n  larger_cap: 2000\n");
  auto [code, output] = reproduce_in(tmp, "R2", "--allow-dirty");
  ASSERT_EQ(code, 0) << output;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(tmp / "out/claims.json"));
  const nlohmann::json& r2 = j["claims"][0];
  const nlohmann::json& pairs = r2["numbers"]["pairs"];
  ASSERT_EQ(pairs.size(), 1u) << r2["numbers"].dump();
  ASSERT_EQ(pairs[0]["plain_learned"], nlohmann::json::array({1, 1}))
      << "the setting must learn plain and not randomized: " << pairs.dump();
  const nlohmann::json& experiments = r2["experiments"];
  ASSERT_GE(experiments.size(), 2u) << experiments.dump();
  EXPECT_EQ(experiments[1]["runs"], "../runs/suites/tiny-steps2000");
  EXPECT_EQ(experiments[1]["steps"], 2000);
  EXPECT_EQ(experiments[1]["schemes"], nlohmann::json::array({"rotary+randomized"}));
  const std::string report = testing::read_file(tmp / "out/report.md");
  const bool learned =
      report.find(
          "even_pairs: probe rotary+randomized (lr 0.003, seed 0) learned it; trained "
          "again: rotary+randomized") != std::string::npos;
  EXPECT_TRUE(learned || report.find("even_pairs: probe rotary+randomized (lr 0.003, seed 0) "
                                     "did not learn it; not trained again") != std::string::npos)
      << report;
  // Trained again, the randomized side is the larger cap's (the probe's run among them).
  EXPECT_EQ(experiments.size(), learned ? 3u : 2u) << experiments.dump();
  EXPECT_EQ(pairs[0]["randomized_larger_cap"], learned) << pairs.dump();

  // The probe's runs are the reproduction's: the claims' record keeps them (the suite's own
  // runs are the suite's record, not this one) and gives them back to a new clone.
  const fs::path probe = tmp / "runs/suites/tiny-steps2000";
  const auto summaries_under = [](const fs::path& dir) {
    size_t n = 0;
    for (const auto& f : fs::recursive_directory_iterator(dir)) {
      EXPECT_NE(f.path().filename(), "checkpoint.safetensors") << f.path();
      n += f.path().filename() == "summary.json";
    }
    return n;
  };
  size_t trained = 0;
  for (const auto& f : fs::recursive_directory_iterator(probe))
    trained += f.path().filename() == "summary.json";
  ASSERT_GE(trained, 1u);
  const std::string tool = "PELAB_CLAIMS_OUT='" + (tmp / "out") + "' PELAB_CLAIM_RUNS='" +
                           (tmp / "record") + "' PELAB_SUITE_RUNS='" + (tmp / "runs/suites") +
                           "' '" + PELAB_SOURCE_DIR "/studies/tools/claim_runs.sh' ";
  auto [saved, save_output] = testing::shell(tool + "save 2>&1");
  ASSERT_EQ(saved, 0) << save_output;
  EXPECT_EQ(summaries_under(tmp / "record/suites/tiny-steps2000/runs"), trained) << save_output;
  EXPECT_FALSE(fs::exists(tmp / "record/suites/tiny")) << "the suite's own runs are not a probe";
  fs::remove_all(probe);
  auto [restored, restore_output] = testing::shell(tool + "restore 2>&1");
  ASSERT_EQ(restored, 0) << restore_output;
  EXPECT_EQ(summaries_under(probe), trained) << restore_output;
}

// The committed record of the reproductions' runs: saved without checkpoints, restored into
// an empty output directory, it serves `pelab reproduce` as the runs did, with no training.
TEST(Reproduce, SavedRunSummariesAreReusedAfterARestore) {
  ASSERT_TRUE(fs::exists(testing::pelab_binary())) << "pelab is not built";
  const testing::TempDir tmp;
  write_narrow_r3(tmp, "0.001, 0.003");
  auto [code, output] = reproduce_in(tmp);
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
  auto [again, again_output] = reproduce_in(tmp);
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
  // R1's and R2's runs are the same suite's, in the same directory.
  ASSERT_FALSE(runs_of["R1"].empty());
  EXPECT_EQ(runs_of["R2"], runs_of["R1"]);
  // Every claim's tables: C2, C3, C4, C13, C15, C16, R1, R2, R3 and the sweeps' per-seed
  // tables show sequence and token accuracy side by side.
  expect_both_accuracies(testing::read_file(out + "/report.md"), 12);
  auto [again, output2] = testing::shell(cmd);
  ASSERT_EQ(again, 0) << output2;
  EXPECT_EQ(output2.find("start "), std::string::npos) << "a finished run was trained again";
}

}  // namespace
}  // namespace pelab
