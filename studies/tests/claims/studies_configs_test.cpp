// The studies' experiments (the published setups the reproductions sweep) load with their
// sweeps, their groups resolved from the framework's shipped configs as `pelab` resolves them.
#include <gtest/gtest.h>

#include <filesystem>

#include "pelab/config/experiment.h"

namespace pelab {
namespace {

namespace fs = std::filesystem;

TEST(StudiesConfigs, EveryReproductionLoadsWithItsSweep) {
  set_config_search_path({PELAB_SOURCE_DIR "/configs"});
  int64_t loaded = 0;
  for (const fs::directory_entry& e :
       fs::directory_iterator(fs::path(PELAB_SOURCE_DIR) / "studies/configs/reproductions")) {
    if (e.path().extension() != ".yaml") continue;
    EXPECT_NO_THROW(load_experiment(e.path().string())) << e.path();
    ++loaded;
  }
  EXPECT_GE(loaded, 2);  // Delétang's and Kazemnejad's setups
  set_config_search_path({});
}

}  // namespace
}  // namespace pelab
