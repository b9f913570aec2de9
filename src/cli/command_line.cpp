#include "command_line.h"

#include <fmt/format.h>

#include <vector>

#include "pelab/config/yaml_reader.h"
#include "pelab/core/build_info.h"
#include "pelab/core/strings.h"

namespace pelab::cli {

CommandLine::CommandLine()
    : app_(
          "pelab: how should position enter a transformer? Train encoders with any "
          "positional scheme on toy tasks, evaluate by length, compare.") {
  app_.require_subcommand(1);
  app_.set_version_flag("--version",
                        fmt::format("pelab {} (commit {})", pelab_version(), pelab_git_commit()));
  add_run_commands(app_, action_);
  add_bench_commands(app_, action_);
  add_sweep_commands(app_, action_);
  add_data_commands(app_, action_);
  add_analyze_commands(app_, action_);
  add_reproduce_command(app_, action_);
  add_dump_command(app_, action_);
  add_init_command(app_, action_);
}

Action CommandLine::parse(int argc, const char* const* argv) {
  action_ = nullptr;
  app_.parse(argc, argv);
  return action_;
}

std::string CommandLine::describe(const CLI::ParseError& e, int argc,
                                  const char* const* argv) const {
  // The innermost command given: "pelab analyze encoding --help".
  std::string command = "pelab";
  for (const CLI::App* sub = &app_; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    command += " " + sub->get_name();
  }
  const std::string help = command + " --help";
  if (!app_.get_subcommands().empty() || argc < 2)
    return fmt::format("{} (see {})", e.what(), help);
  // No command was recognised. CLI11 takes a mistyped command for a stray argument and an
  // unknown option before any command for a missing command; name the word instead.
  std::vector<std::string> commands;
  for (const CLI::App* sub : app_.get_subcommands({})) commands.push_back(sub->get_name());
  const std::string word = message_text(argv[1]);
  if (argv[1][0] == '-')
    return fmt::format("unknown option '{}' (pelab takes a command first; valid: {}; see {})", word,
                       join(commands), help);
  const std::string near = nearest_name(argv[1], commands);
  return fmt::format("unknown command '{}' ({}valid: {}; see {})", word,
                     near.empty() ? "" : "did you mean '" + near + "'? ", join(commands), help);
}

}  // namespace pelab::cli
