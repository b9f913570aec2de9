// The `pelab` command is thin: each subcommand parses its arguments and calls the library.
// Every subcommand registers itself here (command_line.cpp calls these); main() runs the one
// the user chose. Numeric and list options go through options.h.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <vector>

#include "options.h"

namespace pelab {
class Task;
}

namespace pelab::cli {

// The action of the chosen subcommand; returns the process exit code.
using Action = std::function<int()>;

void add_bench_commands(CLI::App& app, Action& action);
void add_run_commands(CLI::App& app, Action& action);
void add_sweep_commands(CLI::App& app, Action& action);
void add_data_commands(CLI::App& app, Action& action);
void add_analyze_commands(CLI::App& app, Action& action);
void add_reproduce_command(CLI::App& app, Action& action);
void add_dump_command(CLI::App& app, Action& action);
void add_init_command(CLI::App& app, Action& action);

// --lengths of a command that evaluates a trained run: each within what the task takes.
void check_lengths_for_task(const std::vector<int64_t>& lengths, const Task& task);

}  // namespace pelab::cli
