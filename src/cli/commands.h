// The `pelab` command is thin: each subcommand parses its arguments and calls the library.
// Every subcommand registers itself here; main() runs the one the user chose.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace pelab::cli {

// The action of the chosen subcommand; returns the process exit code.
using Action = std::function<int()>;

void add_bench_commands(CLI::App& app, Action& action);
void add_run_commands(CLI::App& app, Action& action);
void add_sweep_commands(CLI::App& app, Action& action);
void add_data_commands(CLI::App& app, Action& action);
void add_analyze_commands(CLI::App& app, Action& action);
void add_reproduce_command(CLI::App& app, Action& action);

}  // namespace pelab::cli
