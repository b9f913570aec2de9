// Provenance: whether the build and the configs are one clean commit, and on which CPU: what a
// result recorded under docs/ names, and what refuses a tree that is not clean unless
// --allow-dirty.
#include "pelab/run/provenance.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "pelab/core/error.h"
#include "pelab/core/machine.h"
#include "pelab_process.h"

namespace pelab {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

// A git checkout holding a copy of the project's configs, committed.
std::string configs_checkout(const TempDir& tmp) {
  return testing::make_checkout(tmp, {"configs"});
}

Provenance clean_binary(Provenance p) {
  p.binary_commit = p.source_commit;  // as if the binary were built from this checkout
  return p;
}

TEST(Provenance, ReadsTheCheckoutAndTheMachine) {
  const TempDir tmp;
  const std::string repo = configs_checkout(tmp);
  const Provenance p = read_provenance(repo + "/configs", false);
  EXPECT_EQ(fs::canonical(p.source_dir), fs::canonical(repo));
  EXPECT_TRUE(std::regex_match(p.source_commit, std::regex("[0-9a-f]{12}"))) << p.source_commit;
  EXPECT_EQ(p.source_changes, "");
  EXPECT_EQ(clean_binary(p).dirty_reason(), "");
  EXPECT_EQ(p.cpu, cpu_model_name());
  EXPECT_TRUE(p.isa == "avx512" || p.isa == "avx2" || p.isa == "scalar") << p.isa;
  const nlohmann::json j = clean_binary(p).to_json();
  EXPECT_TRUE(j["clean"].get<bool>());
  EXPECT_NE(clean_binary(p).describe().find("(clean); " + p.cpu + ", " + p.isa), std::string::npos);
}

TEST(Provenance, UncommittedChangesOrAnotherCommitAreNotClean) {
  const TempDir tmp;
  const std::string repo = configs_checkout(tmp);
  write_file(fs::path(repo) / "configs/default.yaml", "edited\n");
  const Provenance edited = clean_binary(read_provenance(repo + "/configs", false));
  EXPECT_NE(edited.dirty_reason().find("uncommitted changes (configs/default.yaml)"),
            std::string::npos)
      << edited.dirty_reason();
  EXPECT_THROW(require_clean_tree(edited, "pelab reproduce"), Error);
  Provenance allowed = edited;
  allowed.allow_dirty = true;
  EXPECT_NO_THROW(require_clean_tree(allowed, "pelab reproduce"));
  EXPECT_NE(allowed.describe().find("not clean, run with --allow-dirty"), std::string::npos);

  Provenance other = clean_binary(read_provenance(tmp.path().string(), false));
  other.source_dir = repo;
  other.source_is_pelab = true;
  other.source_commit = "0123456789ab";
  other.binary_commit = "ba9876543210";
  EXPECT_NE(other.dirty_reason().find("built from commit ba9876543210"), std::string::npos);
  other.binary_commit = "0123456789ab-dirty";
  EXPECT_NE(other.dirty_reason().find("with uncommitted changes"), std::string::npos);
  other.binary_commit = "unknown";
  EXPECT_NE(other.dirty_reason().find("commit is unknown"), std::string::npos);
}

// A new, never committed config is a change; configs in a repository of the user's own are
// checked for changes but not held to the binary's commit.
TEST(Provenance, UntrackedConfigsCountAndOtherRepositoriesAreNotHeldToTheBinary) {
  const TempDir tmp;
  const std::string repo = configs_checkout(tmp);
  Provenance own = clean_binary(read_provenance(repo + "/configs", false));
  EXPECT_FALSE(own.source_is_pelab);
  own.binary_commit = "0123456789ab";  // another commit than the user's repository's
  EXPECT_EQ(own.dirty_reason(), "");
  write_file(fs::path(repo) / "configs/mine.yaml", "name: mine\n");
  const Provenance untracked = clean_binary(read_provenance(repo + "/configs", false));
  EXPECT_NE(untracked.dirty_reason().find("configs/mine.yaml"), std::string::npos)
      << untracked.dirty_reason();
  // pelab's own checkout is recognised, so its commit must match the binary's.
  const Provenance source = read_provenance(PELAB_SOURCE_DIR "/configs", false);
  EXPECT_TRUE(source.source_is_pelab || source.source_dir.empty());
}

// Outside a git checkout (installed configs) the binary's commit is the whole provenance.
TEST(Provenance, InstalledConfigsFollowTheBinary) {
  const TempDir tmp;
  Provenance p = read_provenance(tmp.path().string(), false);
  EXPECT_EQ(p.source_dir, "");
  p.binary_commit = "0123456789ab";
  EXPECT_EQ(p.dirty_reason(), "");
}

// Through the command line: `pelab provenance` refuses a tree that is not clean with one line
// (exit 2) and reports it with --allow-dirty.
TEST(Provenance, TheCommandRefusesADirtyTreeUnlessAllowed) {
  const TempDir tmp;
  const std::string repo = configs_checkout(tmp);
  write_file(fs::path(repo) / "configs/default.yaml",
             read_file(fs::path(repo) / "configs/default.yaml") + "# an edit\n");
  const testing::Outcome refused = testing::run_pelab({"provenance"}, repo);
  EXPECT_EQ(testing::user_error_problem(refused, {"pelab provenance: results must come from one "
                                                  "clean commit",
                                                  "--allow-dirty"}),
            "");
  const testing::Outcome allowed = testing::run_pelab({"provenance", "--allow-dirty"}, repo);
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.out.find("not clean, run with --allow-dirty"), std::string::npos)
      << allowed.out;
}

}  // namespace
}  // namespace pelab
