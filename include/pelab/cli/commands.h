// The `pelab` command is thin: each subcommand parses its arguments and calls the library.
// The commands come in groups, each registered by one function; the framework's groups are
// declared here, and the studies add theirs (studies/src/cli/). The command line
// (command_line.h) registers the groups it is given; main() runs the command the user chose.
// Numeric and list options go through options.h.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pelab/cli/options.h"

namespace pelab {
class Task;
}

namespace pelab::cli {

// The action of the chosen subcommand; returns the process exit code.
using Action = std::function<int()>;

// Registers a group of commands on `app`; each command's callback sets `action`.
using AddCommands = void (*)(CLI::App& app, Action& action);

struct CommandGroup {
  AddCommands add;
  // The commands of the group that read an experiment config, as their path below pelab
  // ({"analyze", "encoding"}): each takes --config-path.
  std::vector<std::vector<std::string>> reading_config = {};
};

// The framework's commands.
void add_run_commands(CLI::App& app, Action& action);
void add_sweep_commands(CLI::App& app, Action& action);
void add_suite_commands(CLI::App& app, Action& action);
void add_data_commands(CLI::App& app, Action& action);
void add_dump_command(CLI::App& app, Action& action);
void add_init_command(CLI::App& app, Action& action);
void add_provenance_command(CLI::App& app, Action& action);
void add_schemes_command(CLI::App& app, Action& action);

// --lengths of a command that evaluates a trained run: each within what the task takes.
void check_lengths_for_task(const std::vector<int64_t>& lengths, const Task& task);

}  // namespace pelab::cli
