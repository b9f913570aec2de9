// The `pelab` command line, built and parsed apart from running it: run_command_line() runs
// the action the arguments choose; the fuzz target tests/fuzz/cli_args_fuzz.cpp only parses
// them.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "pelab/cli/commands.h"

namespace pelab::cli {

// Sets where config groups are looked up (pelab/config/experiment.h): `config_path`
// (--config-path), then PELAB_CONFIG_PATH (colon-separated), then the configs shipped with
// pelab.
void use_config_search_path(const std::vector<std::string>& config_path);

// Sets the GEMM backend every command's matmuls use: `option` (--gemm) if given, else
// PELAB_GEMM, else auto. Exported as PELAB_GEMM so the runs a sweep starts use it too.
void use_gemm_backend(const std::string& option);

class CommandLine {
 public:
  // Registers the groups' commands, in order.
  explicit CommandLine(const std::vector<CommandGroup>& groups);
  CommandLine(const CommandLine&) = delete;  // the commands hold a reference to action_
  CommandLine& operator=(const CommandLine&) = delete;

  // Parses argv (argv[0] is the program) and checks every option; returns the chosen
  // command's action, which nothing has run yet. Throws CLI::ParseError for a mistake (and
  // for --help and --version, which succeed).
  Action parse(int argc, const char* const* argv);
  // The one line a parse error prints: CLI11's text made to name what is wrong and what is
  // valid, e.g. "unknown command 'trian' (did you mean 'train'? valid: ...)".
  std::string describe(const CLI::ParseError& e, int argc, const char* const* argv) const;
  // Prints the help or version a successful "error" asks for; returns the exit code.
  int exit(const CLI::ParseError& e) { return app_.exit(e); }
  // The parsed arguments (e.g. a command's key=value overrides).
  const CLI::App& app() const { return app_; }

 private:
  void add_gemm_option(CLI::App* app);

  CLI::App app_;
  Action action_;
  std::vector<std::string> config_path_;  // --config-path, of the commands that read a config
  std::string gemm_;                      // --gemm, of every command but bench's own
};

// The framework's command groups, in --help order. The pelab command adds the studies'
// groups after them (studies/src/cli/pelab_commands.cpp).
std::vector<CommandGroup> framework_commands();

// Parses argv, runs the chosen command and returns the process exit code. Errors the user can
// fix come out as one line on stderr, "pelab: error: ...", with exit code 2; nothing ever
// prints a stack trace. Exit codes: 0 done, 1 a sweep or comparison with failed runs, 2 an
// error, 3 stopped by SIGINT/SIGTERM or --stop-after after saving a checkpoint (continue with
// --resume), 4 the training diverged (NaN or Inf; the last good checkpoint is kept).
int run_command_line(int argc, char** argv, const std::vector<CommandGroup>& groups);

}  // namespace pelab::cli
