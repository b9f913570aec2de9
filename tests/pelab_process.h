// Test support shared by the suites: temporary directories, small files, a small experiment
// config, and running the real `pelab` binary (its path comes from CMake) the way a user would.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace pelab::testing {

namespace fs = std::filesystem;

// A fresh directory under the system's temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  // Writes `text` to the file `name` in the directory (making its parents); returns its path.
  std::string write(const std::string& name, const std::string& text) const;
  // The names of the directory's entries, sorted.
  std::vector<std::string> entries() const;

 private:
  fs::path path_;
};

// The small experiment the end-to-end tests train: a 1-layer, 16-wide rotary encoder on shift
// by 1, problem sizes 1–8. `rest` appends the sections each test chooses (training,
// evaluation, sweep). Inline: the fuzz targets use it without the rest of this file.
inline std::string tiny_config(const std::string& name, const std::string& rest) {
  return "name: " + name + R"(
seed: 0
model:
  d_model: 16
  heads: 2
  layers: 1
positional:
  type: rotary
task:
  name: shift
  shift: 1
  min_length: 1
  max_length: 8
)" + rest;
}

std::string read_file(const fs::path& path);
void write_file(const fs::path& path, const std::string& bytes);

// What a finished pelab process left: its exit code (-1 if a signal ended it, then `signal`
// is set) and everything it printed.
struct Outcome {
  int exit_code = -1;
  int signal = 0;
  std::string out, err;
};

// The built pelab binary.
std::string pelab_binary();

// Runs pelab with `args` (no shell involved) in `cwd` (default: the current directory) and
// waits for it.
Outcome run_pelab(const std::vector<std::string>& args, const fs::path& cwd = {});

// Starts pelab with `args` in the background, stdout and stderr to `log`; returns its pid.
pid_t start_pelab(const std::vector<std::string>& args, const fs::path& log);
// Waits for a started process; `log` becomes Outcome::err (stdout and stderr together).
Outcome wait_pelab(pid_t pid, const fs::path& log);

// Runs a shell command; returns its exit status and stdout + stderr together.
std::pair<int, std::string> shell(const std::string& command);

// A git checkout `tmp`/repo holding copies of the project's `dirs` (paths relative to the
// source tree, e.g. "configs", "studies/configs") in one commit; returns its path.
std::string make_checkout(const TempDir& tmp, const std::vector<std::string>& dirs);

// Everything in `dir`, recursively, one line per entry, sorted: its path relative to `dir`,
// its type, and for a file its size and a hash of its contents. Equal before and after a
// refused command: the refusal left the file system exactly as it was.
std::vector<std::string> listing(const fs::path& dir);

// The lines of a text ("a\nb\n" → {"a", "b"}).
std::vector<std::string> lines_of(const std::string& text);

// Asserts the shape of a user error reported on the command line: exit code 2, nothing on
// stdout, and exactly one line on stderr, which starts "pelab: error: " and contains every
// one of `parts`. Returns a description of what is wrong, or "" when all holds.
std::string user_error_problem(const Outcome& o, const std::vector<std::string>& parts);

}  // namespace pelab::testing
