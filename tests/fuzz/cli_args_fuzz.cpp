// The command line: each input line is one argument word after `pelab`. The arguments are
// parsed and checked as `pelab` does (CommandLine::parse) without running the command, and
// the key=value overrides of a parsed command are applied to a small valid config. Every
// answer must be success or a clean error: a CLI11 parse error (whose one-line description
// is built too) or a pelab::Error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "../pelab_process.h"
#include "cli/pelab_commands.h"
#include "fuzz_util.h"
#include "pelab/cli/command_line.h"
#include "pelab/config/experiment.h"

namespace {

const std::string kBase = pelab::fuzz::base_config();

// The overrides the innermost parsed command was given, if it takes any.
std::vector<std::string> overrides_of(const CLI::App& app) {
  const CLI::App* command = &app;
  while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
  for (const CLI::Option* option : command->get_options())
    if (option->get_name() == "overrides" && option->count() > 0)
      return option->as<std::vector<std::string>>();
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words{"pelab"};
  std::stringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  for (std::string line; std::getline(lines, line) && words.size() < 64;) words.push_back(line);
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  const int argc = static_cast<int>(argv.size());

  pelab::cli::CommandLine command_line(pelab::cli::pelab_commands());
  try {
    command_line.parse(argc, argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != static_cast<int>(CLI::ExitCodes::Success) &&
        command_line.describe(e, argc, argv.data()).empty())
      std::abort();
    return 0;
  } catch (const pelab::Error& e) {
    pelab::fuzz::check_error(e);
    return 0;
  }
  const std::vector<std::string> overrides = overrides_of(command_line.app());
  if (overrides.empty()) return 0;
  try {
    pelab::parse_experiment(kBase, "base.yaml", overrides, PELAB_SOURCE_DIR "/configs");
  } catch (const pelab::Error& e) {
    pelab::fuzz::check_error(e);
  }
  return 0;
}
