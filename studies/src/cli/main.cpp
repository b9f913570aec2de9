// pelab: train, evaluate and compare positional schemes in transformer encoders, and the
// studies built on the framework. Everything but the list of commands is the framework's
// (pelab/cli/command_line.h), the exit codes too.
#include "cli/pelab_commands.h"
#include "pelab/cli/command_line.h"

int main(int argc, char** argv) {
  return pelab::cli::run_command_line(argc, argv, pelab::cli::pelab_commands());
}
