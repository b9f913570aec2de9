#include "pelab/run/provenance.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "pelab/core/build_info.h"
#include "pelab/core/error.h"
#include "pelab/core/machine.h"
#include "pelab/core/process.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

// Runs `git -C dir ARGS` and returns its output, or nullopt if git failed (not a checkout,
// no git installed). Its messages are not shown: a missing checkout is an answer here.
std::optional<std::string> git_output(const std::string& dir,
                                      const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  CaptureOptions options;
  options.search_path = true;
  options.stderr_to = ChildSpec::Stderr::discarded;
  const CapturedRun run = try_run_captured(argv, options);
  if (run.status != 0) return std::nullopt;
  return run.out;
}

std::string without_newline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// The lines of `a`, then those of `b` that `a` does not have (two listings of one checkout).
std::string merged_lines(const std::string& a, const std::string& b) {
  std::string out = a;
  std::istringstream lines(b);
  for (std::string line; std::getline(lines, line);)
    if (("\n" + a).find("\n" + line + "\n") == std::string::npos) out += line + "\n";
  return out;
}

// The first path a `git status --porcelain` listing names, for a one-line message.
std::string first_changed_path(const std::string& porcelain) {
  const std::string line = porcelain.substr(0, porcelain.find('\n'));
  return line.size() > 3 ? line.substr(3) : line;
}

}  // namespace

Provenance read_provenance(const std::string& configs_dir, bool allow_dirty) {
  Provenance p;
  p.version = pelab_version();
  p.binary_commit = pelab_git_commit();
  p.cpu = cpu_model_name();
  p.isa = cpu_vector_isa();
  p.allow_dirty = allow_dirty;
  const std::string dir = fs::absolute(configs_dir).string();
  if (const auto top = git_output(dir, {"rev-parse", "--show-toplevel"})) {
    p.source_dir = without_newline(*top);
    p.source_commit =
        without_newline(git_output(dir, {"rev-parse", "--short=12", "HEAD"}).value_or(""));
    // Tracked files anywhere in the checkout, and new files among the configs: a claim
    // config never committed is as much a change as an edited one.
    p.source_changes = merged_lines(
        git_output(dir, {"status", "--porcelain", "--untracked-files=no"}).value_or("?"),
        git_output(dir, {"status", "--porcelain", "--untracked-files=all", "--", "."})
            .value_or("?"));
    // Configs kept in a repository of the user's own are not pelab's source: that
    // repository's commit cannot equal the binary's, so only its cleanliness is checked.
    p.source_is_pelab = fs::exists(fs::path(p.source_dir) / "cmake" / "build_info.cmake");
  }
  return p;
}

std::string Provenance::dirty_reason() const {
  if (binary_commit == "unknown")
    return "the binary was not built from a git checkout, so its commit is unknown";
  if (binary_commit.ends_with("-dirty"))
    return fmt::format("the binary was built from commit {} with uncommitted changes",
                       binary_commit);
  if (source_dir.empty()) return "";  // installed configs: the binary's commit is the source
  if (!source_changes.empty())
    return fmt::format("{} has uncommitted changes ({}{})", source_dir,
                       first_changed_path(source_changes),
                       source_changes.find('\n') + 1 < source_changes.size() ? ", …" : "");
  if (source_is_pelab && source_commit != binary_commit)
    return fmt::format("the binary was built from commit {} but {} is at {}; rebuild",
                       binary_commit, source_dir, source_commit);
  return "";
}

std::string Provenance::describe() const {
  const std::string reason = dirty_reason();
  return fmt::format("pelab {}, commit {} ({}); {}, {}", version, binary_commit,
                     reason.empty() ? "clean"
                     : allow_dirty  ? "not clean, run with --allow-dirty: " + reason
                                    : "not clean: " + reason,
                     cpu, isa);
}

nlohmann::json Provenance::to_json() const {
  const std::string reason = dirty_reason();
  return {{"version", version},
          {"commit", binary_commit},
          {"clean", reason.empty()},
          {"not_clean_because", reason},
          {"allow_dirty", allow_dirty},
          {"source_dir", source_dir},
          {"source_commit", source_commit},
          {"source_is_pelab", source_is_pelab},
          {"cpu", cpu},
          {"isa", isa}};
}

void require_clean_tree(const Provenance& provenance, const std::string& command) {
  const std::string reason = provenance.dirty_reason();
  PELAB_CHECK(reason.empty() || provenance.allow_dirty,
              "{}: results must come from one clean commit, but {}; commit first, or pass "
              "--allow-dirty (recorded in the report)",
              command, reason);
}

}  // namespace pelab
