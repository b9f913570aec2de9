// The commands of `pelab`: the framework's, then the studies' (analyses, benchmark, claims).
#pragma once

#include <vector>

#include "pelab/cli/commands.h"

namespace pelab::cli {

// The studies' command groups.
void add_analyze_commands(CLI::App& app, Action& action);
void add_bench_commands(CLI::App& app, Action& action);
void add_reproduce_command(CLI::App& app, Action& action);

// Every command group of pelab, in --help order.
std::vector<CommandGroup> pelab_commands();

}  // namespace pelab::cli
