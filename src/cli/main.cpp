// pelab: train, evaluate and compare positional schemes in transformer encoders.
//
// Errors the user can fix (bad config, missing file, wrong value) come out as one line on
// stderr, "pelab: error: ...", with exit code 2; nothing else ever prints a stack trace.
#include <cstdio>
#include <exception>

#include "commands.h"
#include "pelab/core/error.h"

#ifndef PELAB_VERSION
#define PELAB_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  CLI::App app{"pelab: how should position enter a transformer? Train encoders with any "
               "positional scheme on toy tasks, evaluate by length, compare."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("pelab ") + PELAB_VERSION);
  pelab::cli::Action action;
  try {
    pelab::cli::add_run_commands(app, action);
    pelab::cli::add_bench_commands(app, action);
    pelab::cli::add_sweep_commands(app, action);
    pelab::cli::add_data_commands(app, action);
    pelab::cli::add_analyze_commands(app, action);
    pelab::cli::add_reproduce_command(app, action);
    app.parse(argc, argv);
    return action ? action() : 0;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const pelab::Error& e) {
    std::fprintf(stderr, "pelab: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "pelab: error: out of memory\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pelab: error: %s\n", e.what());
    return 2;
  }
}
