// The `pelab` command is thin: each subcommand parses its arguments and calls the library.
// Every subcommand registers itself here; main() runs the one the user chose.
#pragma once

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <functional>
#include <string>

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

// Checks an integer option against a lower bound, in words ("expected an integer >= 1, got
// '0'"); CLI11's own PositiveNumber prints its range as a 300-digit number.
inline CLI::Validator integer_at_least(int64_t min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        int64_t value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value < min)
          return fmt::format("expected an integer >= {}, got '{}'", min, text);
        return "";
      },
      fmt::format("INT>={}", min));
}

}  // namespace pelab::cli
