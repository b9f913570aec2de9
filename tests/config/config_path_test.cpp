// Config groups from anywhere: a config's groups are looked up in its own configs directory,
// then in --config-path / PELAB_CONFIG_PATH, then in the configs shipped with pelab.
// print-config names the file each group came from.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab_process.h"

namespace pelab::testing {
namespace {

const std::string kAway = R"(name: away
model:
  d_model: 16
  heads: 2
  layers: 1
positional: PLACE
task:
  name: shift
  max_length: 8
training:
  steps: 2
  batch_size: 4
  warmup: 1
evaluation:
  lengths: [4]
  examples: 4
)";

std::string away(const std::string& positional) {
  std::string text = kAway;
  return text.replace(text.find("PLACE"), 5, positional);
}

// The search path is process-wide; each test leaves it empty.
class ConfigPath : public ::testing::Test {
 protected:
  void TearDown() override { set_config_search_path({}); }
  TempDir dir_;
};

TEST_F(ConfigPath, TheOwnDirectoryComesFirstThenTheSearchPathInOrder) {
  write_file(dir_.path() / "own/positional/mine.yaml", "type: alibi\n");
  write_file(dir_.path() / "a/positional/mine.yaml", "type: t5\n");
  write_file(dir_.path() / "a/positional/other.yaml", "type: learned\nmax_len: 64\n");
  write_file(dir_.path() / "b/positional/other.yaml", "type: t5\n");
  set_config_search_path({dir_ / "a", dir_ / "b"});
  const ExperimentConfig mine = parse_experiment(away("mine"), "x.yaml", {}, dir_ / "own");
  EXPECT_EQ(mine.model.positional.type, "alibi");
  EXPECT_EQ(mine.group_files.at("positional"), dir_ / "own/positional/mine.yaml");
  const ExperimentConfig other = parse_experiment(away("other"), "x.yaml", {}, dir_ / "own");
  EXPECT_EQ(other.model.positional.type, "learned");
  EXPECT_EQ(other.group_files.at("positional"), dir_ / "a/positional/other.yaml");
  const ExperimentConfig shipped =
      parse_experiment(away("mine"), "x.yaml", {"positional=rotary"}, PELAB_SOURCE_DIR "/configs");
  EXPECT_EQ(shipped.model.positional.type, "rotary");
  EXPECT_EQ(shipped.group_files.count("task"), 0u);  // written in the file, not a group
}

TEST_F(ConfigPath, AMissingGroupListsTheGroupsOnThePath) {
  write_file(dir_.path() / "a/positional/mine.yaml", "type: alibi\n");
  set_config_search_path({dir_ / "a", PELAB_SOURCE_DIR "/configs"});
  try {
    parse_experiment(away("rotry"), "x.yaml", {}, dir_ / "own");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("x.yaml:6: positional: no config group 'rotry' (no positional/rotry.yaml in " +
                     dir_ / "own" + ", " + dir_ / "a" + ", "),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("valid: alibi, alibi_deepmind, binary, cope, fire, index, kerple, learned, "
                     "mine, none,"),
              std::string::npos)
        << m;
  }
}

// With no groups at all, the message must not read "valid: none" (the scheme named none).
TEST_F(ConfigPath, NoGroupsAtAllIsSaidSo) {
  try {
    parse_experiment(away("rotary"), "x.yaml", {}, dir_ / "own");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no positional groups found on the search path: " + dir_ / "own"),
              std::string::npos)
        << m;
    EXPECT_EQ(m.find("valid: none"), std::string::npos) << m;
  }
}

// The command line: a config outside the project names shipped groups; --config-path (any
// number) and PELAB_CONFIG_PATH add directories, and print-config names each group's file.
TEST_F(ConfigPath, PrintConfigFromAnywhereNamesEachGroupsFile) {
  write_file(dir_.path() / "away.yaml", away("rotary"));
  write_file(dir_.path() / "mine/positional/mine.yaml", "type: alibi\n");
  write_file(dir_.path() / "env/positional/env.yaml", "type: t5\n");
  const Outcome shipped = run_pelab({"print-config", "away.yaml"}, dir_.path());
  ASSERT_EQ(shipped.exit_code, 0) << shipped.err;
  EXPECT_EQ(shipped.out.rfind("# positional: ", 0), 0u) << shipped.out;
  EXPECT_NE(shipped.out.find("configs/positional/rotary.yaml\n"), std::string::npos);
  EXPECT_NE(shipped.out.find("type: rotary"), std::string::npos);

  const Outcome mine = run_pelab({"print-config", "away.yaml", "positional=mine", "--config-path",
                                  "nowhere", "--config-path", "mine"},
                                 dir_.path());
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  EXPECT_NE(mine.out.find("# positional: " + dir_ / "mine/positional/mine.yaml"), std::string::npos)
      << mine.out;

  const auto [code, out] =
      shell("cd " + dir_.path().string() + " && PELAB_CONFIG_PATH=nowhere:env " + pelab_binary() +
            " print-config away.yaml positional=env");
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("type: t5"), std::string::npos) << out;

  const Outcome missing = run_pelab({"print-config", "away.yaml", "positional=env"}, dir_.path());
  EXPECT_EQ(user_error_problem(missing, {"no config group 'env'", "valid: alibi"}), "");
}

// A sweep's runs are pelab processes: they look where the sweep looks.
TEST_F(ConfigPath, ASweepsRunsUseTheSweepsSearchPath) {
  write_file(dir_.path() / "away.yaml", away("mine") + "sweep:\n  seed: [0, 1]\n");
  write_file(dir_.path() / "mine/positional/mine.yaml", "type: alibi\n");
  const Outcome o =
      run_pelab({"sweep", "away.yaml", "--config-path", "mine", "--out", "runs"}, dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(read_file(dir_.path() / "runs/seed=1/config.yaml").find("type: alibi"),
            std::string::npos);
}

// A sweep's runs find the directories through PELAB_CONFIG_PATH, where ':' separates them: a
// directory holding ':' passed the sweep's own check, then every run failed. Refused first,
// naming the option, before anything is written; whether the ':' is in the argument or in
// the working directory a relative one is resolved against.
TEST_F(ConfigPath, ADirectoryWithAColonIsRefusedBeforeAnythingIsWritten) {
  write_file(dir_.path() / "away.yaml", away("mine") + "sweep:\n  seed: [0, 1]\n");
  write_file(dir_.path() / "my:groups/positional/mine.yaml", "type: alibi\n");
  write_file(dir_.path() / "a:b/away.yaml", away("mine") + "sweep:\n  seed: [0, 1]\n");
  write_file(dir_.path() / "a:b/mine/positional/mine.yaml", "type: alibi\n");
  for (const auto& [cwd, args] :
       {std::pair{dir_.path(), std::vector<std::string>{"sweep", "away.yaml", "--config-path",
                                                        "my:groups", "--out", "runs"}},
        std::pair{dir_.path() / "a:b",
                  std::vector<std::string>{"sweep", "away.yaml", "--config-path", "mine"}},
        std::pair{dir_.path(), std::vector<std::string>{"print-config", "away.yaml",
                                                        "--config-path", "my:groups"}}}) {
    const std::vector<std::string> before = listing(dir_.path());
    const Outcome o = run_pelab(args, cwd);
    EXPECT_EQ(user_error_problem(o, {"--config-path ",
                                     "holds ':', which separates the "
                                     "directories of PELAB_CONFIG_PATH"}),
              "")
        << args[3];
    EXPECT_EQ(listing(dir_.path()), before) << "files were left behind";
  }
}

}  // namespace
}  // namespace pelab::testing
