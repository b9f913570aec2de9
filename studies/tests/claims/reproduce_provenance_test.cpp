// A full `pelab reproduce` refuses a tree that is not one clean commit unless --allow-dirty,
// and the report records whether it was clean.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "pelab_process.h"

namespace pelab {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

// A git checkout holding a copy of the framework's configs and the studies', committed.
std::string make_checkout(const TempDir& tmp) {
  return testing::make_checkout(tmp, {"configs", "studies/configs"});
}

// Through the command line: refused with one line and nothing written; accepted and recorded
// with --allow-dirty.
TEST(Provenance, ReproduceRefusesADirtyTreeUnlessAllowed) {
  const TempDir tmp;
  const std::string repo = make_checkout(tmp);
  write_file(fs::path(repo) / "studies/configs/claims/c08.yaml",
             read_file(fs::path(repo) / "studies/configs/claims/c08.yaml") + "# an edit\n");
  const testing::Outcome refused =
      testing::run_pelab({"reproduce", "--only", "C8", "--out", "report"}, repo);
  EXPECT_EQ(testing::user_error_problem(refused, {"pelab reproduce: results must come from one "
                                                  "clean commit",
                                                  "--allow-dirty"}),
            "");
  EXPECT_FALSE(fs::exists(fs::path(repo) / "report"));
  const testing::Outcome allowed =
      testing::run_pelab({"reproduce", "--only", "C8", "--out", "report", "--allow-dirty"}, repo);
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(fs::path(repo) / "report/claims.json"));
  EXPECT_TRUE(j["provenance"]["allow_dirty"].get<bool>());
  EXPECT_FALSE(j["provenance"]["clean"].get<bool>());
  EXPECT_NE(
      read_file(fs::path(repo) / "report/report.md").find("not clean, run with --allow-dirty"),
      std::string::npos);
}

}  // namespace
}  // namespace pelab
