// pelab: train, evaluate and compare positional schemes in transformer encoders.
//
// Errors the user can fix (bad config, missing file, wrong value) come out as one line on
// stderr, "pelab: error: ...", with exit code 2; nothing else ever prints a stack trace.
// Command-line mistakes (an unknown option, a missing argument) are reported the same way.
// Exit codes: 0 done, 1 a sweep or comparison with failed runs, 2 an error, 3 stopped by
// SIGINT/SIGTERM or --stop-after after saving a checkpoint (continue with --resume), 4 the
// training diverged (NaN or Inf; the last good checkpoint is kept).
#include <cstdio>
#include <exception>
#include <string>

#include "command_line.h"
#include "pelab/core/error.h"

namespace {

// The one line an error prints, whatever its message holds.
int report_error(const std::string& message, int exit_code = 2) {
  std::string line = message;
  for (char& ch : line)
    if (ch == '\n' || ch == '\r') ch = ' ';
  std::fprintf(stderr, "pelab: error: %s\n", line.c_str());
  return exit_code;
}

}  // namespace

// Every exception from the commands is caught below; what could still escape is an allocation
// failing while the error message itself is being built.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  try {
    pelab::cli::CommandLine command_line;
    pelab::cli::Action action;
    try {
      action = command_line.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // --help and --version arrive as "errors" that succeed.
      if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
        return command_line.exit(e);
      return report_error(command_line.describe(e, argc, argv));
    }
    return action ? action() : 0;
  } catch (const pelab::DivergedError& e) {
    return report_error(e.what(), 4);
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
