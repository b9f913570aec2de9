// pelab: train, evaluate and compare positional schemes in transformer encoders.
//
// Errors the user can fix (bad config, missing file, wrong value) come out as one line on
// stderr, "pelab: error: ...", with exit code 2; nothing else ever prints a stack trace.
// Command-line mistakes (an unknown option, a missing argument) are reported the same way.
// Exit codes: 0 done, 1 a sweep or comparison with failed runs, 2 an error, 3 stopped by
// SIGINT/SIGTERM or --stop-after after saving a checkpoint (continue with --resume).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/build_info.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"

namespace {

// The one line an error prints, whatever its message holds.
int report_error(const std::string& message) {
  std::string line = message;
  for (char& ch : line)
    if (ch == '\n' || ch == '\r') ch = ' ';
  std::fprintf(stderr, "pelab: error: %s\n", line.c_str());
  return 2;
}

}  // namespace

// Every exception from the commands is caught below; what could still escape is an allocation
// failing while the error message itself is being built.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  CLI::App app{
      "pelab: how should position enter a transformer? Train encoders with any "
      "positional scheme on toy tasks, evaluate by length, compare."};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("pelab {} (commit {})", pelab::pelab_version(),
                                                pelab::pelab_git_commit()));
  pelab::cli::Action action;
  try {
    pelab::cli::add_run_commands(app, action);
    pelab::cli::add_bench_commands(app, action);
    pelab::cli::add_sweep_commands(app, action);
    pelab::cli::add_data_commands(app, action);
    pelab::cli::add_analyze_commands(app, action);
    pelab::cli::add_reproduce_command(app, action);
    pelab::cli::add_dump_command(app, action);
    pelab::cli::add_init_command(app, action);
    app.parse(argc, argv);
    return action ? action() : 0;
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as "errors" that succeed.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::string help = "pelab --help";
    for (const CLI::App* sub : app.get_subcommands()) help = "pelab " + sub->get_name() + " --help";
    // CLI11 takes a mistyped command for a stray argument; name it instead.
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      std::vector<std::string> commands;
      for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
      const std::string near = pelab::nearest_name(argv[1], commands);
      return report_error(fmt::format("unknown command '{}' ({}valid: {}; see pelab --help)",
                                      argv[1], near.empty() ? "" : "did you mean '" + near + "'? ",
                                      pelab::join(commands)));
    }
    return report_error(fmt::format("{} (see {})", e.what(), help));
  } catch (const pelab::Error& e) {
    return report_error(e.what());
  } catch (const std::bad_alloc&) {
    return report_error("out of memory");
  } catch (const std::exception& e) {
    return report_error(e.what());
  } catch (...) {
    return report_error("an unknown internal error (please report this)");
  }
}
