// Every experiment config pelab ships loads as `pelab sweep` would load it (each run of its
// sweep included), and every positional group loads into the default job: a shipped config
// that a later change broke fails here rather than in a user's first run.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/core/error.h"

namespace pelab {
namespace {

namespace fs = std::filesystem;

const fs::path kConfigs = fs::path(PELAB_SOURCE_DIR) / "configs";

std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  return files;
}

TEST(ShippedConfigs, EveryExperimentLoadsWithItsSweep) {
  // positional/ holds groups, not experiments; the studies' experiments are theirs to test.
  int64_t loaded = 0;
  for (const fs::path& dir : {kConfigs, kConfigs / "tasks"})
    for (const fs::path& file : yaml_files(dir)) {
      EXPECT_NO_THROW(load_experiment(file.string())) << file;
      ++loaded;
    }
  EXPECT_GE(loaded, 18);  // default, quickstarts, the survey tasks
}

TEST(ShippedConfigs, EveryPositionalGroupLoads) {
  // Each group as a causal model of the default job would hold it.
  const std::string config = (kConfigs / "default.yaml").string();
  const std::vector<fs::path> groups = yaml_files(kConfigs / "positional");
  ASSERT_GE(groups.size(), 10u);
  for (const fs::path& group : groups) {
    const std::string name = group.stem().string();
    try {
      const ExperimentConfig c = load_experiment(config, {"positional=" + name});
      EXPECT_EQ(c.group_files.at("positional"), group.string()) << name;
    } catch (const Error& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace pelab
